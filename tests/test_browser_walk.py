"""Issue 32: what a class sees on a new user's walk through all four pages, in headless Chromium (Playwright) against
`streamlit run app.py`. One server for every check (the one the browser modules share: conftest's app_server):

1. a candidate's "why" quotes the score of the check that decided, the number of its evidence row;
2. the per-turn chart draws each turn against the τ it was judged at, not today's;
3. after a successful Retry, neither the "no reply yet" warning nor the Retry button stays above the reply;
4. a probe log belongs to its dialogue: a new dialogue judged with Detect starts without it;
5. after A2T the result lists the turns in order, numbered as in the editor;
6. a message longer than the embedded bot's prompt gets a reply that says the bot read only its last part;
7. the Learn page speaks a class's words, not the papers' jargon.

The scripted bot (with a delay, so a reload can come mid-reply) and the embedded detector (its scores are what the
checks rest on: "I don't have any pets, and Max is a cat." clashes inside itself at p ≈ 0.76 and contradicts "I have
a dog named Max." at p ≈ 0.99; "I have two dogs." scores 0.63 against it, consistent at the shipped τ); check 6 picks the
embedded bot in the sidebar (converted once into the user's model cache, like test_browser_settings).
Skipped without Debian's /usr/bin/chromium or without models/detector.
"""

from __future__ import annotations

import json
import re

import pytest

from embedded import DETECTOR_DIR
from harness.server import (
    CHROMIUM,
    dialogue_editor,
    open_expander,
    send,
    set_tau,
    settle,
    turn,
    wait_until_idle,
)

pytestmark = [
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian chromium is not installed (make browser)"),
    pytest.mark.skipif(not (DETECTOR_DIR / "config.json").exists(), reason="the embedded detector is not there"),
]
sync_api = pytest.importorskip("playwright.sync_api")

DELAY_S = 2.0
#: the τ the chat starts at: the shipped detector's calibrated one
SHIPPED_TAU = json.loads((DETECTOR_DIR / "guard_config.json").read_text())["threshold"] if (
    DETECTOR_DIR / "guard_config.json").exists() else 0.0
SELF_CLASH = "I don't have any pets, and Max is a cat."
SCRIPT = {"delay": DELAY_S, "replies": [
    [{"text": "I have a dog named Max.", "score": -0.4}],
    [{"text": SELF_CLASH, "score": -0.2}, {"text": "I have two dogs.", "score": -0.9}],
]}


@pytest.fixture(scope="module")
def server(app_server):
    """The chat on the shared app server (conftest's app_server), SCRIPT (with its delay) played in re-rank mode."""
    return app_server.url(SCRIPT)


def _table(locator) -> list[dict[str, str]]:
    """An HTML table of ui.render.table_html as rows of {column: cell text}."""
    return locator.evaluate("""t => {
        const heads = Array.from(t.querySelectorAll('thead th')).map(h => h.dataset.column);
        return Array.from(t.querySelectorAll('tbody tr')).map(r => Object.fromEntries(
            Array.from(r.querySelectorAll('td')).map((c, i) => [heads[i], c.textContent])));
    }""")


def _sidebar(page):
    return page.get_by_test_id("stSidebar")


@pytest.fixture(scope="module")
def chat(server, browser):
    """Two bot turns at the detector's own τ: at turn 3 the candidate that clashes inside itself is
    rejected and "I have two dogs." (p ≈ 0.63) is sent. Shared by checks 1 and 2."""
    page = browser.new_page(viewport={"width": 1400, "height": 1400})
    page.goto(server)
    for k, message in enumerate(["Do you have pets?", "Tell me about your pets"]):
        send(page, message)
        sync_api.expect(turn(page, 2 * k + 1)).to_be_visible(timeout=180_000)
    sync_api.expect(turn(page, 3)).to_have_text("I have two dogs.")
    yield page
    page.close()


def test_why_quotes_the_score_of_the_check_that_decided(chat):
    table = chat.locator("table.cg-candidates").last
    open_expander(chat, "Candidates (2) and why this reply", table)
    row = next(r for r in _table(table) if r["reply"] == SELF_CLASH)
    why = row["why"]
    # the history check decides at the shipped thresholds: the clash with turn 1 (p ≈ 0.99) is over τ, the clash
    # inside the candidate (p ≈ 0.76) under the intra check's own threshold
    quoted = re.search(r"contradicts turn 1 .* with probability ([0-9.]+)", why)
    assert quoted, why
    rows = _table(chat.locator("table.cg-evidence-table").last)
    history = [float(r["score"]) for r in rows if r["compared with"].startswith("turn 1")]
    assert history, rows
    digits = len(quoted.group(1).split(".")[1])
    # the same number as the deciding pair's evidence row (at the why's precision), not the clause pair's
    assert float(quoted.group(1)) == pytest.approx(round(max(history), digits)), (why, rows)
    own = [float(r["score"]) for r in rows if r["compared with"] == "its own earlier clause"]
    assert all(round(o, digits) != float(quoted.group(1)) for o in own), (why, rows)
    # issue 38: and the table's score column is that number, beside the line of the check that decided
    assert row["contradiction score"] == quoted.group(1) and row["its line"] != "", row


def _tau_marks_over(page, turn_id: int) -> list[float]:
    """The page y of every τ mark of the per-turn chart drawn over bot turn ``turn_id``'s sent point, and that
    point's y (last)."""
    chart = page.locator(".vega-embed").last
    chart.locator("g.mark-symbol path").first.wait_for(timeout=60_000)
    return chart.evaluate("""(e, turnId) => {
        const box = el => el.getBoundingClientRect();
        const point = Array.from(e.querySelectorAll('g.mark-symbol path')).find(p => {
            const a = p.getAttribute('aria-label') || '';
            return a.includes('turn: ' + turnId + ';') && a.includes('sent reply');
        });
        if (!point) return null;
        const p = box(point), x = p.left + p.width / 2;
        // the τ rule (one line across the chart) or a τ tick per turn, whichever the chart draws
        const tau = m => [m.getAttribute('stroke'), m.getAttribute('fill')].some(c => (c || '').toLowerCase()
                                                                                     === '#b00000');
        const marks = Array.from(e.querySelectorAll('g.mark-rule line, g.mark-tick path, g.mark-rect path'))
            .filter(m => !m.closest('.role-legend, .role-axis') && tau(m))  // τ's marks, not a point's own line
            .map(box).filter(b => b.left - 1 <= x && x <= b.right + 1 && b.width > 2)
            .map(b => b.top + b.height / 2);
        return [...marks, p.top + p.height / 2];
    }""", turn_id)


def test_each_turn_is_drawn_against_the_tau_it_was_judged_at(chat):
    set_tau(chat, 0.5)  # today's τ: turn 3's reply (p ≈ 0.63) would contradict now, but was judged at the shipped τ
    wait_until_idle(chat)
    found = _tau_marks_over(chat, 3)
    assert found and len(found) >= 2, found
    *marks, point = found
    # a consistent turn's point lies under the τ that judged it (SVG y grows downwards)
    assert all(point > y for y in marks), (marks, point)
    svg = chat.locator(".vega-embed").last.locator("svg").text_content()
    assert f"{SHIPPED_TAU:.4f}" in svg, svg[:400]
    # a turn judged at today's τ gets its own τ drawn over it, the earlier ones keep theirs
    send(chat, "Anything else?")
    sync_api.expect(turn(chat, 5)).to_be_visible(timeout=180_000)
    wait_until_idle(chat)  # the run that drew turn 5 is over, its chart sent
    chat.wait_for_timeout(1500)
    *marks3, point3 = _tau_marks_over(chat, 3)
    *marks5, _ = _tau_marks_over(chat, 5)
    assert marks3 and all(point3 > y for y in marks3), (marks3, point3)
    assert len(marks5) == 1 and all(marks5[0] > y for y in marks3), (marks3, marks5)  # 0.5 drawn under the shipped τ
    caption = chat.get_by_text("Each turn was judged at its own τ")
    sync_api.expect(caption).to_contain_text(f"{SHIPPED_TAU:.4f}, 0.5")


def test_a_successful_retry_leaves_no_warning_above_the_reply(server, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 1200})
    page.goto(server)
    send(page, "Do you have pets?")
    # mid-reply (the bot takes DELAY_S): the message is saved and in the URL; a reload leaves it unanswered
    page.wait_for_function("() => window.location.search.includes('session=')", timeout=60_000)
    page.reload()
    warning = page.get_by_text("The last message has no reply yet")
    sync_api.expect(warning).to_be_visible(timeout=120_000)
    retry = page.get_by_role("button", name=re.compile("Retry reply"))
    retry.click()
    sync_api.expect(turn(page, 1)).to_have_text("I have a dog named Max.", timeout=120_000)
    wait_until_idle(page)  # the retried run is over: what it leaves above the reply is final
    page.wait_for_timeout(1000)
    assert warning.count() == 0 or not warning.first.is_visible()
    assert retry.count() == 0 or not retry.first.is_visible()
    page.close()


#: a built-in example the embedded detector calls a contradiction with evidence, so A2T and RCT apply
PROBED = "DNLI: I have a dog / I do not have a dog"


def _playground(app_server, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 1400})
    page.goto(app_server.url(page="playground"))
    page.get_by_text("The detector agrees with people").wait_for(timeout=180_000)  # the examples are judged
    examples = page.get_by_role("combobox", name="Built-in example")
    examples.click()
    page.get_by_role("option", name=PROBED, exact=True).click()
    sync_api.expect(examples).to_have_value(PROBED)
    sync_api.expect(dialogue_editor(page)).to_have_value(re.compile("do you have any pets"), timeout=60_000)
    return page


def test_a_new_dialogue_starts_without_the_last_ones_probe_log(app_server, browser):
    page = _playground(app_server, browser)
    page.get_by_role("button", name="Remove the reason (RCT)").click()
    log = page.locator("table.cg-probe-log")
    sync_api.expect(log).to_contain_text("RCT", timeout=180_000)
    wait_until_idle(page, timeout_ms=180_000)  # RCT's rerun has put its variant in the editor: typing starts after
    text = "A: I love tea in the morning.\nB: Me too, with milk.\nA: I never drink tea."
    dialogue_editor(page).fill(text)
    dialogue_editor(page).press("Control+Enter")
    settle(page)
    page.get_by_test_id("stBaseButton-primary").filter(has_text="Detect").click()
    sync_api.expect(page.locator(".cg-dialogue").first).to_contain_text("I never drink tea.", timeout=180_000)
    wait_until_idle(page, timeout_ms=180_000)  # the Detect run is over (the editor's text is drawn before it ends)
    # the RCT row was about the example, not this dialogue (waited for: a run still drawing keeps the old elements)
    sync_api.expect(log).to_have_count(0, timeout=60_000)
    assert page.get_by_text("Probe log").count() == 0
    page.close()


def test_after_a2t_the_result_lists_the_turns_in_order(app_server, browser):
    page = _playground(app_server, browser)
    page.get_by_role("button", name="Add two turns (A2T)").click()
    sync_api.expect(page.locator("table.cg-probe-log")).to_contain_text("A2T", timeout=180_000)
    wait_until_idle(page)
    ids = page.locator(".cg-dialogue").first.locator(".cg-turn").evaluate_all(
        "es => es.map(e => Number(e.dataset.turnId))")
    lines = [line for line in dialogue_editor(page).input_value().splitlines() if line.strip()]
    assert ids == list(range(len(lines))), (ids, lines)
    labels = page.locator(".cg-dialogue").first.inner_text()
    assert [int(n) for n in re.findall(r"\bturn (\d+)\b", labels)][:len(ids)] == ids, labels
    page.close()


def test_learn_speaks_a_class_s_words(app_server, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 1400})
    page.goto(app_server.url(page="learn"))
    page.get_by_role("link", name=re.compile("Chat with a guarded bot")).wait_for(timeout=180_000)
    page.get_by_text("agrees with people").first.wait_for(timeout=180_000)
    wait_until_idle(page)
    # everything on the page, the closed expander and the tabs not shown included (no sidebar: it names the slider)
    text = page.get_by_test_id("stMain").evaluate(
        "e => { const c = e.cloneNode(true); c.querySelectorAll('style, script').forEach(s => s.remove());"
        " return c.textContent; }")
    jargon = ["τ", "p =", "p=", "NLI", "spaCy", "clause", "entail", "intra", "of the time", "unstructured",
              "baseline", "A2T", "RCT", "checklist", "truncat", "gloss", "dilute", "premise", "categor",
              "history contradiction", "CDConv", "DECODE", "DNLI"]
    found = {word: text[max(0, text.find(word) - 60):text.find(word) + 60] for word in jargon if word in text}
    assert not found, found
    page.close()


LONG_MESSAGE = " ".join(
    f"On day {k} of our trip we walked along the river, bought bread at a small bakery, and talked about the "
    "books we had read that summer." for k in range(1, 60))[:5000]


def test_a_message_longer_than_the_prompt_says_what_the_bot_read(server, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 1200})
    page.goto(server)
    generator = _sidebar(page).get_by_role("combobox", name="Which bot")
    generator.click()
    page.get_by_role("option", name="embedded", exact=True).click()
    sync_api.expect(generator).to_have_value("embedded")
    settle(page)
    assert len(LONG_MESSAGE) == 5000
    send(page, LONG_MESSAGE)
    sync_api.expect(turn(page, 1)).to_be_visible(timeout=600_000)  # the first use converts the embedded bot
    said = " ".join(page.get_by_test_id("stChatMessage").nth(1).get_by_test_id("stCaptionContainer")
                    .all_inner_texts())
    read = re.search(r"read only the last ([\d,]+) of (?:its|your) ([\d,]+) characters", said)
    assert read, said
    seen, total = (int(n.replace(",", "")) for n in read.groups())
    assert total == 5000 and 0 < seen < 5000, said
    page.close()
