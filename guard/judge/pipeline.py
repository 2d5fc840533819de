"""The guard as one object: loaded once, judging every turn, one report.

    guard = load_guard("embedded")                      # scorer, embedder and guard_config.json, read once
    settings = guard.settings(mode="rerank")            # every setting resolved once, frozen
    report = guard.judge(turns, candidates, speaker="bot", persona=persona, settings=settings)
    report.sent, report.summary(), report.to_json()     # the one finished report type, in its one JSON form

``Guard.judge`` is the one way in to judge a turn: the chat page, the playground, the Learn page, the server,
self-play and the studio, the command lines, evaluation and calibration all call it, each with one settings record
(``Guard.settings``: τ, the checks and their thresholds, pairing, method, the prefilter, the mode and its policy's
settings, resolved once from the checkpoint's config and the caller's overrides into a frozen
``guard.config.JudgeSettings``). A judged turn runs in stages: the guard's one detector plans every pair, scores
them in one batch and builds each verdict once (``guard.judge.detector``), then the policy decides and the report is
built finished (``guard.judge.report.decide``): it holds the text sent, the settings, the candidates' origins, the
reminder, the prompt note and the timings. Nothing on the way is changed after it is built.

``load_guard`` is the one cached factory, so a threshold set by one caller is the threshold the others apply. A
``Guard`` holds the NLI scorer, the prefilter's sentence embedder and the checkpoint's settings
(``guard.config.GuardConfig``); its one ``ContradictionDetector`` keeps nothing that depends on a setting (scored
pairs and embeddings are cached per model). Judging takes the whole conversation, the user's turns included: an
answer is read with the question it answers. Computations on the scorer take turns on the CPU (``embedded.turns``).
"""

from __future__ import annotations

import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from embedded.once import LoadedOnce
from guard.config import GuardConfig, JudgeSettings
from guard.judge.detector import ContradictionDetector
from guard.judge.report import BotTurnReport, TurnContext, decide
from guard.judge.verdicts import Verdict
from guard.records import Candidate, Dialogue, Turn
from guard.vocabulary import Check, GuardMode, Method, Pairing


@dataclass(frozen=True, eq=False)
class Guard:
    """A detector loaded once: its NLI scorer, the prefilter's embedder (None: every earlier sentence is paired)
    and its checkpoint's settings; judges candidate replies against a conversation into the turn's report."""

    name: str
    scorer: object
    embedder: object | None = None
    config: GuardConfig = field(default_factory=GuardConfig)
    detector: ContradictionDetector = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "detector", ContradictionDetector(self.scorer, self.embedder))

    @property
    def threshold(self) -> float:
        """The calibrated τ (for the checkpoint's own pairing)."""
        return self.settings().threshold

    def settings(self, *, mode: GuardMode | str = GuardMode.RERANK, method: Method | str = Method.STRUCTURED,
                 pairing: Pairing | str | None = None, threshold: float | None = None,
                 intra_threshold: float | None = None, own_question_threshold: float | None = None,
                 checks: Collection[Check | str] | bool | None = None, prefilter: bool | None = True,
                 penalty_lambda: float | None = None, fallback: str | None = None,
                 repair_fallback: GuardMode | str | None = None) -> JudgeSettings:
        """Every setting of a turn, resolved once against this guard's config (None: the checkpoint's value or the
        default; ``guard.config.JudgeSettings.resolve``). ``prefilter``: pair each candidate sentence with the
        ``config.prefilter_k`` most similar earlier ones (only when the guard has an embedder); ``checks``: the
        checks beside the history check (None: those the checkpoint's calibration kept, the chat's; True: every
        one, the playground's)."""
        return JudgeSettings.resolve(self.config, mode=mode, method=method, pairing=pairing, threshold=threshold,
                                     intra_threshold=intra_threshold, own_question_threshold=own_question_threshold,
                                     checks=checks, prefilter=prefilter, has_embedder=self.embedder is not None,
                                     penalty_lambda=penalty_lambda, fallback=fallback, repair_fallback=repair_fallback)

    def judge(self, turns: Sequence[Turn], candidates: Sequence[Candidate | str], *, speaker: str,
              persona: Sequence[str] = (), settings: JudgeSettings | None = None, context: TurnContext | None = None,
              turn_id: int | None = None) -> BotTurnReport:
        """The turn's finished report: every candidate of ``speaker`` judged against ``turns`` (both speakers) and
        the persona (unless the mode is off), and the reply the mode's policy chooses. ``settings``: resolved once
        (``settings()``; None: this guard's defaults). ``context``: what the conversation knows of the turn
        (candidates' origins, the reminder, the prompt note, time spent before judging). ``turn_id``: the id the
        judged reply gets (None: the one after ``turns``)."""
        started = time.perf_counter()
        if isinstance(candidates, str):
            raise TypeError("candidates must be a list of strings or Candidates, not one string")
        settings = settings or self.settings()
        context = context or TurnContext()
        candidates = [c if isinstance(c, Candidate) else Candidate(str(c), 0.0) for c in candidates]
        verdicts = None
        if settings.mode != GuardMode.OFF:  # the candidates a check outside the guard withheld are not judged
            judged = [c.text for i, c in enumerate(candidates) if i not in context.withheld]
            verdicts = self.detector.judge(turns, judged, speaker, persona, settings, turn_id) if judged else ()
        report, _ = decide(candidates, verdicts, settings, detector=self.name, persona=persona,
                           badge=self.config.badge, context=context, started=started)
        return report

    def verdict(self, turns: Sequence[Turn], reply: str, *, speaker: str, persona: Sequence[str] = (),
                settings: JudgeSettings | None = None, turn_id: int | None = None) -> Verdict:
        """The verdict on one reply of ``speaker``: ``judge`` with it as the only candidate (the settings' mode must
        judge: not off)."""
        settings = settings or self.settings()
        if settings.mode == GuardMode.OFF:
            raise ValueError("a verdict needs a guard mode that judges (not off)")
        return self.judge(turns, [reply], speaker=speaker, persona=persona, settings=settings,
                          turn_id=turn_id).candidates[0].verdict

    def verdict_on_dialogue(self, dialogue: Dialogue, settings: JudgeSettings | None = None) -> Verdict:
        """DECODE's task through ``judge``: the dialogue's last turn judged against the turns before it (and its
        persona)."""
        if not dialogue.turns:
            raise ValueError(f"dialogue {dialogue.record_id!r} has no turns to judge")
        last = dialogue.last
        return self.verdict(dialogue.history, last.text, speaker=last.agent_id, persona=dialogue.persona,
                            settings=settings, turn_id=last.turn_id)

    def prepare(self, turns: Sequence[Turn], persona: Sequence[str], settings: JudgeSettings) -> None:
        """Split and embed a conversation's texts ahead of its next turn (cached by text)."""
        self.detector.prepare(turns, persona, settings)

    @classmethod
    def over(cls, scorer, embedder=None, config: GuardConfig | None = None, name: str = "") -> Guard:
        """A guard over a scorer already in hand (a calibration's or a test's), with ``config``'s settings."""
        return cls(name or str(getattr(scorer, "name", "") or "detector"), scorer, embedder, config or GuardConfig())


_GUARDS = LoadedOnce()


def load_guard(name: str = "embedded", prefilter: bool = True) -> Guard:
    """The guard for a detector name (``guard.models.registry``), loaded once per process, by one thread while others
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
    from guard.models import registry

    return str(name).strip() or registry.DEFAULT_DETECTOR, bool(prefilter)


def _load_guard(name: str, prefilter: bool) -> Guard:
    from guard.models import registry
    from guard.models.loading import load_embedder, load_scorer

    config = registry.read_config(name)  # a broken config is refused before a model loads
    return Guard(name, load_scorer(name, config=config), load_embedder() if prefilter else None, config)
