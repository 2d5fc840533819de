"""Issue 19 items 2 and 5 in headless Chromium: a session keeps its settings across a reload, and a re-judge at a
new τ moves the per-turn chart and says one thing in its captions.

The app's default bot is the embedded one (as in a class), the teacher picks the scripted bot in the sidebar;
the embedded detector judges (skipped without it, since the re-judge scenario rests on its
scores: "I have never had a dog." contradicts "I have a dog named Max." at p ≈ 0.99, "I have a cat named Luna." at p ≈ 0.21 with detector v4).
Skipped without Debian's /usr/bin/chromium.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

import pytest

from embedded import DETECTOR_DIR
from harness.server import CHROMIUM, scripted_app_env, send, set_tau, settle, streamlit_server, turn, wait_until_idle
from studio.storage import Store

pytestmark = [
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian chromium is not installed (make browser)"),
    pytest.mark.skipif(not (DETECTOR_DIR / "config.json").exists(), reason="the embedded detector is not there"),
]
sync_api = pytest.importorskip("playwright.sync_api")

SCRIPT = {"replies": [
    [{"text": "I have a dog named Max.", "score": -0.4}],
    [{"text": "I have never had a dog.", "score": -0.2}, {"text": "I have a cat named Luna.", "score": -0.9}],
]}


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    folder = tmp_path_factory.mktemp("browser_settings")
    db = f"sqlite:///{folder / 'studio.db'}"
    env = scripted_app_env(folder, SCRIPT, "rerank", GUARD_STUDIO_DB=db, GUARD_APP_BOT="embedded")
    with streamlit_server(env, log_path=folder / "streamlit.log") as url:
        yield url, db


def _sidebar(page):
    return page.get_by_test_id("stSidebar")


def _pick(page, label: str, option: str) -> None:
    """Choose ``option`` in the sidebar's select box ``label``."""
    _select_box(page, label).click()
    page.get_by_role("option", name=option, exact=True).click()
    sync_api.expect(_select_box(page, label)).to_have_value(option)
    settle(page)  # the rerun the change starts


def _select_box(page, label: str):
    return _sidebar(page).get_by_role("combobox", name=label)


def _tau(page):
    return _sidebar(page).get_by_role("slider")


def _scripted_session(page, url: str) -> None:
    page.goto(url)
    send_ready = page.locator("textarea[data-testid='stChatInputTextArea']")
    send_ready.wait_for(timeout=180_000)
    sync_api.expect(_select_box(page, "Which bot")).to_have_value("embedded")  # the app's default
    _pick(page, "Which bot", "scripted")


def test_a_reloaded_session_keeps_its_bot_and_settings(app, browser):
    url, db = app
    page = browser.new_page(viewport={"width": 1400, "height": 1200})
    _scripted_session(page, url)
    _pick(page, "How the bot picks its words", "greedy")
    _sidebar(page).get_by_text("block", exact=True).click()
    set_tau(page, 0.3)
    send(page, "Do you have any pets?")
    sync_api.expect(turn(page, 1)).to_contain_text("I have a dog named Max.", timeout=180_000)
    page.wait_for_function("() => window.location.search.includes('session=')", timeout=60_000)
    session_id = parse_qs(urlparse(page.url).query)["session"][0]
    page.reload()
    sync_api.expect(turn(page, 1)).to_be_visible(timeout=180_000)
    # the sidebar shows what the session was played with, not the app's defaults
    sync_api.expect(_select_box(page, "Which bot")).to_have_value("scripted")
    sync_api.expect(_select_box(page, "How the bot picks its words")).to_have_value("greedy")
    assert _sidebar(page).get_by_role("radio", name="block").is_checked()
    sync_api.expect(_tau(page)).to_have_attribute("aria-valuetext", "0.30", timeout=30_000)
    # the next reply is the scripted bot's, and nothing is recorded as another bot's
    send(page, "Tell me about your pets")
    sync_api.expect(turn(page, 3)).to_be_visible(timeout=180_000)
    wait_until_idle(page)  # the run that drew turn 3 has stored it
    stored = Store(db).load_session(session_id)
    settings = stored.info.settings
    assert (settings.bot, settings.preset, str(settings.guard_mode)) == ("scripted", "greedy", "block")
    assert settings.threshold == pytest.approx(0.3)
    made = [t.turn.settings for t in stored.turns if t.turn.agent_id == "bot"]
    assert [(m.bot, m.preset, str(m.guard_mode), m.threshold) for m in made] == [("scripted", "greedy", "block", 0.3)] * 2
    page.close()


def _points(page) -> list[str]:
    """The per-turn chart's points, each as its ARIA description (which series, turn and score; the legend's
    symbols have none)."""
    chart = page.locator(".vega-embed").last
    chart.locator("g.mark-symbol path").first.wait_for(timeout=60_000)
    return sorted(chart.evaluate("e => Array.from(e.querySelectorAll('g.mark-symbol path'))"
                                 ".map(p => p.getAttribute('aria-label') || '').filter(a => a)"))


def test_rejudge_moves_the_chart_and_its_captions_agree(app, browser):
    url, _ = app
    page = browser.new_page(viewport={"width": 1400, "height": 1400})
    _scripted_session(page, url)
    set_tau(page, 0.05)  # so low that "I have a cat named Luna." contradicts too: the generator's best is sent, flagged
    send(page, "Do you have pets?")
    sync_api.expect(turn(page, 1)).to_be_visible(timeout=180_000)
    send(page, "Tell me about your pets")
    sync_api.expect(turn(page, 3)).to_contain_text("I have never had a dog.", timeout=180_000)
    chat = page.get_by_test_id("stChatMessage").nth(3)
    sync_api.expect(chat).to_contain_text("every candidate contradicts, so the bot's favourite was sent")
    before = _points(page)
    set_tau(page, 0.5)
    rejudge = page.get_by_role("button", name=re.compile(r"Re-judge the conversation"))
    sync_api.expect(rejudge).to_contain_text("τ = 0.50", timeout=60_000)
    rejudge.click()
    sync_api.expect(page.get_by_text("re-judged by").first).to_be_visible(timeout=180_000)
    chat = page.get_by_test_id("stChatMessage").nth(3)
    captions = chat.get_by_test_id("stCaptionContainer").all_inner_texts()
    said = " ".join(captions)
    assert "would now send candidate #2" in said, captions
    assert "every candidate contradicts" not in said, captions  # one story: #1 was sent, #2 would be now
    assert "re-judged by embedded at τ = 0.50, rerank" in said, captions
    wait_until_idle(page)
    after = _points(page)
    assert after != before and len(after) == len(before) + 1, (before, after)
    assert any("would now send" in p for p in after), after
    page.close()
