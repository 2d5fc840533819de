"""Build guard reports by hand in tests: a candidate from the numbers a test cares about."""

from __future__ import annotations

from collections.abc import Sequence

from conversation.records import CandidateReport
from guard.verdicts import PairScore, Verdict, VerdictDetails
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
                          evidence=list(evidence), pair_scores=[], details=details)
    return CandidateReport(index, text, generator_score, chosen, reason, verdict, adjusted_score)
