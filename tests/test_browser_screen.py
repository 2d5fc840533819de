"""Issue 54, what the screen says must be true, in headless Chromium (Playwright) against `streamlit run app.py` on the
app server the browser modules share (conftest's app_server: the scripted bot, a teacher's password):

1. Review's tables (the Scoreboard, Players, Sessions) fit their box at 1,024 and 1,400 px windows, no sideways
   scroll: fewer columns, the rest of a session on demand.
2. The chat's fact sheet: a value said twice lists both turns, two sent replies that gave the dogs another number are
   one chip with its count (their turns on demand) and two clashes in the line above it.

Skipped without Debian's /usr/bin/chromium.
"""

from __future__ import annotations

import re

import pytest

from harness.server import CHROMIUM, send, set_persona, sign_in_as_teacher, turn, wait_until_idle

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian chromium is not installed (make browser)")
sync_api = pytest.importorskip("playwright.sync_api")

SCRIPT = {"replies": [[{"text": "I have a dog named Max and two cats called Tom and Jerry.", "score": -0.4},
                       {"text": "I have no pets.", "score": -0.9}]]}
#: Review's tables: each must fit its box
REVIEW_TABLES = ("cg-scoreboard", "cg-players", "cg-sessions")


@pytest.fixture(scope="module")
def review(app_server, browser):
    """The teacher's Review page after two chats on the shared server (so every table has rows)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    for message in ("Do you have any pets at home, and what are they called?", "Hello"):
        page = context.new_page()
        page.goto(app_server.url(SCRIPT))
        send(page, message)
        sync_api.expect(turn(page, 1)).to_contain_text("I have", timeout=180_000)
        wait_until_idle(page)
        page.close()
    page = context.new_page()
    sign_in_as_teacher(page, app_server.base, app_server.password)
    page.locator("table.cg-sessions").wait_for(timeout=60_000)
    yield page
    context.close()


@pytest.mark.parametrize("width", [1024, 1400])
def test_reviews_tables_fit_their_box_without_a_sideways_scroll(review, width):
    """Issue 54: at a 1,400 px window the Sessions table was 1,376 px in a 940 px column, three columns behind a
    sideways scroll; at 1,024 px the Scoreboard was 857 px in 564 px."""
    review.set_viewport_size({"width": width, "height": 1000})
    review.wait_for_timeout(500)
    wait_until_idle(review)
    sidebar = review.get_by_test_id("stSidebar")
    assert sidebar.bounding_box()["width"] > 200  # the sidebar open: the column is as narrow as a teacher sees it
    for table in REVIEW_TABLES:
        wrap = review.locator(f"div.cg-table-wrap:has(table.{table})")
        scroll, client = wrap.evaluate("e => [e.scrollWidth, e.clientWidth]")
        assert scroll <= client, (width, table, scroll, client)


#: a nurse with two dogs; turn 1 sends the consistent candidate (the teacher one is caught), turns 3 and 5 send their
#: only candidate, which gives the dogs another number (every candidate contradicts: re-rank keeps it, flagged)
SHEET_PERSONA = "I work as a nurse.\nI have two dogs."
SHEET_SCRIPT = {"replies": [
    [{"text": "I am a teacher at a big school.", "score": -0.3},
     {"text": "I look after patients all day.", "score": -0.9}],
    [{"text": "I have 8 dogs.", "score": -0.3}],
    [{"text": "I have 8 dogs.", "score": -0.3}],
]}


def test_the_sheet_groups_a_value_said_twice_and_counts_each_sent_clash(app_server, browser):
    """Issue 54: the sheet's rows listed one chip per mark (a job row carried 22), its line counted rows ("1
    contradicted by a reply that was sent" where two replies were), and a value's places were a comma list."""
    page = browser.new_context(viewport={"width": 1400, "height": 1400}).new_page()
    page.goto(app_server.url(SHEET_SCRIPT))
    set_persona(page, SHEET_PERSONA)
    for k, message in enumerate(["What do you do?", "How many dogs do you have?", "How many dogs, again?"]):
        send(page, message)
        turn(page, 2 * k + 1).wait_for(state="visible", timeout=180_000)
        wait_until_idle(page)
    sheet = page.locator("table.cg-fact-sheet")
    eight = sheet.locator("tr.cg-fact", has=page.locator("td.cg-fact-value b", has_text="8"))
    sync_api.expect(eight).to_have_count(1, timeout=60_000)  # one row for the value said at turns 3 and 5
    two = sheet.locator("tr.cg-fact", has=page.locator("td.cg-fact-value b", has_text="2"))
    chip = two.locator(".cg-fact-mark-sent")
    sync_api.expect(chip).to_have_count(1)
    assert chip.get_attribute("data-count") == "2" and chip.inner_text() == "✘ 2 replies sent say 8"
    turns = two.locator("details.cg-fact-turns")
    for _ in range(10):  # the turns behind the count; a click can be lost to the page redrawing the table under load
        if turns.get_attribute("open") is not None:
            break
        turns.locator("summary").click()
        page.wait_for_timeout(300)
    sync_api.expect(turns.locator("li").nth(0)).to_have_text("the reply at turn 3 says 8")
    sync_api.expect(turns.locator("li").nth(1)).to_have_text("the reply at turn 5 says 8")
    assert eight.locator("td.cg-fact-where").inner_text() == "turn 3 · turn 5"
    summary = page.get_by_text(re.compile(r"^\d+ facts · ")).first.inner_text()
    assert " · 2 clashes in replies that were sent" in summary, summary
