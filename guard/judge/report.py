"""The guard's report on one bot turn, as records: the candidates, each one's verdict, what the policy did.

``guard.judge.pipeline.Guard.judge`` builds one, finished, for every judged turn; ``rejudged`` builds a new one when a
turn is judged again. The report is the one record of a guarded turn: the chat page draws it, the studio stores it,
the transcript download and the guard server carry it, always in the one JSON form ``BotTurnReport.to_json`` (read
back by ``from_json``, also as older versions wrote it: ``guard.judge.report_versions``). What it says in words is
``guard.judge.wording``'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from guard.config import DEFAULT_SAFE_REPLY, BadgeBand, JudgeSettings
from guard.judge.jsonform import from_jsonable, jsonable
from guard.judge.reminders import CandidateOrigin, Reminder
from guard.judge.repair import Repair
from guard.judge.report_versions import upgrade_report_json
from guard.judge.verdicts import PairScore, Verdict, VerdictDetails
from guard.language.fact_sheet import FactSheet
from guard.vocabulary import Category, GuardMode


@dataclass(frozen=True)
class Withheld:
    """A candidate kept from being sent by a check outside the guard, before the guard judged it (the classroom
    filter of ``conversation.classroom``): which check, the words it caught, and the text with them masked, which is
    all a student is shown of it."""

    by: str
    words: tuple[str, ...] = ()
    masked: str = ""


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
    #: that the bot drew fewer candidates than asked for because a class crowded it, in words ("" when it did not)
    crowd_note: str = ""
    #: the facts put in the bot's prompt as its memory before it wrote (``guard.judge.memory``), as they were said
    memory: tuple[str, ...] = ()


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
        """The score of the check that decided the verdict and its threshold (``Verdict.deciding``): what a caption
        quotes, the same number as the deciding evidence row; None when the guard was off."""
        return None if self.verdict is None else self.verdict.deciding

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

    @property
    def unanswered(self) -> bool:
        """Whether the answer check found that it answers nothing of what the user's message asked, or repeats
        itself (``VerdictDetails.answer``); False when it was not checked (the guard off, a report from before the
        check) or the message asked nothing."""
        answer = None if self.details is None else self.details.answer
        return answer is not None and (answer.degenerate or (answer.expected is not None and not answer.answered))


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
    # or cannot tell): a message longer than its prompt's budget is cut to its end (bots.base.PromptCoverage)
    prompt_note: str = ""
    #: that the bot drew fewer candidates than asked for because other students' replies were waiting for it, in
    #: words for the user (bots.base.crowd_note); "" when it drew them all
    crowd_note: str = ""
    #: the facts put in the bot's prompt as its memory before it wrote (``guard.judge.memory``); () when none
    memory: tuple[str, ...] = ()
    #: the bot reminded of what it said when nothing consistent answered (guard.judge.reminders); None when not
    reminder: Reminder | None = None
    #: where a flag earns the red badge (the checkpoint's calibration); None: every flag does
    badge: BadgeBand | None = None
    #: the text the turn sent (the chosen candidate, repaired or not, or the safe reply); "" in reports stored
    #: before it was kept (``sent_reply`` works it out)
    sent: str = ""
    #: False in reports stored before they recorded whether the prefilter ran (``prefilter`` is then unknown)
    prefilter_recorded: bool = True
    #: what the bot has said about itself once this turn is sent (``guard.language.fact_sheet``: its persona and every
    #: sent reply, this one included), as the guard read it; the pages draw it. None: the guard was off, or a report
    #: stored before it carried the sheet
    sheet: FactSheet | None = None

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

    def badge_band(self, score: float) -> str:
        """"red" for a flag in the badge band (or when the config sets none), "possible" between τ and it."""
        if self.badge is None or score >= self.badge.threshold:
            return "red"
        return "possible"

    @property
    def unanswered(self) -> list[CandidateReport]:
        """The judged candidates that did not answer the user's message (``CandidateReport.unanswered``)."""
        return [c for c in self.candidates if c.unanswered]

    @property
    def withheld(self) -> list[CandidateReport]:
        """The candidates kept from being sent before the guard judged them (the classroom filter)."""
        return [c for c in self.candidates if c.withheld is not None]


def rejudged(old: BotTurnReport, fresh: BotTurnReport, sent_text: str, note: str, seconds: float) -> BotTurnReport:
    """A turn judged again (``fresh``: the same candidates judged by another detector, τ or mode) as a new report.

    What the turn was stays the old report's: the reply sent and who wrote each candidate, its repair and what the
    classroom filter withheld, the reminder, what the bot read, what decided and the fact sheet as it stood. What is
    new is the fresh report's: the settings and detector, each candidate's verdict and reason; with the note saying
    who judged again, and the reply the policy would now send when that is another than the one sent."""
    would = None if fresh.used_fallback else fresh.chosen_index
    sent = None if old.used_fallback else old.chosen_index
    changed = would != sent
    candidates = tuple(CandidateReport(
        index=now.index, text=now.text, generator_score=now.generator_score, chosen=now.index == sent,
        reason=now.reason, verdict=now.verdict, adjusted_score=now.adjusted_score, repair=was.repair,
        origin=was.origin, withheld=was.withheld) for now, was in zip(fresh.candidates, old.candidates))
    return BotTurnReport(
        settings=fresh.settings, detector=fresh.detector, chosen_index=sent, used_fallback=old.used_fallback,
        candidates=candidates, timings={**old.timings, "rejudge_s": round(seconds, 4)}, persona=fresh.persona,
        rejudge_note=note, would_send=would if changed else None, would_fallback=changed and would is None,
        repair_declined=old.repair_declined, decided_by=old.decided_by, prompt_note=old.prompt_note, memory=old.memory,
        crowd_note=old.crowd_note,
        reminder=old.reminder, badge=fresh.badge, sent=sent_text, prefilter_recorded=fresh.prefilter_recorded,
        sheet=old.sheet)
