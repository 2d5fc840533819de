"""A detector's settings as its checkpoint records them: ``guard_config.json``, read once into a typed record.

Training and calibration write ``guard_config.json`` next to a checkpoint: the decision threshold τ and the pairing
it was calibrated for, the category checks' own thresholds, the length the model was trained at, how τ was chosen
(the operating point) and, for the cascade, when to escalate to the larger model. ``GuardConfig.read`` is the only
place at run time that opens the file; everything else asks the record (``guard.judge.pipeline.Guard.config``), so a
broken file is reported once, naming the file and the key.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from guard.vocabulary import CHECKS, GUARD_MODES, METHODS, PAIRINGS, Check, GuardMode, Method, Pairing

#: DECODE's default decision threshold (Nie et al. 2021, "Thresholding"): a checkpoint without a config gets it.
FALLBACK_THRESHOLD = 0.5
#: Written next to a checkpoint by the detector training run: {"threshold": <float>, ...}.
GUARD_CONFIG_NAME = "guard_config.json"


@contextmanager
def edited_guard_config(folder: str | Path) -> Iterator[dict]:
    """``folder``'s guard_config.json as a dict to change in place (empty when the folder has none), written back
    when the block ends: the one way the calibrations (``guard.training``) write their decisions into a checkpoint."""
    path = Path(folder) / GUARD_CONFIG_NAME
    config = json.loads(path.read_text()) if path.exists() else {}
    yield config
    path.write_text(json.dumps(config, indent=2) + "\n")


#: Earlier same-speaker sentences the prefilter pairs with each candidate sentence (the product's setting: the
#: stream calibration, the chat, the server, the studio and the benchmarks all judge with it).
DEFAULT_PREFILTER_K = 8
#: The rule a stream-calibrated config records: its category thresholds are set on their own false alarms.
STREAM_RULE = "bot-stream false-alarm"
#: τ and the checks set together under one false-alarm budget over both dev streams' calibration halves
#: (``guard.eval.dev_streams``, ``calibrate-stream``)
BUDGET_RULE = "one false-alarm budget over the dev streams' calibration halves"


class ConfigError(RuntimeError):
    """A checkpoint's guard_config.json cannot be used; the message names the file and what is wrong."""


@dataclass(frozen=True)
class OperatingPoint:
    """How a checkpoint's τ was chosen, as its guard_config.json records it (``calibrate-decode``)."""

    threshold: float
    #: "bot-stream false-alarm" (fires on at most ``false_alarm_target`` of real consistent bot turns), "false-alarm"
    #: (of consistent human-written dialogues) or "accuracy"
    rule: str
    false_alarm_target: float | None = None
    fire_rate_consistent: float | None = None  # the larger of the measured rates on the two consistent sets
    recall: float | None = None  # contradictions caught at τ (bot turns, or DECODE dev even half's dialogues)


@dataclass(frozen=True)
class CascadeSettings:
    """When the cascade sends a pair to the larger model: the fast model's score reaches ``escalate_at``, at most
    ``max_escalated`` pairs a call."""

    escalate_at: float = 0.1
    max_escalated: int = 24


@dataclass(frozen=True)
class BadgeBand:
    """Where a flag earns the red badge: from ``threshold`` (≥ τ) up, the flags of the calibration stream's verified
    turns were ``precision`` real contradictions; a flag between τ and ``threshold`` is a quieter "possible" mark
    (its flags were ``possible_precision`` real). ``measured_on`` says on what, for the tooltip."""

    threshold: float
    precision: float | None = None
    possible_precision: float | None = None
    measured_on: str = ""


@dataclass(frozen=True)
class GuardConfig:
    """A checkpoint's guard settings, checked when read. Every field has the value a checkpoint without a
    ``guard_config.json`` gets (DECODE's τ 0.5, sentence pairing, 128 tokens)."""

    threshold: float = FALLBACK_THRESHOLD
    pairing: Pairing = Pairing.SENTENCE
    #: τ calibrated for one pairing (``calibration[pairing].threshold``), where the config has it
    pairing_thresholds: dict[str, float] = field(default_factory=dict)
    #: the intra-sentence clause check's own threshold; None: the history τ
    intra_threshold: float | None = None
    #: the role check of a bot answering the question it asked back; None: the history τ
    own_question_threshold: float | None = None
    max_length: int = 128
    prefilter_k: int = DEFAULT_PREFILTER_K
    operating_point: OperatingPoint | None = None
    #: the category thresholds were calibrated on a bot-turn stream (not tied to τ)
    stream_calibrated: bool = False
    cascade: CascadeSettings = field(default_factory=CascadeSettings)
    #: the checks beside the history check that earned their place under the false-alarm budget: the chat, the
    #: server and self-play run these; the playground and the Learn page run every check. A config that does not
    #: say (calibrated before the budget) keeps every check.
    checks: frozenset[Check] = frozenset(CHECKS)
    #: the red badge's band (None: every flag gets the red badge)
    badge: BadgeBand | None = None
    #: the fact check's measured precision on the calibration halves (None: not measured)
    fact_precision: float | None = None
    #: re-rank sends the bot's favourite while its score is under this band (None: never, the least suspected goes)
    rerank_band: float | None = None
    #: the share of the calibration halves' labelled turns under the band that were consistent (its tooltip)
    rerank_band_consistent: float | None = None
    #: τ_e: P(entailment) from a persona line at which it supports a candidate's sentence (the choice's support
    #: group, the persona over the drift); None: not calibrated, ``PERSONA_SUPPORT_FLOOR``
    persona_support: float | None = None

    @classmethod
    def read(cls, folder: Path | None) -> GuardConfig:
        """The config in ``folder`` (its ``guard_config.json``); the defaults when there is none. Raises
        ``ConfigError`` naming the file and key for a file that is not a JSON object or holds a bad value."""
        path = None if folder is None else Path(folder) / GUARD_CONFIG_NAME
        if path is None or not path.is_file():
            return cls()
        try:
            data = json.loads(path.read_text())
        except ValueError as exc:
            raise ConfigError(f"{path} is not valid JSON: {exc}") from exc
        if not isinstance(data, dict):
            raise ConfigError(f"{path} must hold a JSON object")
        return cls.from_dict(data, path)

    @classmethod
    def from_dict(cls, data: dict, source: Path | None = None) -> GuardConfig:
        """The config a ``guard_config.json`` holds (``source``: the file, named in errors)."""
        where = source or GUARD_CONFIG_NAME
        calibration = data.get("calibration") if isinstance(data.get("calibration"), dict) else {}
        pairing = data.get("pairing", Pairing.SENTENCE)
        stream = calibration.get("stream") if isinstance(calibration.get("stream"), dict) else {}
        cascade = data.get("cascade") if isinstance(data.get("cascade"), dict) else {}
        return cls(
            threshold=_probability(data, "threshold", where) if "threshold" in data else FALLBACK_THRESHOLD,
            pairing=Pairing(pairing) if pairing in PAIRINGS else Pairing.SENTENCE,
            pairing_thresholds={p: _probability(calibration[p], "threshold", where, f"calibration.{p}.threshold")
                                for p in PAIRINGS if isinstance(calibration.get(p), dict)
                                and "threshold" in calibration[p]},
            intra_threshold=_probability(data, "intra_threshold", where),
            own_question_threshold=_probability(data, "own_question_threshold", where),
            max_length=_whole(data, "max_length", where, 128),
            prefilter_k=_whole(data, "prefilter_k", where, DEFAULT_PREFILTER_K),
            operating_point=_operating_point(calibration),
            stream_calibrated=stream.get("rule") == STREAM_RULE or isinstance(calibration.get("budget"), dict),
            cascade=CascadeSettings(escalate_at=float(cascade.get("escalate_at", 0.1)),
                                    max_escalated=int(cascade.get("max_escalated", 24))),
            checks=_checks(data, where),
            badge=_badge(data, where),
            fact_precision=_share(data.get("facts"), "precision", where, "facts.precision"),
            rerank_band=_probability(data.get("rerank") or {}, "band", where, "rerank.band")
            if isinstance(data.get("rerank"), dict) else None,
            rerank_band_consistent=_share(data.get("rerank"), "consistent_under", where, "rerank.consistent_under")
            if isinstance(data.get("rerank"), dict) else None,
            persona_support=_probability(data.get("support") or {}, "persona_entailment", where,
                                         "support.persona_entailment") if isinstance(data.get("support"), dict)
            else None,
        )


def _probability(data: dict, key: str, where: Path | str, name: str | None = None) -> float | None:
    """``data[key]`` as a number strictly between 0 and 1; None when absent; a ConfigError naming it otherwise."""
    raw = data.get(key)
    if raw is None:
        return None
    try:
        value = float(raw)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: '{name or key}' must be a number: {exc}") from exc
    if not 0.0 < value < 1.0:
        raise ConfigError(f"{where}: {name or key} {value} must lie strictly between 0 and 1")
    return value


def _share(section: object, key: str, where: Path | str, name: str) -> float | None:
    """``section[key]`` as a share in (0, 1] (a measured precision may be 1), None when absent."""
    if not isinstance(section, dict) or section.get(key) is None:
        return None
    try:
        value = float(section[key])
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: '{name}' must be a number: {exc}") from exc
    if not 0.0 < value <= 1.0:
        raise ConfigError(f"{where}: {name} {value} must lie in (0, 1]")
    return value


def _checks(data: dict, where: Path | str) -> frozenset[Check]:
    """``checks``: the list of checks kept on (absent: every check)."""
    raw = data.get("checks")
    if raw is None:
        return frozenset(CHECKS)
    if not isinstance(raw, list) or any(c not in CHECKS for c in raw):
        raise ConfigError(f"{where}: 'checks' must be a list of {', '.join(CHECKS)}, got {raw!r}")
    return frozenset(Check(c) for c in raw)


def _badge(data: dict, where: Path | str) -> BadgeBand | None:
    raw = data.get("badge")
    if raw is None:
        return None
    if not isinstance(raw, dict) or "threshold" not in raw:
        raise ConfigError(f"{where}: 'badge' must be an object with a 'threshold'")
    return BadgeBand(threshold=_probability(raw, "threshold", where, "badge.threshold"),
                     precision=raw.get("precision"), possible_precision=raw.get("possible_precision"),
                     measured_on=str(raw.get("measured_on", "")))


def _whole(data: dict, key: str, where: Path | str, default: int) -> int:
    raw = data.get(key, default)
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < 1:
        raise ConfigError(f"{where}: '{key}' must be a positive whole number, got {raw!r}")
    return raw


def _operating_point(calibration: dict) -> OperatingPoint | None:
    """The operating point the config's τ comes from, or None when it does not say (an uncalibrated checkpoint, or
    one calibrated before the rule was recorded)."""
    chosen = calibration.get(calibration.get("chosen", ""))
    if not isinstance(chosen, dict) or "threshold" not in chosen:
        return None
    per_stream = [v for v in chosen.get("per_stream", {}).values() if isinstance(v, dict)]
    rates = [chosen[k] for k in ("fire_rate_decode_consistent", "fire_rate_chitchat", "false_alarm_rate")
             if k in chosen] + [v["false_alarm_rate"] for v in per_stream if "false_alarm_rate" in v]
    recalls = [v["recall"] for v in per_stream if "recall" in v]
    accuracy_rule = calibration.get("chosen") == "decode_dev"
    return OperatingPoint(
        threshold=float(chosen["threshold"]), rule="accuracy" if accuracy_rule else str(chosen.get("rule", "")),
        false_alarm_target=chosen.get("false_alarm_target"), fire_rate_consistent=max(rates) if rates else None,
        recall=chosen.get("recall_decode_contradictions", chosen.get("recall", min(recalls) if recalls else None)))


#: the line a fact-sheet clash's confidence is compared with: a clash is a yes / no, right more often than not
FACT_LINE = 0.5

#: τ_e's floor and its value where a checkpoint's calibration set none: a persona line supports a sentence it entails
#: more likely than not (docs/experiments/2026-11-28-choice.md, rule 4)
PERSONA_SUPPORT_FLOOR = 0.5

#: One of MuTual-plus's safe responses (Cui et al. 2020, §3): what the block mode sends when every candidate
#: contradicts.
DEFAULT_SAFE_REPLY = "I'm afraid I didn't quite catch what you were saying."


@dataclass(frozen=True)
class JudgeSettings:
    """Every setting of one judged turn, resolved once (``resolve``) from what the caller asked and the checkpoint's
    config. The guard's one detector judges with these, its policy decides with them, and the verdicts and the
    report quote them; nothing after ``resolve`` reads a setting from anywhere else."""

    mode: GuardMode = GuardMode.RERANK
    method: Method = Method.STRUCTURED
    pairing: Pairing = Pairing.SENTENCE
    threshold: float = FALLBACK_THRESHOLD
    #: the flagging checks' own thresholds beside τ (calibrated on their own false alarms, else τ)
    intra_threshold: float = FALLBACK_THRESHOLD
    own_question_threshold: float = FALLBACK_THRESHOLD
    checks: frozenset[Check] = frozenset()
    #: the score a fact-sheet clash gives a verdict: the check's measured precision (else τ); it flags at FACT_LINE
    fact_confidence: float = FALLBACK_THRESHOLD
    #: re-rank: the bot's favourite is sent while its score is under this band (None: the least suspected goes)
    rerank_band: float | None = None
    #: τ_e: P(entailment) from a persona line at which it supports a candidate's sentence (the config's, else the floor)
    persona_support: float = PERSONA_SUPPORT_FLOOR
    #: earlier sentences the prefilter pairs with each candidate sentence; None: every one (no prefilter)
    prefilter_k: int | None = None
    penalty_lambda: float = 1.0
    fallback: str = DEFAULT_SAFE_REPLY
    repair_fallback: GuardMode = GuardMode.RERANK

    @property
    def prefilter(self) -> bool:
        """Whether the prefilter chose the earlier sentences paired."""
        return self.prefilter_k is not None

    @classmethod
    def resolve(cls, config: GuardConfig | None = None, *, mode: GuardMode | str = GuardMode.RERANK,
                method: Method | str = Method.STRUCTURED, pairing: Pairing | str | None = None,
                threshold: float | None = None, intra_threshold: float | None = None,
                own_question_threshold: float | None = None, checks: Collection[Check | str] | bool | None = None,
                prefilter: bool | None = True, has_embedder: bool = False, penalty_lambda: float | None = None,
                fallback: str | None = None, repair_fallback: GuardMode | str | None = None) -> JudgeSettings:
        """The settings for a turn; the one place τ and the checks' thresholds are read from a checkpoint's config.

        None takes the checkpoint's value: τ calibrated for the pairing (else the config's τ), the checks its
        calibration kept, each check's own threshold (a stream calibration's as it is; an older config's never
        below τ, as it was calibrated; none: τ), the prefilter's k where the guard has an embedder; or the default
        (λ = 1, the safe reply, re-rank after a declined repair). ``checks`` True or False turns every check on or
        off. A value out of range raises ValueError naming it."""
        config = config or GuardConfig()
        if method not in METHODS:
            raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
        pairing = config.pairing if pairing is None else pairing
        if pairing not in PAIRINGS:
            raise ValueError(f"pairing must be one of {', '.join(PAIRINGS)}, got {pairing!r}")
        if mode not in GUARD_MODES:
            raise ValueError(f"mode must be one of {', '.join(GUARD_MODES)}, got {mode!r}")
        tau = float(config.pairing_thresholds.get(str(pairing), config.threshold) if threshold is None else threshold)
        if intra_threshold is None:
            intra_threshold = tau if config.intra_threshold is None else (
                config.intra_threshold if config.stream_calibrated else max(config.intra_threshold, tau))
        if own_question_threshold is None:
            own_question_threshold = tau if config.own_question_threshold is None else config.own_question_threshold
        for name, value in (("threshold", tau), ("intra_threshold", intra_threshold),
                            ("own_question_threshold", own_question_threshold)):
            if not 0.0 < float(value) < 1.0:
                raise ValueError(f"{name} must lie strictly between 0 and 1, got {value}")
        return cls(mode=GuardMode(mode), method=Method(method), pairing=Pairing(pairing), threshold=tau,
                   intra_threshold=float(intra_threshold), own_question_threshold=float(own_question_threshold),
                   checks=resolve_checks(checks, config.checks),
                   fact_confidence=tau if config.fact_precision is None else config.fact_precision,
                   rerank_band=config.rerank_band,
                   persona_support=PERSONA_SUPPORT_FLOOR if config.persona_support is None else config.persona_support,
                   prefilter_k=config.prefilter_k if prefilter is not False and has_embedder else None,
                   penalty_lambda=1.0 if penalty_lambda is None else float(penalty_lambda),
                   fallback=fallback or DEFAULT_SAFE_REPLY,
                   repair_fallback=GuardMode(repair_fallback) if repair_fallback else GuardMode.RERANK)


def resolve_checks(checks: bool | Collection[Check | str] | None, default: Collection[Check] = CHECKS
                   ) -> frozenset[Check]:
    """The checks a turn runs beside the history check: all of them (True), none (False), those named, or
    ``default`` (None)."""
    if checks is None:
        return frozenset(default)
    if isinstance(checks, bool):
        return frozenset(CHECKS) if checks else frozenset()
    unknown = [c for c in checks if c not in CHECKS]
    if unknown:
        raise ValueError(f"unknown check(s) {unknown}; choose among {', '.join(CHECKS)}")
    return frozenset(Check(c) for c in checks)
