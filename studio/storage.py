"""Goading sessions in a real database: SQLite by default, PostgreSQL when given a URL.

What is kept: sessions (bot, decoding preset, guard mode, detector, persona, player), every turn,
every candidate of every bot turn with its guard verdict, the suggestions offered after each bot
turn and which one was used, and people's annotations (contradiction yes/no, the turns
contradicted, the CDConv category, whether the guard was right).

* The URL comes from the caller, else ``GUARD_STUDIO_DB``, else a SQLite file
  ``<embedded.cache_dir()>/studio.db`` (nothing to set up). SQLite runs in WAL mode with a busy
  timeout and takes its write lock at the start of each transaction (``BEGIN IMMEDIATE``), so
  several Streamlit sessions and command-line runs can write at once without "database is locked".
* The schema is versioned: a ``schema_version`` table and ``MIGRATIONS``, applied in order when a
  store opens, so an upgrade keeps old sessions. A database written by a newer version is refused.
* Every database failure becomes one ``StoreError`` line (password hidden); nothing is deleted or
  recreated on error, so a broken URL or an unreadable file loses nothing already stored.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
    create_engine,
    event,
    func,
    inspect,
    select,
    text,
)
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import ArgumentError, IntegrityError, SQLAlchemyError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, sessionmaker

from conversation.jsonform import from_jsonable, jsonable
from conversation.records import BOT, BotTurnReport, ChatTurn, Conversation
from guard.vocabulary import CATEGORIES, Category, GuardMode

ENV_URL = "GUARD_STUDIO_DB"
#: Where a session came from: the chat page, self-play (studio.redteam) or an imported transcript.
SOURCES = ("chat", "redteam", "import")


class StoreError(RuntimeError):
    """The database could not be opened, read or written; the message is one line saying which and why."""


def _now() -> datetime:
    return datetime.now(UTC)


# ---------------------------------------------------------------------------- tables
class Base(DeclarativeBase):
    type_annotation_map = {dict: JSON, list: JSON}


class SchemaVersionRow(Base):
    __tablename__ = "schema_version"

    version: Mapped[int] = mapped_column(Integer, primary_key=True)
    applied_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)


class SessionRow(Base):
    __tablename__ = "sessions"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)
    source: Mapped[str] = mapped_column(String(16), default="chat")
    bot: Mapped[str] = mapped_column(String(200), default="")
    preset: Mapped[str] = mapped_column(String(64), default="")
    guard_mode: Mapped[str] = mapped_column(String(16), default="")
    detector: Mapped[str] = mapped_column(String(500), default="")
    threshold: Mapped[float | None] = mapped_column(Float, nullable=True)
    num_candidates: Mapped[int | None] = mapped_column(Integer, nullable=True)
    persona: Mapped[list] = mapped_column(JSON, default=list)
    meta: Mapped[dict] = mapped_column(JSON, default=dict)
    player: Mapped[str | None] = mapped_column(String(200), nullable=True)  # schema 2


class TurnRow(Base):
    __tablename__ = "turns"
    __table_args__ = (UniqueConstraint("session_id", "turn_index", name="uq_turns_session_turn"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    session_id: Mapped[str] = mapped_column(ForeignKey("sessions.id", ondelete="CASCADE"), index=True)
    turn_index: Mapped[int] = mapped_column(Integer)
    speaker: Mapped[str] = mapped_column(String(8))
    text: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)
    method: Mapped[str | None] = mapped_column(String(32), nullable=True)  # user turns: how it was written
    suggestion_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    guard: Mapped[dict | None] = mapped_column(JSON, nullable=True)  # bot turns: the whole guard report
    flagged: Mapped[bool] = mapped_column(Boolean, default=False)  # some candidate contradicted
    reply_flagged: Mapped[bool] = mapped_column(Boolean, default=False)  # the sent reply contradicts


class CandidateRow(Base):
    __tablename__ = "candidates"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    turn_id: Mapped[int] = mapped_column(ForeignKey("turns.id", ondelete="CASCADE"), index=True)
    position: Mapped[int] = mapped_column(Integer)
    text: Mapped[str] = mapped_column(Text)
    generator_score: Mapped[float] = mapped_column(Float)
    contradiction_score: Mapped[float | None] = mapped_column(Float, nullable=True)
    contradicts: Mapped[bool] = mapped_column(Boolean, default=False)
    category: Mapped[str] = mapped_column(String(16), default="none")
    chosen: Mapped[bool] = mapped_column(Boolean, default=False)
    reason: Mapped[str] = mapped_column(Text, default="")
    verdict: Mapped[dict] = mapped_column(JSON, default=dict)  # evidence pairs and detector details


class SuggestionRow(Base):
    __tablename__ = "suggestions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    session_id: Mapped[str] = mapped_column(ForeignKey("sessions.id", ondelete="CASCADE"), index=True)
    after_turn_index: Mapped[int] = mapped_column(Integer)
    position: Mapped[int] = mapped_column(Integer)
    method: Mapped[str] = mapped_column(String(32))
    text: Mapped[str] = mapped_column(Text)
    source_turn_index: Mapped[int | None] = mapped_column(Integer, nullable=True)
    score: Mapped[float | None] = mapped_column(Float, nullable=True)
    note: Mapped[str] = mapped_column(Text, default="")
    ranking: Mapped[str] = mapped_column(String(200), default="")
    used: Mapped[bool] = mapped_column(Boolean, default=False)
    edited: Mapped[bool] = mapped_column(Boolean, default=False)
    used_turn_index: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)


class AnnotationRow(Base):
    __tablename__ = "annotations"
    __table_args__ = (UniqueConstraint("session_id", "turn_index", "annotator", name="uq_annotation"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    session_id: Mapped[str] = mapped_column(ForeignKey("sessions.id", ondelete="CASCADE"), index=True)
    turn_index: Mapped[int] = mapped_column(Integer)
    annotator: Mapped[str] = mapped_column(String(200))
    contradiction: Mapped[bool] = mapped_column(Boolean)
    contradicted_turns: Mapped[list] = mapped_column(JSON, default=list)
    category: Mapped[str] = mapped_column(String(16), default="none")
    guard_right: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    note: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)


# ---------------------------------------------------------------------------- migrations
def _add_column_if_missing(conn: Connection, table: str, column: str, ddl_type: str) -> None:
    if column not in {c["name"] for c in inspect(conn).get_columns(table)}:
        conn.execute(text(f"ALTER TABLE {table} ADD COLUMN {column} {ddl_type}"))


def _schema_1(conn: Connection) -> None:
    """Sessions, turns and candidates with their guard verdicts."""
    Base.metadata.create_all(conn, tables=[SchemaVersionRow.__table__, SessionRow.__table__, TurnRow.__table__,
                                           CandidateRow.__table__])


def _schema_2(conn: Connection) -> None:
    """Suggestions offered and used, annotations, and the player's name on each session."""
    _add_column_if_missing(conn, "sessions", "player", "VARCHAR(200)")
    Base.metadata.create_all(conn, tables=[SuggestionRow.__table__, AnnotationRow.__table__])


#: version -> step that brings a database from version - 1 to it. Append only; never edit a released step.
MIGRATIONS: dict[int, Callable[[Connection], None]] = {1: _schema_1, 2: _schema_2}
SCHEMA_VERSION = max(MIGRATIONS)
#: PostgreSQL advisory lock held while migrating, so browsers opening the store at once do not race.
MIGRATION_LOCK_KEY = 0x5757D10


def _current_version(conn: Connection) -> int:
    tables = set(inspect(conn).get_table_names())
    if "schema_version" not in tables:
        if tables & {"sessions", "turns"}:
            raise StoreError("the database has studio-like tables but no schema_version table; "
                             "refusing to touch it (point GUARD_STUDIO_DB at another database)")
        return 0
    return int(conn.execute(select(func.max(SchemaVersionRow.version))).scalar() or 0)


def migrate(engine: Engine, target: int = SCHEMA_VERSION) -> int:
    """Bring the schema up to ``target``, one recorded step at a time; returns the version reached."""
    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":  # one migrator at a time (SQLite: BEGIN IMMEDIATE does it)
            conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK_KEY})
        version = _current_version(conn)
        if version > SCHEMA_VERSION:
            raise StoreError(f"the database has schema version {version}, newer than this program's "
                             f"{SCHEMA_VERSION}; upgrade the program (nothing was changed)")
        for step in range(version + 1, target + 1):
            MIGRATIONS[step](conn)
            try:
                with conn.begin_nested():
                    conn.execute(SchemaVersionRow.__table__.insert().values(version=step, applied_at=_now()))
            except IntegrityError:
                pass  # another process recorded the same step at the same moment
        return max(version, target)


# ---------------------------------------------------------------------------- records the callers see
@dataclass
class SessionInfo:
    """A session's settings (what the scoreboard groups by). ``guard_mode`` is None when not known (an
    imported transcript)."""

    id: str
    bot: str = ""
    preset: str = ""
    guard_mode: GuardMode | None = None
    detector: str = ""
    threshold: float | None = None
    num_candidates: int | None = None
    persona: list[str] = field(default_factory=list)
    player: str | None = None
    source: str = "chat"
    meta: dict = field(default_factory=dict)
    created_at: datetime | None = None
    updated_at: datetime | None = None

    def __post_init__(self) -> None:
        self.guard_mode = GuardMode(self.guard_mode) if self.guard_mode else None


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

    def __post_init__(self) -> None:
        if not self.annotator or not self.annotator.strip():
            raise ValueError("an annotation needs the annotator's name")
        if self.category not in CATEGORIES:
            raise ValueError(f"category must be one of {', '.join(CATEGORIES)}, not {self.category!r}")
        self.category = Category(self.category)
        if not self.contradiction:
            self.category, self.contradicted_turns = Category.NONE, []
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
    """A turn as stored: the chat turn plus how a user turn was written."""

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


# ---------------------------------------------------------------------------- the store
def default_url() -> str:
    """``GUARD_STUDIO_DB`` if set, else a SQLite file in the app's cache folder."""
    from_env = os.environ.get(ENV_URL, "").strip()
    if from_env:
        return from_env
    from embedded import cache_dir

    return f"sqlite:///{cache_dir() / 'studio.db'}"


def safe_url(url: str) -> str:
    """The URL with its password hidden, for messages."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except (ArgumentError, ValueError):
        return url.split("@")[-1] if "@" in url else url


def _first_line(exc: BaseException) -> str:
    inner = getattr(exc, "orig", None) or exc
    lines = [line for line in str(inner).strip().splitlines() if line.strip()]
    return lines[0].strip() if lines else type(inner).__name__


def _sqlite_setup(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record) -> None:
        dbapi_connection.isolation_level = None  # SQLAlchemy's "begin" event below opens transactions
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute("PRAGMA busy_timeout = 30000")
            cursor.execute("PRAGMA journal_mode = WAL")
            cursor.execute("PRAGMA foreign_keys = ON")
            cursor.execute("PRAGMA synchronous = NORMAL")
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE")  # take the write lock now: no upgrade deadlocks later


class Store:
    """One database. Methods open a short transaction each; safe to share between threads."""

    def __init__(self, url: str | None = None) -> None:
        self.url = url or default_url()
        self.display_url = safe_url(self.url)
        try:
            parsed = make_url(self.url)
        except (ArgumentError, ValueError) as exc:
            raise StoreError(f"not a database URL: {self.display_url!r} (expected e.g. sqlite:///path/studio.db "
                             f"or postgresql+psycopg://user:password@host/db): {_first_line(exc)}") from None
        try:
            if parsed.get_backend_name() == "sqlite":
                database = parsed.database or ""
                if database and database != ":memory:" and not database.startswith("file:"):
                    if os.path.isdir(database):
                        raise StoreError(f"cannot open the studio database {self.display_url}: it is a folder")
                self.engine = create_engine(self.url, connect_args={"timeout": 30, "check_same_thread": False})
                _sqlite_setup(self.engine)
            else:
                if parsed.get_backend_name() == "postgresql" and parsed.drivername == "postgresql":
                    parsed = parsed.set(drivername="postgresql+psycopg")  # psycopg 3 is the driver shipped
                self.engine = create_engine(parsed, pool_pre_ping=True, connect_args=self._connect_args(parsed))
            self.schema_version = migrate(self.engine)
        except StoreError:
            raise
        except (SQLAlchemyError, OSError, ImportError, ValueError) as exc:
            raise StoreError(f"cannot open the studio database {self.display_url}: {_first_line(exc)}") from None
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)

    @staticmethod
    def _connect_args(url) -> dict:
        return {"connect_timeout": 10} if url.get_backend_name() == "postgresql" else {}

    @contextmanager
    def _session(self, action: str) -> Iterator[Session]:
        try:
            with self._sessions.begin() as session:
                yield session
        except StoreError:
            raise
        except SQLAlchemyError as exc:
            raise StoreError(f"{action} failed on {self.display_url}: {_first_line(exc)}") from None

    def dispose(self) -> None:
        self.engine.dispose()

    # ------------------------------------------------------------------ sessions
    def save_session(self, info: SessionInfo) -> None:
        """Create the session or update its settings (persona, mode...); turns are untouched."""
        if info.source not in SOURCES:
            raise ValueError(f"source must be one of {SOURCES}")
        values = {f.name: getattr(info, f.name) for f in fields(SessionInfo)
                  if f.name not in ("id", "created_at", "updated_at")}
        values["guard_mode"] = str(info.guard_mode or "")  # the column's "" = not known
        values["persona"] = list(values["persona"])
        values["meta"] = jsonable(values["meta"])
        with self._session("saving the session") as session:
            row = session.get(SessionRow, info.id)
            if row is None:
                session.add(SessionRow(id=info.id, created_at=_now(), updated_at=_now(), **values))
            else:
                for key, value in values.items():
                    setattr(row, key, value)
                row.updated_at = _now()

    def session_info(self, session_id: str) -> SessionInfo | None:
        with self._session("reading the session") as session:
            row = session.get(SessionRow, session_id)
            return None if row is None else self._info(row)

    @staticmethod
    def _info(row: SessionRow) -> SessionInfo:
        return SessionInfo(id=row.id, bot=row.bot, preset=row.preset, guard_mode=row.guard_mode,
                           detector=row.detector, threshold=row.threshold, num_candidates=row.num_candidates,
                           persona=list(row.persona or []), player=row.player, source=row.source,
                           meta=dict(row.meta or {}), created_at=row.created_at, updated_at=row.updated_at)

    def list_sessions(self, source: str | None = None) -> list[SessionInfo]:
        with self._session("listing sessions") as session:
            query = select(SessionRow).order_by(SessionRow.created_at)
            if source:
                query = query.where(SessionRow.source == source)
            return [self._info(row) for row in session.scalars(query)]

    # ------------------------------------------------------------------ turns
    def save_turns(self, session_id: str, turns: Sequence, methods: Mapping[int, str] | None = None,
                   suggestion_ids: Mapping[int, int] | None = None) -> int:
        """Store the turns not stored yet (by turn index); returns how many were added.

        Idempotent, so the page can call it after every rerun and a turn whose write failed is
        written by the next call. ``turns`` are ChatTurns; ``methods`` maps a user turn
        index to how it was written (a goading method or "typed").
        """
        methods, suggestion_ids = dict(methods or {}), dict(suggestion_ids or {})
        with self._session("saving turns") as session:
            if session.get(SessionRow, session_id) is None:
                raise StoreError(f"saving turns failed: no session {session_id!r} in {self.display_url}")
            stored = set(session.scalars(select(TurnRow.turn_index).where(TurnRow.session_id == session_id)))
            added = 0
            for turn in turns:
                if turn.turn_id in stored:
                    continue
                report = turn.report
                row = TurnRow(session_id=session_id, turn_index=turn.turn_id, speaker=turn.speaker, text=turn.text,
                              created_at=_now(), method=methods.get(turn.turn_id),
                              suggestion_id=suggestion_ids.get(turn.turn_id),
                              guard=None if report is None else jsonable(report),
                              flagged=bool(report is not None and report.any_contradiction),
                              reply_flagged=bool(report is not None and report.chosen is not None
                                                 and report.chosen.contradicts))
                session.add(row)
                session.flush()
                if report is not None:
                    self._add_candidates(session, row.id, report)
                added += 1
            parent = session.get(SessionRow, session_id)
            if added and parent is not None:
                parent.updated_at = _now()
            return added

    def replace_reports(self, session_id: str, turns: Sequence) -> int:
        """Store new guard reports for bot turns already stored (the chat page's re-judge); returns how many."""
        by_index = {t.turn_id: t.report for t in turns if t.report is not None}
        with self._session("saving re-judged turns") as session:
            rows = session.scalars(select(TurnRow).where(TurnRow.session_id == session_id,
                                                         TurnRow.turn_index.in_(list(by_index))))
            replaced = 0
            for row in rows:
                report = by_index[row.turn_index]
                row.guard = jsonable(report)
                row.flagged = bool(report.any_contradiction)
                row.reply_flagged = bool(report.chosen is not None and report.chosen.contradicts)
                for old in session.scalars(select(CandidateRow).where(CandidateRow.turn_id == row.id)):
                    session.delete(old)
                self._add_candidates(session, row.id, report)
                replaced += 1
            return replaced

    @staticmethod
    def _add_candidates(session: Session, turn_row_id: int, report) -> None:
        for cand in report.candidates:
            session.add(CandidateRow(
                turn_id=turn_row_id, position=cand.index, text=cand.text,
                generator_score=float(cand.generator_score),
                contradiction_score=None if cand.contradiction_score is None else float(cand.contradiction_score),
                contradicts=bool(cand.contradicts), category=str(cand.category), chosen=bool(cand.chosen),
                reason=str(cand.reason),
                verdict=jsonable({"evidence": cand.evidence, "details": cand.details,
                                   "adjusted_score": cand.adjusted_score})))

    def load_session(self, session_id: str) -> StoredSession | None:
        """The session with its turns (bot turns with their guard reports), or None if unknown."""
        with self._session("reading the session") as session:
            row = session.get(SessionRow, session_id)
            if row is None:
                return None
            turns = []
            for t in session.scalars(select(TurnRow).where(TurnRow.session_id == session_id)
                                     .order_by(TurnRow.turn_index)):
                report = from_jsonable(BotTurnReport, t.guard) if t.guard else None
                turns.append(StoredTurn(ChatTurn(t.turn_index, t.speaker, t.text, report), t.method, t.suggestion_id))
            return StoredSession(self._info(row), turns)

    # ------------------------------------------------------------------ suggestions
    def save_suggestions(self, session_id: str, after_turn_index: int, suggestions: Sequence,
                         ranking: str = "", positions: Sequence[int] | None = None) -> list[int]:
        """Record what the assistant offered after a bot turn; returns the row ids (in order).

        ``positions``: where each suggestion sits in the panel (default 0, 1, 2...).
        """
        positions = list(positions) if positions is not None else list(range(len(suggestions)))
        with self._session("saving suggestions") as session:
            rows = [SuggestionRow(session_id=session_id, after_turn_index=after_turn_index, position=positions[i],
                                  method=s.method, text=s.text, source_turn_index=s.source_turn_id,
                                  score=s.score, note=s.note, ranking=ranking, created_at=_now())
                    for i, s in enumerate(suggestions)]
            session.add_all(rows)
            session.flush()
            return [row.id for row in rows]

    def mark_suggestion_used(self, suggestion_id: int, used_turn_index: int, edited: bool = False) -> None:
        with self._session("saving which suggestion was used") as session:
            row = session.get(SuggestionRow, suggestion_id)
            if row is not None:
                row.used, row.edited, row.used_turn_index = True, bool(edited), used_turn_index

    def suggestions(self, session_id: str | None = None) -> list[dict]:
        with self._session("reading suggestions") as session:
            query = select(SuggestionRow).order_by(SuggestionRow.session_id, SuggestionRow.after_turn_index,
                                                   SuggestionRow.position)
            if session_id:
                query = query.where(SuggestionRow.session_id == session_id)
            return [{c.key: getattr(r, c.key) for c in inspect(SuggestionRow).mapper.column_attrs}
                    for r in session.scalars(query)]

    # ------------------------------------------------------------------ annotations
    def annotate(self, annotation: Annotation) -> None:
        """Add or replace this annotator's judgement of this bot turn."""
        with self._session("saving the annotation") as session:
            turn = session.scalar(select(TurnRow).where(TurnRow.session_id == annotation.session_id,
                                                        TurnRow.turn_index == annotation.turn_index))
            if turn is None or turn.speaker != BOT:
                raise ValueError(f"turn {annotation.turn_index} of session {annotation.session_id} is not a stored "
                                 "bot turn")
            earlier = [i for i in annotation.contradicted_turns if not 0 <= int(i) < annotation.turn_index]
            if earlier:
                raise ValueError(f"contradicted turns must be earlier turns, not {earlier}")
            row = session.scalar(select(AnnotationRow).where(
                AnnotationRow.session_id == annotation.session_id, AnnotationRow.turn_index == annotation.turn_index,
                AnnotationRow.annotator == annotation.annotator.strip()))
            values = {"contradiction": bool(annotation.contradiction),
                      "contradicted_turns": sorted({int(i) for i in annotation.contradicted_turns}),
                      "category": annotation.category, "guard_right": annotation.guard_right,
                      "note": annotation.note, "updated_at": _now()}
            if row is None:
                session.add(AnnotationRow(session_id=annotation.session_id, turn_index=annotation.turn_index,
                                          annotator=annotation.annotator.strip(), created_at=_now(), **values))
            else:
                for key, value in values.items():
                    setattr(row, key, value)

    def annotations(self, session_id: str | None = None) -> list[Annotation]:
        with self._session("reading annotations") as session:
            query = select(AnnotationRow).order_by(AnnotationRow.session_id, AnnotationRow.turn_index,
                                                   AnnotationRow.annotator)
            if session_id:
                query = query.where(AnnotationRow.session_id == session_id)
            return [Annotation(r.session_id, r.turn_index, r.annotator, r.contradiction,
                               list(r.contradicted_turns or []), r.category, r.guard_right, r.note)
                    for r in session.scalars(query)]

    # ------------------------------------------------------------------ bookkeeping
    def counts(self) -> dict[str, int]:
        """Rows per table (tests and the concurrency benchmark count what was written)."""
        tables = {"sessions": SessionRow, "turns": TurnRow, "candidates": CandidateRow,
                  "suggestions": SuggestionRow, "annotations": AnnotationRow}
        with self._session("counting rows") as session:
            return {name: int(session.scalar(select(func.count()).select_from(model)) or 0)
                    for name, model in tables.items()}


_stores: dict[str, Store] = {}
_stores_lock = threading.Lock()


def open_store(url: str | None = None) -> Store:
    """The Store for ``url`` (default ``default_url()``), created once per process and URL.

    A failed open is not cached: fixing the URL (or the file) and calling again works.
    """
    url = (url or "").strip() or default_url()
    with _stores_lock:
        store = _stores.get(url)
        if store is None:
            store = _stores[url] = Store(url)
        return store


def forget_store(url: str) -> None:
    """Drop a cached Store (tests that delete their database file)."""
    with _stores_lock:
        store = _stores.pop(url, None)
    if store is not None:
        store.dispose()


def iter_session_ids(store: Store, sources: Iterable[str] | None = None) -> list[str]:
    wanted = set(sources or SOURCES)
    return [s.id for s in store.list_sessions() if s.source in wanted]
