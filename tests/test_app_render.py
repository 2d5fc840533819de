"""The app's pure helpers: escaping, highlighting, dialogue parsing, the guarded turn record."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from reports import FakeGuard, as_stored, candidate

from bots.base import PRESETS, BotError
from bots.scripted import ScriptedBot
from conversation.guarding import guarded_reply, rejudge
from conversation.records import BOT, USER, ChatSettings, Conversation
from guard.config import JudgeSettings
from guard.eval.dialogue_text import DialogueTextError, dialogue_to_text, parse_dialogue_text
from guard.eval.examples import EXAMPLES
from guard.judge.report import BotTurnReport, TurnStatus
from guard.judge.verdicts import PairScore, Verdict, VerdictDetails
from guard.judge.wording import summary
from guard.records import Turn
from guard.vocabulary import Category, Method, PremiseSource
from ui.render import Mark, escape_markdown, evidence_marks, highlight_html, locate
from ui.tables import pair_score_frame, pair_score_matrix
from ui.transcript import candidate_marks, evidence_context_html, evidence_rows, transcript_marks, turn_scores


def test_escape_markdown_neutralises_markup():
    raw = "**bold** _it_ [link](http://x) `code` # head $x$ :smile: <b>"
    escaped = escape_markdown(raw)
    for special in "*_[]()`#$:<>":
        assert f"\\{special}" in escaped
    assert escaped.replace("\\", "") == raw


def test_highlight_escapes_html_inside_and_outside_marks():
    text = "I <script>alert(1)</script> have a dog & a cat."
    out = highlight_html(text, [Mark("have a dog & a cat", "p=0.91 · <b>x</b>")])
    assert "<script>" not in out and "&lt;script&gt;" in out
    assert '<mark class="cg-evidence"' in out
    assert "have a dog &amp; a cat</mark>" in out
    assert "&lt;b&gt;x&lt;/b&gt;" in out  # the label is escaped too (badge and title)


def test_locate_tolerates_clause_cleanup():
    text = "I love dogs, but I hate cats ."
    assert locate(text, "I hate cats") == (text.index("I hate"), text.index("cats") + 4)
    assert locate(text, "i LOVE dogs") == (0, 11)
    # punctuation spacing normalised by the clause splitter
    spaced = "Well , I never had a pet !"
    start, end = locate(spaced, "I never had a pet!")
    assert spaced[start:end].startswith("I never had a pet")
    assert locate(text, "something else entirely") is None


def test_overlapping_marks_merge_and_keep_every_label():
    text = "I have a dog named Max."
    out = highlight_html(text, [Mark("I have a dog", "first"), Mark("a dog named Max", "second")])
    assert out.count("<mark") == 1
    assert "first" in out and "second" in out


def test_unlocatable_mark_highlights_the_whole_text():
    out = highlight_html("Completely different words.", [Mark("zebra unicorn", "why")])
    assert out.startswith("<mark") and "Completely different words.</mark>" in out


def test_parse_dialogue_text_and_errors():
    dialogue = parse_dialogue_text("A: I like fish.\n\nB: Really?\nA: I hate fish.")
    assert [(t.turn_id, t.agent_id, t.text) for t in dialogue.turns] == [
        (0, "A", "I like fish."), (1, "B", "Really?"), (2, "A", "I hate fish.")]
    assert dialogue_to_text(dialogue) == "A: I like fish.\nB: Really?\nA: I hate fish."
    with pytest.raises(DialogueTextError, match="line 2"):
        parse_dialogue_text("A: hello\nno speaker here")
    with pytest.raises(DialogueTextError, match="at least two turns"):
        parse_dialogue_text("A: alone")


def test_every_builtin_example_parses():
    for example in EXAMPLES:
        dialogue = parse_dialogue_text(example.text, example.key)
        assert len(dialogue.turns) >= 2, example.key
        assert example.expected in ("none", "intra", "role", "history")


HISTORY, PERSONA, INTRA = PremiseSource.HISTORY, PremiseSource.PERSONA, PremiseSource.INTRA


def test_pair_score_matrix_takes_the_max_per_cell():
    pairs = [PairScore(HISTORY, 1, "I am a mom.", "I have no kids.", 0.2),
             PairScore(HISTORY, 1, "I am a mom.", "I have no kids.", 0.9),
             PairScore(HISTORY, 3, "I like rice.", "I have no kids.", 0.1),
             PairScore(PERSONA, 0, "I am 30.", "I have no kids.", 0.05)]
    frame = pair_score_frame(pairs)
    assert len(frame) == 3 and frame["score"].max() == pytest.approx(0.9)
    matrix = pair_score_matrix(pairs)
    assert matrix.shape == (1, 3)
    # persona first, then turn order
    assert [c.split(":")[0] for c in matrix.columns] == ["persona line 1", "turn 1", "turn 3"]
    assert matrix.iloc[0].max() == pytest.approx(0.9)


def test_pair_score_frame_keeps_a_persona_line_and_a_turn_of_the_same_number_apart():
    pairs = [PairScore(HISTORY, 0, "I am a mom.", "I have no kids.", 0.9),
             PairScore(PERSONA, 0, "I am a mom.", "I have no kids.", 0.2),
             PairScore(PremiseSource.WHOLE_HISTORY, None, "bot: I am a mom.", "I have no kids.", 0.5)]
    frame = pair_score_frame(pairs)
    assert list(frame.sort_values("order")["source"]) == ["persona", "history", "whole_history"]
    assert list(frame.sort_values("order")["score"]) == pytest.approx([0.2, 0.9, 0.5])


def test_evidence_marks_point_at_earlier_turn_and_candidate_clause():
    evidence = [PairScore(HISTORY, 3, "I am a stay at home mom.", "I don't have any kids yet", 0.97),
                PairScore(INTRA, 5, "I am a strict vegetarian", "I eat steak every day", 0.8)]
    marks = evidence_marks(evidence, own_turn_id=5)
    assert [m.kind for m in marks.turns[3]] == ["evidence"] and "0.97" in marks.turns[3][0].label
    kinds = sorted(m.kind for m in marks.turns[5])
    assert kinds == ["clause", "intra", "intra"]
    assert any("contradicts turn 3" in m.label for m in marks.turns[5])
    assert marks.persona == {}


def test_evidence_marks_put_persona_evidence_on_the_persona_line_and_skip_the_whole_history():
    evidence = [PairScore(PERSONA, 1, "I am a vegetarian.", "I eat steak.", 0.9),
                PairScore(PremiseSource.WHOLE_HISTORY, None, "bot: hi", "I eat steak.", 0.8)]
    marks = evidence_marks(evidence, own_turn_id=4)
    assert [m.kind for m in marks.persona[1]] == ["evidence"]
    assert [m.label for m in marks.turns[4]] == ["contradicts persona line 2 (p=0.90)"]
    assert set(marks.turns) == {4}


# ---------------------------------------------------------------- the guarded turn, with a fake detector

class FlagFirstDetector:
    """Flags candidates whose text contains 'never' as contradicting turn 1 (policy arithmetic only)."""

    def __init__(self):
        self.calls = []

    def judge(self, history, candidates, speaker, persona, settings, turn_id=None):
        self.calls.append((list(history), list(candidates), speaker, list(persona)))
        own = len(history)
        out = []
        for cand in candidates:
            hit = "never" in cand
            evidence = (PairScore(HISTORY, 1, "I have a dog named Max.", cand, 0.95),) if hit else ()
            out.append(Verdict(hit, 0.95 if hit else 0.1, Category.HISTORY if hit else Category.NONE, evidence,
                               evidence or (PairScore(HISTORY, 1, "I have a dog named Max.", cand, 0.1),),
                               VerdictDetails(Method.STRUCTURED, turn_id=own, threshold=0.5, n_pairs=1,
                                              history_score=0.95 if hit else 0.1)))
        return tuple(out)


SCRIPT = {"replies": [
    [{"text": "I have a dog named Max.", "score": -0.4}],
    [{"text": "I have never had a pet.", "score": -0.2}, {"text": "Max is a beagle, {user}!", "score": -0.9}],
]}


def _two_turns(mode: str):
    conv = Conversation()
    bot, detector = ScriptedBot(SCRIPT), FlagFirstDetector()
    conv.add(USER, "Do you have pets?")
    conv.append(guarded_reply(conv, bot, FakeGuard(detector), ChatSettings(guard_mode=mode)))
    conv.add(USER, "tell me more")
    turn = conv.append(guarded_reply(conv, bot, FakeGuard(detector), ChatSettings(guard_mode=mode)))
    return conv, turn, detector


def test_rerank_sends_the_consistent_candidate_and_records_why():
    conv, turn, detector = _two_turns("rerank")
    assert turn.turn_id == 3 and turn.agent_id == BOT
    assert turn.text == "Max is a beagle, tell me more!"  # {user} filled from the last user turn
    report = turn.report
    assert [c.contradicts for c in report.candidates] == [True, False]
    assert report.chosen_index == 1 and not report.used_fallback
    assert report.status == TurnStatus.GUARDED and report.sent == turn.text  # a contradiction kept out
    # the detector saw the bot's history as Turns with the conversation's ids
    history, candidates, speaker, _ = detector.calls[-1]
    assert [t.turn_id for t in history] == [0, 1, 2] and speaker == BOT
    assert isinstance(history[0], Turn)
    # the transcript marks only what sent replies contradict: the rejected candidate's evidence stays in its panel
    assert transcript_marks(conv).turns == {}
    context = evidence_context_html(conv, report.candidates[0], turn.turn_id)
    assert 'class="cg-context cg-has-evidence" data-context-turn-id="1"' in context and "candidate #1" in context
    # on request the transcript marks it too, with the score; the sent reply is not marked
    marks = transcript_marks(conv, include_rejected=True)
    assert 1 in marks.turns and "candidate #1" in marks.turns[1][0].label and "0.95" in marks.turns[1][0].label
    assert 3 not in marks.turns


def test_flag_sends_the_contradiction_and_marks_its_clause():
    conv, turn, _ = _two_turns("flag")
    assert turn.text == "I have never had a pet."
    assert turn.report.reply_flagged and turn.report.status == TurnStatus.FLAGGED
    marks = transcript_marks(conv)
    assert "the reply" in marks.turns[1][0].label
    assert [m.kind for m in marks.turns[3]] == ["clause"]


def test_block_falls_back_when_every_candidate_contradicts():
    conv = Conversation()
    bot = ScriptedBot({"replies": [["I never sleep."], ["I never eat.", "I never run."]]})
    conv.add(USER, "hi")
    # without a reminder (tests/test_conversation_reading.py: with one, the guard's composed reply goes first)
    turn = conv.append(guarded_reply(conv, bot, FakeGuard(FlagFirstDetector()),
                                     ChatSettings(guard_mode="block", remind=False)))
    assert turn.report.used_fallback and turn.report.chosen_index is None
    assert turn.text == turn.report.settings.fallback and turn.report.status == TurnStatus.GUARDED


def test_a_turn_the_crowd_cut_to_fewer_candidates_says_so_under_the_reply():
    """A bot that drew fewer candidates because a class crowded it (bots.ct2.BUSY_CANDIDATES): the report carries
    the words, the caption shows them, and they survive storage and a re-judge."""
    from streamlit.testing.v1 import AppTest

    class CrowdedBot(ScriptedBot):
        crowded = (2, 3)

    conv = Conversation()
    conv.add(USER, "hi")
    turn = conv.append(guarded_reply(conv, CrowdedBot(SCRIPT), FakeGuard(FlagFirstDetector()), ChatSettings()))
    assert turn.report.crowd_note == ("The server was busy (2 other replies waiting for the bot): it wrote 2 "
                                      "candidates for the guard to choose from instead of 4.")
    stored = BotTurnReport.from_json(json.loads(json.dumps(turn.report.to_json())))
    assert stored.crowd_note == turn.report.crowd_note
    again = rejudge(conv, FakeGuard(FlagFirstDetector()), ChatSettings(threshold=0.9))
    assert again.turns[-1].report.crowd_note == turn.report.crowd_note

    def page(report):
        import streamlit as st  # noqa: F401

        from ui.turn_widgets import turn_caption

        turn_caption(report)

    app = AppTest.from_function(page, kwargs={"report": turn.report}).run()
    assert any("👥 The server was busy" in c.value for c in app.caption), [c.value for c in app.caption]
    conv.add(USER, "and then?")
    alone = guarded_reply(conv, ScriptedBot(SCRIPT), FakeGuard(FlagFirstDetector()), ChatSettings())
    assert alone.report.crowd_note == ""


def test_off_mode_never_calls_the_detector():
    conv = Conversation()
    conv.add(USER, "hi")
    turn = conv.append(guarded_reply(conv, ScriptedBot(SCRIPT), None, ChatSettings(guard_mode="off")))
    assert turn.text == "I have a dog named Max." and turn.report.candidates[0].contradiction_score is None


def test_failed_bot_leaves_the_conversation_untouched():
    class DownBot(ScriptedBot):
        def generate(self, *args, **kwargs):
            raise BotError("the server at http://127.0.0.1:9 is down; start it")

    conv = Conversation()
    conv.add(USER, "hi")
    with pytest.raises(BotError, match="down"):
        guarded_reply(conv, DownBot(SCRIPT), FakeGuard(FlagFirstDetector()), ChatSettings())
    assert len(conv.turns) == 1 and conv.awaiting_reply


def test_decode_record_roundtrips_as_json_with_guard_annotations():
    conv, _, _ = _two_turns("flag")
    record = json.loads(json.dumps(conv.to_decode_record()))
    assert record["record_id"].startswith("chat-")
    assert [t["turn_id"] for t in record["turns"]] == [0, 1, 2, 3]
    assert [t["agent_id"] for t in record["turns"]] == [USER, BOT, USER, BOT]
    assert record["is_contradiction"] is True and record["aggregated_contradiction_indices"] == [1]
    guard = record["turns"][3]["guard"]
    verdict = guard["candidates"][0]["verdict"]  # the candidate embeds the detector's verdict (issue 24)
    assert guard["mode"] == "flag" and verdict["evidence"][0]["turn_id"] == 1
    assert verdict["evidence"][0]["source"] == "history"
    assert verdict["details"]["threshold"] == 0.5 and verdict["pair_scores"] == []
    assert BotTurnReport.from_json(guard) == as_stored(conv.turns[3].report)  # and reads back as it was stored


def test_candidate_marks_for_intra_pairs_mark_both_clauses():
    cand = candidate(0, "I am a vegetarian and I eat steak daily.", -0.1, 0.9, True, Category.INTRA, True, "",
                           evidence=[PairScore(INTRA, 4, "I am a vegetarian", "I eat steak daily", 0.9)])
    assert [m.kind for m in candidate_marks(cand)] == ["intra", "intra"]
    assert evidence_rows(cand)[0]["compared with"] == "its own earlier clause"


def test_persona_evidence_marks_the_persona_line_while_it_exists():
    conv = Conversation(persona=["I like tea.", "I am a vegetarian."])
    conv.add(USER, "what's for dinner?")
    cand = candidate(0, "Steak, as always.", -0.1, 0.9, True, Category.HISTORY, True, "",
                           evidence=[PairScore(PERSONA, 1, "I am a vegetarian.", "Steak, as always.", 0.9)])
    conv.add(BOT, cand.text, BotTurnReport(JudgeSettings.resolve(mode="flag", threshold=0.5), "test", 0, False,
                                           (cand,)))
    marks = transcript_marks(conv)
    assert [m.kind for m in marks.persona[1]] == ["evidence"] and 0 not in marks.persona
    assert [m.label for m in marks.turns[1]] == ["contradicts persona line 2 (p=0.90)"]
    assert evidence_rows(cand)[0]["compared with"] == "persona line 2"
    conv.persona = ["I like tea."]  # the line is gone: nothing to mark
    assert transcript_marks(conv).persona == {}


def test_scripted_bot_validates_its_script(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(BotError, match="not valid JSON"):
        ScriptedBot(bad)
    with pytest.raises(BotError, match="replies"):
        ScriptedBot({"replies": []})
    bot = ScriptedBot({"replies": [["a b", {"text": "c d", "score": 0.0}]]})
    got = bot.generate([Turn(0, "user", "x")], 2)
    assert [c.text for c in got] == ["c d", "a b"]  # best generator score first


def test_turn_html_label_is_escaped_and_numbered():
    from ui.render import turn_html

    out = turn_html("<b>bot</b>", "hi & bye", turn_id=3, show_id=True)
    assert "&lt;b&gt;bot&lt;/b&gt; · turn 3" in out and 'data-turn-id="3"' in out and "hi &amp; bye" in out
    persona = turn_html("bot", "I am 30.", turn_id=1, show_id=True, source=PERSONA)
    assert "persona line 2" in persona and 'data-persona-line="1"' in persona and "data-turn-id" not in persona


# ---------------------------------------------------------------- captions, badges, re-judging, charts

CLEAN_FIRST = {"replies": [
    [{"text": "I have a dog named Max.", "score": -0.4}],
    [{"text": "Max is a beagle.", "score": -0.1}, {"text": "I have never had a pet.", "score": -0.5}],
]}


def _chat(mode: str, script: dict, detector=None, turns: int = 2) -> Conversation:
    """A scripted chat guarded by a fake detector; no reminders (these tests draw what the policy alone sent:
    tests/test_conversation_reading.py has the reminded turns)."""
    conv, bot, detector = Conversation(), ScriptedBot(script), detector or FlagFirstDetector()
    for k in range(turns):
        conv.add(USER, f"message {k}")
        conv.append(guarded_reply(conv, bot, FakeGuard(detector),
                                  ChatSettings(guard_mode=mode, detector="fake", remind=False)))
    return conv


def test_flag_mode_caption_rejects_nothing():
    report = _chat("flag", CLEAN_FIRST).turns[3].report
    assert report.chosen_index == 0 and report.candidates[1].contradicts and not report.candidates[1].chosen
    assert report.sent == report.candidates[0].text and not report.used_fallback
    assert report.status == TurnStatus.CONSISTENT  # the sent reply is clean: no warning icon


def test_status_warns_only_when_the_sent_reply_is_flagged():
    assert _chat("rerank", CLEAN_FIRST).turns[3].report.status == TurnStatus.GUARDED
    assert _chat("rerank", {"replies": [["I never sleep."]]}, turns=1).turns[1].report.status == TurnStatus.FLAGGED
    assert _chat("block", {"replies": [["I never sleep."]]}, turns=1).turns[1].report.status == TurnStatus.GUARDED
    assert _chat("off", CLEAN_FIRST).turns[3].report.status == TurnStatus.OFF
    assert _chat("rerank", CLEAN_FIRST).turns[1].report.status == TurnStatus.CONSISTENT


def test_a_self_contradicting_reply_is_captioned_as_such():
    cand = candidate(0, "I have two cats, but I have no pets.", -0.1, 0.9, True, Category.INTRA, True, "",
                           evidence=[PairScore(INTRA, 1, "I have two cats", "I have no pets", 0.9)])
    report = BotTurnReport(JudgeSettings.resolve(mode="flag", threshold=0.5), "test", 0, False, (cand,))
    assert "the sent reply contradicts itself (p=0.90)" in summary(report)
    assert "earlier turns" not in summary(report)


def test_one_badge_per_contradicted_sentence():
    script = {"replies": [["I have a dog named Max."], ["I never had a dog."], ["I never had any pet."]]}
    conv = _chat("flag", script, turns=3)
    [mark] = transcript_marks(conv).turns[1]
    assert mark.label == "contradicted by the reply at turn 3 (p=0.95), the reply at turn 5 (p=0.95)"


class NeverFlags(FlagFirstDetector):
    """Scores every candidate 0.05: nothing contradicts (as a detector at a high τ would say)."""

    def judge(self, history, candidates, speaker, persona, settings, turn_id=None):
        self.calls.append((list(history), list(candidates), speaker, list(persona)))
        return tuple(Verdict(False, 0.05, Category.NONE, (),
                             (PairScore(HISTORY, 1, "I have a dog named Max.", c, 0.05),),
                             VerdictDetails(Method.STRUCTURED, turn_id=len(history), threshold=0.9, n_pairs=1,
                                            history_score=0.05)) for c in candidates)


def test_rejudge_rescores_every_turn_without_regenerating():
    conv = _chat("rerank", CLEAN_FIRST)
    seen = replace(conv.turns[1].report, persona=("I live in Paris.",))  # what the guard saw at that turn
    conv.turns[1] = replace(conv.turns[1], report=seen)
    detector = NeverFlags()
    again = rejudge(conv, FakeGuard(detector, "strict"), ChatSettings(guard_mode="rerank", threshold=0.9, detector="strict"))
    assert [t.text for t in again.turns] == [t.text for t in conv.turns]  # replies stay as sent
    report = again.turns[3].report
    assert not any(c.contradicts for c in report.candidates) and report.chosen_index == 0
    assert report.rejudge_note == "re-judged by strict at τ = 0.90, rerank"  # the sent reply is the policy's pick
    # each turn was judged against the history before it and the persona of its time
    (h1, c1, _, p1), (h3, c3, _, _) = detector.calls
    assert [t.turn_id for t in h1] == [0] and p1 == ["I live in Paris."] and c1 == ["I have a dog named Max."]
    assert [t.turn_id for t in h3] == [0, 1, 2] and c3 == ["Max is a beagle.", "I have never had a pet."]
    assert conv.turns[3].report.candidates[1].contradicts  # the original is untouched


def test_rejudge_says_when_the_policy_would_send_another_candidate():
    conv = _chat("rerank", SCRIPT)  # the fake flags "never": #2 was sent
    again = rejudge(conv, FakeGuard(NeverFlags(), "strict"), ChatSettings(guard_mode="rerank", threshold=0.9, detector="strict"))
    report = again.turns[3].report
    assert report.chosen_index == 1 and report.candidates[1].chosen
    assert report.rejudge_note == "re-judged by strict at τ = 0.90, rerank"
    assert (report.would_send, report.would_fallback) == (0, False)
    assert summary(report).endswith("at τ = 0.90 the guard would now send candidate #1, which does not contradict")
    with pytest.raises(ValueError, match="off"):
        rejudge(conv, FakeGuard(NeverFlags()), ChatSettings(guard_mode="off"))


class FlagsAll(FlagFirstDetector):
    """Every candidate contradicts turn 1: "never" ones surely (0.95), the others weakly (0.3), as a low τ says."""

    def judge(self, history, candidates, speaker, persona, settings, turn_id=None):
        out = []
        for cand in candidates:
            score = 0.95 if "never" in cand else 0.3
            pair = PairScore(HISTORY, 1, "I have a dog named Max.", cand, score)
            out.append(Verdict(True, score, Category.HISTORY, (pair,), (pair,),
                               VerdictDetails(Method.STRUCTURED, turn_id=len(history), threshold=0.2, n_pairs=1,
                                              history_score=score)))
        return tuple(out)


class FlagsNever(FlagsAll):
    """The same scores judged at τ = 0.5: only the "never" candidates contradict."""

    def judge(self, history, candidates, speaker, persona, settings, turn_id=None):
        out = super().judge(history, candidates, speaker, persona, settings, turn_id)
        return tuple(replace(v, contradiction=False, category=Category.NONE, evidence=()) if v.score < 0.5 else v
                     for v in out)


def test_rejudged_captions_agree_with_each_other():
    """Issue 19 item 5: at a low τ every candidate contradicted and the generator's best was sent; judged again at
    τ 0.50 only that one contradicts. The caption no longer says "every candidate contradicts" beside a note
    saying the guard would now send #2: one line says both what was sent and what would be sent now."""
    conv = _chat("rerank", SCRIPT, detector=FlagsAll())
    sent = conv.turns[3].report
    assert sent.chosen_index == 0 and summary(sent).startswith("flagged: every candidate contradicts")
    again = rejudge(conv, FakeGuard(FlagsNever()), ChatSettings(guard_mode="rerank", threshold=0.5, detector="fake"))
    report = again.turns[3].report
    assert report.chosen_index == 0 and report.would_send == 1
    said = summary(report)
    assert "every candidate contradicts" not in said
    assert said == ("flagged: the sent reply contradicts turn 1 (p=0.95); at τ = 0.50 the guard would now send "
                       "candidate #2, which does not contradict")
    assert "would now send" not in report.rejudge_note  # the note says who judged, once
    # the other way: judged again in block mode where every candidate contradicts, the safe reply would go out
    blocked = rejudge(_chat("rerank", CLEAN_FIRST), FakeGuard(FlagsAll()),
                      ChatSettings(guard_mode="block", threshold=0.2, detector="fake")).turns[3].report
    assert blocked.would_fallback and summary(blocked).endswith(
        "at τ = 0.20 every candidate contradicts: the guard would now send the safe reply")
    # a turn the safe reply answered, judged again where a candidate is clean
    safe = _chat("block", {"replies": [["I never sleep."], ["I never sleep.", "I sleep well."]]}, detector=FlagsAll())
    unblocked = rejudge(safe, FakeGuard(FlagsNever()), ChatSettings(guard_mode="block", threshold=0.5)).turns[3].report
    assert unblocked.used_fallback and unblocked.would_send == 1
    assert summary(unblocked).startswith("blocked: the safe reply was sent (every candidate contradicted when")
    assert "all 2 candidates contradict" not in summary(unblocked)


def test_rejudging_moves_the_chart_to_the_reply_the_guard_would_now_send():
    from ui.charts import NOT_SENT, SENT, WOULD_SEND

    conv = _chat("rerank", SCRIPT, detector=FlagsAll())
    before = turn_scores(conv)
    again = rejudge(conv, FakeGuard(FlagsNever()), ChatSettings(guard_mode="rerank", threshold=0.5, detector="fake"))
    after = turn_scores(again)
    assert [(r["turn"], r["series"], r["score"]) for r in after if r["turn"] == 3] == [
        (3, SENT, 0.95), (3, NOT_SENT, 0.3), (3, WOULD_SEND, 0.3)]
    assert after != before and WOULD_SEND not in {r["series"] for r in before}


def test_turn_scores_give_the_sent_reply_and_the_best_unsent_candidate():
    from ui.charts import NOT_SENT, SENT

    rows = turn_scores(_chat("rerank", SCRIPT))
    assert [(r["turn"], r["series"], r["score"]) for r in rows] == [
        (1, SENT, 0.1), (3, SENT, 0.1), (3, NOT_SENT, 0.95)]
    assert rows[2]["text"] == "#1: I have never had a pet."
    blocked = _chat("block", {"replies": [["I never sleep."]]}, turns=1)
    assert [r["series"] for r in turn_scores(blocked)] == [NOT_SENT]  # the safe reply is not judged
    assert turn_scores(_chat("off", SCRIPT)) == []


def test_pair_heatmap_marks_tau_and_keeps_full_texts_for_tooltips():
    from ui.charts import ROW_HEIGHT, pair_heatmap

    pairs = [PairScore(HISTORY, 1, "I am a stay at home mom with three lovely children.", "I don't have kids.", 0.97),
             PairScore(HISTORY, 3, "I like rice.", "I don't have kids.", 0.1),
             PairScore(HISTORY, 1, "I am a stay at home mom with three lovely children.", "I plan to marry.", 0.3)]
    spec = pair_heatmap(pair_score_frame(pairs), threshold=0.86, title="history").to_dict()
    cells, labels, column_heads, row_heads = spec["layer"]
    assert spec["height"] == {"step": ROW_HEIGHT} and spec["usermeta"]["embedOptions"]["renderer"] == "svg"
    assert cells["encoding"]["color"]["scale"]["domain"] == [0, 0.86, 1]  # the colours break at τ
    assert 0.86 in cells["encoding"]["color"]["legend"]["values"]
    assert cells["encoding"]["stroke"]["condition"]["test"] == "datum.score >= 0.86"  # evidence cells outlined
    assert {t["field"] for t in cells["encoding"]["tooltip"]} == {"where", "earlier_text", "judged", "score"}
    data = next(iter(spec["datasets"].values()))
    assert {row["earlier_text"] for row in data} == {pairs[0].premise, "I like rice."}  # full, not shortened
    # every column and row has a heading of its own (text marks, never dropped for overlap) with the full text
    assert column_heads["mark"]["lineBreak"] == "\n" and row_heads["mark"]["lineBreak"] == "\n"
    heads = {row["heading"].lstrip("\n"): row["full"] for rows in spec["datasets"].values() for row in rows
             if "full" in row}
    assert heads == {"turn 1: I am a\nstay at home mom\nwith three…": "turn 1: " + pairs[0].premise,
                     "turn 3: I like\nrice.": "turn 3: I like rice."}
    assert column_heads["encoding"]["tooltip"][0]["field"] == "full"
    assert row_heads["encoding"]["tooltip"][0]["field"] == "judged"


def test_charts_grow_their_text_in_presentation_mode_and_headings_keep_their_width():
    """Presentation mode's scale: no chart text under 18 px (Vega's 11 px default stays tiny on a projector), and a
    heatmap heading breaks into shorter lines, so larger headings do not run into their neighbours."""
    from ui.charts import COLUMN_LABEL_CHARS, pair_heatmap, turn_score_chart
    from ui.widgets import PRESENTATION_SCALE

    pairs = [PairScore(HISTORY, 1, "I am a stay at home mom with three lovely children.", "I don't have kids.", 0.97),
             PairScore(HISTORY, 3, "I like rice.", "I don't have kids.", 0.1)]
    for scale in (1.0, PRESENTATION_SCALE):
        spec = pair_heatmap(pair_score_frame(pairs), threshold=0.86, title="history", scale=scale).to_dict()
        cells, labels, column_heads, row_heads = spec["layer"]
        legend = cells["encoding"]["color"]["legend"]
        sizes = [legend["labelFontSize"], legend["titleFontSize"], labels["mark"]["fontSize"],
                 column_heads["mark"]["fontSize"], row_heads["mark"]["fontSize"], spec["title"]["fontSize"],
                 spec["title"]["subtitleFontSize"]]
        headings = [row["heading"] for rows in spec["datasets"].values() for row in rows if "full" in row]
        longest = max(len(line) for h in headings for line in h.split("\n"))
        chart = turn_score_chart(turn_scores(_chat("rerank", SCRIPT)), threshold=0.5, scale=scale).to_dict()
        axis = chart["layer"][0]["encoding"]["y"]["axis"]
        sizes += [axis["labelFontSize"], axis["titleFontSize"],
                  chart["layer"][0]["encoding"]["color"]["legend"]["labelFontSize"]]
        if scale == 1.0:
            assert min(sizes) >= 12 and longest <= COLUMN_LABEL_CHARS
        else:
            assert min(sizes) >= 18, sizes
            assert longest * max(column_heads["mark"]["fontSize"], 1) <= COLUMN_LABEL_CHARS * 12 * 1.05  # same width


def test_table_html_wraps_text_keeps_numbers_whole_and_escapes():
    from ui.tables import table_html

    body = table_html([{"#": 1, "candidate": "<b>I have never had a dog</b> " * 3, "contradiction score": 0.984},
                       {"#": 2, "candidate": "Max", "contradiction score": None}])
    assert "<b>" not in body and "&lt;b&gt;I have never had a dog&lt;/b&gt;" in body
    assert body.count("white-space:nowrap") == 4  # the two number columns of both rows
    assert "overflow-wrap:anywhere" in body and 'data-column="contradiction score"' in body
    assert 'class="cg-table"' in body and "font-size:0.85rem" in body  # rem: presentation mode enlarges it


def test_wrap_label_breaks_at_spaces_and_ends_cut_text_with_an_ellipsis():
    from ui.charts import wrap_label

    assert wrap_label("I have a dog named Max.", 10, 3) == "I have a\ndog named\nMax."
    assert wrap_label("one two three four five six", 7, 2) == "one two\nthree…"
    assert wrap_label("Supercalifragilistic", 8, 3) == "Supercal\nifragili\nstic"


def test_turn_score_chart_draws_tau_as_a_rule():
    from ui.charts import turn_score_chart

    spec = turn_score_chart(turn_scores(_chat("rerank", SCRIPT)), threshold=0.5).to_dict()
    lines, picks, rule, label, own_lines = spec["layer"]
    halo, text = label["layer"]
    assert rule["mark"]["type"] == "rule" and text["encoding"]["text"]["field"] == "label"
    # issue 38: the τ label sits under its rule on a white halo, drawn after the rule: the dashes never cross it
    assert halo["mark"]["stroke"] == "white" and text["mark"]["baseline"] == "top" and text["mark"]["dy"] > 0
    assert own_lines["mark"]["type"] == "tick"
    assert picks["mark"]["type"] == "point" and picks["mark"]["shape"] == "diamond"  # re-judge's ring
    assert any(row.get("tau") == 0.5 for rows in spec["datasets"].values() for row in rows)


def test_turn_score_chart_draws_each_turn_against_the_tau_it_was_judged_at():
    """Issue 32: turns judged at τ 0.9493 stay under their own τ after the sidebar moves to 0.8899; turns judged at
    different τ get a dash each, labelled where τ changes."""
    from ui.charts import SENT, judged_taus, turn_score_chart

    def data(spec, layer):
        chart = spec["layer"][layer]  # the τ label is a layer of its own (its halo, then its text)
        chart = chart if "data" in chart else chart["layer"][1]
        return spec["datasets"][chart["data"]["name"]]

    same = [{"turn": 1, "series": SENT, "score": 0.2, "text": "a", "tau": 0.9493},
            {"turn": 3, "series": SENT, "score": 0.93, "text": "b", "tau": 0.9493}]
    spec = turn_score_chart(same, threshold=0.8899).to_dict()
    assert spec["layer"][2]["mark"]["type"] == "rule"
    assert [r["tau"] for r in data(spec, 2)] == [0.9493] and data(spec, 3)[0]["label"] == "τ = 0.9493"
    mixed = same + [{"turn": 5, "series": SENT, "score": 0.95, "text": "c", "tau": 0.8899},
                    {"turn": 7, "series": SENT, "score": 0.1, "text": "d", "tau": 0.8899}]
    spec = turn_score_chart(mixed, threshold=0.8899).to_dict()
    ticks, labels = spec["layer"][2], spec["layer"][3]["layer"][1]
    assert ticks["mark"]["type"] == "tick" and ticks["encoding"]["x"]["field"] == "turn"
    assert [(r["turn"], r["tau"]) for r in data(spec, 2)] == [(1, 0.9493), (3, 0.9493), (5, 0.8899), (7, 0.8899)]
    assert [(r["turn"], r["label"]) for r in data(spec, 3)] == [(1, "τ = 0.9493"), (5, "τ = 0.8899")]
    assert labels["encoding"]["x"]["field"] == "turn"
    assert any(t["field"] == "line_text" for t in spec["layer"][0]["encoding"]["tooltip"])  # each point, its line
    assert judged_taus(mixed) == [0.9493, 0.8899]
    # the rows carry their report's τ
    rows = turn_scores(_chat("rerank", SCRIPT))
    assert {r["tau"] for r in rows} == {0.5}


def test_example_agreement_is_counted_from_live_verdicts():
    from guard.eval.examples import EXAMPLES, agreement_line, judge_examples

    class SaysHistory:
        def judge(self, history, candidates, speaker, persona, settings, turn_id=None):
            return tuple(Verdict(True, 0.9, Category.HISTORY, (), (), VerdictDetails(Method.STRUCTURED, 0, 0.5, 0, 0.9))
                         for _ in candidates)

    guard = FakeGuard(SaysHistory())
    judgements = judge_examples(guard, guard.settings(mode="flag"))
    expected = [e.expected for e in EXAMPLES]
    agree = sum(c != Category.NONE for c in expected)
    same = sum(c == Category.HISTORY for c in expected)
    assert agreement_line(judgements) == (f"the detector agrees with people on {agree} of {len(EXAMPLES)} examples "
                                          f"({same} with the same category)")
    by_key = {j.key: j for j in judgements}
    assert by_key["consistent_written"].mark() == "✘ wrong"
    assert by_key["dnli_dog"].mark() == "✔ right"
    assert by_key["role_written"].mark().startswith("✔ right (calls it history contradiction")


def test_scripted_bot_cuts_a_long_reply_like_a_generator():
    long = "I have a dog named Max. " + "He loves running after every single ball in the whole park " * 4
    bot = ScriptedBot({"replies": [[long]]})
    [reply] = bot.generate([Turn(0, "user", "pets?")], 1, PRESETS["fast"].replace(max_new_tokens=12))
    assert reply.text == "I have a dog named Max."
    [short] = bot.generate([Turn(0, "user", "pets?")], 1, PRESETS["fast"].replace(max_new_tokens=200))
    assert short.text == long


def test_a_highlight_never_starts_or_ends_inside_a_word():
    """Issue 24: the clause splitter can hand over "'ve never been to France"; the mark covers "I've ..."."""
    from ui.render import Mark, highlight_html, locate

    text = "Well, I've never been to France. I love Paris."
    assert text[slice(*locate(text, "'ve never been to France"))] == "I've never been to France"
    assert text[slice(*locate(text, "ove Paris"))] == "love Paris"
    html = highlight_html(text, [Mark("'ve never been to France", "contradicts turn 1", "evidence")])
    assert ">I&#x27;ve never been to France</mark>" in html  # escaped, and whole


def test_one_number_per_decision_in_the_table_and_the_chart():
    """Issue 38: when the intra-sentence check decides (0.84 against its own 0.80) while a history pair scores 0.917
    under τ, the table's score column showed 0.917 and the chart plotted it under τ. Now the table, the chart point and
    the "why" text all give the deciding check's 0.84, and the chart marks the point's own line."""
    from guard.judge.verdicts import IntraCheck
    from guard.vocabulary import GuardMode
    from ui.charts import NOT_SENT, turn_score_chart
    from ui.transcript import candidate_table

    clash = PairScore(PremiseSource.INTRA, 3, "I have two cats", "I have no pets.", 0.84)
    # the verdict's score is the highest of the checks, a history pair's 0.917 (under τ, so no evidence)
    details = VerdictDetails(Method.STRUCTURED, 3, 0.9493, 2, 0.917,
                             intra=IntraCheck(("I have two cats", "I have no pets."), (clash,), 0.84, 0.80))
    why = "rejected; contradicts itself with probability 0.84 (threshold 0.80)"
    rejected = candidate(0, "I have two cats and I have no pets.", -0.2, 0.917, True, Category.INTRA, False, why,
                         evidence=[clash], details=details, threshold=0.9493)
    sent = candidate(1, "Max loves walks.", -0.9, 0.1, False, Category.NONE, True, "chosen", threshold=0.9493)
    report = BotTurnReport(JudgeSettings.resolve(mode=GuardMode.RERANK, threshold=0.9493), "embedded", 1, False,
                           (rejected, sent), {})
    rows = candidate_table(report)
    assert (rows[0]["contradiction score"], rows[0]["its line"]) == ("0.84", "0.80")
    assert f"probability {rows[0]['contradiction score']} (threshold {rows[0]['its line']})" in rows[0]["why"]
    assert rows[0]["kind"] == "contradicts itself" and rows[1]["its line"] == "0.95"
    conversation = Conversation(persona=[])
    conversation.add(USER, "pets?")
    conversation.add(BOT, "I have a dog.")
    conversation.add(USER, "more?")
    conversation.add(BOT, "Max loves walks.", report)
    [sent_point, unsent_point] = [r for r in turn_scores(conversation) if r["turn"] == 3]
    assert (unsent_point["series"], unsent_point["score"], unsent_point["line"]) == (NOT_SENT, 0.84, 0.80)
    assert (unsent_point["score_text"], unsent_point["check"]) == ("0.84", "inside the reply")
    assert unsent_point["tau"] == 0.9493 and sent_point["line"] == 0.9493
    spec = turn_score_chart(turn_scores(conversation), threshold=0.9493).to_dict()
    own = spec["datasets"][spec["layer"][4]["data"]["name"]]
    assert [(r["turn"], r["line"]) for r in own] == [(3, 0.80)]  # the point's own line, beside it


def test_the_shipped_operating_point_is_worded_as_the_budget_it_was_set_by():
    """The shipped τ comes from one false-alarm budget over both dev streams: the sidebar said it was 'the one that
    was right most often on a test set of sentence pairs' (the fallback wording for an accuracy rule)."""
    from embedded import DETECTOR_DIR
    from guard.config import BUDGET_RULE, GuardConfig
    from ui.app_sidebar import operating_point_caption, plain_operating_point

    if not (DETECTOR_DIR / "guard_config.json").exists():
        pytest.skip("the shipped detector is not there")
    config = GuardConfig.read(DETECTOR_DIR)
    point = config.operating_point
    assert point is not None and point.rule == BUDGET_RULE and point.threshold == config.threshold
    plain = plain_operating_point(point, round(config.threshold, 4))
    assert "5%" in plain and "real chats" in plain and "right most often" not in plain, plain
    technical = operating_point_caption(point, round(config.threshold, 4))
    assert technical.startswith("Operating point: false alarms ≤ 5%") and "both dev streams" in technical, technical


# ---------------------------------------------------------------- the bot's fact sheet (issue 41), as pages show it

def _fact(relation, value, source=PremiseSource.PERSONA, turn_id=0, said="", **extra):
    from guard.language.fact_sheet import Fact

    return Fact(relation, value, source, turn_id, said or f"({value})", **extra)


def test_a_fact_is_shown_as_what_it_is_about_its_value_and_where_it_was_said():
    from guard.language.fact_sheet import Relation
    from ui.fact_sheet import fact_about, fact_value, where_words

    dogs = _fact(Relation.COUNT, "2", thing="dog", low=2, high=2)
    assert (fact_about(dogs), fact_value(dogs), where_words(dogs)) == ("dogs", "2", "persona")
    assert where_words(dogs, plain=True) == "the bot's description"
    kids = _fact(Relation.COUNT, "0", PremiseSource.HISTORY, 3, thing="child", low=0, high=0)
    assert (fact_about(kids), fact_value(kids), where_words(kids)) == ("children", "none", "turn 3")
    paris = _fact(Relation.LIVES_IN, "Paris", PremiseSource.HISTORY, 3)
    assert (fact_about(paris), fact_value(paris)) == ("lives in", "Paris")
    not_doctor = _fact(Relation.JOB, "doctor", holds=False)
    assert (fact_about(not_doctor), fact_value(not_doctor)) == ("job", "not doctor")
    never = _fact(Relation.DOES, "fly", thing="fly", holds=False)
    assert (fact_about(never), fact_value(never)) == ("never", "fly")
    steak = _fact(Relation.DIET, "eats", thing="steak")
    assert (fact_about(steak), fact_value(steak)) == ("eats", "steak")
    cheese = _fact(Relation.DIET, "avoids", thing="cheese")
    assert (fact_about(cheese), fact_value(cheese)) == ("never eats", "cheese")
    # the answer to "Do you have any pets?": all of them, said so on its row
    tortoise = _fact(Relation.COUNT, "at least 1", PremiseSource.HISTORY, 3, thing="tortoise", low=1,
                     whole_of="pet", among=("tortoise",))
    assert fact_value(tortoise) == "at least 1 (of its pets, only tortoises)"


def test_the_sheet_joins_a_fact_said_twice_and_marks_a_clash_on_both_facts():
    from guard.language.fact_sheet import FactClash, FactSheet, Relation
    from ui.fact_sheet import SeenClash, clash_words, sheet_html, sheet_rows, sheet_summary

    two = _fact(Relation.COUNT, "2", said="I have two dogs & a <cat>.", thing="dog", low=2, high=2)
    again = _fact(Relation.COUNT, "2", PremiseSource.HISTORY, 1, "Two dogs, yes.", thing="dog", low=2, high=2)
    twelve = _fact(Relation.COUNT, "12", PremiseSource.HISTORY, 3, "I have a team of 12 dogs.", thing="dog",
                   low=12, high=12)
    nurse = _fact(Relation.JOB, "nurse", turn_id=1, said="I work as a nurse.")
    teacher = _fact(Relation.JOB, "teacher", PremiseSource.HISTORY, -1, "I'm a <b>teacher</b>.")
    past = _fact(Relation.LIVES_IN, "Rome", PremiseSource.HISTORY, 1, "I used to live in Rome.", time="past")
    sheet = FactSheet((two, nurse, again, past, twelve))
    seen = [SeenClash(FactClash(Relation.COUNT, two, twelve), "the reply at turn 3", True, 3),
            SeenClash(FactClash(Relation.JOB, nurse, teacher), "candidate #2 at turn 3", False, 3)]
    rows = sheet_rows(sheet, seen)
    assert [(r.about, r.value, r.where()) for r in rows] == [("dogs", "2", "persona · turn 1"),
                                                             ("job", "nurse", "persona"), ("dogs", "12", "turn 3")]
    assert [m.text for m in rows[0].marks] == ["the reply at turn 3 says 12"] and rows[0].sent_clash
    assert [m.text for m in rows[1].marks] == ["candidate #2 at turn 3 says teacher (not sent)"]
    assert rows[1].clashed and not rows[1].sent_clash
    assert [m.text for m in rows[2].marks] == ["the reply at turn 3 clashes with 2 (persona)"]  # its own fact
    assert sheet_summary(rows) == "3 facts · 1 clash in replies that were sent · 1 in candidates not sent"
    assert clash_words(seen[1].clash) == "job: nurse (persona) vs teacher"
    page = sheet_html(rows)
    assert page.count('class="cg-fact ') == 3 and 'class="cg-fact cg-fact-sent"' in page
    assert 'class="cg-fact cg-fact-caught"' in page and "Rome" not in page  # the past is not on the sheet
    assert "<cat>" not in page and "&lt;cat&gt;" in page and "<b>teacher" not in page


def _reply_turn(turn_id, *candidates):
    """A bot turn as the sheet reads it: each candidate (text, chosen, the clashes its verdict recorded or None when
    the fact check did not run)."""
    from types import SimpleNamespace

    def verdict(clashes):
        return SimpleNamespace(details=SimpleNamespace(fact_clashes=tuple(clashes or ()),
                                                       fact_confidence=None if clashes is None else 0.83))

    report = SimpleNamespace(candidates=[SimpleNamespace(index=i, chosen=chosen, repair=None, verdict=verdict(c))
                                         for i, (chosen, c) in enumerate(candidates)])
    return SimpleNamespace(turn_id=turn_id, agent_id="bot", report=report)


def test_each_value_says_where_it_was_said_and_every_sent_clash_is_marked_and_counted():
    """Issue 54: two sent replies gave the dogs other values (one row, two clashes: counted 2, not 1); a sent reply's
    job clashed with a persona line since edited away, and is still marked on its own fact and counted; the chat
    draws what the guard recorded on a turn its fact check ran on, and reads the sheet itself for a turn it did not."""
    from guard.language.fact_sheet import FactClash, FactSheet, Relation
    from ui.fact_sheet import chat_clashes, sheet_rows, sheet_summary

    two = _fact(Relation.COUNT, "2", thing="dog", low=2, high=2)
    three = _fact(Relation.COUNT, "3", PremiseSource.HISTORY, 1, "No, I have 3 dogs.", thing="dog", low=3, high=3)
    eight = _fact(Relation.COUNT, "8", PremiseSource.HISTORY, 5, "I have 8 dogs.", thing="dog", low=8, high=8)
    nurse = _fact(Relation.JOB, "nurse", said="I work as a nurse.")  # the persona then, edited away since
    chef = _fact(Relation.JOB, "pastry chef", PremiseSource.HISTORY, 3, "I am a pastry chef.")
    baker = _fact(Relation.JOB, "baker", turn_id=1, said="I am a baker.")  # the persona now
    sheet = FactSheet((two, baker, three, chef, eight))
    turns = [_reply_turn(1, (True, None)),  # judged with the fact check off: the sheet's own reading
             _reply_turn(3, (True, [FactClash(Relation.JOB, nurse, chef)])),
             _reply_turn(5, (True, [FactClash(Relation.COUNT, two, eight)] * 2))]  # read twice: one clash
    seen = chat_clashes(turns, sheet, "bot")
    assert [(s.who, s.clash.sheet.value, s.clash.said.value) for s in seen] == [
        ("the reply at turn 1", "2", "3"), ("the reply at turn 3", "nurse", "pastry chef"),
        ("the reply at turn 5", "2", "8"), ("the reply at turn 5", "2", "8")]
    rows = {(r.about, r.value): r for r in sheet_rows(sheet, seen)}
    assert [m.text for m in rows[("dogs", "2")].marks] == ["the reply at turn 1 says 3", "the reply at turn 5 says 8"]
    assert rows[("dogs", "3")].where() == "turn 1"
    assert [m.text for m in rows[("dogs", "8")].marks] == ["the reply at turn 5 clashes with 2 (persona)"]
    assert [m.text for m in rows[("job", "pastry chef")].marks] == [
        "the reply at turn 3 clashes with nurse (persona, no longer on the sheet)"]
    assert not rows[("job", "baker")].marks
    assert sheet_summary(list(rows.values())) == "5 facts · 3 clashes in replies that were sent"


def test_a_row_groups_its_marks_by_value_with_the_turns_on_demand():
    """Issue 54: a job row carried 22 amber chips; now one chip per value with its count, the three most said of the
    unsent values and "+ N more", and every mark in words under "which turns"."""
    import re

    from guard.language.fact_sheet import FactClash, FactSheet, Relation
    from ui.fact_sheet import SeenClash, sheet_html, sheet_rows, sheet_summary

    nurse = _fact(Relation.JOB, "nurse", said="I work as a nurse.")
    jobs = ["teacher"] * 5 + ["doctor"] * 3 + ["pilot"] * 2 + ["chef", "judge", "<b>spy</b>"]
    seen = [SeenClash(FactClash(Relation.JOB, nurse, _fact(Relation.JOB, job, PremiseSource.HISTORY, -1)),
                      f"candidate #{k % 3 + 2} at turn {2 * k + 1}", False, 2 * k + 1) for k, job in enumerate(jobs)]
    seen.append(SeenClash(FactClash(Relation.JOB, nurse, _fact(Relation.JOB, "teacher", PremiseSource.HISTORY, 9)),
                          "the reply at turn 9", True, 9))
    [row] = sheet_rows(FactSheet((nurse,)), seen)
    page = sheet_html([row])
    chips = re.findall(r'class="cg-fact-mark cg-fact-mark-(\w+)" data-count="(\d+)"[^>]*>✘ (.*?)</span>', page)
    assert chips == [("sent", "1", "the reply at turn 9 says teacher"),
                     ("caught", "5", "5 candidates not sent say teacher"),
                     ("caught", "3", "3 candidates not sent say doctor"), ("caught", "2", "2 candidates not sent say pilot")]
    assert "+ 3 more values (not sent)" in page and "which turns (14)" in page
    assert page.count("<li>") == 14 and "<li>candidate #2 at turn 1 says teacher (not sent)</li>" in page
    assert "<b>spy" not in page and "&lt;b&gt;spy&lt;/b&gt;" in page
    assert sheet_summary([row]) == "1 fact · 1 clash in replies that were sent · 13 in candidates not sent"


def test_each_clash_is_said_once():
    """Issue 54: a candidate read twice (with its question and alone) recorded "dogs: 2 (persona) vs 8" twice, and the
    panel printed both."""
    from guard.language.fact_sheet import FactClash, Relation
    from ui.fact_sheet import distinct_clashes

    two = _fact(Relation.COUNT, "2", thing="dog", low=2, high=2)
    eight = [_fact(Relation.COUNT, "8", PremiseSource.HISTORY, -1, said, thing="dog", low=8, high=8)
             for said in ("Oh, I have 8 dogs! They are great.", "Oh, I have 8 dogs!")]
    nurse, chef = _fact(Relation.JOB, "nurse", turn_id=1), _fact(Relation.JOB, "chef", PremiseSource.HISTORY, -1)
    clashes = [FactClash(Relation.COUNT, two, eight[0]), FactClash(Relation.JOB, nurse, chef),
               FactClash(Relation.COUNT, two, eight[1])]
    assert distinct_clashes(clashes) == clashes[:2]


def test_the_chat_says_whether_its_guard_acts_on_the_sheet():
    from guard.vocabulary import GuardMode
    from ui.verdict_checks import chat_sheet_note

    assert chat_sheet_note(["intra", "facts"], GuardMode.RERANK).startswith("The guard checks every candidate reply")
    off = chat_sheet_note(["intra"], GuardMode.RERANK)
    assert off.startswith("The chat skips this check with this detector") and "no candidate is rejected" in off
    assert chat_sheet_note(["facts"], GuardMode.OFF).startswith("The guard is off")


def test_page_run_marks_are_written_only_when_asked(tmp_path, monkeypatch):
    """GUARD_MARKS_FILE: each page run appends its start and when it reached each mark (the first time), which
    bench_app reads to split the first visible step; unset, nothing is written and marking costs nothing."""
    from ui import profiling

    monkeypatch.delenv(profiling.MARKS_ENV, raising=False)
    monkeypatch.delenv(profiling.PROFILE_ENV, raising=False)
    with profiling.profiled("run"):
        profiling.mark("live box")  # no file: nothing happens
    path = tmp_path / "marks.jsonl"
    monkeypatch.setenv(profiling.MARKS_ENV, str(path))
    for _ in range(2):
        with profiling.profiled("run"):
            profiling.mark("sidebar")
            profiling.mark("live box")
            profiling.mark("live box")  # the first time counts
    profiling.mark("outside a run")  # ignored
    runs = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(runs) == 2 and all(set(r["marks"]) == {"sidebar", "live box"} for r in runs)
    assert all(0 <= r["marks"]["sidebar"] <= r["marks"]["live box"] for r in runs)
    assert runs[0]["start"] <= runs[1]["start"]


def test_the_intra_line_quotes_the_strongest_of_the_pairs_it_shows():
    """Issue 54: "Inside the last turn · 2 part(s), strongest clash 0.92" stood above one row of 0.007 (0.92 was a
    pair with the turn read as an answer to its question, left out of the table), and "2 part(s)" beside "one part
    only". The line's numbers are the table's; the check's own score, where it differs, is said to be another."""
    from guard.judge.verdicts import IntraCheck, PairScore
    from ui.verdict_checks import intra_headline, intra_lines, reading_note

    said = "i'm a doctor. i love my job."
    parts = ("i'm a doctor.", "i love my job.", "I work as a doctor.")  # the last: its reading, not said

    def pair(a, b, score):
        return PairScore(PremiseSource.INTRA, 3, a, b, score)

    intra = IntraCheck(parts, (pair(parts[0], parts[1], 0.007), pair(parts[2], parts[1], 0.92)), 0.92, 0.93)
    lines = intra_lines(intra, said)
    assert (lines.parts, [p.score for p in lines.pairs], lines.strongest) == (2, [0.007], 0.007)
    assert intra_headline(lines, intra.threshold) == ("**Inside the last turn** · 2 parts, the strongest clash "
                                                      "between two of them 0.01 (a clash from 0.93)")
    assert "0.92" in reading_note(lines) and "not a part the speaker said" in reading_note(lines)
    alone = intra_lines(IntraCheck(parts[:1] + parts[2:], (pair(parts[2], parts[0], 0.4),), 0.4, 0.93), "i'm a doctor.")
    assert intra_headline(alone, 0.93) == "**Inside the last turn** · one part only: nothing inside the turn to compare"
    assert "0.40" in reading_note(alone)
    both_said = intra_lines(IntraCheck(parts[:2], (pair(parts[0], parts[1], 0.5),), 0.5, 0.93), said)
    assert both_said.strongest == 0.5 and reading_note(both_said) == ""
