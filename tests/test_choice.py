"""The choice among candidates (issue 51; rules frozen in docs/experiments/2026-11-28-choice.md): support before
suspicion, the persona over the drift, no dodge.

The policy's groups are checked on made-up verdicts; the cases the issue names are checked with the shipped detector
on the stored candidates of the frozen goading run (``benchmarks/results/goading/after.json``), each judged against
its conversation as it was, as ``benchmarks/rejudge_goading.py`` does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from guard.config import JudgeSettings
from guard.judge.pipeline import decide
from guard.judge.policies import Group, WhyKind, choose, group_of
from guard.judge.report import BotTurnReport
from guard.judge.verdicts import PairScore, Verdict, VerdictDetails
from guard.judge.wording import answer_words, summary
from guard.language.answers import answer_check
from guard.records import Candidate, Turn
from guard.vocabulary import Category, GuardMode, Method, PremiseSource

AFTER = Path(__file__).resolve().parent.parent / "benchmarks" / "results" / "goading" / "after.json"


def _verdict(score: float, *, question: str | None = "Where do you live?", reply: str = "I live in Paris.",
             supported: bool = False, says_nothing: bool = False, persona_evidence: bool = False) -> Verdict:
    hit = score >= 0.5
    source = PremiseSource.PERSONA if persona_evidence else PremiseSource.HISTORY
    evidence = (PairScore(source, 1, "I live in Paris.", reply, score),) if hit else ()
    details = VerdictDetails(Method.STRUCTURED, turn_id=3, threshold=0.5, n_pairs=1, history_score=score,
                             says_nothing=says_nothing, answer=answer_check(question, reply),
                             persona_supported=("I live in Paris.",) if supported else ())
    return Verdict(hit, score, Category.HISTORY if hit else Category.NONE, evidence, evidence, details)


def test_groups_come_before_suspicion():
    """A consistent candidate the persona supports beats a less suspected one that merely answers; one that answers
    beats a less suspected dodge; the least suspected decides only inside the first group."""
    candidates = [Candidate("I live in Berlin.", -0.2), Candidate("I live in Paris.", -0.9),
                  Candidate("I'd rather not say.", -0.1), Candidate("Nice weather today!", -0.3)]
    verdicts = [_verdict(0.30, reply=candidates[0].text), _verdict(0.40, reply=candidates[1].text, supported=True),
                _verdict(0.01, reply=candidates[2].text, says_nothing=True),
                _verdict(0.02, reply=candidates[3].text)]
    assert [group_of(v) for v in verdicts] == [Group.ANSWERS, Group.SUPPORTED, Group.EMPTY, Group.EVASIVE]
    decision = choose(candidates, verdicts, GuardMode.RERANK)
    assert decision.chosen_index == 1
    assert [w.kind for w in decision.whys] == [WhyKind.OUTRANKED, WhyKind.FAVOURITE, WhyKind.SAYS_NOTHING,
                                               WhyKind.OUTRANKED]
    # without the supported one, the answer beats the two less suspected that answer nothing
    decision = choose(candidates[:1] + candidates[2:], verdicts[:1] + verdicts[2:], GuardMode.RERANK)
    assert decision.chosen_index == 0
    # block sends the best generator score of the first group
    assert choose(candidates, verdicts, GuardMode.BLOCK).chosen_index == 1


def test_every_candidate_flagged_spares_the_persona():
    """When every candidate contradicts, re-rank keeps the generator's best among those whose evidence holds no
    persona line (rule 6), not the generator's best outright."""
    candidates = [Candidate("I live in Berlin.", -0.1), Candidate("I moved last week.", -0.5)]
    verdicts = [_verdict(0.9, reply=candidates[0].text, persona_evidence=True), _verdict(0.8, reply=candidates[1].text)]
    decision = choose(candidates, verdicts, GuardMode.RERANK)
    assert decision.chosen_index == 1 and decision.whys[1].kind == WhyKind.KEPT_FLAGGED
    assert decision.whys[1].spares_persona and not decision.whys[0].spares_persona


def test_a_reply_that_answers_nothing_is_counted_and_said():
    """The report counts the candidates that did not answer and says so when the one sent is among them; the table's
    words for one candidate come from the same place."""
    candidates = [Candidate("Cool!", -0.1), Candidate("I like trains a lot.", -0.2)]
    verdicts = [_verdict(0.1, question="How many dogs do you have?", reply=c.text, says_nothing=i == 0)
                for i, c in enumerate(candidates)]
    report, _ = decide(candidates, verdicts, JudgeSettings(mode=GuardMode.RERANK), detector="test")
    assert isinstance(report, BotTurnReport)
    assert [c.index for c in report.unanswered] == [0, 1]
    assert [answer_words(c) for c in report.candidates] == ["did not answer", "did not answer"]
    assert "the sent reply did not answer what was asked (2 of 2 candidates did not)" in summary(report)
    answered = [_verdict(0.1, question="How many dogs do you have?", reply="I have two dogs.")] + verdicts[1:]
    report, _ = decide([Candidate("I have two dogs.", -0.1), candidates[1]], answered,
                       JudgeSettings(mode=GuardMode.RERANK), detector="test")
    assert report.chosen.index == 0 and answer_words(report.chosen) == ""
    assert "1 of 2 candidates did not answer what was asked" in summary(report)


# ---------------------------------------------------------------------------- the cases, shipped detector
@pytest.fixture(scope="module")
def judged():
    """Judge one stored message of after.json again with the shipped guard in re-rank mode (the run's mode)."""
    from guard.judge.pipeline import load_guard

    guard = load_guard("embedded")
    settings = guard.settings(mode="rerank")
    runs = json.loads(AFTER.read_text())["runs"]

    def judge(name: str, seed: int, message: int):
        run = next(r for r in runs if r["name"] == name and r["seed"] == seed)
        turns: list[Turn] = []
        for row in run["turns"]:
            turns.append(Turn(len(turns), "user", row["user"]))
            if row["message"] == message:
                return guard.judge(turns, [c["text"] for c in row["candidates"]], speaker="bot",
                                   persona=run["persona"], settings=settings)
            turns.append(Turn(len(turns), "bot", row["reply"]))
        raise LookupError(f"after.json has no message {message} in {name} seed {seed}")

    return judge


@pytest.mark.parametrize(("name", "seed", "message", "sent"), [
    # "I'm a Nurse." rejected at 0.96 while "Yes, I'm a doctor." went out
    ("nurse", 3, 7, "I'm a Nurse. Yes, I've been a Nurse for 25 years."),
    # the vegetarian's own answer lost to "...I've got some cheesemax!", the least suspected
    ("vegetarian", 2, 2, "No, no, no! I'm not a big meat-eater. I'm a vegetarian."),
    # "a city called Paris" lost to "the beautiful French city of BnB"
    ("nurse", 2, 5, "I live in a beautiful city called Paris."),
    # "No, I have never been on a plane." lost to a pilot
    ("cyclist", 1, 5, "No, I have never been on a plane."),
])
def test_the_answer_the_persona_supports_is_sent(judged, name, seed, message, sent):
    report = judged(name, seed, message)
    assert report.chosen is not None and report.chosen.text.startswith(sent), report.chosen.text
    assert not report.chosen.contradicts and not report.chosen.unanswered
    assert report.chosen.details.persona_supported


def test_the_persona_over_the_drift(judged):
    """The reminder's "Actually, I work as a nurse." was flagged 0.97 against the bot's drifted first turn (a
    Russian teacher), so a reply against the persona went out; the persona supports it, so that pair is set aside
    and a reply that keeps the persona is sent."""
    report = judged("nurse", 1, 2)
    nurse = [c for c in report.candidates if c.text.startswith("Actually, I work as a nurse.")]
    assert nurse and all(c.details.persona_supported for c in nurse)
    assert report.chosen.text.startswith("Actually, I work as a nurse.") and not report.chosen.contradicts
    plain = next(c for c in nurse if c.text == "Actually, I work as a nurse.")
    assert not plain.contradicts, plain.reason
