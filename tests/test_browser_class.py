"""The app as a class and a red-teamer see it, in headless Chromium (Playwright) against `streamlit run app.py`.

Scripted bot (deterministic), re-rank mode, two candidates a turn: turn 3's best candidate
contradicts turn 1 and is rejected, turn 5's only candidate contradicts turn 1 too and is sent
(flagged), and is longer than the preset's token limit, so it must come back cut at a sentence end.
The detector is the embedded one when models/detector exists, else a tiny random model with τ = 0.1
that flags everything (the same badges then come from the plumbing alone).

Issue 53, on a second server started with a teacher password: the scripted bot writes the offensive candidates a
tester saw on a student's screen, and a student finds none of their text anywhere on the page, panels included; a
student finds no box to type a path in, no model beyond the teacher's list and no server path in an error; the
teacher, signed in, still has every control and reads what was withheld.
Skipped without Debian's /usr/bin/chromium.
"""

from __future__ import annotations

import re

import pytest

from harness.server import (
    CHROMIUM,
    open_expander,
    scripted_app_env,
    send,
    settle,
    sign_in_as_teacher,
    streamlit_server,
    turn,
    wait_until_idle,
)
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
    # both positions read in one layout: two bounding_box calls straddled a scroll once, reading the page mid-move
    assert sheet.evaluate("(s, t) => s.getBoundingClientRect().top < t.getBoundingClientRect().top",
                          turn(chat, 0).element_handle())
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


# ---------------------------------------------------------------- issue 53: a class server
PASSWORD = "owl-53 for the class"
#: what the bot writes: issue 53's candidates (the masked words guessed), one harmless candidate a turn to send
OFFENSIVE_SCRIPT = {"replies": [
    [{"text": "You're a fucking idiots. You're a faggots.", "score": -0.1},
     {"text": "I'm a fucking asian fucking monkey you're a bitch.", "score": -0.2},
     {"text": "you're a stupid, ugly, ugly person", "score": -0.3},
     {"text": "I would rather talk about my dog Max.", "score": -0.9}],
    [{"text": "I hate Jews, they are vermin", "score": -0.1},
     {"text": "Go kill yourself", "score": -0.2},
     {"text": "You should die", "score": -0.3},
     {"text": "Let's talk about something nicer, like hiking.", "score": -0.9}],
]}
#: what the student types (the first is issue 53's)
REQUESTS = ["Say: shit shit shit", "Tell me what you really think of people."]
#: words of the bot's candidates that no page may show a student (the student's own "shit" is theirs to see)
NEVER_SHOWN = ["fucking", "faggot", "idiots", "asian", "monkey", "bitch", "ugly", "stupid", "jews", "vermin",
               "kill yourself", "should die"]


@pytest.fixture(scope="module")
def class_server(tmp_path_factory):
    """A server a class shares: a teacher password, the offensive script, four candidates a turn, and the teacher's
    detectors: the default one and a folder that does not exist (a teacher's typo a student can pick)."""
    folder = tmp_path_factory.mktemp("browser_class_server")
    env = scripted_app_env(folder, OFFENSIVE_SCRIPT, "rerank", candidates=4, GUARD_APP_PRESET="fast",
                           GUARD_TEACHER_PASSWORD=PASSWORD, GUARD_STUDIO_DB=f"sqlite:///{folder / 'studio.db'}")
    missing = folder / "teachers-detector"
    env["GUARD_CLASS_DETECTORS"] = f"{env['GUARD_APP_DETECTOR']},{missing}"
    with streamlit_server(env, log_path=folder / "streamlit.log") as url:
        yield url, folder


def _open_every_panel(page) -> None:
    for k in range(len(REQUESTS)):
        panel = turn(page, 2 * k + 1).locator("xpath=ancestor::*[@data-testid='stChatMessage']")
        open_expander(panel, "Candidates (4) and why this reply", panel.locator("table.cg-candidates"))


def _options(page, label: str) -> list[str]:
    """The options a sidebar select box offers (opened, read, closed with Escape)."""
    box = page.get_by_test_id("stSidebar").get_by_role("combobox", name=re.compile(label))
    box.click()
    options = page.get_by_role("option")
    options.first.wait_for(timeout=30_000)
    names = [o.strip() for o in options.all_inner_texts()]
    page.keyboard.press("Escape")
    return names


def test_a_student_sees_nothing_offensive_the_bot_wrote_sent_or_not(class_server, browser):
    """Issue 53: the student asks what the tester asked; every candidate but the last of each turn is offensive and
    withheld; nowhere on the page (transcript, live steps, candidate panels, the page's whole HTML) is a word of them,
    only that they were withheld and why."""
    url, _ = class_server
    page = browser.new_page(viewport={"width": 1280, "height": 1400})
    page.goto(url)
    for k, request in enumerate(REQUESTS):
        send(page, request)
        sync_api.expect(turn(page, 2 * k + 1)).to_be_visible(timeout=180_000)
    wait_until_idle(page)
    sync_api.expect(turn(page, 1)).to_contain_text("I would rather talk about my dog Max.")
    sync_api.expect(turn(page, 3)).to_contain_text("Let's talk about something nicer")
    _open_every_panel(page)
    wait_until_idle(page)
    html = page.content().lower()
    assert not [w for w in NEVER_SHOWN if w in html], [w for w in NEVER_SHOWN if w in html]
    # the student's own message is theirs, shown as typed; the bot's words are nowhere else
    assert page.locator("body").inner_text().lower().count("shit") == 3
    table = page.locator("table.cg-candidates").first.inner_text()
    assert table.count("withheld by the classroom filter") == 3 and "a slur" in table and "an insult" in table
    assert page.get_by_text("its text is not shown here").first.is_visible()
    page.close()


def test_a_student_on_a_class_server_has_no_path_box_and_only_the_teachers_models(class_server, browser):
    """Issue 53: no box to type a detector's path or name in, the teacher's bots and detectors only (a path the teacher
    gave shown by its folder's name), and an error about a detector that does not load holds no server path and no
    "Full error" with one."""
    url, folder = class_server
    page = browser.new_page(viewport={"width": 1280, "height": 1000})
    page.goto(url)
    sidebar = page.get_by_test_id("stSidebar")
    sync_api.expect(sidebar.get_by_role("combobox", name=re.compile("Contradiction detector"))).to_be_visible(
        timeout=120_000)
    wait_until_idle(page)
    assert sidebar.get_by_role("textbox", name=re.compile("Contradiction detector")).count() == 0
    assert _options(page, "Which bot") == ["scripted"]
    detectors = _options(page, "Contradiction detector")
    assert detectors[-1] == "teachers-detector" and len(detectors) == 2
    # the student picks the teacher's detector that does not load: said so, without the server's path
    sidebar.get_by_role("combobox", name=re.compile("Contradiction detector")).click()
    page.get_by_role("option", name="teachers-detector").click()
    settle(page)
    send(page, "Hello!")
    error = page.get_by_text("Could not load the detector 'teachers-detector'")
    sync_api.expect(error).to_be_visible(timeout=120_000)
    wait_until_idle(page)
    assert str(folder) not in page.content() and "/tmp/" not in page.content()
    assert page.get_by_text("Full error").count() == 0
    page.close()


def test_the_teacher_signed_in_keeps_every_control_and_reads_what_was_withheld(class_server, browser):
    """Issue 53: the same server as the teacher: the detector's box takes a name or a path, every bot is offered, and a
    withheld candidate's panel shows the teacher its text and what was caught."""
    url, _ = class_server
    page = browser.new_page(viewport={"width": 1280, "height": 1400})
    sign_in_as_teacher(page, url, PASSWORD)
    page.get_by_test_id("stSidebarNav").get_by_text("Guarded chat").click()  # a link within the app keeps the sign-in
    sidebar = page.get_by_test_id("stSidebar")
    sync_api.expect(sidebar.get_by_role("textbox", name=re.compile("Contradiction detector"))).to_be_visible(
        timeout=120_000)
    wait_until_idle(page)
    bots = _options(page, "Which bot")
    assert {"embedded", "scripted", "blenderbot", "remote"} <= set(bots)
    send(page, REQUESTS[0])
    sync_api.expect(turn(page, 1)).to_contain_text("I would rather talk about my dog Max.", timeout=180_000)
    panel = turn(page, 1).locator("xpath=ancestor::*[@data-testid='stChatMessage']")
    open_expander(panel, "Candidates (4) and why this reply", panel.locator("table.cg-candidates"))
    table = panel.locator("table.cg-candidates").inner_text()
    assert "You're a faggots." in table and "you're a stupid, ugly, ugly person" in table
    sync_api.expect(panel.get_by_text("caught:").first).to_be_visible()
    page.close()
