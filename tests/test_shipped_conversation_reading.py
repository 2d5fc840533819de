"""The shipped detector, as the chat builds it, on the conversations the reading issues were filed with: a short answer
read with its question, a denial read by what it denies, the persona over the bot's drift, and the embedded bot
reminded instead of muted (examples from the issues' walks; the scores they measured are in the comments)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from guard.judge.pipeline import load_guard
from guard.models.pair_cache import clear_pair_cache
from guard.records import Candidate, Turn
from guard.vocabulary import PremiseSource

NURSE = ["I have two dogs.", "I live in Paris.", "I work as a nurse."]


#: int8 kernels differ between CPUs and with the batch a pair is scored in (dynamic quantization): a score this close
#: to its threshold may fall either side, so a verdict there is not held against the detector


@pytest.fixture(scope="module")
def guard():
    return load_guard("embedded")


@pytest.fixture(autouse=True)
def fresh_pairs(guard):
    """Each test's pairs scored in its own batches (the scorer's cache would keep another test's)."""
    clear_pair_cache(guard.scorer)


def _verdict_is(cand, contradicts: bool) -> None:
    """``cand`` is (not) flagged: asserted at its measured score, whatever its distance to the threshold (the
    callers say how far it was when measured)."""
    score, threshold = cand.deciding
    assert cand.contradicts is contradicts, (cand.text, score, threshold)


def _turns(*texts: str) -> list[Turn]:
    """Alternating user / bot turns, the user first."""
    return [Turn(i, "user" if i % 2 == 0 else "bot", text) for i, text in enumerate(texts)]


def _verdicts(guard, turns, candidates, persona=NURSE):
    report = guard.judge(turns, [Candidate(c, -1.0 - i / 10) for i, c in enumerate(candidates)], speaker="bot",
                         persona=persona)
    return report, {c.text: c for c in report.candidates}


def test_aren_t_you_a_teacher_is_read_with_its_question(guard):
    turns = _turns("Hi! What do you do?", "I work as a nurse at a hospital here in Paris.",
                   "Wait, aren't you a teacher?")
    report, cands = _verdicts(guard, turns, [
        "Yes, I am.",  # read as "I am a teacher.": was sent unflagged (0.11) before answers were read
        "I'm a teacher at a school here in Paris.",
        "No, I don't work as a teacher. I'm a nurse.",  # a denial that agrees: flagged (0.99) before
        "I don't work as a teacher.",
        "No, I work as a nurse."])
    yes = cands["Yes, I am."]
    assert yes.contradicts and yes.details.answer_reading == "I am a teacher."  # 0.99 against the nurse turn
    # the nurse turn and the persona's nurse line both say otherwise (int8 scores move a little with the batch)
    assert {(e.source, e.turn_id) for e in yes.evidence} <= {(PremiseSource.HISTORY, 1), (PremiseSource.PERSONA, 2)}
    assert yes.evidence[0].hypothesis == "Yes, I am." and yes.evidence[0].hypothesis_reading == "I am a teacher."
    assert cands["I'm a teacher at a school here in Paris."].contradicts
    for consistent in ("No, I don't work as a teacher. I'm a nurse.", "I don't work as a teacher.",
                       "No, I work as a nurse."):
        assert not cands[consistent].contradicts, consistent
    assert report.sent == "No, I don't work as a teacher. I'm a nurse."


def test_yes_i_am_is_flagged_with_the_persona_line_as_evidence(guard):
    _, cands = _verdicts(guard, _turns("Wait, aren't you a teacher?"), ["Yes, I am."])
    yes = cands["Yes, I am."]
    _verdict_is(yes, True)  # 0.9462 alone against "I work as a nurse." on an AVX2 EPYC (τ 0.9361: 0.010 over it)
    verdict = guard.verdict(_turns("Wait, aren't you a teacher?"), "Yes, I am.", speaker="bot", persona=NURSE,
                            settings=guard.settings(mode="flag"))
    top = max(verdict.pair_scores, key=lambda p: p.score)
    assert (top.source, top.turn_id, top.premise, top.hypothesis_reading) == (
        PremiseSource.PERSONA, 2, "I work as a nurse.", "I am a teacher.")


def test_a_nurse_who_is_not_really_a_doctor_is_not_flagged(guard):
    _, cands = _verdicts(guard, _turns("Are you a doctor?"), [
        "I'm not really a doctor. I'm a nurse, and I do everything in my profession to help people."])
    assert not next(iter(cands.values())).contradicts  # five red badges with the cascade before (0.92, 0.95)


def test_declarative_questions_are_read(guard):
    _, labrador = _verdicts(guard, _turns("Do you have pets?", "No, I don't have any pets.",
                                          "I thought you had a labrador?"), ["I do, but he is old now."], persona=[])
    answer = labrador["I do, but he is old now."]
    # read as "I have a labrador.": 0.93 against "No, I don't have any pets." (unread, the reply scored 0.14; issue
    # 29 caught such answers 0.11-0.21), just under τ 0.9361 on an AVX2 EPYC: raised, not always flagged
    assert answer.details.answer_reading == "I have a labrador." and answer.contradiction_score > 0.9
    _, potter = _verdicts(guard, _turns("What do you like to read?", "I love Harry Potter, I read all the books.",
                                        "I thought you said you like Harry Potter?"),
                          ["No, I don't like harry potter."], persona=[])
    assert potter["No, I don't like harry potter."].details.answer_reading == "I do not like Harry Potter."
    assert potter["No, I don't like harry potter."].contradicts  # 0.98


@pytest.mark.xfail(strict=True, reason="read as 'I have lived in California for just under a year.', but detector v4 "
                                       "does not infer that being born there means living there longer (scores it "
                                       "well under τ)")
def test_a_bare_value_against_a_birthplace(guard):
    _, cands = _verdicts(guard, _turns("Where are you from?", "I was born in California and never left.",
                                       "How long have you lived in California?"), ["Just under a year."], persona=[])
    assert cands["Just under a year."].details.answer_reading.startswith("I have lived in California")
    assert cands["Just under a year."].contradicts


@pytest.mark.parametrize("reply", [
    pytest.param("I love italian food as well. I also love french food.", marks=pytest.mark.xfail(
        strict=True, reason="goal missed: its clauses score 0.9394 and the budget set the intra threshold at 0.9264 "
                            "once the intra check stopped pairing a past or wished clause with a present one (issue "
                            "41; 0.9434 before): an elaboration flagged as contradicting itself")),
    "I used to play the piano when I was younger, but I haven't played in a long time.",  # 0.95 before
    "I'm glad you asked, but I'm too tired to talk about it now.",
])
def test_clauses_that_elaborate_are_not_flagged(guard, reply):
    """The intra check at the budget's threshold (0.9264; 0.9434 before the fact sheet, 0.7119 before the budget)."""
    _, cands = _verdicts(guard, _turns("Tell me more."), [reply], persona=[])
    _verdict_is(cands[reply], False)
    intra = cands[reply].details.intra
    # measured on an AVX2 EPYC: the food reply's clauses 0.9394, the piano one's past clause no longer paired, the
    # tired one 0.669
    assert intra.score < intra.threshold, (reply, intra.score, intra.threshold)


def test_the_persona_outranks_a_drifted_first_reply(guard):
    """After the bot's first reply drifted from its persona, a candidate that keeps to the persona is sent (issue 35:
    seven "I'm actually a nurse." candidates were rejected as contradicting the drift)."""
    turns = _turns("Hi, who are you?",
                   "My name is Emily Rodriguez, and I'm a freelance creative writing assistant.",
                   "What do you do for work?")
    report, cands = _verdicts(guard, turns, ["I'm a doctor.", "I'm actually a nurse."])
    assert cands["I'm a doctor."].contradicts and not cands["I'm actually a nurse."].contradicts
    assert report.sent == "I'm actually a nurse."


def test_the_writer_contradiction_is_caught(guard):
    _, cands = _verdicts(guard, _turns("Do you like your work?"), ["I'm happy to be a writer."])
    assert cands["I'm happy to be a writer."].contradicts  # sent unflagged at 0.94 before


def test_a_doctor_against_a_nurse(guard):
    """Detector v4 scores a doctor against 'I work as a nurse.' about 0.73-0.80, under τ (job swaps without a clash
    word are its known weakness); the fact sheet's check reads two jobs and flags it (issue 41)."""
    _, cands = _verdicts(guard, _turns("Are you good at your job?"),
                         ["I'm an amazing doctor with many years of experience."])
    assert cands["I'm an amazing doctor with many years of experience."].contradicts


TEACHER_RUN = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "reminders"


def _people_read(seed: int, reply: str) -> bool:
    """Whether people read ``reply`` (seed ``seed``'s) as consistent in both of their passes
    (``benchmarks/results/reminders/teacher-labels.jsonl``, the replies in ``teacher-app.json``); a reply they have
    not read fails the test with what to do."""
    replies = {r["seed"]: r["reply"] for r in json.loads((TEACHER_RUN / "teacher-app.json").read_text())["replies"]}
    labels = {row["seed"]: row for row in map(json.loads, (TEACHER_RUN / "teacher-labels.jsonl").open())}
    assert replies.get(seed) == reply and seed in labels, \
        f"seed {seed}'s reply {reply!r} was not read by people: read it in two passes and add it to teacher-labels.jsonl"
    return labels[seed]["pass1"] == labels[seed]["pass2"] == "consistent"


def test_the_embedded_bot_reminded_answers_the_teacher_question_consistently(guard):
    """Five seeded tries, the app's code path: the reply sent is consistent, as people read it (two passes), in at
    least four (the reminder gave 0 of 5 before openings, 2 of 5 on 2026-11-27; 4 of 5 once the sheet answered the
    goad; 5 of 5 with top-k 40 and top-p 0.9: each sends the reminder's opening; since the sheet's answer opens it,
    2026-11-29-sheet-first.md, "No, I work as a nurse." alone in all five). Judged by the labels, never by a word
    check."""
    from dataclasses import replace

    from bots.registry import make_bot
    from conversation.guarding import guarded_reply
    from conversation.records import ChatSettings, Conversation

    bot = make_bot("embedded")
    consistent = 0
    for seed in (1, 2, 3, 4, 5):
        conversation = Conversation(persona=list(NURSE))
        for speaker, text in (("user", "Hi! What do you do?"), ("bot", "I work as a nurse at a hospital here in Paris."),
                              ("user", "Wait, aren't you a teacher?")):
            conversation.add(speaker, text)
        settings = ChatSettings(bot="embedded", threshold=guard.threshold)
        settings = replace(settings, decoding=replace(settings.decoding_config, seed=seed))
        turn = guarded_reply(conversation, bot, guard, settings)
        consistent += _people_read(seed, turn.text)
    assert consistent >= 4
