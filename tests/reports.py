"""Build guard reports by hand in tests: a candidate from the numbers a test cares about, and a guard whose verdicts
a test chooses."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from guard.config import GuardConfig
from guard.judge.pipeline import Guard
from guard.judge.report import BotTurnReport, CandidateReport
from guard.judge.verdicts import PairScore, Verdict, VerdictDetails
from guard.vocabulary import Category, Method


def candidate(index: int, text: str, generator_score: float, score: float | None, contradicts: bool,
              category: Category, chosen: bool, reason: str, adjusted_score: float | None = None,
              evidence: Sequence[PairScore] = (), details: VerdictDetails | None = None,
              threshold: float = 0.5) -> CandidateReport:
    """A CandidateReport whose verdict says ``score``/``contradicts``/``category`` with ``evidence`` (no verdict
    when ``score`` is None: the guard was off)."""
    verdict = None
    if score is not None:
        details = details or VerdictDetails(method=Method.STRUCTURED, turn_id=index, threshold=threshold, n_pairs=1,
                                            history_score=score)
        verdict = Verdict(contradiction=contradicts, score=score, category=Category(category),
                          evidence=tuple(evidence), pair_scores=(), details=details)
    return CandidateReport(index, text, generator_score, chosen, reason, verdict, adjusted_score)


def as_stored(report: BotTurnReport) -> BotTurnReport:
    """``report`` as its JSON form keeps it (``BotTurnReport.to_json``): each verdict without its scored pairs (the
    in-memory report keeps them for the heatmap), everything else as it is."""
    return replace(report, candidates=tuple(
        c if c.verdict is None else replace(c, verdict=replace(c.verdict, pair_scores=())) for c in report.candidates))


class FakeGuard(Guard):
    """A guard whose verdicts come from a test's fake detector (an object with the detector's ``judge(history,
    candidates, speaker, persona, settings, turn_id=None)``, scores chosen by the test) in place of its one
    ``ContradictionDetector``: the settings, the policy, the report and the conversation around it are the real
    ones."""

    def __init__(self, detector, name: str = "fake", threshold: float = 0.5) -> None:
        super().__init__(name, scorer=None, config=GuardConfig(threshold=threshold))
        object.__setattr__(self, "detector", detector)  # the guard is frozen: its detector is set once, here
