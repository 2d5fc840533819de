"""The guard's report on one bot turn: the candidates, each one's verdict, what the policy did, in words.

``decide`` turns the candidates, the detector's verdicts and the guard mode into a ``BotTurnReport`` (the policy in
``guard.judge.policies`` chooses); ``guard.judge.pipeline.Guard.judge`` is the usual way to get one. The report is the one
record of a guarded turn: the chat page draws it, the studio stores it, the transcript download and the guard
server carry it, always in the one JSON form ``BotTurnReport.to_json`` (read back by ``from_json``, also as older
versions wrote it). Its ``summary`` is the one place that words what the guard did.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum

from guard.config import DEFAULT_PREFILTER_K, DEFAULT_SAFE_REPLY, FALLBACK_THRESHOLD, BadgeBand, JudgeSettings
from guard.judge.jsonform import from_jsonable, jsonable
from guard.judge.policies import PolicyDecision, Repair, choose, deciding_score
from guard.judge.reminders import CandidateOrigin, Reminder
from guard.judge.verdicts import PairScore, Verdict, VerdictDetails
from guard.records import Candidate
from guard.vocabulary import Category, GuardMode, PremiseSource, describe_source


@dataclass(frozen=True)
class Withheld:
    """A candidate kept from being sent by a check outside the guard, before the guard judged it (the classroom
    filter of ``conversation.classroom``): which check, the words it caught, and the text with them masked, which is
    all a student is shown of it."""

    by: str
    words: tuple[str, ...] = ()
    masked: str = ""

    @property
    def reason(self) -> str:
        """The reason a withheld candidate gets, in the policy's place."""
        return f"withheld: the {self.by} caught words in it, so it was neither judged nor sent"


@dataclass(frozen=True)
class TurnContext:
    """What the conversation knows of a turn beside its candidates, handed to ``Guard.judge`` so the report is
    finished when built: who wrote each candidate (``origins``, in the candidates' order; empty: the bot wrote them
    all), the candidates a check outside the guard withheld (``withheld``: by index; never judged nor sent), the
    reminder planned (its outcome is the policy's, filled in when the report is built), what the bot did not read
    of the conversation (``prompt_note``) and the seconds spent before judging (``timings``: the generation's, and
    the guard's own on an earlier pass of the same turn)."""

    origins: tuple[CandidateOrigin, ...] = ()
    withheld: Mapping[int, Withheld] = field(default_factory=dict)
    reminder: Reminder | None = None
    prompt_note: str = ""
    timings: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class CandidateReport:
    """One candidate as the guard saw it: the generator's text and score, the detector's verdict on it (None when
    the guard is off) and what the policy did with it. The verdict is kept whole in memory (the playground's heatmap
    reads its pairs); its JSON form keeps the evidence and details, not every scored pair."""

    index: int
    text: str
    generator_score: float
    chosen: bool
    reason: str
    verdict: Verdict | None = None
    adjusted_score: float | None = None
    # repair mode: this candidate was sent with its contradicting sentence removed (what, why, the text sent);
    # None otherwise and in reports stored before the mode existed
    repair: Repair | None = None
    #: who wrote it: the bot, the bot after a reminder, or the guard (the reminder's opening alone)
    origin: CandidateOrigin = CandidateOrigin.BOT
    #: kept from being sent before the guard judged it (the classroom filter); None for a candidate the guard judged
    withheld: Withheld | None = None

    def shown_text(self, original: bool = False) -> str:
        """The candidate as a page shows it: a withheld one masked (what a student sees), unless ``original`` (the
        signed-in teacher)."""
        return self.withheld.masked if self.withheld is not None and not original else self.text

    @property
    def contradiction_score(self) -> float | None:
        return None if self.verdict is None else float(self.verdict.score)

    @property
    def deciding(self) -> tuple[float, float] | None:
        """The score of the check that decided the verdict and its threshold (``guard.judge.policies.deciding_score``):
        what a caption quotes, the same number as the deciding evidence row; None when the guard was off."""
        return None if self.verdict is None else deciding_score(self.verdict)

    @property
    def contradicts(self) -> bool:
        return self.verdict is not None and bool(self.verdict.contradiction)

    @property
    def category(self) -> Category:
        return Category.NONE if self.verdict is None else Category(self.verdict.category)

    @property
    def evidence(self) -> list[PairScore]:
        """The detector's pairs at or over the threshold, best first."""
        return [] if self.verdict is None else self.verdict.evidence

    @property
    def details(self) -> VerdictDetails | None:
        return None if self.verdict is None else self.verdict.details


class TurnStatus(StrEnum):
    """The guard's outcome for one bot turn."""

    OFF = "off"  # no detection
    CONSISTENT = "consistent"  # the sent reply contradicts nothing
    GUARDED = "guarded"  # a contradicting candidate was rejected, or the safe reply was sent
    FLAGGED = "flagged"  # the sent reply contradicts


@dataclass(frozen=True)
class BotTurnReport:
    """The guard's annotation of one bot turn, built finished (``decide``; ``rejudged`` builds a new one)."""

    #: every setting the turn was judged and decided with (τ, the checks and their thresholds, the mode, ...)
    settings: JudgeSettings
    detector: str
    chosen_index: int | None  # None: the safe fallback was sent
    used_fallback: bool
    candidates: tuple[CandidateReport, ...]
    timings: Mapping[str, float] = field(default_factory=dict)
    persona: tuple[str, ...] = ()  # the persona lines the guard checked against
    rejudge_note: str = ""  # set by rejudge(): which detector, τ and mode judged the turn again
    # set by rejudge() when the policy would now pick another reply than the one sent: that candidate's index,
    # or would_fallback for the safe reply
    would_send: int | None = None
    would_fallback: bool = False
    # repair mode, when the generator's best contradicted and could not be repaired: why not (the fallback
    # policy, ``decided_by``, then chose the reply); "" otherwise
    repair_declined: str = ""
    decided_by: GuardMode | None = None
    # what the bot did not read of the conversation for this reply, in words for the user ("" when it read it all,
    # or cannot tell): a message longer than its prompt's budget is cut to its end (bots.base.PromptReading)
    prompt_note: str = ""
    #: the bot reminded of what it said when nothing consistent answered (guard.judge.reminders); None when not
    reminder: Reminder | None = None
    #: where a flag earns the red badge (the checkpoint's calibration); None: every flag does
    badge: BadgeBand | None = None
    #: the text the turn sent (the chosen candidate, repaired or not, or the safe reply); "" in reports stored
    #: before it was kept (``sent_reply`` works it out)
    sent: str = ""
    #: False in reports stored before they recorded whether the prefilter ran (``prefilter`` is then unknown)
    prefilter_recorded: bool = True

    @property
    def mode(self) -> GuardMode:
        return self.settings.mode

    @property
    def threshold(self) -> float:
        return self.settings.threshold

    @property
    def prefilter(self) -> bool | None:
        """Whether the prefilter chose the earlier sentences paired (None: nothing was judged, or not recorded)."""
        return None if self.mode == GuardMode.OFF or not self.prefilter_recorded else self.settings.prefilter

    def to_json(self) -> dict:
        """The report's one JSON form: what the studio stores, the transcript download carries and the guard
        server's ``guard`` field holds (``from_json`` reads it back). Each verdict keeps its evidence and details,
        not every pair scored (a stored chat would grow by every pair); the mode, τ and whether the prefilter ran
        are written beside the settings for readers of the JSON alone."""
        data = jsonable(self)
        for cand in data["candidates"]:
            if cand.get("verdict"):
                cand["verdict"]["pair_scores"] = []
        return {**data, "mode": str(self.mode), "threshold": self.threshold, "prefilter": self.prefilter}

    @classmethod
    def from_json(cls, data: dict) -> BotTurnReport:
        """A report from its JSON form, as any version wrote it (``upgrade_report_json``)."""
        return from_jsonable(cls, upgrade_report_json(data))

    def sent_reply(self, safe_reply: str = DEFAULT_SAFE_REPLY) -> str:
        """The text this turn sent: the chosen candidate (without its removed sentence, when repaired), or
        ``safe_reply`` when the safe reply was sent."""
        if self.sent:  # the finished report holds what it sent
            return self.sent
        chosen = self.chosen
        if chosen is None:
            return safe_reply
        return chosen.repair.reply if chosen.repair is not None else chosen.text

    @property
    def any_contradiction(self) -> bool:
        return any(c.contradicts for c in self.candidates)

    @property
    def chosen(self) -> CandidateReport | None:
        return None if self.chosen_index is None else self.candidates[self.chosen_index]

    @property
    def repair(self) -> Repair | None:
        """The repair of the sent reply (its contradicting sentence removed), or None."""
        chosen = self.chosen
        return None if chosen is None else chosen.repair

    @property
    def repaired(self) -> bool:
        """The sent reply is a candidate with its contradicting sentence removed."""
        return self.repair is not None

    @property
    def reply_flagged(self) -> bool:
        """The reply that was sent contradicts (flag mode, or every candidate contradicted); a repaired reply does
        not: the sentence that contradicted was removed before it was sent."""
        chosen = self.chosen
        return chosen is not None and chosen.contradicts and chosen.repair is None

    @property
    def status(self) -> TurnStatus:
        """The sent reply is flagged, the guard stopped a candidate, or neither."""
        if self.mode == GuardMode.OFF:
            return TurnStatus.OFF
        if self.reply_flagged:
            return TurnStatus.FLAGGED
        if self.used_fallback or (self.mode != GuardMode.FLAG and self.any_contradiction):
            return TurnStatus.GUARDED
        return TurnStatus.CONSISTENT

    def summary(self) -> str:
        """One line on what the guard did this turn, in the words of its mode (the transcript's caption): the
        reminder first when there was one; after a re-judge, with what the guard would now send when that is another
        reply than the one sent."""
        line = self._outcome()
        if self.reminder is not None:
            line = f"{reminder_phrase(self.reminder)}; {line}"
        change = self.rejudged_change()
        return f"{line}; {change}" if change else line

    def badge_band(self, score: float) -> str:
        """"red" for a flag in the badge band (or when the config sets none), "possible" between τ and it."""
        if self.badge is None or score >= self.badge.threshold:
            return "red"
        return "possible"

    def rejudged_change(self) -> str:
        """After a re-judge: which reply the guard would now send, when not the one that was sent ("" else)."""
        if self.would_fallback:
            return f"at τ = {self.threshold:.2f} every candidate contradicts: the guard would now send the safe reply"
        if self.would_send is None or not 0 <= self.would_send < len(self.candidates):
            return ""
        cand = self.candidates[self.would_send]
        how = (f"which contradicts too (p={cand.deciding[0]:.2f})" if cand.contradicts
               else "which does not contradict")
        return f"at τ = {self.threshold:.2f} the guard would now send candidate #{cand.index + 1}, {how}"

    @property
    def withheld(self) -> list[CandidateReport]:
        """The candidates kept from being sent before the guard judged them (the classroom filter)."""
        return [c for c in self.candidates if c.withheld is not None]

    def _outcome(self) -> str:
        held = self.withheld
        if held and len(held) == len(self.candidates):
            by = held[0].withheld.by
            return (f"withheld: every candidate held words the {by} masks, so the safe reply was sent instead"
                    if len(held) > 1 else f"withheld: the candidate held words the {by} masks, so the safe reply "
                                          "was sent instead")
        outcome = self._decision()
        if self.mode == GuardMode.REPAIR and self.repair_declined:
            outcome = f"{outcome} (not repaired: {self.repair_declined})"
        if held:
            listed = ", ".join(f"#{c.index + 1}" for c in held)
            outcome += f"; candidate{'s' if len(held) > 1 else ''} {listed} withheld by the {held[0].withheld.by}"
        return outcome

    def _decision(self) -> str:
        # repair mode without a repair: the fallback policy decided, and is worded as itself
        mode = self.decided_by if self.mode == GuardMode.REPAIR and self.decided_by else self.mode
        judged = [c for c in self.candidates if c.withheld is None]  # the classroom filter's are worded apart
        n = len(judged)
        candidates = f"{n} candidate{'s' if n != 1 else ''}"
        if self.mode == GuardMode.OFF:
            return f"guard off · {candidates}, not checked"
        every = all(c.contradicts for c in judged)  # after a re-judge, no longer always so
        if self.used_fallback:
            if every:
                return f"blocked: all {candidates} contradict, so the safe reply was sent instead"
            return "blocked: the safe reply was sent (every candidate contradicted when the turn was judged)"
        chosen = self.chosen
        others = [c.index + 1 for c in self.candidates if c.contradicts and not c.chosen]
        listed = ", ".join(f"#{i}" for i in others)
        several = "s" if len(others) > 1 else ""
        if chosen.repair is not None:
            what = (f"{contradiction_phrase(chosen)} (p={chosen.deciding[0]:.2f})" if chosen.contradicts
                    else "contradicted when the turn was judged")  # a re-judge at a higher τ may clear it
            return (f'repaired: candidate #{chosen.index + 1} {what} in "{chosen.repair.removed}"; that sentence '
                    "was removed and the rest sent")
        if chosen.contradicts:
            what = f"the sent reply {contradiction_phrase(chosen)} (p={chosen.deciding[0]:.2f})"
            if mode == GuardMode.FLAG:
                return f"flagged: {what}; flag mode shows it without preventing it"
            if mode == GuardMode.PENALTY:
                return f"flagged: the penalty did not outweigh its generator score; {what}"
            if every:
                return f"flagged: every candidate contradicts, so the generator's best was sent; {what}"
            return f"flagged: {what}"
        if not others:
            return f"consistent · {candidates}, none contradicts"
        if mode == GuardMode.FLAG:
            return (f"the sent reply is consistent · candidate{several} {listed} would have contradicted "
                    "(not sent: a lower generator score)")
        return f"{mode}: candidate{several} {listed} rejected as contradicting; #{chosen.index + 1} sent"


#: the verdict fields a report's candidates carried themselves before they embedded the verdict
_COPIED_VERDICT_FIELDS = ("contradiction_score", "contradicts", "category", "evidence", "details")


def upgrade_report_json(data: dict) -> dict:
    """A report's JSON form in today's shape. Older reports copied the verdict into each candidate field by field (``contradiction_score``, ``contradicts``, ``category``, ``evidence``, ``details``);
    today a candidate embeds the verdict. Idempotent: today's shape passes through unchanged."""
    if not isinstance(data, dict):
        return data
    if "settings" not in data:  # written before the report quoted its settings: its mode, τ and prefilter
        data = {**data, "settings": {"mode": data.get("mode") or "off",
                                     "threshold": data.get("threshold") or FALLBACK_THRESHOLD,
                                     "prefilter_k": DEFAULT_PREFILTER_K if data.get("prefilter") else None},
                "prefilter_recorded": data.get("prefilter") is not None}
    candidates = []
    for cand in data.get("candidates") or []:
        if not isinstance(cand, dict) or "verdict" in cand or not any(k in cand for k in _COPIED_VERDICT_FIELDS):
            candidates.append(cand)
            continue
        kept = {k: v for k, v in cand.items() if k not in _COPIED_VERDICT_FIELDS}
        score = cand.get("contradiction_score")
        if score is None:  # the guard was off: no verdict
            candidates.append({**kept, "verdict": None})
            continue
        details = cand.get("details") or {"method": "structured", "turn_id": -1, "threshold": data.get("threshold"),
                                          "n_pairs": 0, "history_score": score}
        candidates.append({**kept, "verdict": {
            "contradiction": bool(cand.get("contradicts")), "score": score, "category": cand.get("category") or "none",
            "evidence": cand.get("evidence") or [], "pair_scores": [], "details": details}})
    return {**data, "candidates": candidates} if "candidates" in data else dict(data)


def reminder_phrase(reminder: Reminder) -> str:
    """What the reminder did, in words: what the bot was reminded of and who wrote the reply sent after it."""
    top = reminder.facts[0] if reminder.facts else None
    what = f'{describe_source(top)} ("{reminder.fact}")' if top is not None else "what it said"
    how = (f'its reply opened with "{reminder.opening}"' if reminder.method == "opening"
           else "the fact restated in its persona")
    if reminder.outcome == CandidateOrigin.REMINDED:
        result = "the bot wrote a consistent reply"
    elif reminder.outcome == CandidateOrigin.COMPOSED:
        result = "every reminded reply still contradicted, so the guard composed the reply from the evidence"
    else:
        result = "nothing consistent came of it"
    return f"reminded the bot of {what}, {how}: {result}"


def contradiction_phrase(cand: CandidateReport) -> str:
    """What a contradicting candidate contradicts, in words: "contradicts itself", "contradicts turn 3"."""
    outside = [e for e in cand.evidence if e.source not in (PremiseSource.INTRA, PremiseSource.WHOLE_HISTORY)]
    if cand.category == Category.INTRA:
        return "contradicts itself"
    where = describe_source(outside[0]) if outside else "earlier turns"
    more = f" and {len(outside) - 1} more" if len(outside) > 1 else ""
    if cand.category == Category.ROLE:
        return f"reads as the user's side of the conversation (role confusion) and contradicts {where}{more}"
    return f"contradicts {where}{more}"


def decide(candidates: Sequence[Candidate], verdicts: Sequence[Verdict] | None, settings: JudgeSettings, *,
           detector: str, persona: Sequence[str] = (), badge: BadgeBand | None = None,
           context: TurnContext | None = None, started: float | None = None) -> tuple[BotTurnReport, PolicyDecision]:
    """The policy's choice among ``candidates`` given their ``verdicts`` (None: the guard is off), as the turn's
    finished report (with the text it sends, the context's origins, reminder and prompt note, and the timings:
    the context's plus the guard's own since ``started``); also the decision itself (over the candidates not
    withheld, numbered among them). ``verdicts`` are those of the candidates the context does not withhold, in
    order. ``settings`` were resolved once (``guard.config.JudgeSettings.resolve``)."""
    context = context or TurnContext()
    origins = context.origins or (CandidateOrigin.BOT,) * len(candidates)
    if len(origins) != len(candidates):
        raise ValueError(f"{len(origins)} origins for {len(candidates)} candidates: one origin per candidate")
    kept = [i for i in range(len(candidates)) if i not in context.withheld]
    if kept:
        decision = choose([candidates[i] for i in kept], verdicts, settings.mode,
                          penalty_lambda=settings.penalty_lambda, fallback=settings.fallback,
                          repair_fallback=settings.repair_fallback, rerank_band=settings.rerank_band)
    else:  # every candidate withheld: the safe reply
        decision = PolicyDecision(None, settings.fallback, True, (), ())
    at = {j: i for j, i in enumerate(kept)}  # the decision's numbering -> the candidates'
    chosen_index = None if decision.chosen_index is None else at[decision.chosen_index]
    repair = None if decision.repair is None else replace(decision.repair, index=at[decision.repair.index])
    reports = []
    for i, candidate in enumerate(candidates):
        held = context.withheld.get(i)
        j = kept.index(i) if held is None else None
        reports.append(CandidateReport(
            index=i, text=candidate.text, generator_score=float(candidate.score), chosen=i == chosen_index,
            reason=held.reason if held is not None else decision.reasons[j] if j < len(decision.reasons) else "",
            verdict=None if verdicts is None or j is None else verdicts[j],
            adjusted_score=None if j is None else float(decision.adjusted_scores[j]),
            repair=repair if repair is not None and repair.index == i else None, origin=origins[i], withheld=held))
    reports = tuple(reports)
    reminder = context.reminder
    if reminder is not None:  # who wrote the reply sent after the reminder, if it is consistent
        chosen = reports[chosen_index] if chosen_index is not None else None
        consistent = chosen is not None and not (chosen.contradicts and chosen.repair is None)
        reminder = replace(reminder, outcome=chosen.origin if consistent and chosen.origin != CandidateOrigin.BOT
                           else "none")
    timings = dict(context.timings)
    if started is not None:
        timings["guard_s"] = round(timings.get("guard_s", 0.0) + time.perf_counter() - started, 4)
    report = BotTurnReport(
        settings=settings, detector=detector, chosen_index=chosen_index,
        used_fallback=bool(decision.used_fallback), candidates=reports, timings=timings, persona=tuple(persona),
        repair_declined=decision.repair_declined, decided_by=decision.decided_by, badge=badge,
        prompt_note=context.prompt_note, reminder=reminder, sent=decision.reply,
    )
    return report, decision


def rejudged(old: BotTurnReport, fresh: BotTurnReport, sent_text: str, note: str, seconds: float) -> BotTurnReport:
    """A turn judged again (``fresh``: the same candidates judged by another detector, τ or mode) as a new report
    that keeps what the turn was: the reply sent and who wrote each candidate, its repair, the reminder, what the
    bot read and what decided; with the new verdicts, the note saying who judged, and the reply the policy would
    now send when that is another."""
    would = None if fresh.used_fallback else fresh.chosen_index
    sent = None if old.used_fallback else old.chosen_index
    candidates = tuple(replace(cand, chosen=cand.index == sent, repair=was.repair, origin=was.origin,
                               withheld=was.withheld) for cand, was in zip(fresh.candidates, old.candidates))
    changed = would != sent
    return replace(fresh, candidates=candidates, chosen_index=sent, used_fallback=old.used_fallback, sent=sent_text,
                   reminder=old.reminder, repair_declined=old.repair_declined, decided_by=old.decided_by,
                   prompt_note=old.prompt_note, timings={**old.timings, "rejudge_s": round(seconds, 4)},
                   rejudge_note=note, would_send=would if changed else None, would_fallback=changed and would is None)
