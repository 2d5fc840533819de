"""What the guard does with the detector's verdicts on N candidate replies.

Modes:
* ``off``     the generator's best candidate, verdicts ignored.
* ``flag``    the generator's best candidate, contradictions only reported.
* ``rerank``  DECODE §5.3 (Nie et al. 2021): the best-scored candidate the detector does not flag;
              if every candidate is flagged, the generator's best (as DECODE's re-ranked beam does).
* ``penalty`` Dialogue NLI re-ranking (Welleck et al. 2019, eq. 1):
              s'_i = s_i - λ·(s_1 - s_k)·c_i, with s_1 the top generator score, s_k the k-th best
              (k = ``penalty_k``, default the last candidate) and c_i the candidate's contradiction
              probability when the detector flags it, else 0. With λ = 1 a certainly-contradicting
              top candidate drops to the k-th place.
* ``block``   like ``rerank``, but when every candidate is flagged the bot says a safe reply
              instead (the MuTual-plus idea, Cui et al. 2020: a safe response should win when
              every other candidate is wrong).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from guard.records import Candidate
from guard.verdicts import Verdict
from guard.vocabulary import GUARD_MODES, Category, GuardMode, describe_source

MODES = GUARD_MODES  # the modes choose() takes
#: One of MuTual-plus's safe responses (Cui et al. 2020, §3).
DEFAULT_SAFE_REPLY = "I'm afraid I didn't quite catch what you were saying."


@dataclass
class PolicyDecision:
    """The reply to send and why each candidate was or was not sent."""

    chosen_index: int | None  # None = the fallback reply was used
    reply: str
    used_fallback: bool
    reasons: list[str]  # one per candidate, in the candidates' order
    adjusted_scores: list[float]


def score_and_threshold(score: float, threshold: float) -> tuple[str, str]:
    """A score and the threshold it is compared with, written with enough digits (2 to 4) that the written
    numbers compare the way the real ones do: 0.9306 vs 0.9315, never "0.93 (threshold 0.93)" beside "no
    contradiction"."""
    for digits in (2, 3, 4):
        a, b = f"{score:.{digits}f}", f"{threshold:.{digits}f}"
        if (float(a) >= float(b)) == (score >= threshold) and (a != b or score >= threshold):
            return a, b
    return f"{score:.4f}", f"{threshold:.4f}"


def describe_verdict(verdict: Verdict) -> str:
    """One plain sentence on what the detector found, with the strongest evidence."""
    def probability(score: float, threshold: float) -> str:
        shown, limit = score_and_threshold(score, threshold)
        return f"probability {shown} (threshold {limit})"

    tau = verdict.details.threshold
    if not verdict.contradiction:
        return f"no contradiction found: highest contradiction {probability(verdict.score, tau)}"
    top = verdict.evidence[0] if verdict.evidence else None
    if verdict.category == Category.INTRA:
        intra = verdict.details.intra.threshold if verdict.details.intra is not None else tau
        where = f': "{top.premise}" vs "{top.hypothesis}"' if top else ""
        return f"contradicts itself with {probability(verdict.score, intra)}{where}"
    if top is None:
        return f"contradicts the conversation with {probability(verdict.score, tau)}"
    what = "role confusion: reads as the user's reply and contradicts" if verdict.category == Category.ROLE \
        else "contradicts"
    limit = tau
    if verdict.category == Category.ROLE and verdict.details.role is not None \
            and verdict.details.role.signal == "answers-own-question":
        limit = verdict.details.role.role_threshold
    return (f'{what} {describe_source(top)} ("{top.premise}") with {probability(top.score, limit)}'
            + (f", and {len(verdict.evidence) - 1} more" if len(verdict.evidence) > 1 else ""))


def _check(candidates: Sequence[Candidate], verdicts: Sequence[Verdict] | None, mode: GuardMode) -> GuardMode:
    """``mode`` as a GuardMode, once the inputs are known to fit together (a clear ValueError otherwise)."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    if len(candidates) == 0:
        raise ValueError("no candidates to choose from: generate at least one candidate reply")
    for c in candidates:
        if not isinstance(c, Candidate) or not isinstance(c.text, str) or not isinstance(c.score, (int, float)) \
                or math.isnan(c.score):
            raise ValueError(f"each candidate must be a guard.records.Candidate (text, generator score), got {c!r}")
    if mode != GuardMode.OFF and (verdicts is None or len(verdicts) != len(candidates)):
        n = 0 if verdicts is None else len(verdicts)
        raise ValueError(f"mode {mode!r} needs one verdict per candidate: {len(candidates)} candidates, {n} verdicts")
    return GuardMode(mode)


def choose(
    candidates: Sequence[Candidate],
    verdicts: Sequence[Verdict] | None,
    mode: GuardMode,
    penalty_lambda: float = 1.0,
    fallback: str = DEFAULT_SAFE_REPLY,
    penalty_k: int | None = None,
) -> PolicyDecision:
    """Pick the reply for ``mode``; a candidate's generator score is higher when better. ``verdicts`` are the
    detector's, one per candidate (None or empty when the mode is off)."""
    mode = _check(candidates, verdicts, mode)
    scores = [float(c.score) for c in candidates]
    n = len(candidates)
    best_gen = max(range(n), key=lambda i: scores[i])  # first of equals wins
    flagged = [bool(v.contradiction) for v in verdicts] if mode != GuardMode.OFF else [False] * n

    if mode in (GuardMode.OFF, GuardMode.FLAG):
        reasons = []
        for i in range(n):
            head = "chosen: the generator's best" if i == best_gen else "not chosen: a lower generator score"
            line = f"{head} ({scores[i]:.3f})"
            if mode == GuardMode.FLAG:
                line += ("; FLAGGED, " if flagged[i] else "; ") + describe_verdict(verdicts[i])
            reasons.append(line)
        return PolicyDecision(best_gen, candidates[best_gen].text, False, reasons, scores)

    if mode == GuardMode.PENALTY:
        if penalty_lambda < 0:
            raise ValueError(f"penalty_lambda must be >= 0, got {penalty_lambda}")
        k = n if penalty_k is None else penalty_k
        if not 1 <= k <= n:
            raise ValueError(f"penalty_k must be between 1 and the number of candidates ({n}), got {k}")
        ranked = sorted(scores, reverse=True)
        gap = ranked[0] - ranked[k - 1]
        contra = [v.score if v.contradiction else 0.0 for v in verdicts]
        adjusted = [s - penalty_lambda * gap * c for s, c in zip(scores, contra)]
        chosen = max(range(n), key=lambda i: adjusted[i])
        reasons = []
        for i in range(n):
            head = "chosen: highest adjusted score" if i == chosen else "not chosen: a lower adjusted score"
            penalty = scores[i] - adjusted[i]
            reasons.append(
                f"{head} {adjusted[i]:.3f} = generator {scores[i]:.3f} - penalty {penalty:.3f}"
                f" (λ={penalty_lambda:g} × gap {gap:.3f} × contradiction {contra[i]:.2f}); "
                + describe_verdict(verdicts[i])
            )
        return PolicyDecision(chosen, candidates[chosen].text, False, reasons, adjusted)

    # rerank / block: the best generator score among the candidates the detector does not flag.
    clean = [i for i in range(n) if not flagged[i]]
    if clean:
        chosen = max(clean, key=lambda i: scores[i])
    elif mode == GuardMode.RERANK:
        chosen = best_gen
    else:
        chosen = None
    reasons = []
    for i in range(n):
        if i == chosen and flagged[i]:
            head = "chosen although flagged: every candidate contradicts, so the generator's best is kept"
        elif i == chosen:
            head = f"chosen: the best generator score ({scores[i]:.3f}) among candidates without a contradiction"
        elif flagged[i] and chosen is None:
            head = "rejected: every candidate contradicts, so the safe reply is sent"
        elif flagged[i]:
            head = "rejected"
        else:
            head = f"not chosen: a lower generator score ({scores[i]:.3f})"
        reasons.append(f"{head}; {describe_verdict(verdicts[i])}")
    if chosen is None:
        return PolicyDecision(None, fallback, True, reasons, scores)
    return PolicyDecision(chosen, candidates[chosen].text, False, reasons, scores)
