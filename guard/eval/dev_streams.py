"""Both dev streams and one false-alarm budget for the whole decision.

The guard is judged as a live chat sees it on two streams of real bot turns (``guard.eval.stream``: ConvAI2's wild
evaluation, every bot turn of a sample labelled by us in two passes; ``guard.eval.decode_stream``: DECODE's human-bot dev
half, the last bot turn of each conversation verified). ``labelled_turns`` reads either; ``budget_operating_point``
sets the whole decision (τ, the checks kept on, the red badge's band) on their calibration halves by the rules fixed
before any score (docs/experiments/2026-11-27-conversation-reading.md); ``bootstrap_interval`` gives the figures'
intervals over conversations.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from guard.config import BUDGET_RULE
from guard.eval.stream import (
    STREAM_FALSE_ALARM,
    STREAM_INTRA_FALSE_ALARM,
    StreamTurn,
    TurnScore,
    false_alarm_threshold,
    read_conversations,
    read_labels,
    stream_turns,
    threshold_allowing,
)

#: the dev streams a detector is judged on: every bot turn of real human-bot conversations
STREAMS = ("convai2", "decode")
#: the budget's rules (docs/experiments/2026-11-27-conversation-reading.md, written before any score): a check must
#: add this many caught contradictions over the calibration halves to stay on; the red badge's band must be this
#: precise on the DECODE calibration half's verified turns
CHECK_MIN_GAIN = 2
BADGE_PRECISION = 0.90
#: re-rank's low band: the bot's favourite is sent while it scores under a band below which this share of the
#: calibration halves' labelled turns (pooled) were consistent (docs/experiments/2026-11-27-fact-sheet.md)
RERANK_BAND_CONSISTENT = 0.97
#: τ_e's rule (docs/experiments/2026-11-28-choice.md, rule 4, written before any score): the smallest P(entailment)
#: from a persona line, at least the floor, at which at most this share of the calibration halves' labelled
#: contradicting bot turns count as supported by the persona
PERSONA_SUPPORT_CONTRADICTIONS = 0.02


def labelled_turns(stream_name: str, split: str | None) -> list[StreamTurn]:
    """Every bot turn of one dev stream's half (``split``; None: both), as a live guard judged it, with its label
    where people gave one (ConvAI2: every bot turn of the labelled sample; DECODE: the verified last turns)."""
    if stream_name == "convai2":
        labels = [x for x in read_labels() if split is None or x.split == split]
        wanted = {x.record_id for x in labels}
        return stream_turns([d for d in read_conversations() if d.record_id in wanted], labels)
    if stream_name == "decode":
        from guard.eval import decode_stream

        return decode_stream.decode_stream_turns(decode_stream.read_conversations(split=split))
    raise ValueError(f"stream must be one of {', '.join(STREAMS)}, got {stream_name!r}")


@dataclass
class ScoredStream:
    """One stream half scored: each bot turn's scores, its label (None: not verified) and its conversation."""

    name: str
    scores: list[TurnScore]
    labels: list[bool | None]

    @property
    def verified(self) -> list[int]:
        return [i for i, y in enumerate(self.labels) if y is not None]

    def consistent(self) -> list[TurnScore]:
        return [s for s, y in zip(self.scores, self.labels) if y is False]


@dataclass(frozen=True)
class Decision:
    """The whole decision as the budget sets it: τ, the checks kept on and their thresholds (off: over any score;
    the fact check flags at 1.0, its confidence is what its flags score)."""

    threshold: float
    intra_threshold: float = 1.0
    own_question_threshold: float = 1.0
    fact_threshold: float = 2.0
    fact_confidence: float = 0.0

    def flagged(self, s: TurnScore) -> bool:
        return s.flagged(self.threshold, self.intra_threshold, self.own_question_threshold, self.fact_threshold)

    def score(self, s: TurnScore) -> float:
        return s.score(self.intra_threshold, self.own_question_threshold, self.fact_threshold, self.fact_confidence)

    def by_checks(self, s: TurnScore) -> bool:
        """Whether a check beside the history check flags the turn."""
        return (s.intra_score >= self.intra_threshold or s.own_question_score >= self.own_question_threshold
                or s.fact_score >= self.fact_threshold)


def _check_score(s: TurnScore, check: str) -> float:
    return {"intra": s.intra_score, "own_question": s.own_question_score, "facts": s.fact_score}[check]


def _solve_tau(streams: Sequence[ScoredStream], false_alarm: float, checks: Decision) -> float:
    """The smallest τ at which the whole decision (``checks``' thresholds) flags at most ``false_alarm`` of each
    stream's consistent turns."""
    taus = []
    for st in streams:
        consistent = st.consistent()
        by_checks = sum(checks.by_checks(s) for s in consistent)
        allowed = int(np.floor(false_alarm * len(consistent) + 1e-9)) - by_checks
        rest = [s.history_score for s in consistent if not checks.by_checks(s)]
        taus.append(threshold_allowing(rest, allowed) if rest and allowed >= 0 else 0.9999)
    return max(taus)


def fact_precision(streams: Sequence[ScoredStream]) -> float | None:
    """The fact check's precision over the labelled turns of ``streams`` pooled (flags that are real
    contradictions), rounded down to two decimals; None when it flags none."""
    flags = [bool(y) for st in streams for s, y in zip(st.scores, st.labels) if y is not None and s.fact_score >= 1.0]
    return float(np.floor(100 * sum(flags) / len(flags)) / 100) if flags else None


def catches(streams: Sequence[ScoredStream], decision: Decision) -> int:
    """Verified contradictions the decision flags, over every stream given."""
    return sum(decision.flagged(s) for st in streams for s, y in zip(st.scores, st.labels) if y)


def budget_operating_point(streams: Sequence[ScoredStream], false_alarm: float = STREAM_FALSE_ALARM,
                           check_false_alarm: float = STREAM_INTRA_FALSE_ALARM, min_gain: int = CHECK_MIN_GAIN,
                           badge_precision: float = BADGE_PRECISION, band_stream: str = "decode") -> dict:
    """One false-alarm budget for the whole decision, on the calibration halves of the dev streams.

    Each flagging check (intra-sentence, the bot answering its own question) gets the smallest threshold at which it
    alone flags at most ``check_false_alarm`` of each stream's consistent turns; a check stays on when, with τ solved
    again so the whole decision flags at most ``false_alarm`` of each stream's consistent turns, it adds at least
    ``min_gain`` caught contradictions over the streams together. The red badge's band starts at the smallest score
    ≥ τ at which the flagged verified turns of ``band_stream`` are ``badge_precision`` real contradictions.
    """
    own_floor = 0.5  # never below an even chance: most turns are not in the own-question situation (score 0)
    check_tau = {c: max(false_alarm_threshold([_check_score(s, c) for s in st.consistent()], check_false_alarm)
                        for st in streams) for c in ("intra", "own_question")}
    check_tau["own_question"] = max(check_tau["own_question"], own_floor)
    # the fact check flags or not (no score to move): admissible only when, alone, it flags at most
    # ``check_false_alarm`` of each stream's consistent turns (docs/experiments/2026-11-27-fact-sheet.md)
    fact_alone = {st.name: float(np.mean([s.fact_score >= 1.0 for s in st.consistent()])) for st in streams}
    facts_admissible = any(s.fact_score for st in streams for s in st.scores) and \
        all(rate <= check_false_alarm for rate in fact_alone.values())
    confidence = fact_precision(streams) or 0.0
    if facts_admissible:
        check_tau["facts"] = 1.0

    def decision(on: set[str]) -> Decision:
        thresholds = Decision(1.0, check_tau["intra"] if "intra" in on else 1.0,
                              check_tau["own_question"] if "own_question" in on else 1.0,
                              1.0 if "facts" in on else 2.0, confidence)
        return Decision(_solve_tau(streams, false_alarm, thresholds), thresholds.intra_threshold,
                        thresholds.own_question_threshold, thresholds.fact_threshold, confidence)

    alone = decision(set())
    gains = {c: catches(streams, decision({c})) - catches(streams, alone) for c in check_tau}
    earned = {c for c, gain in gains.items() if gain >= min_gain}
    chosen = decision(earned)
    everything = decision(set(check_tau))
    per_stream = {}
    for st in streams:
        consistent = st.consistent()
        flags = [everything.flagged(s) for s in consistent]
        shares = {"history": sum(s.history_score >= everything.threshold for s, f in zip(consistent, flags) if f),
                  "intra": sum(s.intra_score >= everything.intra_threshold for s, f in zip(consistent, flags) if f),
                  "own_question": sum(s.own_question_score >= everything.own_question_threshold
                                      for s, f in zip(consistent, flags) if f),
                  "facts": sum(s.fact_score >= everything.fact_threshold for s, f in zip(consistent, flags) if f)}
        verified = st.verified
        y = [bool(st.labels[i]) for i in verified]
        flagged = [chosen.flagged(st.scores[i]) for i in verified]
        per_stream[st.name] = {
            "bot_turns": len(st.scores), "verified": len(verified), "contradictions": sum(y),
            "false_alarm_rate": round(float(np.mean([f for f, t in zip(flagged, y) if not t])), 4),
            "recall": round(float(np.mean([f for f, t in zip(flagged, y) if t])), 4),
            "false_alarms_by_check_with_every_check_on": shares}
    band = next((st for st in streams if st.name == band_stream), None)
    badge = _badge_band(band, chosen, badge_precision) if band is not None else None
    rerank = rerank_band(streams, chosen)
    return {"rule": BUDGET_RULE,
            "threshold": chosen.threshold,
            "intra_threshold": check_tau["intra"], "own_question_threshold": check_tau["own_question"],
            "checks": sorted(earned), "check_gains": gains, "catches_history_alone": catches(streams, alone),
            "facts": {"admissible": facts_admissible, "flags_alone_on_consistent": fact_alone,
                      "precision": fact_precision(streams)},
            "false_alarm_target": false_alarm, "check_false_alarm_target": check_false_alarm,
            "min_gain": min_gain, "per_stream": per_stream, "badge": badge, "rerank": rerank}


def persona_support_threshold(streams: Sequence[ScoredStream],
                              share: float = PERSONA_SUPPORT_CONTRADICTIONS) -> dict:
    """τ_e by its rule: the smallest threshold >= ``PERSONA_SUPPORT_FLOOR`` at which at most ``share`` of the labelled
    contradicting bot turns (pooled over the streams given, their calibration halves) have a persona line entailing
    one of their sentences at or over it. Turns without a persona count as unsupported (they are)."""
    from guard.config import PERSONA_SUPPORT_FLOOR

    values = sorted((s.persona_entailment for stream in streams for s, label in zip(stream.scores, stream.labels)
                     if label), reverse=True)
    allowed = int(np.floor(share * len(values) + 1e-9))
    # the (allowed + 1)-th highest value must fall under τ_e: just above it, never below the floor
    tau_e = PERSONA_SUPPORT_FLOOR if len(values) <= allowed else max(PERSONA_SUPPORT_FLOOR,
                                                                     float(np.nextafter(values[allowed], 1.0)))
    supported = sum(v >= tau_e for v in values)
    return {"persona_entailment": math.ceil(tau_e * 10_000) / 10_000,  # kept to four places, never under the rule
            "rule": f"the smallest P(entailment) >= {PERSONA_SUPPORT_FLOOR} at which at most {share:.0%} of the "
                    "labelled contradicting bot turns of the dev streams' calibration halves are supported",
            "contradictions": len(values), "contradictions_supported": supported,
            "with_a_persona": sum(v > 0 for v in values)}


def rerank_band(streams: Sequence[ScoredStream], decision: Decision,
                share: float = RERANK_BAND_CONSISTENT) -> dict:
    """Re-rank's low band: the largest score b ≤ τ such that the labelled turns of ``streams`` (pooled) scoring
    under b (the decision's score) are at least ``share`` consistent; with the share measured under it."""
    pairs = sorted((decision.score(s), bool(y)) for st in streams for s, y in zip(st.scores, st.labels)
                   if y is not None)
    best, measured, under = None, None, 0
    consistent = 0
    for k, (score, contradiction) in enumerate(pairs):
        # every turn before k scores at most ``score``: b = score keeps exactly those strictly under it
        if k and score > pairs[k - 1][0] and score <= decision.threshold and consistent / k >= share:
            best, measured, under = score, consistent / k, k
        consistent += not contradiction
    return {"band": None if best is None else round(float(best), 4),
            "consistent_under": None if measured is None else round(float(measured), 4), "turns_under": under,
            "target": share, "measured_on": "the labelled bot turns of both dev streams' calibration halves, pooled"}


def _badge_band(stream: ScoredStream, decision: Decision, precision: float) -> dict:
    """The red badge's band on one stream's verified turns (see ``budget_operating_point``)."""
    pairs = [(decision.score(stream.scores[i]), bool(stream.labels[i])) for i in stream.verified
             if decision.flagged(stream.scores[i])]

    def precision_from(b: float) -> float | None:
        above = [y for s, y in pairs if s >= b]
        return round(sum(above) / len(above), 4) if above else None

    candidates = sorted({decision.threshold} | {s for s, _ in pairs if s >= decision.threshold})
    start = next((b for b in candidates if (precision_from(b) or 0.0) >= precision), None)
    start = decision.threshold if start is None else start
    below = [y for s, y in pairs if s < start]
    return {"threshold": round(float(start), 4), "precision": precision_from(start),
            "possible_precision": round(sum(below) / len(below), 4) if below else None,
            "flags": len(pairs), "red": sum(s >= start for s, _ in pairs), "target_precision": precision,
            "measured_on": f"the verified bot turns of the {stream.name} dev stream's calibration half"}


def bootstrap_interval(groups: Sequence[str], statistic, resamples: int = 1000, seed: int = 0,
                       level: float = 0.90) -> tuple[float, float]:
    """A percentile bootstrap interval for ``statistic(indices)`` resampling whole conversations (``groups``: the
    conversation of each item), so turns of one conversation move together."""
    rng = np.random.default_rng(seed)
    by_group: dict[str, list[int]] = {}
    for i, g in enumerate(groups):
        by_group.setdefault(g, []).append(i)
    keys = list(by_group)
    values = []
    for _ in range(resamples):
        picked = rng.integers(0, len(keys), len(keys))
        idx = [i for k in picked for i in by_group[keys[k]]]
        value = statistic(idx)
        if value == value:  # not NaN
            values.append(value)
    low, high = np.percentile(values, [50 * (1 - level), 100 - 50 * (1 - level)])
    return round(float(low), 4), round(float(high), 4)
