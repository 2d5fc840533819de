"""What the guard does with the detector's verdicts on N candidate replies.

Modes:
* ``off``     the generator's best candidate, verdicts ignored.
* ``flag``    the generator's best candidate, contradictions only reported.
* ``rerank``  DECODE §5.3 (Nie et al. 2021), among the candidates the detector does not flag that answer: the
              one the detector suspects least, the generator's best (the bot's favourite) only while its score
              is under a low band set on the calibration halves (``rerank_band``); if every candidate is
              flagged, the generator's best (as DECODE's re-ranked beam does).
* ``penalty`` Dialogue NLI re-ranking (Welleck et al. 2019, eq. 1):
              s'_i = s_i - λ·(s_1 - s_k)·c_i, with s_1 the top generator score, s_k the k-th best
              (k = ``penalty_k``, default the last candidate) and c_i the candidate's contradiction
              probability when the detector flags it, else 0. With λ = 1 a certainly-contradicting
              top candidate drops to the k-th place.
* ``block``   like ``rerank``, but when every candidate is flagged the bot says a safe reply
              instead (the MuTual-plus idea, Cui et al. 2020: a safe response should win when
              every other candidate is wrong).
* ``repair``  the generator's best, and when it contradicts through one sentence (or a clause of one
              sentence), that sentence removed, provided what remains still answers (``plan_repair``);
              otherwise ``repair_fallback`` (rerank, penalty or block) decides. A long reply that goes
              wrong in one sentence keeps the rest of what the generator liked best instead of being
              swapped for a weaker candidate.

The choice is made here and recorded as ``Why`` records, one per candidate, with the numbers they rest on;
``guard.judge.wording`` words them, and ``guard.judge.pipeline.decide`` puts both in the turn's report.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from guard.config import DEFAULT_SAFE_REPLY
from guard.judge.repair import Declined, Repair, plan_repair
from guard.judge.verdicts import Verdict
from guard.records import Candidate
from guard.vocabulary import GUARD_MODES, GuardMode, PremiseSource

MODES = GUARD_MODES  # the modes choose() takes
#: The policies repair falls back to when the generator's best cannot be repaired: those that look at every
#: candidate (off and flag would send the contradiction unchanged).
REPAIR_FALLBACKS: tuple[GuardMode, ...] = (GuardMode.RERANK, GuardMode.PENALTY, GuardMode.BLOCK)


class Group(StrEnum):
    """Where a consistent candidate stands in re-rank and block (docs/experiments/2026-11-28-choice.md, rule 1):
    a candidate of a later group never outranks one of an earlier group; inside a group the band / suspicion rule
    picks."""

    SUPPORTED = "supported"  # answers, and the persona supports it
    ANSWERS = "answers"  # answers the user's message
    EVASIVE = "evasive"  # answers nothing of the kind asked, or repeats itself
    EMPTY = "empty"  # claims nothing ("I don't know.", a question back)


#: the groups, best first
GROUPS: tuple[Group, ...] = tuple(Group)


def group_of(verdict: Verdict) -> Group:
    """A consistent candidate's group, from what its verdict records (``VerdictDetails``)."""
    details = verdict.details
    if details.says_nothing:
        return Group.EMPTY
    answer = details.answer
    if answer is not None and (answer.degenerate or not answer.answered):
        return Group.EVASIVE
    return Group.SUPPORTED if details.persona_supported else Group.ANSWERS


class WhyKind(StrEnum):
    """Why a candidate was or was not sent (``guard.judge.wording.reason`` words each)."""

    BEST = "best"  # off / flag: the generator's best
    LOWER = "lower"  # not chosen: a lower generator score
    PENALTY_BEST = "penalty-best"  # penalty: the highest adjusted score
    PENALTY_LOWER = "penalty-lower"  # penalty: a lower adjusted score
    KEPT_FLAGGED = "kept-flagged"  # re-rank: every candidate contradicts, the generator's best kept
    FAVOURITE = "favourite"  # re-rank: the bot's favourite among consistent answers
    LEAST_SUSPECTED = "least-suspected"  # re-rank: the one the detector suspects least among consistent answers
    BEST_CONSISTENT = "best-consistent"  # block: the best generator score among consistent answers
    GUARD_WRITTEN = "guard-written"  # re-rank / block: the guard's own reply, nothing the bot wrote in its group
    ONLY_SAYS_NOTHING = "only-says-nothing"  # chosen although it says nothing: no consistent candidate answers
    SAYS_NOTHING = "says-nothing"  # not chosen: it says nothing, and a consistent candidate answers
    OUTRANKED = "outranked"  # not chosen: a consistent candidate of an earlier group (``Group``) stands beside it
    REJECTED_ALL = "rejected-all"  # every candidate contradicts: the safe reply is sent
    REJECTED = "rejected"  # it contradicts
    MORE_SUSPECTED = "more-suspected"  # re-rank: the detector suspects it more than the one chosen
    REPAIRED = "repaired"  # repair: chosen, its contradicting sentence removed
    REPAIR_WON = "repair-won"  # repair: not chosen, the generator's best could be repaired


@dataclass(frozen=True)
class Why:
    """Why one candidate was or was not sent, with the numbers the words quote (those of its kind)."""

    kind: WhyKind
    mode: GuardMode
    score: float  # the candidate's generator score
    flagged: bool = False
    #: re-rank / block: a consistent candidate's group, and the group the chosen one came from
    group: Group | None = None
    chosen_group: Group | None = None
    #: every candidate contradicts: whether this one's evidence spares the persona (rule 6)
    spares_persona: bool | None = None
    suspected: float | None = None  # re-rank: its deciding score
    favourite_suspected: float | None = None  # re-rank: the bot's favourite's deciding score
    band: float | None = None  # re-rank's band
    adjusted: float | None = None  # penalty: generator score minus the penalty
    penalty_lambda: float | None = None
    gap: float | None = None
    contradiction: float | None = None
    removed: str = ""  # repair: the sentence removed
    best_score: float | None = None  # repair: the generator's best score
    #: repair mode: why the generator's best could not be repaired, and the policy that then decided
    declined: Declined | None = None
    decided_by: GuardMode | None = None


@dataclass(frozen=True)
class PolicyDecision:
    """The reply to send and why each candidate was or was not sent."""

    chosen_index: int | None  # None = the fallback reply was used
    reply: str
    used_fallback: bool
    whys: tuple[Why, ...]  # one per candidate, in the candidates' order
    adjusted_scores: tuple[float, ...]
    repair: Repair | None = None  # repair mode: the chosen candidate was sent without its contradicting sentence
    # repair mode: why the generator's best contradicting candidate could not be repaired (None when it was, or
    # when it did not contradict); the fallback policy then decided
    repair_declined: Declined | None = None
    decided_by: GuardMode | None = None  # repair mode: the policy that decided when no repair was made


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
    repair_fallback: GuardMode = GuardMode.RERANK,
    rerank_band: float | None = None,
    last_resort: Collection[int] = (),
) -> PolicyDecision:
    """Pick the reply for ``mode``; a candidate's generator score is higher when better. ``verdicts`` are the
    detector's, one per candidate (None or empty when the mode is off). ``repair_fallback``: the policy the
    repair mode falls back to (one of ``REPAIR_FALLBACKS``). ``rerank_band``: re-rank sends the generator's best
    while its score is under it, else the least suspected (None: always the least suspected)."""
    mode = _check(candidates, verdicts, mode)
    if mode == GuardMode.REPAIR:
        return _repair_or_fall_back(candidates, verdicts, repair_fallback, penalty_lambda=penalty_lambda,
                                    fallback=fallback, penalty_k=penalty_k, rerank_band=rerank_band)
    scores = [float(c.score) for c in candidates]
    n = len(candidates)
    best_gen = max(range(n), key=lambda i: scores[i])  # first of equals wins
    flagged = [bool(v.contradiction) for v in verdicts] if mode != GuardMode.OFF else [False] * n

    if mode in (GuardMode.OFF, GuardMode.FLAG):
        whys = tuple(Why(WhyKind.BEST if i == best_gen else WhyKind.LOWER, mode, scores[i], flagged[i])
                     for i in range(n))
        return PolicyDecision(best_gen, candidates[best_gen].text, False, whys, tuple(scores))

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
        whys = tuple(Why(WhyKind.PENALTY_BEST if i == chosen else WhyKind.PENALTY_LOWER, mode, scores[i], flagged[i],
                         adjusted=adjusted[i], penalty_lambda=penalty_lambda, gap=gap, contradiction=contra[i])
                     for i in range(n))
        return PolicyDecision(chosen, candidates[chosen].text, False, whys, tuple(adjusted))

    # rerank / block, among the candidates the detector does not flag: the first group that has one (the persona's
    # answers, then any answer, then the evasive, then those that claim nothing: "I don't know." must not beat a
    # consistent answer, or the guard would teach dodging), then inside it the bot's favourite while it is under the
    # band, else the one the detector suspects least
    clean = [i for i in range(n) if not flagged[i]]
    groups = {i: group_of(verdicts[i]) for i in clean}
    first = min((GROUPS.index(g) for g in groups.values()), default=None)
    pool = [i for i in clean if GROUPS.index(groups[i]) == first] if clean else []
    pool = [i for i in pool if i not in last_resort] or pool  # the bot's own words before the guard's
    favourite = max(pool, key=lambda i: scores[i]) if pool else None
    suspected = [float(v.deciding[0]) for v in verdicts]
    least = favourite
    if pool and mode == GuardMode.RERANK and not (rerank_band is not None and suspected[favourite] < rerank_band):
        least = min(pool, key=lambda i: (suspected[i], -scores[i]))  # ties: the generator's order
    spares = [not any(p.source == PremiseSource.PERSONA for p in v.evidence) for v in verdicts]
    if clean:
        chosen = least if mode == GuardMode.RERANK else favourite
    elif mode == GuardMode.RERANK:  # every one contradicts: the generator's best among those sparing the persona
        chosen = max([i for i in range(n) if spares[i]] or range(n), key=lambda i: scores[i])
    else:
        chosen = None
    top = groups.get(chosen) if chosen is not None else None
    answered = top is not None and top != Group.EMPTY
    whys = []
    for i in range(n):
        if i == chosen and flagged[i]:
            kind = WhyKind.KEPT_FLAGGED
        elif i == chosen and answered and i in last_resort:
            kind = WhyKind.GUARD_WRITTEN
        elif i == chosen and answered and mode == GuardMode.RERANK and i == favourite:
            kind = WhyKind.FAVOURITE
        elif i == chosen and answered and mode == GuardMode.RERANK:
            kind = WhyKind.LEAST_SUSPECTED
        elif i == chosen and answered:
            kind = WhyKind.BEST_CONSISTENT
        elif i == chosen:
            kind = WhyKind.ONLY_SAYS_NOTHING
        elif not flagged[i] and groups[i] == Group.EMPTY and answered:
            kind = WhyKind.SAYS_NOTHING
        elif not flagged[i] and top is not None and GROUPS.index(groups[i]) > GROUPS.index(top):
            kind = WhyKind.OUTRANKED
        elif flagged[i] and chosen is None:
            kind = WhyKind.REJECTED_ALL
        elif flagged[i]:
            kind = WhyKind.REJECTED
        elif mode == GuardMode.RERANK and chosen is not None and i in pool and scores[i] > scores[chosen]:
            kind = WhyKind.MORE_SUSPECTED
        else:
            kind = WhyKind.LOWER
        whys.append(Why(kind, mode, scores[i], flagged[i], suspected=suspected[i],
                        favourite_suspected=None if favourite is None else suspected[favourite], band=rerank_band,
                        group=groups.get(i), chosen_group=top, spares_persona=None if clean else spares[i]))
    if chosen is None:
        return PolicyDecision(None, fallback, True, tuple(whys), tuple(scores))
    return PolicyDecision(chosen, candidates[chosen].text, False, tuple(whys), tuple(scores))


def _repair_or_fall_back(candidates: Sequence[Candidate], verdicts: Sequence[Verdict], repair_fallback: GuardMode,
                         **options) -> PolicyDecision:
    """The repair mode: the generator's best, repaired when it contradicts through one sentence (``guard.judge.repair``);
    else the fallback policy's decision, with why the repair was declined kept on that candidate's reason."""
    if repair_fallback not in REPAIR_FALLBACKS:
        raise ValueError(f"repair_fallback must be one of {', '.join(REPAIR_FALLBACKS)}, got {repair_fallback!r}")
    repair_fallback = GuardMode(repair_fallback)
    scores = [float(c.score) for c in candidates]
    best = max(range(len(candidates)), key=lambda i: scores[i])
    declined = None
    if verdicts[best].contradiction:
        repair, declined = plan_repair(best, candidates[best].text, verdicts[best])
        if repair is not None:
            whys = tuple(Why(WhyKind.REPAIRED, GuardMode.REPAIR, scores[i], bool(v.contradiction),
                             removed=repair.removed) if i == best else
                         Why(WhyKind.REPAIR_WON, GuardMode.REPAIR, scores[i], bool(v.contradiction),
                             best_score=scores[best]) for i, v in enumerate(verdicts))
            return PolicyDecision(best, repair.reply, False, whys, tuple(scores), repair=repair)
    decision = choose(candidates, verdicts, repair_fallback, **options)
    if declined is None:
        return replace(decision, decided_by=repair_fallback)
    whys = list(decision.whys)
    whys[best] = replace(whys[best], declined=declined, decided_by=repair_fallback)
    return replace(decision, decided_by=repair_fallback, repair_declined=declined, whys=tuple(whys))
