"""What the studio's callers write and read: a session's settings, its stored turns, people's annotations and
the self-play judges' verdicts. Plain dataclasses; ``studio.storage.store`` maps them to the tables."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from conversation.records import ChatSettings, ChatTurn, Conversation
from guard.judge.jsonform import from_jsonable
from guard.vocabulary import CATEGORIES, Category

#: Where a session came from: the chat page, self-play (studio.redteam) or an imported transcript.
SOURCES = ("chat", "redteam", "import")


@dataclass
class SessionInfo:
    """A stored session: its chat settings (the one record the chat page and self-play use; the scoreboard
    groups by them), who played it, where it came from, free metadata and the browser it belongs to. An imported
    transcript's settings are ``ChatSettings.unknown()``.

    ``owner`` is a key derived from the browser's own token (``ui.ownership``), not the token: the database holds
    nothing a reader could present as a browser. It is written when the session is created and never changed; None
    (sessions from before schema 7, self-play and imports from the command line) belongs to no browser."""

    id: str
    settings: ChatSettings = field(default_factory=ChatSettings.unknown)
    player: str | None = None
    source: str = "chat"
    meta: dict = field(default_factory=dict)
    created_at: datetime | None = None
    updated_at: datetime | None = None
    owner: str | None = None

    @property
    def persona(self) -> list[str]:
        return self.settings.persona


@dataclass(frozen=True)
class Viewer:
    """Who is looking at the studio's sessions: a browser (its ``owner`` key) sees the sessions it made; the teacher
    sees every session, those of no browser included. Session ids travel in exports and transcript downloads, so
    knowing an id grants nothing: what a viewer may open is decided here."""

    owner: str | None = None
    teacher: bool = False

    def sees(self, info: SessionInfo) -> bool:
        return self.teacher or (self.owner is not None and info.owner == self.owner)


@dataclass
class Annotation:
    """One person's judgement of one bot turn."""

    session_id: str
    turn_index: int
    annotator: str
    contradiction: bool
    contradicted_turns: list[int] = field(default_factory=list)
    category: Category = Category.NONE
    guard_right: bool | None = None
    note: str = ""
    contradicted_persona: list[int] = field(default_factory=list)  # 0-based persona lines it contradicts

    def __post_init__(self) -> None:
        if not self.annotator or not self.annotator.strip():
            raise ValueError("an annotation needs the annotator's name")
        if self.category not in CATEGORIES:
            raise ValueError(f"category must be one of {', '.join(CATEGORIES)}, not {self.category!r}")
        self.category = Category(self.category)
        if not self.contradiction:
            self.category, self.contradicted_turns, self.contradicted_persona = Category.NONE, [], []
        elif self.category == Category.NONE:
            raise ValueError("a contradiction needs its CDConv category (intra, role or history)")


@dataclass
class TurnJudgement:
    """What self-play's two judges said about one sent reply (studio.redteam), and what provoked it."""

    session_id: str
    turn_index: int
    method: str  # the trigger method of the user message before the reply
    guard_flag: bool  # the guard flagged some candidate at generation time (not in mode off)
    guard_judge: bool  # the guard's detector flags the sent reply
    guard_judge_score: float
    judge: bool  # the second judge flags the sent reply
    judge_score: float


@dataclass
class StoredTurn:
    """A turn as stored: the chat turn (a bot turn with the settings that produced it) plus how a user turn
    was written."""

    turn: ChatTurn
    method: str | None = None
    suggestion_id: int | None = None


@dataclass
class StoredSession:
    info: SessionInfo
    turns: list[StoredTurn]

    def conversation(self) -> Conversation:
        """The session as the chat page's Conversation (its record_id is the session id)."""
        return Conversation(persona=list(self.info.persona), turns=[t.turn for t in self.turns],
                            record_id=self.info.id)

    @property
    def methods(self) -> dict[int, str]:
        return {t.turn.turn_id: t.method for t in self.turns if t.method}

    def reply_settings(self, turn_index: int) -> ChatSettings:
        """The bot and settings that produced bot turn ``turn_index``; the session's where the turn kept none."""
        from dataclasses import replace

        turn = next((t.turn for t in self.turns if t.turn.turn_id == turn_index), None)
        if turn is not None and turn.settings is not None:
            return turn.settings
        return replace(self.info.settings, from_session=True)

    def judgement(self, turn_index: int) -> TurnJudgement | None:
        """Self-play's judgement of the bot turn ``turn_index``, or None (not a self-play turn).

        Kept in the session's ``meta["judgements"]`` by turn index. Sessions stored before the whole
        judgement was kept hold only the judges' verdicts; the rest is read from the session itself (the
        method of the user turn before, and whether the stored report flags a candidate), as it was made.
        """
        stored = (self.info.meta.get("judgements") or {}).get(str(turn_index))
        if not stored:
            return None
        turn = next((t.turn for t in self.turns if t.turn.turn_id == turn_index), None)
        known = {"session_id": self.info.id, "turn_index": turn_index,
                 "method": self.methods.get(turn_index - 1, ""),
                 "guard_flag": bool(turn is not None and turn.report is not None and turn.report.any_contradiction)}
        return from_jsonable(TurnJudgement, {**known, **stored})
