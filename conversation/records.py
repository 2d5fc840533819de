"""The guarded conversation as records: turns, the guard's report on each bot turn, the settings it ran with.

One bot turn: the bot proposes N candidates, the detector scores every candidate against the bot's earlier
turns (and persona) in one batched pass, a policy picks the reply (``conversation.guarding``). What the guard
saw and decided (candidates, scores, reasons, evidence, the detector's details) is kept here in plain
dataclasses, so the chat page can draw the transcript again, the studio can store it and a download can
carry it as a DECODE-shaped record.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field, fields
from enum import StrEnum

from conversation.jsonform import jsonable
from guard.datasets import decode_record
from guard.policies import REPAIR_FALLBACKS, Repair, deciding_score
from guard.records import Turn
from guard.verdicts import PairScore, Verdict, VerdictDetails
from guard.vocabulary import GUARD_MODES, Category, GuardMode, PremiseSource, describe_source

USER, BOT = "user", "bot"


@dataclass
class ChatSettings:
    """Everything that decides how a bot turn is made and guarded - the one settings record.

    The chat page's sidebar reads and writes it (``ui.chat_state``), ``guarded_reply`` takes it and keeps a
    snapshot with each bot turn it makes (with the decoding values actually used), the studio stores it per
    session and per turn, self-play runs with it, and the app's defaults are one. A new setting is one field here.

    ``None`` means *not recorded* (a turn stored before turns kept their settings, an imported transcript);
    ``from_session``: a turn's snapshot copied from its session's settings by a migration, not recorded with it.
    """

    bot: str = "embedded"
    preset: str = "fast"
    decoding: dict = field(default_factory=dict)  # bots.base.DecodingConfig's fields; {}: the preset's
    guard_mode: GuardMode | None = GuardMode.RERANK
    detector: str = "embedded"
    threshold: float | None = 0.5
    num_candidates: int | None = 4
    penalty_lambda: float | None = 1.0
    prefilter: bool | None = True
    persona: list[str] = field(default_factory=list)
    fallback: str | None = None  # None: guard.policies' default safe reply
    from_session: bool = False
    # repair mode: the policy that decides when the generator's best cannot be repaired (one of
    # guard.policies.REPAIR_FALLBACKS); None: not recorded (re-rank)
    repair_fallback: GuardMode | None = GuardMode.RERANK

    def __post_init__(self) -> None:
        if self.guard_mode is not None and self.guard_mode not in GUARD_MODES:
            raise ValueError(f"unknown guard mode {self.guard_mode!r}; choose one of {', '.join(GUARD_MODES)}")
        self.guard_mode = GuardMode(self.guard_mode) if self.guard_mode else None
        if self.repair_fallback is not None and self.repair_fallback not in REPAIR_FALLBACKS:
            raise ValueError(f"repair falls back to one of {', '.join(REPAIR_FALLBACKS)}, "
                             f"not {self.repair_fallback!r}")
        self.repair_fallback = GuardMode(self.repair_fallback) if self.repair_fallback else None

    @property
    def mode(self) -> GuardMode:
        """The guard's mode (off when none was recorded)."""
        return self.guard_mode or GuardMode.OFF

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))

    @classmethod
    def unknown(cls, **known) -> ChatSettings:
        """Settings nobody recorded (an imported transcript): every value None or empty, but those ``known``."""
        blank = {"bot": "", "preset": "", "guard_mode": None, "detector": "", "threshold": None, "num_candidates": None,
                 "penalty_lambda": None, "prefilter": None, "repair_fallback": None}
        return cls(**{**blank, **known})


@dataclass
class CandidateReport:
    """One candidate as the guard saw it: the generator's text and score, the detector's verdict on it (None when
    the guard is off) and what the policy did with it. The verdict is kept whole, minus its full pair list (the
    evidence pairs stay; the heatmap draws fresh verdicts), and read through the properties below."""

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

    @property
    def contradiction_score(self) -> float | None:
        return None if self.verdict is None else float(self.verdict.score)

    @property
    def deciding(self) -> tuple[float, float] | None:
        """The score of the check that decided the verdict and its threshold (``guard.policies.deciding_score``):
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
    # repair mode, when the generator's best contradicted and could not be repaired: why not (the fallback
    # policy, ``decided_by``, then chose the reply); "" otherwise
    repair_declined: str = ""
    decided_by: GuardMode | None = None
    # what the bot did not read of the conversation for this reply, in words for the user ("" when it read it all,
    # or cannot tell): a message longer than its prompt's budget is cut to its end (bots.base.PromptReading)
    prompt_note: str = ""

    @classmethod
    def from_json(cls, data: dict) -> BotTurnReport:
        """A report from its JSON form, as any version wrote it (``upgrade_report_json``)."""
        from conversation.jsonform import from_jsonable

        return from_jsonable(cls, upgrade_report_json(data))

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
        how = (f"which contradicts too (p={cand.deciding[0]:.2f})" if cand.contradicts
               else "which does not contradict")
        return f"at τ = {self.threshold:.2f} the guard would now send candidate #{cand.index + 1}, {how}"

    def _outcome(self) -> str:
        outcome = self._decision()
        if self.mode == GuardMode.REPAIR and self.repair_declined:
            return f"{outcome} (not repaired: {self.repair_declined})"
        return outcome

    def _decision(self) -> str:
        # repair mode without a repair: the fallback policy decided, and is worded as itself
        mode = self.decided_by if self.mode == GuardMode.REPAIR and self.decided_by else self.mode
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


#: the verdict fields a report's candidates carried themselves before they embedded the verdict (issue 24)
_COPIED_VERDICT_FIELDS = ("contradiction_score", "contradicts", "category", "evidence", "details")


def upgrade_report_json(data: dict) -> dict:
    """A report's JSON form in today's shape. Reports written before issue 24 copied the verdict into each
    candidate field by field (``contradiction_score``, ``contradicts``, ``category``, ``evidence``, ``details``);
    today a candidate embeds the verdict. Idempotent: today's shape passes through unchanged."""
    if not isinstance(data, dict):
        return data
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
class ChatTurn(Turn):
    """One turn of the chat (a ``guard.records.Turn``: the same record goes to the bots, the guard and the store).
    A bot turn carries the guard's report (None when it was not guarded, e.g. imported text) and the settings that
    produced it (None when not known: imported text, a user turn)."""

    report: BotTurnReport | None = None
    settings: ChatSettings | None = None


@dataclass
class Conversation:
    """A session's dialogue plus the guard's reports (the chat page keeps it in st.session_state)."""

    persona: list[str] = field(default_factory=list)
    turns: list[ChatTurn] = field(default_factory=list)
    record_id: str = field(default_factory=lambda: f"chat-{uuid.uuid4().hex[:12]}")

    def add(self, agent_id: str, text: str, report: BotTurnReport | None = None,
            settings: ChatSettings | None = None) -> ChatTurn:
        turn = ChatTurn(turn_id=len(self.turns), agent_id=agent_id, text=text, report=report, settings=settings)
        self.turns.append(turn)
        return turn

    @property
    def awaiting_reply(self) -> bool:
        """The last turn is the user's: a reply failed or is pending (the page offers a retry)."""
        return bool(self.turns) and self.turns[-1].agent_id == USER

    def history(self, before: int | None = None) -> list[ChatTurn]:
        """The turns (those before turn id ``before``, if given); each is a ``guard.records.Turn``."""
        return list(self.turns if before is None else self.turns[:before])

    def to_decode_record(self) -> dict:
        """The transcript in DECODE's shape (record_id, turns with turn_id/agent_id/text) with each bot turn's
        guard report; ``is_contradiction`` and ``aggregated_contradiction_indices`` speak of the last bot
        reply: the earlier turns it contradicts, or the reply itself when it clashes inside."""
        last_bot = next((t for t in reversed(self.turns) if t.agent_id == BOT and t.report), None)
        chosen = last_bot.report.chosen if last_bot else None
        contradiction = bool(last_bot and last_bot.report.reply_flagged)
        indices = sorted({e.turn_id for e in chosen.evidence if e.source in (PremiseSource.HISTORY,
                                                                              PremiseSource.INTRA)}) \
            if contradiction else []
        return decode_record(self.record_id, self.history(), label=contradiction, indices=indices,
                             persona=list(self.persona),
                             turn_fields={t.turn_id: {"guard": jsonable(t.report)} for t in self.turns if t.report})
