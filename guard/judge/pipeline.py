"""The guard as one object: loaded once, judging every turn, one report.

    guard = load_guard("embedded")                      # scorer, embedder and guard_config.json, read once
    settings = guard.settings(mode="rerank")            # every setting resolved once, frozen
    report = guard.judge(turns, candidates, speaker="bot", persona=persona, settings=settings)
    report.sent, report.to_json()                       # the one finished report type, in its one JSON form
    wording.summary(report)                             # what the guard did, in one line

``Guard.judge`` is the one way in to judge a turn: the chat page, the playground, the Learn page, the server,
self-play and the studio, the command lines, evaluation and calibration all call it, each with one settings record
(``Guard.settings``: τ, the checks and their thresholds, pairing, method, the prefilter, the mode and its policy's
settings, resolved once from the checkpoint's config and the caller's overrides into a frozen
``guard.config.JudgeSettings``). A judged turn runs in stages: the guard's one detector plans every pair, scores
them in one batch and builds each verdict once (``guard.judge.detector``), then the policy decides
(``guard.judge.policies``) and the report is built finished (``decide``, worded by ``guard.judge.wording``): it holds
the text sent, the settings, the candidates' origins, the reminder, the prompt note, the timings and the fact sheet as
it stands after the turn. Nothing on the way is changed after it is built.

With the guard off nothing is judged and no detector is needed: ``Guard.off()`` is the guard of a chat without one,
and its ``judge`` is the same way in (the generator's best is sent; the report says the guard was off).

``load_guard`` is the one cached factory, so a threshold set by one caller is the threshold the others apply. A
``Guard`` holds the NLI scorer, the prefilter's sentence embedder and the checkpoint's settings
(``guard.config.GuardConfig``); its one ``ContradictionDetector`` keeps nothing that depends on a setting (scored
pairs and embeddings are cached per model). Judging takes the whole conversation, the user's turns included: an
answer is read with the question it answers. Computations on the scorer take turns on the CPU (``embedded.turns``).
"""

from __future__ import annotations

import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from embedded.once import LoadedOnce
from guard.config import BadgeBand, GuardConfig, JudgeSettings
from guard.judge import wording
from guard.judge.policies import PolicyDecision, choose
from guard.judge.reminders import GUARD_WRITTEN, CandidateOrigin
from guard.judge.report import BotTurnReport, CandidateReport, TurnContext
from guard.judge.verdicts import Verdict
from guard.records import Candidate, Dialogue, Turn
from guard.vocabulary import Check, GuardMode, Method, Pairing

if TYPE_CHECKING:  # the detector loads torch: a guard that is off never imports it
    from guard.judge.detector import ContradictionDetector


@dataclass(frozen=True, eq=False)
class Guard:
    """A detector loaded once: its NLI scorer, the prefilter's embedder (None: every earlier sentence is paired)
    and its checkpoint's settings; judges candidate replies against a conversation into the turn's report."""

    name: str
    scorer: object | None
    embedder: object | None = None
    config: GuardConfig = field(default_factory=GuardConfig)
    #: None for the guard that is off (``Guard.off``): it judges nothing
    detector: ContradictionDetector | None = field(init=False, repr=False)

    def __post_init__(self) -> None:
        detector = None
        if self.scorer is not None:
            from guard.judge.detector import ContradictionDetector

            detector = ContradictionDetector(self.scorer, self.embedder)
        object.__setattr__(self, "detector", detector)

    @classmethod
    def off(cls) -> Guard:
        """The guard of a chat without one: no detector, nothing loaded; ``judge`` with the mode off sends the
        generator's best and reports that the guard was off (any other mode is refused: it needs a detector)."""
        return cls("", None)

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
            if self.detector is None:
                raise ValueError(f"guard mode {settings.mode} needs a detector; choose one, or turn the guard off")
            judged = [c.text for i, c in enumerate(candidates) if i not in context.withheld]
            verdicts = self.detector.judge(turns, judged, speaker, persona, settings, turn_id) if judged else ()
        report, _ = decide(candidates, verdicts, settings, detector=self.name, persona=persona,
                           badge=self.config.badge, context=context)
        reads_facts = settings.mode != GuardMode.OFF and Check.FACTS in settings.checks
        sheet = _sheet_after(turns, report.sent, speaker, persona, turn_id) if reads_facts else None
        timings = {**report.timings, "guard_s": round(report.timings.get("guard_s", 0.0) + time.perf_counter()
                                                      - started, 4)}
        return replace(report, sheet=sheet, timings=timings)  # the last of the building: the sheet and the time it took

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
        return self.judge_dialogue(dialogue, settings).candidates[0].verdict

    def judge_dialogue(self, dialogue: Dialogue, settings: JudgeSettings | None = None) -> BotTurnReport:
        """The report on a dialogue's last turn, judged as the only candidate against the turns before it (and its
        persona): its verdict, and the speaker's fact sheet with that turn said (the playground and Learn draw both).
        The settings' mode must judge (not off)."""
        if not dialogue.turns:
            raise ValueError(f"dialogue {dialogue.record_id!r} has no turns to judge")
        settings = settings or self.settings()
        if settings.mode == GuardMode.OFF:
            raise ValueError("a verdict needs a guard mode that judges (not off)")
        last = dialogue.last
        return self.judge(dialogue.history, [last.text], speaker=last.agent_id, persona=dialogue.persona,
                          settings=settings, turn_id=last.turn_id)

    def prepare(self, turns: Sequence[Turn], persona: Sequence[str], settings: JudgeSettings) -> None:
        """Split and embed a conversation's texts ahead of its next turn (cached by text)."""
        if self.detector is not None:
            self.detector.prepare(turns, persona, settings)

    @classmethod
    def over(cls, scorer, embedder=None, config: GuardConfig | None = None, name: str = "") -> Guard:
        """A guard over a scorer already in hand (a calibration's or a test's), with ``config``'s settings."""
        return cls(name or str(getattr(scorer, "name", "") or "detector"), scorer, embedder, config or GuardConfig())


_GUARDS = LoadedOnce()


def load_guard(name: str = "embedded", prefilter: bool = True) -> Guard:
    """The guard for a detector name (``guard.models.registry``), loaded once per process, by one thread while others
    wait: the scorer (``load_scorer``), the prefilter's embedder (``prefilter``; loaded at its first use,
    ``DeferredEmbedder``) and the settings of its ``guard_config.json``. Raises what loading raises (``MissingAssetError``, ``ModelLoadError``, ``ConfigError``),
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
    from guard.models.loading import DEFERRED_EMBEDDER, load_scorer

    config = registry.read_config(name)  # a broken config is refused before a model loads
    return Guard(name, load_scorer(name, config=config), DEFERRED_EMBEDDER if prefilter else None, config)


def _sheet_after(turns: Sequence[Turn], sent: str, speaker: str, persona: Sequence[str], turn_id: int | None):
    """What ``speaker`` has said about itself once ``sent`` is said (``guard.language.fact_sheet``): the sheet the
    pages draw with the turn."""
    from guard.language.fact_sheet import sheet_of

    said = Turn((max(t.turn_id for t in turns) + 1 if turns else 0) if turn_id is None else turn_id, speaker, sent)
    return sheet_of([*turns, said], persona, speaker)


def decide(candidates: Sequence[Candidate], verdicts: Sequence[Verdict] | None, settings: JudgeSettings, *,
           detector: str, persona: Sequence[str] = (), badge: BadgeBand | None = None,
           context: TurnContext | None = None) -> tuple[BotTurnReport, PolicyDecision]:
    """The deciding stage of ``Guard.judge``: the policy's choice among ``candidates`` given their ``verdicts`` (None:
    the guard is off), as the turn's report (with the text it sends, each candidate's reason in words, the context's
    origins, reminder, prompt note and timings); also the decision itself (over the candidates not withheld, numbered among them). ``verdicts`` are
    those of the candidates the context does not withhold, in order. ``settings`` were resolved once
    (``guard.config.JudgeSettings.resolve``)."""
    context = context or TurnContext()
    origins = context.origins or (CandidateOrigin.BOT,) * len(candidates)
    if len(origins) != len(candidates):
        raise ValueError(f"{len(origins)} origins for {len(candidates)} candidates: one origin per candidate")
    kept = [i for i in range(len(candidates)) if i not in context.withheld]
    if kept:
        decision = choose([candidates[i] for i in kept], verdicts, settings.mode,
                          penalty_lambda=settings.penalty_lambda, fallback=settings.fallback,
                          repair_fallback=settings.repair_fallback, rerank_band=settings.rerank_band,
                          last_resort=[j for j, i in enumerate(kept) if origins[i] in GUARD_WRITTEN])
    else:  # every candidate withheld: the safe reply
        decision = PolicyDecision(None, settings.fallback, True, (), ())
    at = {j: i for j, i in enumerate(kept)}  # the decision's numbering -> the candidates'
    chosen_index = None if decision.chosen_index is None else at[decision.chosen_index]
    repair = None
    if decision.repair is not None:
        repaired_verdict = verdicts[decision.repair.index]
        repair = replace(decision.repair, index=at[decision.repair.index],
                         why=wording.describe_verdict(repaired_verdict))
    reports = []
    for i, candidate in enumerate(candidates):
        held = context.withheld.get(i)
        j = kept.index(i) if held is None else None
        verdict = None if verdicts is None or j is None else verdicts[j]
        if held is not None:
            reason = wording.withheld_reason(held)
        else:
            reason = wording.reason(decision.whys[j], verdict) if j < len(decision.whys) else ""
        reports.append(CandidateReport(
            index=i, text=candidate.text, generator_score=float(candidate.score), chosen=i == chosen_index,
            reason=reason, verdict=verdict, adjusted_score=None if j is None else float(decision.adjusted_scores[j]),
            repair=repair if repair is not None and repair.index == i else None, origin=origins[i], withheld=held))
    reports = tuple(reports)
    reminder = context.reminder
    if reminder is not None:  # who wrote the reply sent after the reminder, if it is consistent
        chosen = reports[chosen_index] if chosen_index is not None else None
        consistent = chosen is not None and not (chosen.contradicts and chosen.repair is None)
        reminder = replace(reminder, outcome=chosen.origin if consistent and chosen.origin != CandidateOrigin.BOT
                           else "none")
    report = BotTurnReport(
        settings=settings, detector=detector, chosen_index=chosen_index,
        used_fallback=bool(decision.used_fallback), candidates=reports, timings=dict(context.timings),
        persona=tuple(persona),
        repair_declined="" if decision.repair_declined is None else wording.declined(decision.repair_declined),
        decided_by=decision.decided_by, badge=badge, prompt_note=context.prompt_note, memory=context.memory, reminder=reminder,
        crowd_note=context.crowd_note,
        sent=decision.reply,
    )
    return report, decision
