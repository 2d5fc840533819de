"""End to end in headless Chromium: `streamlit run app.py` as a subprocess, driven with Playwright.

The bot is scripted (a planted contradicting candidate); the detector is the embedded one when
models/detector exists, else a tiny random model with τ = 0.1 that flags every candidate (the
highlight plumbing is the same; what the embedded detector decides is tested in test_app_chat.py).
Skipped cleanly without Debian's /usr/bin/chromium (`make browser` installs it).
"""

from __future__ import annotations

import pytest

from harness.server import CHAT_INPUT, CHROMIUM, chromium, open_expander, send, turn, wait_until_idle

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian chromium is not installed (make browser)")
sync_api = pytest.importorskip("playwright.sync_api")

PLANTED = {"replies": [
    [{"text": "I have a dog named Max.", "score": -0.4}],
    [{"text": "I have never had a dog.", "score": -0.2},
     {"text": "Max loves long walks in the park.", "score": -0.9}],
]}


@pytest.fixture(scope="module")
def server(app_server):
    """The chat on the shared app server (conftest's app_server), PLANTED played in re-rank mode."""
    return app_server.url(PLANTED)


def test_planted_contradiction_is_highlighted_in_the_browser(server):
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(server)
        send(page, "Do you have pets?")
        sync_api.expect(turn(page, 1)).to_contain_text("I have a dog named Max.", timeout=120_000)
        send(page, "Tell me about your pets")
        sync_api.expect(turn(page, 3)).to_be_visible(timeout=120_000)
        # the candidate list with its contradiction scores opens on demand
        open_expander(page, "Candidates (2) and why this reply", page.get_by_text("I have never had a dog.").first)
        # the earlier turn the rejected candidate contradicts is highlighted in its panel, with its pair score
        # (the transcript marks only what a sent reply contradicts)
        context = page.locator("div.cg-context[data-context-turn-id='1']").last
        sync_api.expect(context.locator("mark.cg-evidence")).to_be_visible(timeout=30_000)
        badge = context.locator("span.cg-badge").first
        sync_api.expect(badge).to_contain_text("p=0.")
        sync_api.expect(badge).to_contain_text("turn 3")
        # the input is usable again after the reply
        sync_api.expect(page.locator(CHAT_INPUT)).to_be_enabled()


def test_five_sessions_keep_separate_conversations(server):
    with chromium() as browser:
        contexts = [browser.new_context() for _ in range(5)]
        pages = [ctx.new_page() for ctx in contexts]
        for page in pages:
            page.goto(server)
        for k, page in enumerate(pages):  # all five ask at once; the server answers them concurrently
            send(page, f"I am visitor number {k} <b>bold</b>")
        for k, page in enumerate(pages):
            sync_api.expect(turn(page, 1)).to_contain_text("I have a dog named Max.", timeout=120_000)
            transcript = page.locator("div.cg-turn").all_inner_texts()
            assert transcript[0] == f"I am visitor number {k} <b>bold</b>"  # escaped, shown literally
            others = [j for j in range(5) if j != k and any(f"number {j} " in t for t in transcript)]
            assert not others, f"session {k} shows messages of sessions {others}"
            assert len(transcript) == 2
        for ctx in contexts:
            ctx.close()


def test_the_downloaded_transcript_has_the_reply_just_made(server):
    """The sidebar is drawn before a new reply exists (the page reads its input after it); the download is made when
    clicked, so it holds the turn that run added."""
    import json
    from pathlib import Path

    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(server)
        send(page, "Do you have pets?")
        sync_api.expect(turn(page, 1)).to_contain_text("I have a dog named Max.", timeout=120_000)
        wait_until_idle(page)  # the run that drew the reply is over: its download button is the one clicked
        # The click itself starts no rerun (on_click="ignore"), but a rerun that starts as it is clicked (the browser
        # cookie's) replaces the file the click asks for, and the button then waits on that request, disabled: the
        # page is loaded again (the session's link keeps the conversation) and the button clicked again.
        for attempt in range(3):
            try:
                with page.expect_download(timeout=20_000) as download:
                    page.get_by_role("button", name="Download transcript (JSON)").click(timeout=20_000)
                break
            except sync_api.TimeoutError:
                if attempt == 2:
                    raise
                page.reload()
                sync_api.expect(turn(page, 1)).to_be_visible(timeout=120_000)
                wait_until_idle(page)
        record = json.loads(Path(download.value.path()).read_text())
        assert [(t["turn_id"], t["agent_id"], t["text"]) for t in record["turns"]] == [
            (0, "user", "Do you have pets?"), (1, "bot", "I have a dog named Max.")]
        assert record["turns"][1]["guard"]["candidates"]
