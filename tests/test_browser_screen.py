"""Issue 54, what the screen says must be true, in headless Chromium (Playwright) against `streamlit run app.py` on the
app server the browser modules share (conftest's app_server: the scripted bot, a teacher's password):

1. Review's tables (the Scoreboard, Players, Sessions) fit their box at 1,024 and 1,400 px windows, no sideways
   scroll: fewer columns, the rest of a session on demand.

Skipped without Debian's /usr/bin/chromium.
"""

from __future__ import annotations

import pytest

from harness.server import CHROMIUM, send, sign_in_as_teacher, turn, wait_until_idle

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
