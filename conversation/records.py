"""The guarded conversation as records: turns, the guard's report on each bot turn, the settings it ran with.

One bot turn: the bot proposes N candidates, the detector scores every candidate against the bot's earlier
turns (and persona) in one batched pass, a policy picks the reply (``conversation.guarding``). What the guard
saw and decided (candidates, scores, reasons, evidence, the detector's details) is kept here in plain
dataclasses, so the chat page can draw the transcript again, the studio can store it and a download can
carry it as a DECODE-shaped record.
"""

from __future__ import annotations

import uuid
from dataclasses import asdict, dataclass, field, fields

from bots.base import DEFAULT_PRESET, PRESETS, DecodingConfig
from guard.eval.datasets import decode_record
from guard.judge.policies import REPAIR_FALLBACKS
from guard.judge.report import BotTurnReport
from guard.language.fact_sheet import FactSheet
from guard.records import Turn
from guard.vocabulary import GUARD_MODES, GuardMode, PremiseSource

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
    preset: str = DEFAULT_PRESET
    # bots.base.DecodingConfig's fields (given as a DecodingConfig or its dict); {}: the preset's
    decoding: dict = field(default_factory=dict)
    guard_mode: GuardMode | None = GuardMode.RERANK
    detector: str = "embedded"
    threshold: float | None = None  # None: the detector's calibrated τ
    num_candidates: int | None = 4
    penalty_lambda: float | None = 1.0
    prefilter: bool | None = True
    persona: list[str] = field(default_factory=list)
    fallback: str | None = None  # None: guard.judge.policies' default safe reply
    from_session: bool = False
    # repair mode: the policy that decides when the generator's best cannot be repaired (one of
    # guard.judge.policies.REPAIR_FALLBACKS); None: not recorded (re-rank)
    repair_fallback: GuardMode | None = GuardMode.RERANK
    # when the policy finds nothing consistent that answers, ask the bot again reminded of the fact it contradicted
    # (guard.judge.reminders); None: not recorded (no reminder then)
    remind: bool | None = True
    # the scripted bot's script: the name of one of the server's scripts (the app's GUARD_APP_SCRIPTS, chosen by a
    # link's ?script=); None: the server's own (GUARD_APP_SCRIPT, else the built-in demo). Other bots ignore it
    script: str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.decoding, DecodingConfig):  # kept as plain values: the record is stored as JSON
            self.decoding = asdict(self.decoding)
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

    @property
    def decoding_config(self) -> DecodingConfig:
        """The decoding the settings ask for: their own recorded values, else their preset's."""
        if self.decoding:
            return DecodingConfig(**self.decoding)
        return PRESETS.get(self.preset, PRESETS[DEFAULT_PRESET])

    @property
    def played_persona(self) -> tuple[list[str], bool]:
        """The persona the bot plays with these settings, and whether it is the bot's own default: the persona lines
        given, else the bot's own (``bots.registry.default_persona``: the embedded bot plays "My name is Sam. ..."
        when given none), so a page shows it and the guard checks against it rather than nothing."""
        if self.persona:
            return list(self.persona), False
        from bots.registry import default_persona

        own = list(default_persona(self.bot))
        return own, bool(own)

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))

    @classmethod
    def unknown(cls, **known) -> ChatSettings:
        """Settings nobody recorded (an imported transcript): every value None or empty, but those ``known``."""
        blank = {"bot": "", "preset": "", "guard_mode": None, "detector": "", "threshold": None, "num_candidates": None,
                 "penalty_lambda": None, "prefilter": None, "repair_fallback": None, "remind": None}
        return cls(**{**blank, **known})


@dataclass(frozen=True)
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

    def append(self, turn: ChatTurn) -> ChatTurn:
        """Add a turn made elsewhere (``conversation.guarding.guarded_reply``'s bot turn), numbered as the next."""
        if turn.turn_id != len(self.turns):
            raise ValueError(f"turn {turn.turn_id} does not follow this conversation's {len(self.turns)} turns")
        self.turns.append(turn)
        return turn

    @property
    def awaiting_reply(self) -> bool:
        """The last turn is the user's: a reply failed or is pending (the page offers a retry)."""
        return bool(self.turns) and self.turns[-1].agent_id == USER

    def fact_sheet(self) -> FactSheet | None:
        """What the bot has said about itself, as the guard read it: the last judged bot turn's sheet
        (``BotTurnReport.sheet``: the persona it was judged with and every reply sent up to it); before any reply,
        the persona's facts; None when the last bot turn's guard read no facts (the guard off, or its fact check off)."""
        for turn in reversed(self.turns):
            if turn.agent_id == BOT and turn.report is not None:
                return turn.report.sheet
        from guard.language.fact_sheet import sheet_of

        return sheet_of((), self.persona, BOT)

    def history(self, before: int | None = None) -> list[ChatTurn]:
        """The turns (those before turn id ``before``, if given); each is a ``guard.records.Turn``."""
        return list(self.turns if before is None else self.turns[:before])

    def to_decode_record(self, masked: bool = False) -> dict:
        """The transcript in DECODE's shape (record_id, turns with turn_id/agent_id/text) with each bot turn's
        guard report; ``is_contradiction`` and ``aggregated_contradiction_indices`` speak of the last bot
        reply: the earlier turns it contradicts, or the reply itself when it clashes inside. ``masked``: as a student
        is given it, the classroom filter's withheld candidates masked (``conversation.classroom.for_students``)."""
        from conversation.classroom import for_students

        def guard_json(report: BotTurnReport) -> dict:
            return for_students(report.to_json()) if masked else report.to_json()

        last_bot = next((t for t in reversed(self.turns) if t.agent_id == BOT and t.report), None)
        chosen = last_bot.report.chosen if last_bot else None
        contradiction = bool(last_bot and last_bot.report.reply_flagged)
        indices = sorted({e.turn_id for e in chosen.evidence if e.source in (PremiseSource.HISTORY,
                                                                              PremiseSource.INTRA)}) \
            if contradiction else []
        return decode_record(self.record_id, self.history(), label=contradiction, indices=indices,
                             persona=list(self.persona),
                             turn_fields={t.turn_id: {"guard": guard_json(t.report)} for t in self.turns if t.report})
