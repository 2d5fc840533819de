"""The chat page's one pass per turn in headless Chromium (issue 24): while the bot and the guard work, their steps
are on screen (an st.status box with the candidates as they arrive and each one's verdict) before the reply is; then
the finished turn takes the box's place and the transcript holds each turn once — never two copies of a turn, nor the
candidates a second time above the reply.

The scripted bot answers after a ``delay`` (bots/scripted.py), like a real generator, so the box is there long enough
to be seen. A MutationObserver installed before the page loads keeps every state of the transcript and of the live box
the browser drew; the verdicts, on screen for milliseconds between the guard's end and the finished turn (a loaded
browser may paint both at once), are checked in the deltas the server sent, in order. Embedded detector when present,
else a tiny random one that flags everything; the app server the browser modules share (conftest's app_server).
Skipped without Debian's /usr/bin/chromium.
"""

from __future__ import annotations

from collections import Counter

import pytest

from harness.server import CHAT_INPUT, CHROMIUM, open_expander, send, turn, wait_until_idle

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian chromium is not installed (make browser)")
sync_api = pytest.importorskip("playwright.sync_api")

DELAY_S = 2.5
#: candidates no other browser module plays: the detector's scored pairs are cached for the life of the server process,
#: and on the server the browser modules share, a pair another module had judged is scored at once, so the live
#: candidates and the finished turn reached the page in one frame (their lines were never drawn). New pairs take the
#: time judging takes in a class's chat
CONTRADICTING, CONSISTENT = "I have never owned a dog.", "Max loves chasing balls in the garden."
SCRIPT = {"delay": DELAY_S, "replies": [
    [{"text": "I have a dog named Max.", "score": -0.4}],
    [{"text": CONTRADICTING, "score": -0.2}, {"text": CONSISTENT, "score": -0.9}],
]}
FIRST, SECOND = "Do you have pets?", "Tell me about your pets"

#: every distinct state of the transcript (the turn ids drawn, in order, each with all its chat bubble holds) and of
#: the live box (its text), as drawn; Streamlit's faded leftovers of the last run count, as the user sees them
RECORDER = """
window.__cgStates = [];
const record = () => {
  const turns = Array.from(document.querySelectorAll('div.cg-turn[data-turn-id]'));
  const ids = turns.map(e => e.dataset.turnId);
  const bubbles = turns.map(e => { const m = e.closest('[data-testid="stChatMessage"]'); return m ? m.textContent : ''; });
  // the live box: an st.status whose lines are the candidates ('#1 “…”'); a finished turn's panel has none
  const live = Array.from(document.querySelectorAll('[data-testid="stExpander"]'))
    .map(e => e.textContent).filter(t => /#\\d+ “/.test(t));
  const state = JSON.stringify({ids, bubbles, live});
  const states = window.__cgStates;
  if (!states.length || states[states.length - 1].key !== state) states.push({key: state, ids, bubbles, live});
};
new MutationObserver(record).observe(document, {subtree: true, childList: true, characterData: true});
"""


@pytest.fixture(scope="module")
def server(app_server):
    """The chat on the shared app server (conftest's app_server), SCRIPT (with its delay) played in re-rank mode."""
    return app_server.url(SCRIPT)


def _live_box(page):
    return page.locator("[data-testid='stExpander']").filter(has_text="The bot is writing 2 candidates")


def test_the_guards_steps_show_before_the_reply_and_the_turn_replaces_them(server, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 1200})
    page.add_init_script(RECORDER)
    errors: list[str] = []  # a delta the frontend cannot place blanks the page ("Bad delta path index")
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    frames: list[bytes] = []  # what the server sent, in order (Streamlit's deltas carry their text as plain UTF-8)
    page.on("websocket", lambda ws: ws.on("framereceived", lambda payload: frames.append(
        payload if isinstance(payload, bytes) else payload.encode())))
    page.goto(server)
    send(page, FIRST)
    sync_api.expect(turn(page, 1)).to_be_visible(timeout=180_000)
    sync_api.expect(page.locator(CHAT_INPUT)).to_be_enabled(timeout=120_000)
    page.evaluate("window.__cgStates.length = 0")
    del frames[:]

    send(page, SECOND)
    # while the bot writes: the user's message is in the transcript, the live box under it, no reply yet
    sync_api.expect(_live_box(page)).to_be_visible(timeout=DELAY_S * 1000)
    sync_api.expect(turn(page, 2)).to_have_text(SECOND)
    assert turn(page, 3).count() == 0
    sync_api.expect(turn(page, 3)).to_have_text(CONSISTENT, timeout=120_000)  # re-rank sends the consistent one
    wait_until_idle(page)  # the run is over

    states = page.evaluate("window.__cgStates")
    # drawn once: at no moment did the page hold two copies of a turn
    doubled = [s["ids"] for s in states if any(n > 1 for n in Counter(s["ids"]).values())]
    assert not doubled, doubled[:3]
    # nor did a user's message carry a bot turn's caption, candidates or annotation box (a last run's leftovers)
    lent = [b for s in states for i, b in zip(s["ids"], s["bubbles"]) if int(i) % 2 == 0 and
            any(word in b for word in ("Candidates (", "Annotate turn", "consistent"))]
    assert not lent, lent[:3]
    # both candidates were on screen, live, before the reply was in the transcript
    before_reply = [s for s in states if "3" not in s["ids"]]
    live = [box for s in before_reply for box in s["live"] if CONTRADICTING in box and CONSISTENT in box]
    assert live, [s["live"] for s in before_reply]
    # and the guard's verdict on #1 reached the page before the reply did. It is on screen for milliseconds only,
    # until the finished turn replaces the box, and a loaded browser may paint both in one frame (the DOM states then
    # never hold it), so this reads the deltas the server sent rather than what was drawn
    # (the candidate's text travels markdown-escaped: "dog\\.")
    verdict_at = next((i for i, f in enumerate(frames) if "❌".encode() in f and b"never owned a dog" in f), None)
    reply_at = next((i for i, f in enumerate(frames) if b'data-turn-id="3"' in f), None)
    assert verdict_at is not None and reply_at is not None and verdict_at < reply_at, (verdict_at, reply_at)
    # the policy's choice: its live line lasts only until the finished turn replaces the box (too short to catch
    # reliably); the turn's caption keeps it
    sync_api.expect(page.get_by_test_id("stChatMessage").nth(3)).to_contain_text("#1 rejected as contradicting; #2 sent")
    # and gone once it was: the finished turn took the box's place
    after_reply = [s for s in states if "3" in s["ids"]]
    assert after_reply and not any(s["live"] for s in after_reply), [s["live"] for s in after_reply][:3]

    # the transcript now: each turn once, in order, and no candidate shown outside its (closed) panel
    assert page.locator("div.cg-turn[data-turn-id]").evaluate_all("es => es.map(e => e.dataset.turnId)") == \
        ["0", "1", "2", "3"]
    assert _live_box(page).count() == 0
    main = page.locator("[data-testid='stMainBlockContainer']").inner_text()
    assert main.count(FIRST) == 1 and main.count(SECOND) == 1 and main.count(CONSISTENT) == 1, main
    assert CONTRADICTING not in main  # only in turn 3's candidate panel, which is closed
    open_expander(page, "Candidates (2) and why this reply", page.locator("table.cg-candidates").last)
    sync_api.expect(page.locator("table.cg-candidates").last).to_contain_text(CONTRADICTING)
    assert not errors, errors
    page.close()
