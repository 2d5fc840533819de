"""The guard as one object: loaded once, judging every turn, one report.

    guard = load_guard("embedded")                      # scorer, embedder and guard_config.json, read once
    report = guard.judge(turns, candidates, speaker="bot", persona=persona, mode="rerank")
    report.sent, report.summary(), report.to_json()     # the one finished report type, in its one JSON form

A judged turn runs in stages: every setting resolved once (``Guard.settings``: τ, the checks, the prefilter, the
mode and its policy's settings, into a ``guard.config.JudgeSettings``), then the detector plans every pair, scores
them in one batch and builds each verdict once (``guard.detector``), then the policy decides and the report is
finished (``guard.report.decide``): it holds the text sent and whether the prefilter ran.

``load_guard`` is the one cached factory: the chat page, the playground, the server, the studio and self-play,
the command lines, calibration and the benchmarks all get their guard from it, so a threshold set by one is the
threshold the others apply. A ``Guard`` holds the NLI scorer, the prefilter's sentence embedder and the
checkpoint's settings (``guard.config.GuardConfig``); ``Guard.detector`` is where a ``ContradictionDetector`` is
built at run time (one per threshold, method and pairing asked for, kept so each keeps its embedding cache).
Judging takes the whole conversation, the user's turns included: an answer is read with the question it answers.
Computations on the scorer take turns on the CPU (``embedded.turns``).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from embedded.once import LoadedOnce
from guard.config import GuardConfig, JudgeSettings
from guard.detector import ContradictionDetector, resolve_checks
from guard.records import Candidate, Turn
from guard.report import BotTurnReport, decide
from guard.verdicts import Verdict
from guard.vocabulary import Check, GuardMode, Method, Pairing

#: ContradictionDetectors a guard keeps (thresholds and methods asked for lately); each holds an embedding cache
KEPT_DETECTORS = 16


@dataclass(eq=False)
class Guard:
    """A detector loaded once: its NLI scorer, the prefilter's embedder (None: every earlier sentence is paired)
    and its settings; judges candidate replies against a conversation and returns the turn's report."""

    name: str
    scorer: object
    embedder: object | None = None
    config: GuardConfig = field(default_factory=GuardConfig)
    _detectors: OrderedDict = field(default_factory=OrderedDict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def threshold(self) -> float:
        """The calibrated τ (for the checkpoint's own pairing)."""
        return self.config.threshold_for(self.config.pairing)

    def detector(self, threshold: float | None = None, method: Method | str = Method.STRUCTURED, *,
                 prefilter: bool = True, categories: bool | Collection[Check | str] | None = None,
                 pairing: Pairing | str | None = None, intra_threshold: float | None = None) -> ContradictionDetector:
        """The ContradictionDetector at ``threshold`` (None: the calibrated τ) with the checkpoint's other settings;
        ``prefilter``: pair each candidate sentence with the ``config.prefilter_k`` most similar earlier ones (only
        when the guard has an embedder); ``categories``: the checks beside the history check (None: those the
        checkpoint's calibration kept, the chat's; True: every one, the playground's). Built once per setting and
        kept."""
        if threshold is None:
            threshold = self.config.threshold_for(pairing or self.config.pairing)
        threshold = round(float(threshold), 4)
        prefilter_k = self.config.prefilter_k if prefilter and self.embedder is not None else None
        categories = resolve_checks(categories, self.config.checks)
        key = (threshold, str(method), prefilter_k, tuple(sorted(categories)), str(pairing or self.config.pairing),
               intra_threshold)
        with self._lock:
            if key in self._detectors:
                self._detectors.move_to_end(key)
                return self._detectors[key]
            detector = ContradictionDetector(
                self.scorer, method=method, threshold=threshold, categories=categories, pairing=pairing,
                embedder=self.embedder if prefilter_k else None, prefilter_k=prefilter_k,
                intra_threshold=intra_threshold, config=self.config)
            self._detectors[key] = detector
            while len(self._detectors) > KEPT_DETECTORS:
                self._detectors.popitem(last=False)
            return detector

    def settings(self, *, mode: GuardMode | str = GuardMode.RERANK, threshold: float | None = None,
                 prefilter: bool | None = True, checks: Collection[Check | str] | bool | None = None,
                 penalty_lambda: float | None = None, fallback: str | None = None,
                 repair_fallback: GuardMode | str | None = None) -> JudgeSettings:
        """Every setting of a turn, resolved once against this guard's config (None: the checkpoint's value or the
        default)."""
        return JudgeSettings.resolve(self.config, mode=mode, threshold=threshold, prefilter=prefilter,
                                     has_embedder=self.embedder is not None, checks=checks,
                                     penalty_lambda=penalty_lambda, fallback=fallback,
                                     repair_fallback=repair_fallback)

    def verdicts(self, turns: Sequence[Turn], candidates: Sequence[str], *, speaker: str,
                 persona: Sequence[str] = (), threshold: float | None = None, prefilter: bool = True,
                 checks: Collection[Check | str] | bool | None = None,
                 intra_threshold: float | None = None) -> list[Verdict]:
        """Each candidate reply of ``speaker`` judged against the conversation ``turns`` (both speakers) and the
        persona, every candidate's pairs in one batch."""
        return self.detector(threshold, prefilter=prefilter, categories=checks,
                             intra_threshold=intra_threshold).detect_candidates(
            list(turns), [str(c) for c in candidates], speaker, persona=list(persona))

    def judge(self, turns: Sequence[Turn], candidates: Sequence[Candidate], *, speaker: str,
              persona: Sequence[str] = (), settings: JudgeSettings | None = None, **options) -> BotTurnReport:
        """The turn's finished report: every candidate judged (unless the mode is off) and the reply the mode's
        policy chooses (``guard.report.decide``). ``settings`` resolved once (``Guard.settings``), or ``options``
        to resolve them from (mode, threshold, prefilter, checks, penalty_lambda, fallback, repair_fallback)."""
        settings = settings or self.settings(**options)
        verdicts = None
        if settings.mode != GuardMode.OFF:
            verdicts = self.verdicts(turns, [c.text for c in candidates], speaker=speaker, persona=persona,
                                     threshold=settings.threshold, prefilter=settings.prefilter,
                                     checks=settings.checks, intra_threshold=settings.intra_threshold)
        report, _ = decide(candidates, verdicts, settings, detector=self.name, persona=persona,
                           badge=self.config.badge)
        return report


_GUARDS = LoadedOnce()


def load_guard(name: str = "embedded", prefilter: bool = True) -> Guard:
    """The guard for a detector name (``guard.registry``), loaded once per process, by one thread while others
    wait: the scorer (``load_scorer``), the prefilter's embedder (``prefilter``) and the settings of its
    ``guard_config.json``. Raises what loading raises (``MissingAssetError``, ``ModelLoadError``, ``ConfigError``),
    each with the fix in its message."""
    key = _key(name, prefilter)
    return _GUARDS.get(key, lambda: _load_guard(*key))


def guard_loaded(name: str, prefilter: bool = True) -> bool:
    """Whether ``load_guard(name, prefilter)`` would return at once (a page says "Loading..." only when not)."""
    return _GUARDS.has(_key(name, prefilter))


def _key(name: str, prefilter: bool) -> tuple[str, bool]:
    """A guard's key among the loaded ones: the name as the registry reads it (empty: the default), the prefilter."""
    from guard import registry

    return str(name).strip() or registry.DEFAULT_DETECTOR, bool(prefilter)


def _load_guard(name: str, prefilter: bool) -> Guard:
    from guard import registry
    from guard.loading import load_embedder, load_scorer

    config = registry.read_config(name)  # a broken config is refused before a model loads
    return Guard(name, load_scorer(name, config=config), load_embedder() if prefilter else None, config)
