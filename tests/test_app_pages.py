"""The playground and learn pages through Streamlit's AppTest, and what every page run of the process shares (the
start-up warm-up, the A2T pool: loaded once, whichever session asks).

Plumbing on a tiny random NLI model (τ = 0.1 via its guard_config.json, so it flags); what the
verdicts should be on the papers' examples is checked with the embedded detector (skipped without it).
"""

from __future__ import annotations

import html
import re

import pytest
from conftest import APP, html_tables

from embedded import DETECTOR_DIR

AppTest = pytest.importorskip("streamlit.testing.v1").AppTest

HAS_EMBEDDED = (DETECTOR_DIR / "config.json").exists()
needs_embedded = pytest.mark.skipif(not HAS_EMBEDDED, reason="the embedded detector (models/detector) is not there yet")


def _page(monkeypatch, detector: str, page: str) -> AppTest:
    monkeypatch.setenv("GUARD_APP_DETECTOR", detector)
    monkeypatch.delenv("GUARD_APP_SCRIPT", raising=False)
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def _button(at: AppTest, label: str):
    [button] = [b for b in at.button if b.label == label]
    return button


def _probe_log(at: AppTest) -> list[dict]:
    frames = html_tables(at, "cg-probe-log")
    return frames[0].to_dict("records") if frames else []


def test_playground_detect_a2t_rct_buttons(monkeypatch, flagging_detector):
    at = _page(monkeypatch, str(flagging_detector), "pages/playground.py")
    at.selectbox(key="pg_example").set_value("decode_human_bot").run()
    _button(at, "Detect").click().run()
    assert not at.exception, at.exception
    headers = [s.value for s in at.subheader]
    assert "One turn at a time (structured)" in headers and "All at once (unstructured)" in headers
    assert any("history contradiction" in m.value for m in at.markdown)
    assert len(at.get("vega_lite_chart")) == 1  # the pair-score heatmap
    evidence = [h.proto.body for h in at.html if 'class="cg-evidence"' in h.proto.body]
    assert evidence, "evidence turns are highlighted"

    before = at.session_state["pg_text"].count("\n") + 1
    _button(at, "Add two turns (A2T)").click().run()
    assert not at.exception, at.exception
    assert at.session_state["pg_text"].count("\n") + 1 == before + 2  # two real chit-chat turns inserted
    [entry] = _probe_log(at)
    assert entry["probe"] == "A2T" and entry["should"] == "stays a contradiction"

    _button(at, "Remove the reason (RCT)").click().run()
    assert not at.exception, at.exception
    log = _probe_log(at)
    assert [e["probe"] for e in log] == ["A2T", "RCT"]
    assert log[1]["should"] == "flips to no contradiction"
    assert at.session_state["pg_text"].count("\n") + 1 < before + 2  # evidence turns removed


def test_playground_a2t_result_numbers_the_turns_as_the_editor_does(monkeypatch, flagging_detector):
    """Issue 32: after A2T the result listed the turns as 0, 1, 2, 4, 5, 3 (the probe's ids)."""
    at = _page(monkeypatch, str(flagging_detector), "pages/playground.py")
    at.selectbox(key="pg_example").set_value("dnli_dog").run()
    _button(at, "Add two turns (A2T)").click().run()
    assert not at.exception, at.exception
    result = at.session_state["pg_result"]["dialogue"]
    lines = at.session_state["pg_text"].splitlines()
    assert [t.turn_id for t in result.turns] == list(range(len(lines))) and len(lines) == 6
    assert [f"{t.agent_id}: {t.text}" for t in result.turns] == lines
    [dialogue] = [h.proto.body for h in at.html if 'class="cg-dialogue"' in h.proto.body][:1]
    import re
    assert [int(i) for i in re.findall(r'data-turn-id="(\d+)"', dialogue)] == list(range(6))


def test_playground_probe_log_is_about_its_own_dialogue(monkeypatch, flagging_detector):
    """Issue 32: RCT on an example, then a new dialogue typed and judged: the example's RCT row was still there."""
    at = _page(monkeypatch, str(flagging_detector), "pages/playground.py")
    at.selectbox(key="pg_example").set_value("dnli_dog").run()
    _button(at, "Remove the reason (RCT)").click().run()
    assert [e["probe"] for e in _probe_log(at)] == ["RCT"]
    _button(at, "Detect").click().run()  # the dialogue RCT left, judged again: still its log
    assert [e["probe"] for e in _probe_log(at)] == ["RCT"]
    at.text_area(key="pg_text").set_value("A: I love tea.\nB: Me too.\nA: I never drink tea.").run()
    _button(at, "Detect").click().run()
    assert not at.exception, at.exception
    assert _probe_log(at) == [] and "Probe log" not in [s.value for s in at.subheader]
    _button(at, "Add two turns (A2T)").click().run()  # a probe on the new dialogue starts a log of its own
    assert [e["probe"] for e in _probe_log(at)] == ["A2T"]


def test_playground_reports_unreadable_dialogue(monkeypatch, flagging_detector):
    at = _page(monkeypatch, str(flagging_detector), "pages/playground.py")
    at.text_area(key="pg_text").set_value("A: hello\nthis line has no speaker").run()
    _button(at, "Detect").click().run()
    assert any("line 2" in e.value for e in at.error)


def test_learn_page_renders_live_examples(monkeypatch, flagging_detector):
    at = _page(monkeypatch, str(flagging_detector), "pages/learn.py")
    headers = [h.value for h in at.header]
    assert headers[0].startswith("1. What is a contradiction in a conversation")
    assert len(headers) == 6 and headers[4] == "5. Plain facts: the bot's fact sheet"
    assert headers[5] == "6. What the guard does with what it finds"
    choice = next(m.value for m in at.markdown if m.value.startswith("In the chat the bot writes several replies"))
    # issue 54: said in general, true to the chat: it prefers a reply that answers and that the description supports
    assert "prefers one that answers" in choice and "supports" in choice and "did not answer" in choice
    verdicts = [m.value for m in at.markdown if m.value.startswith(("⚠️ Detector:", "✅ Detector:"))]
    assert len(verdicts) >= 8  # every live example was judged
    assert {t.label for t in at.tabs} == {"With itself", "Who is who", "Something said earlier"}


#: the papers' words a class does not know (issue 32: "clauses of one human message clash that often only 1% of the
#: time"); the Learn page says each in plain words, the playground keeps them
JARGON = ("τ", "p =", "p=", "NLI", "spaCy", "clause", "entail", "intra", "of the time", "unstructured", "baseline",
          "A2T", "RCT", "checklist", "truncat", "gloss", "dilute", "premise", "categor", "history contradiction",
          "CDConv", "DECODE", "DNLI", "generator", "flags from", "persona line")


def test_learn_page_speaks_a_class_s_words(monkeypatch, flagging_detector):
    at = _page(monkeypatch, str(flagging_detector), "pages/learn.py")
    texts = ([m.value for m in at.markdown] + [c.value for c in at.caption] + [h.value for h in at.header]
             + [h.value for h in at.title] + [s.value for s in at.subheader] + [t.label for t in at.tabs]
             + [e.label for e in at.expander]
             + [html.unescape(re.sub(r"<[^>]+>", " ", h.proto.body)) for h in at.html])  # the text, not the markup
    found = {word: [t for t in texts if word in t][:2] for word in JARGON if any(word in t for t in texts)}
    assert not found, found


@needs_embedded
def test_playground_embedded_verdicts_on_the_papers_examples(monkeypatch):
    at = _page(monkeypatch, "embedded", "pages/playground.py")
    at.selectbox(key="pg_example").set_value("dnli_dog").run()  # "I have a dog." ... "I do not have a dog."
    _button(at, "Detect").click().run()
    result = at.session_state["pg_result"]
    assert result["structured"].contradiction and result["structured"].evidence_turn_ids == [1]
    _button(at, "Remove the reason (RCT)").click().run()
    [entry] = _probe_log(at)
    assert entry["one turn at a time: held?"] == "✔ held"  # the contradiction disappears with its evidence


#: issue 38: the role tab's only example ("I work as a nurse" after "I am a teacher") was one detector v4 gets wrong
#: (0.92 < τ: its same-bot training pairs read job-vs-job clashes as consistent, docs/detector.md); the tab now
#: teaches with one it gets right and shows that one after it, said to be wrong
LEARN_CATEGORIES = (("intra", "contradicts itself"), ("history", "contradicts something said earlier"),
                    ("role", "mixes up who is who"))


@needs_embedded
@pytest.mark.parametrize("category,shown", LEARN_CATEGORIES)
def test_learn_page_categories_are_caught_by_the_embedded_detector(monkeypatch, category, shown):
    at = _page(monkeypatch, "embedded", "pages/learn.py")
    lines = [m.value for m in at.markdown if "people say:" in m.value]
    # each category tab's example is judged as the category it teaches (people's word last, the detector's first)
    assert any(line.startswith(f"⚠️ Detector: **{shown}**") and line.endswith(f"people say: **{shown}**")
               for line in lines), (category, lines)


@needs_embedded
def test_the_learn_page_says_what_catches_the_job_mix_up(monkeypatch):
    """Issue 38 showed the nurse/teacher mix-up as one the detector misses; issue 41's fact sheet knows a job has one
    value, and the Learn page (every check on) says so under the example, both jobs named."""
    from ui.fact_sheet import FACT_ICON
    from ui.render import escape_markdown

    at = _page(monkeypatch, "embedded", "pages/learn.py")
    said = [m.value for m in at.markdown]
    intro = next(i for i, m in enumerate(said) if m.startswith("In the next one the bot takes over the user's job"))
    shown = said[intro:intro + 8]
    assert f"{FACT_ICON} " + escape_markdown("The fact sheet: job: teacher (turn 1) vs nurse") in shown, shown
    assert any(m.startswith("⚠️ Detector:") for m in shown) and not any("✘ wrong" in m for m in shown), shown


def test_examples_show_right_or_wrong_and_a_live_summary(monkeypatch, flagging_detector):
    from guard.eval.examples import agreement_line, judge_examples
    from guard.judge.pipeline import Guard
    from guard.models.loading import load_scorer

    # what the page must say, computed here from the same detector at the same τ
    guard = Guard.over(load_scorer(str(flagging_detector)))
    judgements = judge_examples(guard, guard.settings(mode="flag", threshold=0.1))
    line = agreement_line(judgements)
    at = _page(monkeypatch, str(flagging_detector), "pages/playground.py")
    summary = [m.value for m in at.markdown if m.value.startswith("**The detector agrees")]
    assert summary and summary[0].replace("\\", "") == f"**{line.capitalize()}.**"
    for judgement in judgements[:4]:
        at.selectbox(key="pg_example").set_value(judgement.key).run()
        shown = [m.value for m in at.markdown if "✔ right" in m.value or "✘ wrong" in m.value]
        assert len(shown) == 1 and (("✔ right" in shown[0]) == judgement.agrees), (judgement, shown)
    assert any("A person would say" in c.value for c in at.caption)
    at.text_area(key="pg_text").set_value("A: I like fish.\nB: ok\nA: I hate fish.").run()
    assert not any("✔ right" in m.value or "✘ wrong" in m.value for m in at.markdown)  # edited: nothing to grade
    # nor what people say about the example beside a dialogue the user typed (issue 45)
    assert not any("A person would say" in c.value for c in at.caption)
    assert any("not the example as written" in c.value for c in at.caption)

    learn = _page(monkeypatch, str(flagging_detector), "pages/learn.py")
    assert any(m.value.startswith("**The detector agrees") for m in learn.markdown)
    graded = [m.value for m in learn.markdown if "✔ right" in m.value or "✘ wrong" in m.value]
    assert len(graded) >= 7  # every example judged by the structured detector


def test_a2t_draws_real_chitchat_pairs_by_seed_and_says_which(monkeypatch, flagging_detector):
    at = _page(monkeypatch, str(flagging_detector), "pages/playground.py")
    at.selectbox(key="pg_example").set_value("dnli_job").run()
    _button(at, "Detect").click().run()
    _button(at, "Add two turns (A2T)").click().run()
    assert at.number_input(key="pg_a2t_seed").value == 1  # the next A2T draws another pair
    _button(at, "Add two turns (A2T)").click().run()  # on the variant: two more turns, from the next seed
    first, second = [e["what it changed"] for e in _probe_log(at)]
    assert first.startswith("seed 0: ") and second.startswith("seed 1: ")
    assert "chit-chat conversation" in first and first[len("seed 0"):] != second[len("seed 1"):]
    # issue 38: the row numbers the added turns as the dialogue (the editor) does, not as their source conversation
    lines = at.session_state["pg_text"].splitlines()
    numbers = [int(n) for n in re.search(r"turns (\d+)-(\d+)", second).groups()]
    quoted = re.findall(r'"([^"]*)"', second)
    assert [lines[n].split(": ", 1)[1] for n in numbers] == quoted, (second, lines)


def test_two_sessions_read_the_a2t_pool_once(monkeypatch, flagging_detector):
    """The pool is kept by ui.models, which every page run shares, not by the playground's script, which Streamlit
    runs anew on every click: a second session's A2T reads no chit-chat again."""
    import ui.models

    reads, read = [], ui.models.chitchat_a2t_pool
    monkeypatch.setattr(ui.models, "chitchat_a2t_pool", lambda: reads.append("read") or read())
    ui.models._LOADED.forget(ui.models._A2T_POOL)  # as on a fresh server
    for _ in range(2):
        at = _page(monkeypatch, str(flagging_detector), "pages/playground.py")
        at.selectbox(key="pg_example").set_value("dnli_job").run()
        _button(at, "Detect").click().run()
        _button(at, "Add two turns (A2T)").click().run()
        _button(at, "Add two turns (A2T)").click().run()
        assert not at.exception, at.exception
        assert [e["probe"] for e in _probe_log(at)] == ["A2T", "A2T"]
    assert reads == ["read"]


def test_two_sessions_start_one_warm_up(monkeypatch, flagging_detector):
    """The start-up warm-up (ui.startup) starts once per process and defaults, not once per session or page run."""
    import ui.startup
    from ui.app_defaults import defaults

    started = []

    def start(bot: str, detector: str) -> ui.startup.WarmUp:
        started.append((bot, detector))
        return ui.startup.WarmUp(finished=True)  # loads nothing: what is counted is the starting

    monkeypatch.setattr(ui.startup, "_start", start)
    monkeypatch.setenv("GUARD_APP_DETECTOR", str(flagging_detector))
    key = ("model warm-up", defaults().bot, str(flagging_detector))
    ui.startup._WARM_UPS.forget(key)  # as on a fresh server
    try:
        for _ in range(2):
            at = AppTest.from_file(APP, default_timeout=120).run()
            assert not at.exception, at.exception
            at.run()
    finally:
        ui.startup._WARM_UPS.forget(key)  # the next test's app starts a real one
    assert started == [key[1:]]


def test_rct_says_which_turns_it_removed(monkeypatch, flagging_detector):
    """Issue 38: the RCT row said nothing of what it removed."""
    at = _page(monkeypatch, str(flagging_detector), "pages/playground.py")
    at.selectbox(key="pg_example").set_value("dnli_dog").run()
    before = at.session_state["pg_text"].splitlines()
    _button(at, "Remove the reason (RCT)").click().run()
    [entry] = _probe_log(at)
    removed = re.match(r"removed turns? ([\d, -]+): (.*)$", entry["what it changed"])
    assert removed, entry
    numbers = [int(n) for n in re.findall(r"\d+", removed.group(1))]
    if "-" in removed.group(1):
        numbers = list(range(numbers[0], numbers[1] + 1))
    texts = [before[i].split(": ", 1)[1] for i in numbers]
    assert removed.group(2) == " / ".join(f'"{t}"' for t in texts)
    assert len(at.session_state["pg_text"].splitlines()) == len(before) - len(numbers)  # and they are gone


def test_a_bad_detector_name_is_one_short_error(monkeypatch):
    for page in ("pages/playground.py", "pages/learn.py"):
        at = _page(monkeypatch, "no-such/detector", page)
        if page.endswith("playground.py"):
            _button(at, "Detect").click().run()
        errors = [e.value for e in at.error if "Could not load the detector" in e.value]
        assert len(errors) == 1, errors
        assert "no such folder" in errors[0] and len(errors[0]) < 300


def test_load_errors_say_what_each_page_keeps(monkeypatch):
    """Issue 19 item 5: the playground has no conversation; its error says what it does keep."""
    kept = {"pages/playground.py": "(your dialogue and the probe log are kept)",
            "pages/learn.py": "(the explanations below still read without it)"}
    for page, phrase in kept.items():
        at = _page(monkeypatch, "no-such/detector", page)
        [error] = [e.value for e in at.error if "Could not load the detector" in e.value]
        assert phrase in error and "conversation" not in error, error



@pytest.mark.parametrize("page", ["guarded_chat", "playground", "learn", "review"])
def test_a_page_run_alone_on_a_fresh_server_offers_the_app_and_draws_nothing_of_its_own(page, fresh_server):
    """A fresh server whose first visitor opens a page's own address: Streamlit runs the page alone. The page offers
    the app (a link that opens the same page in it) and stops before its own first line."""
    from ui import navigation

    spec = next(s for s in navigation.PAGES if s.path == f"pages/{page}.py")
    at = AppTest.from_file(APP, default_timeout=60)
    at.switch_page(spec.path).run()
    assert not at.exception, at.exception
    assert [t.value for t in at.title] == [f"{spec.icon} {spec.title}"]
    assert ["opens inside it" in i.value for i in at.info] == [True]
    [link] = at.get("page_link")
    assert link.proto.label == f"Open “{spec.title}” in the app"
    assert link.proto.query_string == ("" if spec.default else f"open={navigation.url_path(spec)}")
    assert not at.text_input and not at.button and not at.chat_input  # nothing else of the page ran


def test_the_offers_link_opens_its_page_inside_the_app(monkeypatch, flagging_detector):
    monkeypatch.setenv("GUARD_APP_DETECTOR", str(flagging_detector))
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["open"] = "learn"
    at.run()
    assert not at.exception, at.exception
    assert [t.value for t in at.title] == ["Learn: contradictions in dialogue"]
    assert "open" not in at.query_params and not any("opens inside it" in i.value for i in at.info)


def _shown(at: AppTest) -> str:
    return "\n".join([m.value for m in at.markdown] + [c.value for c in at.caption] + [h.proto.body for h in at.html])


def test_the_learn_page_in_a_students_words(monkeypatch, flagging_detector):
    """Issue 45: no "Every check runs here … naming role confusion", the who-is-speaking rule explained once (not
    under every example), no "Closest words of the user", and no statement the bot never said in a table."""
    at = _page(monkeypatch, str(flagging_detector), "pages/learn.py")
    shown = _shown(at)
    assert "Every check runs here" not in shown and "naming role confusion" not in shown
    assert "Closest words of the user" not in shown
    assert shown.count("only when the user's side reaches") <= 1
    tables = html_tables(at)
    said = {str(v) for t in tables if "statement A" in t.columns for v in [*t["statement A"], *t["statement B"]]}
    assert "I work as a doctor." not in said  # "i'm a doctor." read with "what do you do?": a reading, not said


def test_every_check_note_in_a_students_words():
    from ui.verdict_checks import every_check_note

    note = every_check_note(["intra"])
    assert note.startswith("This page runs all of the detector's checks. The chat skips some of them")
    assert "whether the bot mixes up who is who" in note and "role confusion" not in note
    assert every_check_note(["intra", "own_question", "role", "facts"]).endswith("the same ones the chat runs.")
    assert every_check_note(["intra", "own_question", "role"]).endswith(
        "whether a reply gives a fact the bot stated about itself another value.")


def _fact_rows(at: AppTest) -> list[dict]:
    """The fact sheet's rows on a page: about, value, where and the clash marks' texts."""
    rows = []
    for body in [h.proto.body for h in at.html if 'class="cg-fact-sheet"' in h.proto.body]:
        for cells in re.findall(r'<tr class="cg-fact [^"]*"[^>]*>(.*?)</tr>', body, flags=re.S):
            about, value, where = (html.unescape(re.sub(r"<[^>]+>", "", c)).split("✘")[0]
                                   for c in re.findall(r"<td[^>]*>(.*?)</td>", cells, flags=re.S))
            marks = [html.unescape(m) for m in re.findall(r'class="cg-fact-mark[^"]*"[^>]*>✘ (.*?)</span>', cells)]
            rows.append({"about": about, "value": value, "where": where, "marks": marks})
    return rows


def test_playground_shows_the_fact_sheet_of_a_typed_dialogue(monkeypatch, flagging_detector, nlp, wn):
    """Issue 41: the playground shows the sheet of the dialogue it judges (the last speaker's earlier facts), the
    last turn's clash marked on the fact with both values, every typed text escaped."""
    at = _page(monkeypatch, str(flagging_detector), "pages/playground.py")
    at.text_area(key="pg_text").set_value(
        "<b>Ann</b>: I live in Paris and I work as a nurse.\nBob: Where do you work?\n"
        "<b>Ann</b>: I'm a teacher at a school <i>nearby</i>.").run()
    _button(at, "Detect").click().run()
    assert not at.exception, at.exception
    [heading] = [s.value for s in at.subheader if s.value.startswith("Fact sheet")]
    assert heading == "Fact sheet: what \\<b\\>Ann\\</b\\> said about themselves before the last turn"
    rows = _fact_rows(at)
    assert {(r["about"], r["value"], r["where"]) for r in rows} == {("lives in", "Paris", "turn 0"),
                                                                    ("job", "nurse", "turn 0")}, rows
    [job] = [r for r in rows if r["about"] == "job"]
    assert job["marks"] == ["the last turn says teacher"]
    from ui.render import escape_markdown

    clash = [m.value for m in at.markdown if m.value.startswith("✘ Clash")]
    assert clash == ["✘ " + escape_markdown("Clash: job: nurse (turn 0) vs teacher. The last turn says “I'm a teacher "
                                            "at a school <i>nearby</i>.”")], clash


def test_learn_teaches_the_fact_sheet_with_its_example(monkeypatch, flagging_detector, nlp, wn):
    """Section 5 builds its example from text (a description "I have two dogs.", a reply "I have a team of 12
    dogs.") and shows the sheet with the clash on the fact: here on the tiny detector, whatever its scores."""
    at = _page(monkeypatch, str(flagging_detector), "pages/learn.py")
    rows = _fact_rows(at)
    [dogs] = [r for r in rows if r["about"] == "dogs"]
    assert dogs == {"about": "dogs", "value": "2", "where": "the bot's description",
                    "marks": ["the last turn says 12"]}, rows
    assert any(m.value.startswith(":green[**✔ right**: the fact sheet catches it") for m in at.markdown)
    said = "\n".join(m.value for m in at.markdown)
    for limit in ("reads only a few kinds of facts", "misses facts said in other ways",
                  "The past and wishes are no clash", "that dictionary has gaps"):
        assert limit in said, limit


@needs_embedded
def test_learn_s_fact_sheet_example_is_one_the_guard_gets_right(monkeypatch):
    """With the shipped detector the example is caught, and by the fact sheet (the pair score alone misses it)."""
    at = _page(monkeypatch, "embedded", "pages/learn.py")
    said = [m.value for m in at.markdown]
    start = next(i for i, m in enumerate(said) if m.startswith("Many contradictions are about plain facts"))
    verdict = next(m for m in said[start:] if m.startswith(("⚠️ Detector:", "✅ Detector:")))
    assert verdict.startswith("⚠️ Detector: **contradicts something said earlier**"), verdict
    assert any(m.startswith(":green[**✔ right**: the fact sheet catches it") for m in said[start:])
    [dogs] = [r for r in _fact_rows(at) if r["about"] == "dogs"]
    assert dogs["marks"] == ["the last turn says 12"]


def test_what_the_learn_page_says_the_fact_sheet_misses_holds(nlp, wn):
    """The limits section 5 states, checked against the sheet itself: if the guard learns one of them, the page's
    words must change."""
    from guard.language.fact_sheet import FactSheet, read_facts
    from guard.vocabulary import PremiseSource

    def clashes(before: str, after: str) -> tuple:
        return FactSheet(read_facts(before, PremiseSource.PERSONA, 0)).clashes(
            read_facts(after, PremiseSource.HISTORY, 1))

    assert clashes("I have two dogs.", "I have a team of 12 dogs.")  # the example: caught
    assert not read_facts("I walk my two furry friends every day.", PremiseSource.HISTORY, 1)
    assert not read_facts("I look after patients all day.", PremiseSource.HISTORY, 1)
    assert not clashes("I live in Paris.", "I used to live in Rome.")
    assert not clashes("I have no pets.", "I'd love a cat one day.")
    assert not clashes("I work as a doctor.", "I work as a surgeon.")
    assert clashes("I'm a teacher.", "I'm a professor.")


@pytest.mark.skipif(not HAS_EMBEDDED, reason="the embedded detector is not there")
def test_the_playgrounds_numbers_for_one_verdict_agree(monkeypatch):
    """Issue 54: on the role-confusion example the right-and-wrong table said p 0.92 (the highest check's score)
    beside the verdict's p = 0.83 (the deciding check's, its evidence row's). Every p the page draws from the one
    verdict on the example is the same number: the verdict line's, the evidence row's, the table's."""
    at = _page(monkeypatch, "embedded", "pages/playground.py")
    at.selectbox(key="pg_example").set_value("role_written").run()
    _button(at, "Detect").click().run()
    assert not at.exception, at.exception
    [line] = [m.value for m in at.markdown if "role confusion** · p = " in m.value]
    verdict_p = float(re.search(r"p = ([0-9.]+)", line).group(1))
    [table] = [f for f in html_tables(at) if "people say" in f.columns]
    [row] = table[table["example"] == "Role confusion: the bot takes over the user's job"].to_dict("records")
    assert float(row["p"]) == round(verdict_p, 2), (row, line)
    [evidence] = [f for f in html_tables(at) if "compared with" in f.columns]
    assert float(evidence["score"].iloc[0]) == round(verdict_p, 2)


def test_learn_says_each_thing_once_and_explains_its_lines(monkeypatch, flagging_detector):
    """Issue 54: the long-chat note was printed twice (under both ways of checking); the page showed three
    percentages as lines (94 %, 93 %, 50 %) and never said why they differ; it said "Hobbies ... are not on it" while
    the chat's sheet shows what the bot does and eats."""
    at = _page(monkeypatch, str(flagging_detector), "pages/learn.py")
    captions = [c.value for c in at.caption]
    assert sum("ten turns earlier" in c for c in captions) == 1, captions
    [intro] = [c for c in captions if "that is its line" in c]
    main = re.search(r"at least (\d+)% sure", intro).group(1)
    [lines] = [e for e in at.expander if e.label == "Why the page shows different percentages as lines"]
    explained = " ".join(m.value for m in lines.markdown)
    assert f"**{main}%** is the main line" in explained and "**50%**" in explained and "same reply" in explained
    limits = next(m.value for m in at.markdown if m.value.startswith("**Where the fact sheet stops.**"))
    assert "Hobbies" not in limits and "what they eat" in limits and "what they do" in limits
