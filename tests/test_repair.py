"""The repair mode: the generator's best sent without the one sentence it contradicts through, when the rest still
answers; otherwise the fallback policy. Policy bookkeeping on hand-made verdicts, the conversation's records (what
was removed and why, old stored reports still load), and the behaviour on the shipped detector.
"""

from __future__ import annotations

import pytest
from reports import FakeGuard

from bots.scripted import ScriptedBot
from conversation.guarding import guarded_reply
from conversation.records import BOT, USER, ChatSettings, Conversation
from guard.judge.jsonform import jsonable
from guard.judge.policies import DEFAULT_SAFE_REPLY, WhyKind, choose
from guard.judge.repair import Declined, DeclinedKind, plan_repair, still_answers
from guard.judge.report import BotTurnReport, TurnStatus
from guard.judge.verdicts import PairScore, Verdict, VerdictDetails
from guard.judge.wording import summary
from guard.records import Candidate
from guard.vocabulary import Category, GuardMode, Method, PremiseSource

pytestmark = pytest.mark.usefixtures("nlp")  # sentence splitting is spaCy's (skipped when not provisioned)

EARLIER = "I have two dogs, Max and Bella."


def _verdict(*hypotheses: str, score: float = 0.97, threshold: float = 0.9, more: tuple[str, ...] = (),
             source: PremiseSource = PremiseSource.HISTORY) -> Verdict:
    """A verdict whose evidence pairs the earlier turn 1 with each of ``hypotheses`` (none: consistent); ``more``
    are further pairs over the threshold that the evidence (best pair per premise) left out."""
    evidence = tuple(PairScore(source, 1, EARLIER, h, score) for h in hypotheses)
    others = tuple(PairScore(PremiseSource.HISTORY, 1, EARLIER, h, threshold + 0.01) for h in more)
    details = VerdictDetails(Method.STRUCTURED, turn_id=5, threshold=threshold, n_pairs=len(evidence) + len(others),
                             history_score=score if hypotheses else 0.1)
    hit = bool(hypotheses)
    category = (Category.INTRA if source == PremiseSource.INTRA else Category.HISTORY) if hit else Category.NONE
    return Verdict(hit, score if hit else 0.1, category, evidence, evidence + others, details)


CANDIDATES = [Candidate("I don't have any pets. I love hiking on weekends.", -0.3),
              Candidate("No, my two dogs are plenty for me.", -0.7),
              Candidate("Maybe a cat one day!", -0.9)]
CLEAN = _verdict()


def test_the_one_contradicting_sentence_is_removed_and_the_rest_sent():
    decision = choose(CANDIDATES, [_verdict("I don't have any pets."), CLEAN, CLEAN], GuardMode.REPAIR)
    assert (decision.chosen_index, decision.reply, decision.used_fallback) == (0, "I love hiking on weekends.", False)
    repair = decision.repair
    assert repair.index == 0 and repair.removed == "I don't have any pets." and repair.reply == decision.reply
    assert repair.evidence == _verdict("I don't have any pets.").evidence
    assert [w.kind for w in decision.whys] == [WhyKind.REPAIRED, WhyKind.REPAIR_WON, WhyKind.REPAIR_WON]
    assert decision.whys[0].removed == "I don't have any pets." and decision.whys[1].best_score == -0.3
    assert decision.decided_by is None and decision.repair_declined is None


def test_a_clause_or_a_cleaned_copy_points_at_its_sentence_and_every_copy_goes():
    reply = "I walk every morning. I love my dogs but I have no pets. I walk every morning."
    clause = plan_repair(0, reply, _verdict("I have no pets", source=PremiseSource.INTRA))[0]
    assert clause.removed == "I love my dogs but I have no pets." and clause.reply == "I walk every morning. " \
        "I walk every morning."
    repeated = "I have no pets. I walk every morning. I have no pets."
    assert plan_repair(0, repeated, _verdict("I have no pets."))[0].reply == "I walk every morning."


@pytest.mark.parametrize("text, hypotheses, more, why", [
    ("I don't have any pets.", ("I don't have any pets.",), (), Declined(DeclinedKind.WHOLE_REPLY)),
    ("I don't have any pets. Do you?", ("I don't have any pets.",), (),
     Declined(DeclinedKind.NOTHING_ANSWERS, "Do you?")),
    ("I have no dogs. Haha!", ("I have no dogs.",), (), Declined(DeclinedKind.NOTHING_ANSWERS, "Haha!")),
    ("I have no dogs. I never had a cat. I like tea.", ("I have no dogs.", "I never had a cat."), (),
     Declined(DeclinedKind.SEVERAL_SENTENCES, "2")),
    ("I have no dogs. I never had a pet. I like tea.", ("I have no dogs.",), ("I never had a pet.",),
     Declined(DeclinedKind.SEVERAL_SENTENCES, "2")),
    ("I like tea.", ("I have cats.",), (), Declined(DeclinedKind.NOT_A_SENTENCE, "I have cats.")),
])
def test_what_cannot_be_repaired_says_why(text, hypotheses, more, why):
    assert plan_repair(0, text, _verdict(*hypotheses, more=more)) == (None, why)


def test_without_a_repair_the_fallback_policy_decides_and_the_reason_says_why():
    verdicts = [_verdict("I don't have any pets."), CLEAN, CLEAN]
    cannot = [Candidate("I don't have any pets. Do you?", -0.3), *CANDIDATES[1:]]
    rerank = choose(cannot, verdicts, GuardMode.REPAIR)
    assert (rerank.chosen_index, rerank.repair, rerank.decided_by) == (1, None, GuardMode.RERANK)
    assert rerank.repair_declined == Declined(DeclinedKind.NOTHING_ANSWERS, "Do you?")
    assert (rerank.whys[0].kind, rerank.whys[0].declined, rerank.whys[0].decided_by) == (
        WhyKind.REJECTED, rerank.repair_declined, GuardMode.RERANK)
    every = [_verdict("I don't have any pets."), _verdict("No, my two dogs are plenty for me."),
             _verdict("Maybe a cat one day!")]
    single = [Candidate("I don't have any pets.", -0.3), *CANDIDATES[1:]]
    assert choose(single, every, GuardMode.REPAIR, repair_fallback=GuardMode.BLOCK).reply == DEFAULT_SAFE_REPLY
    penalty = choose(single, every, GuardMode.REPAIR, repair_fallback=GuardMode.PENALTY)
    assert penalty.decided_by == GuardMode.PENALTY and penalty.whys[0].kind == WhyKind.PENALTY_BEST
    # a clean generator's best is sent as it is, as re-rank would
    clean = choose(CANDIDATES, [CLEAN, verdicts[0], CLEAN], GuardMode.REPAIR)
    assert (clean.chosen_index, clean.reply, clean.repair_declined) == (0, CANDIDATES[0].text, None)
    with pytest.raises(ValueError, match="repair_fallback must be one of rerank, penalty, block"):
        choose(CANDIDATES, verdicts, GuardMode.REPAIR, repair_fallback=GuardMode.FLAG)


def test_still_answers_needs_one_statement():
    assert still_answers(["Maybe a cat one day!"]) and still_answers(["Do you?", "I walk every day."])
    assert not still_answers(["Do you?"]) and not still_answers(["Thanks!", "What about you?"])
    assert not still_answers(["I wonder, do you like cats?"])  # a question, whatever it opens with


class _Detector:
    """Flags a candidate holding "no pets" through that sentence (the hypothesis), as the detector would."""

    def judge(self, history, candidates, speaker, persona, settings, turn_id=None):
        return tuple(_verdict("I have no pets.") if "no pets" in c else CLEAN for c in candidates)


def _repair_mode_conversation(best: str, **settings) -> Conversation:
    """Two turns in repair mode; in the second the generator's best is ``best`` (it holds "I have no pets.") and its
    other candidate is consistent."""
    bot = ScriptedBot({"replies": [[{"text": EARLIER, "score": -0.5}],
                                   [{"text": best, "score": -0.2}, {"text": "Max is a beagle.", "score": -0.8}]]})
    conversation = Conversation()
    for message in ("Hi!", "Any pets?"):
        conversation.add(USER, message)
        conversation.append(guarded_reply(
            conversation, bot, FakeGuard(_Detector()),
            ChatSettings(bot="scripted", guard_mode=GuardMode.REPAIR, detector="fake", threshold=0.9, **settings)))
    return conversation


def _repaired_conversation() -> Conversation:
    return _repair_mode_conversation("I have no pets. I love hiking.")


def test_the_turn_records_the_repair_and_the_sent_reply_is_not_flagged():
    conversation = _repaired_conversation()
    turn = conversation.turns[-1]
    report = turn.report
    assert turn.agent_id == BOT and turn.text == "I love hiking."
    assert report.repaired and report.chosen_index == 0 and report.candidates[0].text == "I have no pets. I love hiking."
    assert report.repair.removed == "I have no pets." and report.repair.evidence[0].premise == EARLIER
    assert report.candidates[1].repair is None
    assert not report.reply_flagged and report.status == TurnStatus.GUARDED
    assert summary(report) == ('repaired: candidate #1 contradicts turn 1 (p=0.97) in "I have no pets."; that '
                                "sentence was removed and the rest sent")
    assert turn.settings.guard_mode == GuardMode.REPAIR and turn.settings.repair_fallback == GuardMode.RERANK
    record = conversation.to_decode_record()
    assert record["is_contradiction"] is False and record["aggregated_contradiction_indices"] == []


def test_reports_keep_the_repair_through_json_and_older_reports_still_load():
    report = _repaired_conversation().turns[-1].report
    again = BotTurnReport.from_json(jsonable(report))
    assert again == report and again.repair.removed == "I have no pets."
    stored = jsonable(report)  # as a report stored before the repair mode existed
    stored.pop("repair_declined"), stored.pop("decided_by")
    for cand in stored["candidates"]:
        cand.pop("repair")
    old = BotTurnReport.from_json(stored)
    assert old.repair is None and not old.repaired and old.repair_declined == "" and old.decided_by is None


def test_a_rejudged_turn_keeps_the_repair_it_was_sent_with_and_the_transcript_does_not_mark_it_as_sent():
    from conversation.guarding import rejudge
    from ui.transcript import transcript_marks

    conversation = _repaired_conversation()
    again = rejudge(conversation, FakeGuard(_Detector()), ChatSettings(guard_mode=GuardMode.RERANK, detector="fake", threshold=0.9))
    report = again.turns[-1].report
    assert report.repaired and report.repair.removed == "I have no pets." and report.chosen_index == 0
    assert report.would_send == 1  # re-rank would now send the clean candidate
    # the earlier turn is not badged "contradicted by the reply": what contradicted was not sent
    assert transcript_marks(conversation).turns == {}
    marked = transcript_marks(conversation, include_rejected=True).turns[1]
    assert [m.label for m in marked] == ["p=0.97 · contradicted by candidate #1 at turn 3"]


def _declined_conversation() -> Conversation:
    """The generator's best contradicts, but without its contradicting sentence only a question would remain."""
    return _repair_mode_conversation("I have no pets. Do you?", repair_fallback=GuardMode.BLOCK)


def test_a_declined_repair_is_worded_as_the_policy_that_decided_with_the_reason():
    turn = _declined_conversation().turns[-1]
    report = turn.report
    assert turn.text == "Max is a beagle." and not report.repaired and report.decided_by == GuardMode.BLOCK
    assert turn.settings.repair_fallback == GuardMode.BLOCK
    assert summary(report) == ('block: candidate #1 rejected as contradicting; #2 sent (not repaired: what would '
                                'remain ("Do you?") only asks or greets, it does not answer)')
    assert report.status == TurnStatus.GUARDED and not report.reply_flagged


def test_old_shaped_reports_keep_a_repair_through_the_upgrade():
    """A report in the shape before candidates embedded the verdict (issue 24), carrying a repair: upgraded, the
    repair stays with its candidate."""
    report = _repaired_conversation().turns[-1].report
    stored = jsonable(report)
    for cand in stored["candidates"]:
        verdict = cand.pop("verdict")
        cand.update(contradiction_score=verdict["score"], contradicts=verdict["contradiction"],
                    category=verdict["category"], evidence=verdict["evidence"], details=verdict["details"])
    again = BotTurnReport.from_json(stored)
    assert again.repair == report.repair and again.repaired and not again.reply_flagged
    assert again.candidates[0].evidence == report.candidates[0].evidence


def test_the_candidate_panel_pieces_show_the_repair():
    from ui.charts import NOT_SENT, SENT
    from ui.transcript import REMOVED_LABEL, candidate_marks, candidate_table, evidence_context_html, turn_scores

    conversation = _repaired_conversation()
    turn = conversation.turns[-1]
    repaired = turn.report.candidates[0]
    assert [row["sent"] for row in candidate_table(turn.report)] == ["✔ repaired", ""]
    marks = candidate_marks(repaired)
    assert (marks[0].needle, marks[0].label, marks[0].kind) == ("I have no pets.", REMOVED_LABEL, "removed")
    assert [m.kind for m in marks[1:]] == ["clause"]
    # its evidence is a candidate's, not the reply's: what contradicted was not sent
    assert "candidate #1 at turn 3" in evidence_context_html(conversation, repaired, turn.turn_id)
    # the chart has no "sent" point above τ for it: the text sent was never the scored candidate
    rows = [r for r in turn_scores(conversation) if r["turn"] == 3]
    assert [r["series"] for r in rows] == [NOT_SENT] and SENT not in {r["series"] for r in rows}
    assert rows[0]["text"].startswith("#1 (repaired before sending): ")


def test_the_live_view_announces_the_repair_and_a_declined_one():
    from guard.config import JudgeSettings
    from guard.judge.pipeline import decide
    from ui.turn_widgets import _choice_line

    def report(candidates, verdicts, mode):
        return decide(candidates, verdicts, JudgeSettings.resolve(None, mode=mode), detector="fake")[0]

    repaired = report(CANDIDATES, [_verdict("I don't have any pets."), CLEAN, CLEAN], GuardMode.REPAIR)
    assert _choice_line(repaired, GuardMode.REPAIR) == \
        "**repair** sends candidate #1 without “I don't have any pets\\.”: “I love hiking on weekends\\.”"
    cannot = [Candidate("I have no pets. *Do* you?", -0.3), *CANDIDATES[1:]]
    declined = report(cannot, [_verdict("I have no pets."), CLEAN, CLEAN], GuardMode.REPAIR)
    line = _choice_line(declined, GuardMode.REPAIR)
    assert line.startswith("**repair** could not repair the bot's favourite reply (what would remain")
    assert line.endswith("so **rerank** sends candidate #2")
    assert "\\*Do\\* you?" in line and "*Do*" not in line  # the bot's text is escaped
    assert _choice_line(report(CANDIDATES, [CLEAN] * 3, GuardMode.RERANK), GuardMode.RERANK) == \
        "**rerank** sends candidate #1"


# ------------------------------------------------------------------------------------------ the shipped detector
@pytest.fixture(scope="module")
def shipped_detector():
    from embedded import MissingAssetError
    from guard.judge.pipeline import load_guard

    try:
        return load_guard("embedded", prefilter=False)
    except MissingAssetError as exc:
        pytest.skip(str(exc))


def _demo_turn(guard, third_reply: list[dict], mode: GuardMode = GuardMode.REPAIR) -> Conversation:
    """The scripted demo (bots/scripted.py) with ``third_reply`` as its contradicting turn's candidates."""
    from bots.scripted import DEFAULT_SCRIPT

    bot = ScriptedBot({"replies": [*DEFAULT_SCRIPT["replies"][:2], third_reply]})
    conversation = Conversation()
    for message in ("Hi! Tell me about yourself.", "What do you do in the mornings?", "Would you like another pet?"):
        conversation.add(USER, message)
        conversation.append(guarded_reply(conversation, bot, guard,
                                          ChatSettings(bot="scripted", guard_mode=mode, threshold=guard.threshold)))
    return conversation


def test_the_shipped_detector_repairs_a_reply_that_contradicts_in_one_sentence(shipped_detector):
    reply = [{"text": "I don't have any pets. I love hiking on weekends though.", "score": -0.3},
             {"text": "No, my two dogs are plenty for me.", "score": -0.7}]
    turn = _demo_turn(shipped_detector, reply).turns[-1]
    assert turn.text == "I love hiking on weekends though."
    repair = turn.report.repair
    assert repair.removed == "I don't have any pets." and repair.evidence[0].turn_id == 1
    assert "contradicts turn 1" in repair.why
    # the server's guard field shows it
    from serve.protocol import ChatRequest, guard_field

    request = ChatRequest(turns=[], turn_messages=[0, 1, 2, 3, 4], persona=[], persona_messages=[],
                          settings=ChatSettings())
    report = guard_field(turn.report, request)["report"]
    repaired = report["candidates"][report["chosen_index"]]["repair"]
    assert repaired["removed"] == "I don't have any pets." and repaired["reply"] == turn.text


def test_the_shipped_detector_falls_back_when_only_a_question_would_remain(shipped_detector):
    reply = [{"text": "I don't have any pets. Do you?", "score": -0.3},
             {"text": "No, my two dogs are plenty for me.", "score": -0.7}]
    report = _demo_turn(shipped_detector, reply).turns[-1].report
    assert report.candidates[0].contradicts
    assert not report.repaired and report.decided_by == GuardMode.RERANK
    assert "only asks or greets" in report.repair_declined
    # re-rank decided: the other candidate unless the detector flags it too (detector v4 does), then the best
    assert report.chosen_index == (0 if report.candidates[1].contradicts else 1)
