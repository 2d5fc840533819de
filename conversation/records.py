"""The guarded conversation as records: turns, the guard's report on each bot turn, the settings it ran with.

One bot turn: the bot proposes N candidates, the detector scores every candidate against the bot's earlier
turns (and persona) in one batched pass, a policy picks the reply (``conversation.guarding``). What the guard
saw and decided (candidates, scores, reasons, evidence, the detector's details) is kept here in plain
dataclasses, so the chat page can draw the transcript again, the studio can store it and a download can
carry it as a DECODE-shaped record.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from enum import StrEnum

from conversation.jsonform import jsonable
from guard.datasets import decode_record
from guard.records import Turn
from guard.verdicts import PairScore, VerdictDetails
from guard.vocabulary import GUARD_MODES, Category, GuardMode, PremiseSource, describe_source

USER, BOT = "user", "bot"


@dataclass
class GuardSettings:
    """How a bot turn is guarded: how many candidates, which policy, which threshold."""

    mode: GuardMode = GuardMode.RERANK
    threshold: float = 0.5
    num_candidates: int = 4
    penalty_lambda: float = 1.0
    fallback: str | None = None  # None: guard.policies' default safe reply

    def __post_init__(self) -> None:
        if self.mode not in GUARD_MODES:
            raise ValueError(f"unknown guard mode {self.mode!r}; choose one of {', '.join(GUARD_MODES)}")
        self.mode = GuardMode(self.mode)


@dataclass
class CandidateReport:
    """One candidate as the guard saw it; ``evidence`` are the detector's pairs at or over the threshold."""

    index: int
    text: str
    generator_score: float
    contradiction_score: float | None  # None when the guard is off
    contradicts: bool
    category: Category
    chosen: bool
    reason: str
    adjusted_score: float | None = None
    evidence: list[PairScore] = field(default_factory=list)
    details: VerdictDetails | None = None  # None when the guard is off


class TurnStatus(StrEnum):
    """The guard's outcome for one bot turn."""

    OFF = "off"  # no detection
    CONSISTENT = "consistent"  # the sent reply contradicts nothing
    GUARDED = "guarded"  # a contradicting candidate was rejected, or the safe reply was sent
    FLAGGED = "flagged"  # the sent reply contradicts


@dataclass
class BotTurnReport:
    """The guard's annotation of one bot turn."""

    mode: GuardMode
    threshold: float
    detector: str
    chosen_index: int | None  # None: the safe fallback was sent
    used_fallback: bool
    candidates: list[CandidateReport]
    timings: dict[str, float] = field(default_factory=dict)
    persona: list[str] = field(default_factory=list)  # the persona lines the guard checked against
    rejudge_note: str = ""  # set by rejudge(): which detector, τ and mode judged the turn again
    # set by rejudge() when the policy would now pick another reply than the one sent: that candidate's index,
    # or would_fallback for the safe reply
    would_send: int | None = None
    would_fallback: bool = False

    @property
    def any_contradiction(self) -> bool:
        return any(c.contradicts for c in self.candidates)

    @property
    def chosen(self) -> CandidateReport | None:
        return None if self.chosen_index is None else self.candidates[self.chosen_index]

    @property
    def reply_flagged(self) -> bool:
        """The reply that was sent contradicts (flag mode, or every candidate contradicted)."""
        chosen = self.chosen
        return chosen is not None and chosen.contradicts

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
        """One line on what the guard did this turn, in the words of its mode (the transcript's caption); after
        a re-judge, with what the guard would now send when that is another reply than the one sent."""
        change = self.rejudged_change()
        return f"{self._outcome()}; {change}" if change else self._outcome()

    def rejudged_change(self) -> str:
        """After a re-judge: which reply the guard would now send, when not the one that was sent ("" else)."""
        if self.would_fallback:
            return f"at τ = {self.threshold:.2f} every candidate contradicts: the guard would now send the safe reply"
        if self.would_send is None or not 0 <= self.would_send < len(self.candidates):
            return ""
        cand = self.candidates[self.would_send]
        how = (f"which contradicts too (p={cand.contradiction_score:.2f})" if cand.contradicts
               else "which does not contradict")
        return f"at τ = {self.threshold:.2f} the guard would now send candidate #{cand.index + 1}, {how}"

    def _outcome(self) -> str:
        n = len(self.candidates)
        candidates = f"{n} candidate{'s' if n != 1 else ''}"
        if self.mode == GuardMode.OFF:
            return f"guard off · {candidates}, not checked"
        every = all(c.contradicts for c in self.candidates)  # after a re-judge, no longer always so
        if self.used_fallback:
            if every:
                return f"blocked: all {candidates} contradict, so the safe reply was sent instead"
            return "blocked: the safe reply was sent (every candidate contradicted when the turn was judged)"
        chosen = self.chosen
        others = [c.index + 1 for c in self.candidates if c.contradicts and not c.chosen]
        listed = ", ".join(f"#{i}" for i in others)
        several = "s" if len(others) > 1 else ""
        if chosen.contradicts:
            what = f"the sent reply {contradiction_phrase(chosen)} (p={chosen.contradiction_score:.2f})"
            if self.mode == GuardMode.FLAG:
                return f"flagged: {what}; flag mode shows it without preventing it"
            if self.mode == GuardMode.PENALTY:
                return f"flagged: the penalty did not outweigh its generator score; {what}"
            if every:
                return f"flagged: every candidate contradicts, so the generator's best was sent; {what}"
            return f"flagged: {what}"
        if not others:
            return f"consistent · {candidates}, none contradicts"
        if self.mode == GuardMode.FLAG:
            return (f"the sent reply is consistent · candidate{several} {listed} would have contradicted "
                    "(not sent: a lower generator score)")
        return f"{self.mode}: candidate{several} {listed} rejected as contradicting; #{chosen.index + 1} sent"


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


@dataclass
class ReplySettings:
    """What produced a bot turn: the generator, its decoding and the guard's settings at the time.

    Kept with the turn (and stored with it), so a session whose sidebar changed between turns still says
    which bot and settings wrote each reply. ``from_session``: copied from the session's settings by the
    schema-4 migration, for turns stored before turns kept their own.
    """

    bot: str = ""
    preset: str = ""
    decoding: dict = field(default_factory=dict)  # bots.base.DecodingConfig's fields
    guard_mode: GuardMode | None = None
    detector: str = ""
    threshold: float | None = None
    num_candidates: int | None = None
    penalty_lambda: float | None = None
    prefilter: bool | None = None
    from_session: bool = False

    def __post_init__(self) -> None:
        self.guard_mode = GuardMode(self.guard_mode) if self.guard_mode else None


@dataclass
class ChatTurn:
    """One turn; a bot turn carries the guard's report (None when it was not guarded, e.g. imported text) and
    the settings that produced it (None when not known: imported text, a user turn)."""

    turn_id: int
    speaker: str  # USER | BOT
    text: str
    report: BotTurnReport | None = None
    settings: ReplySettings | None = None


@dataclass
class Conversation:
    """A session's dialogue plus the guard's reports (the chat page keeps it in st.session_state)."""

    persona: list[str] = field(default_factory=list)
    turns: list[ChatTurn] = field(default_factory=list)
    record_id: str = field(default_factory=lambda: f"chat-{uuid.uuid4().hex[:12]}")

    def add(self, speaker: str, text: str, report: BotTurnReport | None = None,
            settings: ReplySettings | None = None) -> ChatTurn:
        turn = ChatTurn(turn_id=len(self.turns), speaker=speaker, text=text, report=report, settings=settings)
        self.turns.append(turn)
        return turn

    @property
    def awaiting_reply(self) -> bool:
        """The last turn is the user's: a reply failed or is pending (the page offers a retry)."""
        return bool(self.turns) and self.turns[-1].speaker == USER

    def history(self, before: int | None = None) -> list[Turn]:
        """The turns (those before turn id ``before``, if given) as the detector's records."""
        turns = self.turns if before is None else self.turns[:before]
        return [Turn(turn_id=t.turn_id, agent_id=t.speaker, text=t.text) for t in turns]

    def to_decode_record(self) -> dict:
        """The transcript in DECODE's shape (record_id, turns with turn_id/agent_id/text) with each bot turn's
        guard report; ``is_contradiction`` and ``aggregated_contradiction_indices`` speak of the last bot
        reply: the earlier turns it contradicts, or the reply itself when it clashes inside."""
        last_bot = next((t for t in reversed(self.turns) if t.speaker == BOT and t.report), None)
        chosen = last_bot.report.chosen if last_bot else None
        contradiction = bool(chosen and chosen.contradicts)
        indices = sorted({e.turn_id for e in chosen.evidence if e.source in (PremiseSource.HISTORY,
                                                                              PremiseSource.INTRA)}) \
            if contradiction else []
        return decode_record(self.record_id, self.history(), label=contradiction, indices=indices,
                             persona=list(self.persona),
                             turn_fields={t.turn_id: {"guard": jsonable(t.report)} for t in self.turns if t.report})
