"""The app as a class and a red-teamer see it, in headless Chromium (Playwright) against `streamlit run app.py`.

Scripted bot (deterministic), re-rank mode, two candidates a turn: turn 3's best candidate
contradicts turn 1 and is rejected, turn 5's only candidate contradicts turn 1 too and is sent
(flagged), and is longer than the preset's token limit, so it must come back cut at a sentence end.
The detector is the embedded one when models/detector exists, else a tiny random model with τ = 0.1
that flags everything (the same badges then come from the plumbing alone).
Skipped without Debian's /usr/bin/chromium.
"""

from __future__ import annotations

import re

import pytest

from harness.server import CHROMIUM, open_expander, send, turn, wait_until_idle
from ui.styles import PRESENTATION_FONT_PX

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian chromium is not installed (make browser)")
sync_api = pytest.importorskip("playwright.sync_api")

LONG_TAIL = ("I prefer cats because they are quiet and they sleep all day long and never need a walk in the rain "
             "or the snow or the wind at all, which suits me")
SCRIPT = {"replies": [
    [{"text": "I have a dog named Max.", "score": -0.4}],
    [{"text": "I have never had a dog.", "score": -0.2},
     {"text": "Max loves long walks in the park.", "score": -0.9}],
    [{"text": f"I have never had a dog. {LONG_TAIL}.", "score": -0.3}],
]}
MESSAGES = ["Do you have pets?", "Tell me about your pets", "And do you like dogs?"]


@pytest.fixture(scope="module")
def server(app_server):
    """The chat on the shared app server (conftest's app_server), SCRIPT played at the default preset, "fast", whose
    32 words cut turn 5's reply."""
    return app_server.url(SCRIPT)


@pytest.fixture(scope="module")
def chat(server, browser):
    """One conversation of three bot turns, shared by the chat checks (read-only after this)."""
    page = browser.new_page(viewport={"width": 1100, "height": 1000})
    page.goto(server)
    for k, message in enumerate(MESSAGES):
        send(page, message)
        sync_api.expect(turn(page, 2 * k + 1)).to_be_visible(timeout=180_000)
    wait_until_idle(page)
    yield page
    page.close()


def test_the_transcript_shows_badges_of_the_sent_reply_only(chat):
    badges = chat.locator("div.cg-turn span.cg-badge").all_inner_texts()
    assert badges, "the sent reply at turn 5 contradicts turn 1: its evidence is marked"
    assert all("candidate #" not in b for b in badges), badges
    assert any("the reply at turn 5" in b for b in badges), badges
    # the rejected candidate of turn 3 keeps its evidence inside its own panel
    panel = chat.locator("div.cg-context span.cg-badge").first
    open_expander(chat, "Candidates (2) and why this reply", panel, last=False)
    sync_api.expect(panel).to_contain_text("candidate #")


def test_nothing_in_the_chat_column_is_wider_than_the_column(chat):
    overflowing = chat.evaluate("""() => {
        const out = [];
        for (const message of document.querySelectorAll('[data-testid="stChatMessage"]')) {
            const column = message.getBoundingClientRect();
            for (const el of message.querySelectorAll('.cg-turn, .cg-turn *, .cg-context, .cg-context *')) {
                const box = el.getBoundingClientRect();
                if (box.width && (box.right > column.right + 1 || box.left < column.left - 1)) {
                    out.push(el.className + ': ' + el.textContent.slice(0, 60));
                }
            }
        }
        return out;
    }""")
    assert not overflowing, overflowing
    # a badge is a wrapping inline block, not one unbreakable line
    assert chat.locator("span.cg-badge").first.evaluate("e => getComputedStyle(e).whiteSpace") == "normal"


def _text_without_badges(locator) -> str:
    return locator.evaluate("e => { const c = e.cloneNode(true); c.querySelectorAll('.cg-badge')"
                            ".forEach(b => b.remove()); return c.textContent.trim(); }")


def test_a_reply_cut_at_the_token_limit_ends_at_a_sentence(chat):
    # the long tail was cut at the preset's 32 words, then back to the last sentence end
    assert _text_without_badges(turn(chat, 5)) == "I have never had a dog."
    for k in range(3):
        assert re.search(r"[.!?…]$", _text_without_badges(turn(chat, 2 * k + 1)))


def test_the_per_turn_chart_is_drawn_after_three_turns(chat):
    chart = chat.locator(".vega-embed").last
    sync_api.expect(chart).to_be_visible()
    points = chart.locator("g.mark-symbol path")  # one point per series and bot turn
    assert points.count() >= 4  # sent reply at turns 1, 3, 5 and the unsent candidate of turn 3
    assert "τ = " in chart.locator("svg").text_content()  # the threshold rule is labelled
    sync_api.expect(chat.get_by_role("button", name=re.compile("Re-judge the conversation"))).to_be_visible()


def test_the_fact_sheet_above_the_transcript_marks_the_sent_replys_clash(chat):
    """Issue 41: the sheet sits above the transcript, headed in words; turn 5's sent reply ("never had a dog") gives
    turn 1's dog another number, so both facts are marked red, the mark saying who and what; nothing in it is wider
    than the main column."""
    sheet = chat.locator("table.cg-fact-sheet")
    sync_api.expect(sheet).to_be_visible()
    assert chat.get_by_text("What the bot has said about itself").first.is_visible()
    assert sheet.bounding_box()["y"] < turn(chat, 0).bounding_box()["y"]
    marked = chat.locator("tr.cg-fact-sent").all_inner_texts()
    assert any(t.startswith("dogs") and "the reply at turn 5 says none" in t for t in marked), marked
    assert any("clashes with at least 1 (turn 1)" in t for t in marked), marked
    column = chat.locator('[data-testid="stMainBlockContainer"]').bounding_box()
    box = sheet.bounding_box()
    assert box["x"] >= column["x"] - 1 and box["x"] + box["width"] <= column["x"] + column["width"] + 1


def test_heatmap_cells_are_visible_with_a_legend(app_server, browser):
    page = browser.new_page(viewport={"width": 1280, "height": 1400})
    page.goto(app_server.url(page="playground"))
    page.locator("button", has_text="Detect").last.click()
    page.get_by_text("Pair scores: judged sentences").wait_for(timeout=180_000)
    chart = page.locator(".vega-embed").last
    chart.locator("g.mark-rect path").first.wait_for(timeout=60_000)
    boxes = chart.evaluate("""e => Array.from(e.querySelectorAll('g.mark-rect path'))
        .filter(p => !p.closest('.role-legend'))
        .map(p => { const b = p.getBoundingClientRect(); return [b.width, b.height]; })""")
    assert boxes and all(w >= 20 and h >= 20 for w, h in boxes), boxes  # every pair is a visible cell
    legend = chart.locator("g.role-legend")
    assert legend.count() >= 1 and "τ =" in legend.first.text_content()  # the colour legend breaks at τ
    assert "P(contradiction)" in chart.inner_text()
    page.close()


def test_presentation_mode_enlarges_the_type_and_collapses_the_sidebar(server, browser):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(server)
    send(page, "Do you have pets?")
    sync_api.expect(turn(page, 1)).to_be_visible(timeout=180_000)
    normal = float(turn(page, 1).evaluate("e => parseFloat(getComputedStyle(e).fontSize)"))
    page.get_by_text("Presentation mode").click()
    sync_api.expect(page.locator("[data-testid='stSidebar']")).to_have_attribute("data-collapsed", "true",
                                                                                  timeout=30_000)
    page.wait_for_function("parseFloat(getComputedStyle(document.documentElement).fontSize) === "
                           f"{PRESENTATION_FONT_PX}")
    large = float(turn(page, 1).evaluate("e => parseFloat(getComputedStyle(e).fontSize)"))
    assert large >= 1.5 * normal and large >= 24, (normal, large)
    badge = page.locator("span.cg-badge")
    assert badge.count() == 0 or badge.first.evaluate("e => getComputedStyle(e).color") == "rgb(255, 255, 255)"
    # the fact sheet (turn 1's dog) is as readable as the turns on a projector
    fact = page.locator("table.cg-fact-sheet td.cg-fact-value").first
    sync_api.expect(fact).to_be_visible(timeout=60_000)
    assert float(fact.evaluate("e => parseFloat(getComputedStyle(e).fontSize)")) >= 24
    # remembered for the session: another page keeps it (the sidebar opens with its arrow)
    page.get_by_role("button", name="Expand sidebar").click()
    page.get_by_role("link", name="Learn").click()
    page.get_by_text("Why checking one turn at a time works better").wait_for(timeout=180_000)
    assert page.evaluate("parseFloat(getComputedStyle(document.documentElement).fontSize)") == PRESENTATION_FONT_PX
    page.close()
