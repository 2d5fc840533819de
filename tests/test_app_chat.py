"""The chat page through Streamlit's AppTest: a message in, a guarded reply out, highlights, errors.

The bot is the scripted bot (bots/scripted.py) so a contradicting candidate can be planted.
Plumbing runs on a tiny random NLI model whose guard_config.json sets τ = 0.1, so every candidate
is flagged; behaviour (the planted contradiction is caught, the consistent candidate is sent) runs
on the embedded detector and is skipped without models/detector.
"""

from __future__ import annotations

import html

import pytest
from conftest import APP, html_tables, open_panels, say, start_scripted_app

from conversation.classroom import Why, withheld_line
from embedded import DETECTOR_DIR

streamlit_testing = pytest.importorskip("streamlit.testing.v1")
AppTest = streamlit_testing.AppTest

HAS_EMBEDDED = (DETECTOR_DIR / "config.json").exists()

PLANTED = {"replies": [
    [{"text": "I have a dog named Max.", "score": -0.4}],
    [{"text": "I have never had a dog.", "score": -0.2},
     {"text": "Max loves long walks in the park.", "score": -0.9}],
]}


def _app(monkeypatch, tmp_path, detector: str, mode: str = "rerank", script: dict = PLANTED) -> AppTest:
    return start_scripted_app(monkeypatch, tmp_path, detector, mode, script)


def _turn_html(at: AppTest, turn_id: int) -> str:
    bodies = [h.proto.body for h in at.html if f'data-turn-id="{turn_id}"' in h.proto.body]
    assert bodies, f"turn {turn_id} not rendered"
    return bodies[0]


def test_message_in_guarded_reply_out_with_highlight(monkeypatch, tmp_path, flagging_detector):
    at = _app(monkeypatch, tmp_path, str(flagging_detector))
    say(at, "Do you have pets?")
    assert [m.name for m in at.chat_message] == ["user", "assistant"]
    assert "I have a dog named Max." in _turn_html(at, 1)
    say(at, "Tell me about your pets")
    assert [m.name for m in at.chat_message] == ["user", "assistant", "user", "assistant"]
    # τ = 0.1 flags both candidates: re-rank keeps the generator's best and says so
    assert "I have never had a dog." in _turn_html(at, 3)
    assert any("flagged" in c.value for c in at.caption)
    # the earlier bot turn is highlighted as evidence, with the pair score in its badge
    evidence = _turn_html(at, 1)
    assert 'class="cg-evidence"' in evidence and "p=0." in evidence
    assert 'class="cg-clause"' in _turn_html(at, 3)
    # every candidate with its scores and reason, on demand
    assert any(e.label.startswith("Candidates (2)") for e in at.expander)
    tables = html_tables(open_panels(at), "cg-candidates")
    assert len(tables) == 2  # one candidates table per bot turn
    table = tables[1]
    assert list(table["reply"]) == ["I have never had a dog.", "Max loves long walks in the park."]
    assert list(table.columns) == ["#", "sent", "reply", "why", "bot's own score", "contradiction score",
                                   "its line", "kind", "clashes with the fact sheet"]
    # the tiny detector's config keeps every check: the fact sheet's clash of "never had a dog" with turn 1's dog
    assert list(table["clashes with the fact sheet"]) == ["dogs: at least 1 (turn 1) vs none", ""]
    assert (table["contradiction score"] != "").all() and table["why"].str.len().min() > 10
    # one number per decision: the score column quotes the deciding check's score as the "why" text does
    report = at.session_state["chat::conversation"].turns[3].report
    for row, cand in zip(table.to_dict("records"), report.candidates):
        assert f"probability {row['contradiction score']} (threshold {row['its line']})" in row["why"], row
    state = at.session_state["chat::conversation"]
    assert [t.agent_id for t in state.turns] == ["user", "bot", "user", "bot"]
    # issue 54: the panels in a class's words: the bot's own score, not the generator's; no "band", no "flags from"
    words = " ".join([*table["why"], *table.columns, *(m.value for m in at.markdown), *(c.value for c in at.caption)])
    assert "bot's own score" in words
    for jargon in ("generator", "band", "flags from"):
        assert jargon not in words, jargon


def test_the_transcript_writes_nothing_but_its_turns(monkeypatch, tmp_path, flagging_detector):
    """Each turn is drawn into its place without a stray "None" under it (Streamlit's magic writes the value of any
    expression standing alone in a page script: a conditional expression used as a statement drew one per turn)."""
    at = _app(monkeypatch, tmp_path, str(flagging_detector))
    say(at, "Do you have pets?")
    say(at, "Tell me about your pets")
    written = [e.value for kind in ("markdown", "code", "text") for e in getattr(at, kind)]
    assert not [w for w in written if str(w).strip("` \n") == "None"]


def test_user_text_is_escaped(monkeypatch, tmp_path, flagging_detector):
    at = _app(monkeypatch, tmp_path, str(flagging_detector), mode="off",
              script={"replies": [["You said: {user}"]]})
    say(at, "<img src=x onerror=alert(1)> **bold**")
    user_html, bot_html = _turn_html(at, 0), _turn_html(at, 1)
    for body in (user_html, bot_html):
        assert "<img" not in body and "&lt;img src=x onerror=alert(1)&gt;" in body


def test_empty_message_warns_and_adds_nothing(monkeypatch, tmp_path, flagging_detector):
    at = _app(monkeypatch, tmp_path, str(flagging_detector))
    say(at, "   ")
    assert any("Empty message" in w.value for w in at.warning)
    assert not at.session_state["chat::conversation"].turns


def test_bot_failure_keeps_the_conversation_and_retry_recovers(monkeypatch, tmp_path, flagging_detector):
    at = _app(monkeypatch, tmp_path, str(flagging_detector))
    say(at, "Do you have pets?")
    script = tmp_path / "script.json"
    broken = tmp_path / "broken.json"
    broken.write_text("{ not json")
    monkeypatch.setenv("GUARD_APP_SCRIPT", str(broken))
    say(at, "And cats?")
    assert any("Could not load the bot" in e.value for e in at.error)
    turns = at.session_state["chat::conversation"].turns
    assert [t.text for t in turns] == ["Do you have pets?", "I have a dog named Max.", "And cats?"]
    # the user's message stays; Retry works once the bot is back
    monkeypatch.setenv("GUARD_APP_SCRIPT", str(script))
    at.run()
    retry = [b for b in at.button if b.label == "Retry reply"]
    assert retry, "a Retry button is offered for the unanswered message"
    retry[0].click().run()
    assert not at.exception
    assert [t.agent_id for t in at.session_state["chat::conversation"].turns] == ["user", "bot", "user", "bot"]
    # issue 32: once the reply is in, neither the warning nor the button stays above it
    assert not [w.value for w in at.warning if "no reply yet" in w.value]
    assert not [b for b in at.button if b.label == "Retry reply"]


def test_a_message_longer_than_the_bots_prompt_says_what_the_bot_read(monkeypatch, tmp_path, flagging_detector,
                                                                        llama_dir):
    """Issue 32: a message longer than a local bot's prompt budget got a reply with no word that the bot saw only
    its end (a tiny chat-template bot with a small budget stands in for the embedded one)."""
    from bots.embedded import ChatTemplateBot
    from bots.registry import register_bot
    from guard.records import Turn

    bot = ChatTemplateBot.from_pretrained(llama_dir, engine="transformers")
    bot.max_prompt_tokens = len(bot.encode_prompt([Turn(0, "user", "")], ())) + 60
    register_bot("tiny-chat", lambda **_: bot)
    monkeypatch.setenv("GUARD_APP_BOT", "tiny-chat")
    at = _app(monkeypatch, tmp_path, str(flagging_detector))
    say(at, "Hi there.")
    assert not [c.value for c in at.caption if "read only the last" in c.value]  # a short message is read whole
    long = " ".join(f"word{k} i like dogs and cats." for k in range(100))
    say(at, long)
    report = at.session_state["chat::conversation"].turns[3].report
    read = bot.prompt_coverage(at.session_state["chat::conversation"].turns[:3], ())
    assert read.cut and report.prompt_note == read.note("Your message")
    assert f"it read only the last {read.last_chars_read:,} of its {len(long):,} characters" in report.prompt_note
    assert any(c.value.startswith("✂️ Your message was too long") and "read only the last" in c.value
               for c in at.caption), [c.value for c in at.caption]


def test_detector_failure_is_an_actionable_error(monkeypatch, tmp_path):
    at = _app(monkeypatch, tmp_path, str(tmp_path / "no-such-checkpoint"))
    say(at, "Do you have pets?")
    assert any("Could not load the detector" in e.value for e in at.error)
    assert [t.text for t in at.session_state["chat::conversation"].turns] == ["Do you have pets?"]


def test_a_broken_detector_config_is_an_error_not_a_silent_threshold(monkeypatch, tmp_path):
    folder = tmp_path / "broken-detector"
    folder.mkdir()
    (folder / "guard_config.json").write_text("{ not json")
    at = _app(monkeypatch, tmp_path, str(folder))
    [error] = [e.value for e in at.error if "no usable threshold" in e.value]
    assert f"'{folder}'" in error and "guard_config.json" in error and "not calibrated" in error


def test_reset_clears_and_download_is_offered(monkeypatch, tmp_path, flagging_detector):
    at = _app(monkeypatch, tmp_path, str(flagging_detector))
    say(at, "Do you have pets?")
    assert len(at.get("download_button")) == 1
    [reset] = [b for b in at.button if b.label == "Reset conversation"]
    reset.click().run()
    assert not at.session_state["chat::conversation"].turns
    assert not [m for m in at.chat_message]


@pytest.mark.skipif(not HAS_EMBEDDED, reason="the embedded detector (models/detector) is not there yet")
def test_embedded_detector_catches_the_planted_contradiction(monkeypatch, tmp_path):
    at = _app(monkeypatch, tmp_path, "embedded")
    say(at, "Do you have pets?")
    say(at, "Tell me about your pets")
    conversation = at.session_state["chat::conversation"]
    report = conversation.turns[3].report
    assert [c.contradicts for c in report.candidates] == [True, False]
    assert conversation.turns[3].text == "Max loves long walks in the park."
    assert report.candidates[0].evidence[0].turn_id == 1
    # the rejected candidate's evidence is in its panel; the transcript marks only what the sent reply contradicts
    assert 'class="cg-evidence"' not in _turn_html(at, 1)
    [panel] = [h.proto.body for h in open_panels(at).html if 'data-context-turn-id="1"' in h.proto.body]
    assert 'class="cg-evidence"' in panel and "candidate #1 at turn 3" in panel
    at.toggle(key="chat_view::show_rejected_evidence").set_value(True).run()
    evidence = _turn_html(at, 1)
    assert 'class="cg-evidence"' in evidence and "candidate #1" in evidence


class _CutsNoPets:
    """A detector that flags a candidate holding "I have no pets." through that sentence (the hypothesis), as the
    real one does, so the repair mode can cut it."""

    def judge(self, history, candidates, speaker, persona, settings, turn_id=None):
        from guard.judge.verdicts import PairScore, Verdict, VerdictDetails
        from guard.vocabulary import Category, Method, PremiseSource

        out = []
        for text in candidates:
            hit = "no pets" in text
            pairs = (PairScore(PremiseSource.HISTORY, 1, "I have a dog named Max.", "I have no pets.", 0.97),) \
                if hit else ()
            out.append(Verdict(hit, 0.97 if hit else 0.1, Category.HISTORY if hit else Category.NONE, pairs, pairs,
                               VerdictDetails(Method.STRUCTURED, turn_id=len(history), threshold=0.9, n_pairs=1,
                                              history_score=0.97 if hit else 0.1)))
        return tuple(out)


REPAIRABLE = {"replies": [
    [{"text": "I have a dog named Max.", "score": -0.4}],
    [{"text": "I have no pets. <b>Hiking</b> is *my* thing!", "score": -0.2},
     {"text": "Max loves long walks in the park.", "score": -0.9}],
]}


def test_repair_mode_shows_the_cut_sentence_and_the_text_sent(monkeypatch, tmp_path, flagging_detector, nlp):
    from reports import FakeGuard

    from guard.vocabulary import GuardMode
    from ui import models

    monkeypatch.setattr(models, "get_guard", lambda *args, **kwargs: FakeGuard(_CutsNoPets(), threshold=0.9))
    at = _app(monkeypatch, tmp_path, str(flagging_detector), mode="repair", script=REPAIRABLE)
    # the sidebar offers the policy repair falls back to, re-rank first
    fallback = at.selectbox(key="chat::repair_fallback")
    assert fallback.value == "rerank" and fallback.options == ["re-rank", "penalty", "block"]
    say(at, "Do you have pets?")
    say(at, "Tell me about your pets")
    turn = at.session_state["chat::conversation"].turns[3]
    assert turn.text == "<b>Hiking</b> is *my* thing!" and turn.report.repaired
    # the sent text is escaped, and the earlier turn is not marked: what contradicted it was not sent
    assert "&lt;b&gt;Hiking&lt;/b&gt; is *my* thing!" in _turn_html(at, 3) and "<b>Hiking" not in _turn_html(at, 3)
    assert 'class="cg-evidence"' not in _turn_html(at, 1)
    assert any(c.value.replace("\\", "").startswith("🛡️ repaired: candidate #1 contradicts turn 1")
               for c in at.caption)
    # the candidate panel: the table says the reply was repaired, the candidate shows the sentence struck out,
    # and the text that was sent
    assert list(html_tables(open_panels(at), "cg-candidates")[1]["sent"]) == ["✔ repaired", ""]
    [struck] = [h.proto.body for h in at.html if 'class="cg-removed"' in h.proto.body]
    assert "I have no pets.</mark>" in struck and "removed before sending" in struck and "&lt;b&gt;" in struck
    [sent] = [h.proto.body for h in at.html if "cg-repaired-reply" in h.proto.body]
    assert "&lt;b&gt;Hiking&lt;/b&gt; is *my* thing!" in sent
    assert any("Sent without “I have no pets\\.”" in m.value for m in at.markdown)
    assert any(m.value.startswith("**Candidate #1** (sent repaired)") and "chosen and repaired" in m.value
               for m in at.markdown)
    # the fallback is a setting like any other: the next turn would be made with it
    at.selectbox(key="chat::repair_fallback").set_value("block").run()
    assert at.session_state["chat_record::settings"].repair_fallback == GuardMode.BLOCK


def test_the_repair_fallback_is_kept_in_the_state_like_every_setting():
    from conversation.records import ChatSettings
    from guard.vocabulary import GuardMode
    from ui import chat_state

    state = {}
    chat_state.write_settings(ChatSettings(guard_mode="repair", repair_fallback="penalty"), state)
    assert state["chat::repair_fallback"] == "penalty"
    assert chat_state.read_settings(state, ChatSettings()).repair_fallback == GuardMode.PENALTY
    # a stored value the selectbox cannot show (an older session's None) leaves the control as it is
    chat_state.write_settings(ChatSettings.unknown(), state, only_offered=True)
    assert state["chat::repair_fallback"] == "penalty"


def test_settings_and_persona_survive_a_visit_to_another_page(monkeypatch, tmp_path, flagging_detector):
    at = _app(monkeypatch, tmp_path, str(flagging_detector))
    at.text_area(key="chat::persona").set_value("I have a dog named Max.\nI live in Ohio.").run()
    at.radio(key="chat::guard_mode").set_value("block").run()
    at.switch_page("pages/playground.py").run()
    at.switch_page("pages/guarded_chat.py").run()
    assert not at.exception, at.exception
    assert at.text_area(key="chat::persona").value == "I have a dog named Max.\nI live in Ohio."
    assert at.radio(key="chat::guard_mode").value == "block"
    assert at.session_state["chat::conversation"].persona == ["I have a dog named Max.", "I live in Ohio."]


def _shown_by_a_fresh_browser(widget):
    """What a browser that mounts ``widget`` for the first time shows (and sends back on its next rerun): the value
    the server sent with it (``set_value``), else the widget's own default (a number input's minimum, a radio's first
    option)."""
    proto = widget.proto
    if hasattr(proto, "raw_value"):  # a radio: its options as shown, the default an index into them
        return widget.options.index(proto.raw_value) if proto.set_value else proto.default
    return proto.value if proto.set_value else proto.default


def test_a_browser_that_missed_the_first_run_is_told_the_sessions_settings(monkeypatch, tmp_path, flagging_detector):
    """A first run cut short by an early click or message: the browser's rerun carries no state for the sidebar's
    widgets it had not drawn yet. Streamlit then draws them from the value the state kept, without sending it to the
    browser, which showed the widgets' own defaults (1 candidate, guard off) and sent them back with its next rerun:
    an unguarded chat. Every run tells the browser the session's settings."""
    from streamlit.proto.WidgetStates_pb2 import WidgetStates

    from guard.vocabulary import GUARD_MODES

    at = start_scripted_app(monkeypatch, tmp_path, str(flagging_detector), "rerank", PLANTED, candidates=4)
    at._run(WidgetStates())  # the rerun of a browser that mounted none of the first run's widgets
    assert not at.exception, at.exception
    number, mode = at.number_input(key="chat::num_candidates"), at.radio(key="chat::guard_mode")
    shown = (_shown_by_a_fresh_browser(number), str(GUARD_MODES[_shown_by_a_fresh_browser(mode)]))
    assert shown == (4, "rerank")
    number.set_value(shown[0])  # the browser's next rerun sends what it shows
    mode.set_value(shown[1]).run()
    assert not at.exception, at.exception
    assert (at.session_state["chat::num_candidates"], at.session_state["chat::guard_mode"]) == (4, "rerank")


def test_scripted_demo_is_selectable_without_a_script_file(monkeypatch, flagging_detector):
    monkeypatch.delenv("GUARD_APP_SCRIPT", raising=False)
    monkeypatch.delenv("GUARD_APP_BOT", raising=False)
    monkeypatch.setenv("GUARD_APP_DETECTOR", str(flagging_detector))
    monkeypatch.setenv("GUARD_APP_MODE", "off")
    at = AppTest.from_file(APP, default_timeout=120).run()
    assert not at.exception, at.exception
    chooser = at.selectbox(key="chat::bot")
    assert chooser.value == "embedded" and "scripted" in chooser.options
    chooser.set_value("scripted").run()
    say(at, "Hi! Tell me about yourself.")
    assert "I have two dogs" in _turn_html(at, 1)


def test_per_turn_chart_and_rejudge_at_a_new_threshold(monkeypatch, tmp_path, flagging_detector):
    at = _app(monkeypatch, tmp_path, str(flagging_detector))
    assert not at.get("vega_lite_chart")  # nothing to plot before the first bot turn
    say(at, "Do you have pets?")
    say(at, "Tell me about your pets")
    assert len(at.get("vega_lite_chart")) == 1  # contradiction score per bot turn
    before = at.session_state["chat::conversation"]
    assert all(c.contradicts for c in before.turns[3].report.candidates)  # τ = 0.1 flags everything
    # the sidebar's τ (its slider is app.py's, which AppTest does not list after a page's own reruns)
    at.session_state["chat_view::tau"] = 0.9
    at.run()
    [button] = [b for b in at.button if b.label.startswith("Re-judge the conversation")]
    assert "τ = 0.9000" in button.label
    button.click().run()
    assert not at.exception, at.exception
    after = at.session_state["chat::conversation"]
    assert [t.text for t in after.turns] == [t.text for t in before.turns]  # nothing regenerated
    report = after.turns[3].report
    # at 0.9 the pair scores flag nothing; "I have never had a dog." still contradicts turn 1 through the fact sheet
    # (the tiny detector's config keeps every check, and a clash scores the check's confidence: τ, unmeasured)
    assert report.threshold == 0.9 and [c.contradicts for c in report.candidates] == [True, False]
    assert "the fact sheet" in report.candidates[0].reason
    assert report.rejudge_note.startswith(f"re-judged by {flagging_detector} at τ = 0.90")
    assert any(c.value.startswith("🔁") for c in at.caption)


def test_presentation_mode_styles_the_page(monkeypatch, tmp_path, flagging_detector):
    """The toggle's state (kept in the session) decides the page style; the browser test measures the type."""
    from ui.styles import PRESENTATION_CSS

    at = _app(monkeypatch, tmp_path, str(flagging_detector))
    assert at.toggle(key="presentation").value is False
    assert not [h for h in at.html if "<style>" in h.proto.body]
    presenting = AppTest.from_file(APP, default_timeout=120)
    presenting.session_state["presentation"] = True  # as the toggle leaves it for the next run
    presenting.run()
    assert presenting.toggle(key="presentation").value is True
    assert [h for h in presenting.html if h.proto.body == PRESENTATION_CSS]


def test_sidebar_says_which_operating_point_is_in_use(monkeypatch, tmp_path, flagging_detector):
    import json
    import shutil

    detector = tmp_path / "calibrated"
    shutil.copytree(flagging_detector, detector)
    config = json.loads((detector / "guard_config.json").read_text())
    config["threshold"] = 0.9
    config["calibration"] = {"chosen": "operating_point", "operating_point": {
        "threshold": 0.9, "rule": "false-alarm", "false_alarm_target": 0.05, "fire_rate_decode_consistent": 0.05,
        "fire_rate_chitchat": 0.02, "recall_decode_contradictions": 0.49}}
    (detector / "guard_config.json").write_text(json.dumps(config))
    at = _app(monkeypatch, tmp_path, str(detector))
    # plain words under the slider (issue 38), the measured rule one click away in its help
    captions = [c.value for c in at.sidebar.caption if "default line" in c.value]
    assert captions == ["At this detector's default line, about 5% of consistent conversations are flagged by "
                        "mistake; it catches 49% of the real contradictions it was set on."]
    slider = at.select_slider(key="chat_view::tau")
    assert slider.label == "How sure the detector must be to flag"
    assert slider.help.endswith("Operating point: false alarms ≤ 5% of consistent dialogues (τ = 0.9000; catches 49% "
                                "of DECODE dev contradiction dialogues).")
    # moved away from the calibrated τ, the caption says so (tests/test_browser_settings.py moves the real slider)
    from guard.models.registry import read_config
    from ui.app_sidebar import operating_point_caption, plain_operating_point

    point = read_config(str(detector)).operating_point
    assert operating_point_caption(point, 0.5).startswith(
        "Operating point: custom τ = 0.5000 (calibrated τ = 0.9000); its false-alarm rate and recall are not measured")
    assert plain_operating_point(point, 0.5).startswith("You moved the line from this detector's default (0.9000)")
    assert plain_operating_point(point, 0.9) == captions[0]


def test_sidebar_says_when_a_detector_has_no_recorded_operating_point(monkeypatch, tmp_path, flagging_detector):
    at = _app(monkeypatch, tmp_path, str(flagging_detector))
    assert any(c.value == "This detector's default line was not set by a measured rule." for c in at.sidebar.caption)
    assert "Operating point: not recorded" in at.select_slider(key="chat_view::tau").help


def test_a_reminded_turn_says_so_and_shows_who_wrote_each_candidate(monkeypatch, tmp_path, flagging_detector):
    """Every candidate contradicts (τ 0.1): the guard reminds the bot (the scripted bot gets the fact in its persona),
    and the turn's caption, live steps and candidate panel say so; the candidates table says who wrote each."""
    from conftest import start_scripted_app

    at = start_scripted_app(monkeypatch, tmp_path, str(flagging_detector), "rerank", PLANTED, remind=True)
    say(at, "Do you have pets?")
    say(at, "Tell me about your pets")
    assert any(c.value.startswith("reminded the bot of ") or "reminded the bot of " in c.value for c in at.caption)
    table = html_tables(open_panels(at), "cg-candidates")[1]  # a closed panel builds nothing (issue 36)
    assert list(table["written by"])[-1] == "the guard, from the evidence"
    assert any("The guard reminded the bot of" in m.value for m in at.markdown)


def test_a_candidate_the_classroom_filter_withheld_is_only_said_withheld_to_a_student_and_whole_for_the_teacher(
        monkeypatch, tmp_path, flagging_detector):
    from ui.ownership import TEACHER_KEY

    monkeypatch.setenv("GUARD_TEACHER_PASSWORD", "owl-42")
    script = {"replies": [[{"text": "My petfuck Max is cute.", "score": -0.1},
                           {"text": "I have a dog named Max.", "score": -0.4}]]}
    at = _app(monkeypatch, tmp_path, str(flagging_detector), mode="flag", script=script)
    say(at, "Do you have pets?")
    turn = at.session_state["chat::conversation"].turns[1]
    assert turn.text == "I have a dog named Max." and turn.report.candidates[0].withheld is not None
    open_panels(at)
    [table] = html_tables(at, "cg-candidates")
    assert list(table["reply"]) == [withheld_line([Why.SWEARING]), "I have a dog named Max."]
    page = "\n".join([m.value for m in at.markdown] + [c.value for c in at.caption] + [h.proto.body for h in at.html])
    assert "petfuck" not in page and "Max is cute" not in page and "withheld by the classroom filter" in page
    at.session_state[TEACHER_KEY] = True  # signed in on Review (tests/test_app_studio.py signs in through the form)
    at.run()
    [table] = html_tables(at, "cg-candidates")
    assert list(table["reply"]) == ["My petfuck Max is cute.", "I have a dog named Max."]
    assert any("caught\\: petfuck" in c.value for c in at.caption)  # Markdown-escaped


#: issue 41: a persona of four facts; the second reply's best candidate gives the job another value, the third is sent
#: and gives the dogs another number
FACTS_SCRIPT = {"replies": [
    [{"text": "I live in Paris, near the river.", "score": -0.4}],
    [{"text": "I'm a teacher at a big school.", "score": -0.2},
     {"text": "I look after patients all day.", "score": -0.9}],
    [{"text": "I have a team of 12 dogs.", "score": -0.3}],
]}
FACTS_PERSONA = "I work as a nurse.\nI have two dogs.\nI live in Paris.\nMy name is Sam, <b>hi</b>."


def _sheet(at: AppTest):
    """The chat's fact sheet: its rows (about, value, where, the clash marks' texts) and its notes."""
    import re

    [body] = [h.proto.body for h in at.html if 'class="cg-fact-sheet"' in h.proto.body]
    rows = []
    for kind, cells in re.findall(r'<tr class="cg-fact cg-fact-(\w+)"[^>]*>(.*?)</tr>', body, flags=re.S):
        about, value, where = (re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", cells,
                                                                               flags=re.S))
        marks = re.findall(r'class="cg-fact-mark[^"]*"[^>]*>✘ (.*?)</span>', cells)
        value = value.split("✘")[0]
        rows.append({"about": about, "value": value, "where": where, "kind": kind, "marks": marks})
    return body, rows


def test_the_chat_shows_the_bots_fact_sheet_with_a_clash_marked(monkeypatch, tmp_path, flagging_detector, nlp, wn):
    """Issue 41: the sheet, headed "What the bot has said about itself", one row per fact (persona and sent replies),
    a sent reply's clash marked on the fact it gave another value and on its own fact; a candidate's clash in its
    panel with both values; user text escaped."""
    import threading

    from ui.fact_sheet import FACT_ICON
    from ui.render import escape_markdown

    at = _app(monkeypatch, tmp_path, str(flagging_detector), script=FACTS_SCRIPT)
    assert not [h for h in at.html if "cg-fact-sheet" in h.proto.body]  # no persona, no turn: nothing to show
    at.text_area(key="chat::persona").set_value(FACTS_PERSONA).run()
    # the page does not wait for spaCy and WordNet (the goading assistant's warm-up loads them): it says so
    for thread in [t for t in threading.enumerate() if t.name == "studio-warm-up" and t.is_alive()]:
        assert any(c.value.startswith("⏳ The language tools that read the bot's facts") for c in at.caption)
        thread.join(timeout=120)
    at.run()
    assert [e.label for e in at.expander][:1] == ["What the bot has said about itself"]
    body, rows = _sheet(at)
    facts = {(r["about"], r["value"], r["where"]) for r in rows}
    assert {("job", "nurse", "persona"), ("dogs", "2", "persona"), ("lives in", "Paris", "persona"),
            ("name", "Sam", "persona")} <= facts, rows
    assert "<b>hi" not in body and "Sam, &lt;b&gt;hi" in body  # the persona line, in its words on hover, escaped
    assert not any(r["marks"] for r in rows)

    say(at, "Where do you live?")
    body, rows = _sheet(at)
    [paris] = [r for r in rows if r["about"] == "lives in"]
    assert paris["where"] == "persona · turn 1" and not paris["marks"]  # said again: one row, both places

    say(at, "What do you do?")
    say(at, "How many dogs do you have?")
    conversation = at.session_state["chat::conversation"]
    assert conversation.turns[5].text == "I have a team of 12 dogs."
    body, rows = _sheet(at)
    [dogs] = [r for r in rows if r["about"] == "dogs" and r["value"] == "2"]
    assert dogs["kind"] == "sent" and dogs["marks"] == ["the reply at turn 5 says 12"], rows
    [twelve] = [r for r in rows if r["about"] == "dogs" and r["value"] == "12"]
    assert twelve["where"] == "turn 5" and twelve["marks"] == ["the reply at turn 5 clashes with 2 (persona)"]
    # τ 0.1 flags both candidates of turn 3: re-rank sends the generator's best, which gives the job another value
    assert conversation.turns[3].text == "I'm a teacher at a big school."
    [job] = [r for r in rows if r["about"] == "job" and r["value"] == "nurse"]
    assert job["marks"] == ["the reply at turn 3 says teacher"], rows
    # the candidate that gave the job another value: both values in its row of the candidates table and its panel
    tables = html_tables(open_panels(at), "cg-candidates")
    turn3 = tables[1]
    clashes = dict(zip(turn3["reply"], turn3["clashes with the fact sheet"]))
    assert clashes["I'm a teacher at a big school."] == "job: nurse (persona) vs teacher"
    assert clashes["I look after patients all day."] == ""
    panel_lines = [m.value for m in at.markdown if m.value.startswith(FACT_ICON)]
    assert f"{FACT_ICON} " + escape_markdown("Clashes with the fact sheet: dogs: 2 (persona) vs 12") in panel_lines
    assert f"{FACT_ICON} " + escape_markdown("Clashes with the fact sheet: job: nurse (persona) vs teacher") \
        in panel_lines, panel_lines
    # the flagging detector's checks include the fact check (its config keeps every check)
    assert any(c.value.startswith("The guard checks every candidate reply against this sheet") for c in at.caption)


def test_an_empty_persona_box_shows_the_persona_the_bot_plays(monkeypatch, tmp_path, flagging_detector):
    """Issue 53: the embedded bot plays its own persona when given none; with the box cleared the page says so, shows
    it above the chat and the guard checks against it (nothing is loaded: no message is sent)."""
    from bots.embedded import EMBEDDED_PERSONA
    from ui.chat_sidebar import own_persona_note
    from ui.render import escape_markdown

    at = _app(monkeypatch, tmp_path, str(flagging_detector))
    at.selectbox(key="chat::bot").set_value("embedded").run()
    at.text_area(key="chat::persona").set_value("").run()
    assert not at.exception, at.exception
    assert at.session_state["chat::conversation"].persona == list(EMBEDDED_PERSONA)
    shown = "\n".join(h.proto.body for h in at.html)
    assert all(html.escape(line) in shown for line in EMBEDDED_PERSONA)
    assert any(m.value.startswith("**Bot persona** (the bot's own)") for m in at.markdown)
    assert escape_markdown(own_persona_note(EMBEDDED_PERSONA)) in [c.value for c in at.sidebar.caption]
    assert escape_markdown(own_persona_note()) in [c.value for c in at.caption]
    # a bot with no persona of its own is said to be told nothing
    at.selectbox(key="chat::bot").set_value("scripted").run()
    assert at.session_state["chat::conversation"].persona == []
    assert any("this bot plays no persona of its own" in c.value for c in at.sidebar.caption)


def test_a_student_on_a_class_server_picks_only_among_the_teachers_models(monkeypatch, tmp_path, flagging_detector):
    """Issue 53: with a teacher password a student gets a list of the teacher's detectors, no box to type one in, and
    the teacher's bots only (GUARD_CLASS_BOTS); the teacher keeps everything; a server without a password stays open
    (a value from elsewhere put back: tests/test_class_models.py)."""
    from ui.ownership import TEACHER_KEY

    monkeypatch.setenv("GUARD_TEACHER_PASSWORD", "owl-42")
    monkeypatch.setenv("GUARD_CLASS_BOTS", "scripted,embedded")
    at = _app(monkeypatch, tmp_path, str(flagging_detector))
    assert not [t for t in at.sidebar.text_input if t.key == "chat::detector"]
    assert at.selectbox(key="chat::detector").options == [flagging_detector.name]  # its folder's name, not the path
    assert at.selectbox(key="chat::bot").options == ["scripted", "embedded"]
    at.session_state[TEACHER_KEY] = True  # signed in on Review
    at.run()
    assert [t for t in at.sidebar.text_input if t.key == "chat::detector"]
    assert "blenderbot" in at.selectbox(key="chat::bot").options
    monkeypatch.delenv("GUARD_TEACHER_PASSWORD")
    at = _app(monkeypatch, tmp_path, str(flagging_detector))
    assert [t for t in at.sidebar.text_input if t.key == "chat::detector"]
    assert "blenderbot" in at.selectbox(key="chat::bot").options
