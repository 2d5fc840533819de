"""What the guard says in words (``guard.judge.wording``, the one place that words it): a verdict, why a candidate
was or was not sent, the numbers quoted beside their thresholds. Here the words are the behaviour under test."""

from __future__ import annotations

from dataclasses import replace

import pytest

from guard.judge.policies import Why, WhyKind, choose
from guard.judge.repair import Declined, DeclinedKind
from guard.judge.verdicts import IntraCheck, PairScore, Verdict, VerdictDetails
from guard.judge.wording import declined, describe_verdict, reason, score_and_threshold
from guard.records import Candidate
from guard.vocabulary import Category, GuardMode, Method, PremiseSource


def _verdict(score: float, threshold: float = 0.5, category: str = "history", turn_id: int = 2,
             source: PremiseSource = PremiseSource.HISTORY) -> Verdict:
    hit = score >= threshold
    evidence = (PairScore(source, turn_id, "I have two dogs.", "I have no pets.", score),) if hit else ()
    details = VerdictDetails(Method.STRUCTURED, turn_id=3, threshold=threshold, n_pairs=1, history_score=score)
    return Verdict(hit, score, category if hit else Category.NONE, evidence, evidence, details)


CANDIDATES = [Candidate("I have no pets.", -0.5), Candidate("My dogs are great.", -0.9), Candidate("Dogs are fun.", -1.3)]


def test_reasons_name_the_premise_the_way_people_read_it():
    assert "contradicts turn 2" in describe_verdict(_verdict(0.9))
    persona = describe_verdict(_verdict(0.9, turn_id=1, source=PremiseSource.PERSONA))
    assert "contradicts persona line 2" in persona and "(threshold 0.50)" in persona
    role = describe_verdict(_verdict(0.9, category=Category.ROLE, turn_id=0))
    assert role.startswith("role confusion") and "turn 0" in role
    intra = describe_verdict(_verdict(0.9, category=Category.INTRA, turn_id=3, source=PremiseSource.INTRA))
    assert intra.startswith("contradicts itself") and '"I have two dogs." vs "I have no pets."' in intra
    assert describe_verdict(_verdict(0.2)).startswith("no contradiction found")


def test_the_words_quote_the_score_of_the_check_that_decided():
    """Issue 32: "contradicts itself with probability 0.88 (threshold 0.71)", not the 0.93 against a turn; a
    history pair that reaches τ as well is named with its own score."""
    clash = PairScore(PremiseSource.INTRA, 7, "I have no pets", "my cat sleeps a lot.", 0.878)
    details = VerdictDetails(Method.STRUCTURED, turn_id=7, threshold=0.95, n_pairs=4, history_score=0.93,
                             intra=IntraCheck(("I have no pets", "my cat sleeps a lot."), (clash,), 0.878, 0.71))
    why = describe_verdict(Verdict(True, 0.93, Category.INTRA, (clash,), (), details))
    assert why.startswith("contradicts itself with probability 0.88 (threshold 0.71)"), why
    assert "0.93" not in why
    persona = PairScore(PremiseSource.PERSONA, 1, "I have a cat.", "I have no pets", 0.97)
    both = Verdict(True, 0.97, Category.INTRA, (clash, persona), (persona,), replace(details, history_score=0.97))
    why = describe_verdict(both)
    assert why.startswith("contradicts itself with probability 0.88 (threshold 0.71)"), why
    assert 'also contradicts persona line 2 ("I have a cat.") with probability 0.97 (threshold 0.95)' in why, why


def test_each_choice_is_worded_with_its_numbers_and_the_verdict():
    verdicts = [_verdict(0.9), _verdict(0.1), _verdict(0.2)]
    flag = choose(CANDIDATES, verdicts, "flag")
    words = [reason(w, v) for w, v in zip(flag.whys, verdicts)]
    assert words[0].startswith("chosen: the bot's favourite (its own score -0.500); FLAGGED, contradicts turn 2")
    assert words[1].startswith("not chosen: the bot liked it less (its own score -0.900); no contradiction found")
    assert reason(choose(CANDIDATES, [], "off").whys[0], None) == "chosen: the bot's favourite (its own score -0.500)"
    penalty = choose(CANDIDATES, verdicts, "penalty")
    assert reason(penalty.whys[0], verdicts[0]).startswith(
        "not chosen: a lower adjusted score -1.220 = the bot's own -0.500 - penalty 0.720 (λ=1 × gap 0.800 × "
        "contradiction 0.90); contradicts turn 2")
    block = choose(CANDIDATES, [_verdict(0.9)] * 3, "block")
    assert reason(block.whys[0], _verdict(0.9)).startswith("rejected: every candidate contradicts, so the safe reply")
    declined_first = Why(WhyKind.LOWER, GuardMode.RERANK, -0.9, declined=Declined(DeclinedKind.WHOLE_REPLY),
                         decided_by=GuardMode.RERANK)
    assert reason(declined_first, _verdict(0.1)).startswith(
        "not repaired (the contradicting sentence is the whole reply), so rerank decided: not chosen")


@pytest.mark.parametrize("kind, detail, words", [
    (DeclinedKind.NO_EVIDENCE, "", "the detector gave no evidence pointing at a sentence"),
    (DeclinedKind.SEVERAL_SENTENCES, "2", "the contradiction runs through 2 sentences, not one"),
    (DeclinedKind.NOTHING_ANSWERS, "Do you?", 'what would remain ("Do you?") only asks or greets, it does not answer'),
])
def test_a_declined_repair_says_why(kind, detail, words):
    assert declined(Declined(kind, detail)) == words


@pytest.mark.parametrize("score, threshold, shown", [
    (0.9403, 0.9361, ("0.940", "0.936")), (0.9409, 0.9401, ("0.941", "0.940")), (0.93, 0.95, ("0.93", "0.95")),
    (0.9306, 0.9315, ("0.9306", "0.9315")), (0.94000004, 0.94, ("0.9400", "0.9400")),
])
def test_a_score_and_its_threshold_never_print_as_the_same_number_unless_they_are(score, threshold, shown):
    """Issue 45: a flag read "probability 0.94 (threshold 0.94)"."""
    assert score_and_threshold(score, threshold) == shown


def test_the_live_line_and_the_caption_word_a_reminder_alike():
    """The live view says what the guard is doing while the bot is asked again; the caption says what came of it.
    Both take the fact and the opening from one place (``wording``), the live line escaped for Markdown."""
    from guard.judge import wording
    from guard.judge.reminders import Reminder
    from ui.turn_notes import reminding_line

    sheet = Reminder(facts=(), opening="No, I live in Valparaiso.", sheet_fact="I live in *Valparaiso*.")
    assert wording.reminding_phrase(sheet) == ('No candidate gives the persona\'s answer ("I live in *Valparaiso*."). '
                                               'The bot is asked again, its reply opened with "No, I live in '
                                               'Valparaiso.".')
    assert reminding_line(sheet).startswith("🔁 No candidate") and r"\*Valparaiso\*" in reminding_line(sheet)
    evidence = Reminder(facts=(PairScore(source=PremiseSource.PERSONA, turn_id=2, premise="I work as a nurse.",
                                          hypothesis="I'm a pilot.", score=0.98),),
                        opening="I work as a nurse.")
    assert wording.reminding_phrase(evidence).startswith('Nothing consistent to send: the candidates contradict '
                                                         'persona line 3 ("I work as a nurse.")')
    assert 'its reply opened with "I work as a nurse."' in wording.reminder_phrase(evidence)
    # opened with the sheet's answer: the fact said once when it is the one the candidates contradicted, else both
    from dataclasses import replace
    same = replace(evidence, opening="No, I work as a nurse.", sheet_fact="I work as a nurse.",
                   sheet_answer="No, I work as a nurse.")
    assert wording.reminder_phrase(same).startswith('reminded the bot of persona line 3 ("I work as a nurse."), the '
                                                    "persona's answer to the question, which candidates contradicted")
    other = replace(same, opening="My name is Sam.", sheet_fact="My name is Sam.", sheet_answer="My name is Sam.")
    assert wording.reminder_phrase(other).startswith('reminded the bot of the persona\'s answer to the question ("My '
                                                     'name is Sam."), after candidates contradicted persona line 3')
