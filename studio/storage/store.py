"""``Store``: one studio database, opened (and migrated) once per process and URL; every method one short
transaction. What it reads and writes are the records of ``studio.storage.records``; guard reports and
session metadata go through the conversation's one JSON form (``conversation.jsonform``)."""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager

from sqlalchemy import create_engine, event, false, func, inspect, select
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from conversation.records import BOT, ChatSettings, ChatTurn
from embedded.once import LoadedOnce
from guard.judge.jsonform import from_jsonable, jsonable
from guard.judge.report import BotTurnReport
from studio.storage.errors import StoreError
from studio.storage.migrations import migrate
from studio.storage.records import SOURCES, Annotation, SessionInfo, StoredSession, StoredTurn, Viewer
from studio.storage.tables import TABLES, AnnotationRow, CandidateRow, SessionRow, SuggestionRow, TurnRow, now

ENV_URL = "GUARD_STUDIO_DB"


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


#: a database's backend as a page names it
KINDS = {"sqlite": "SQLite", "postgresql": "PostgreSQL"}


def database_kind(url: str) -> str:
    """"SQLite" or "PostgreSQL" (another backend by its name, "unreadable" for no URL at all): what the app says of
    where the sessions are kept, never the address."""
    try:
        backend = make_url(url).get_backend_name()
    except (ArgumentError, ValueError):
        return "unreadable"
    return KINDS.get(backend, backend)


def without_address(text: str, url: str) -> str:
    """``text`` (an error about the database at ``url``) with the database's address in every form it takes (the
    URL with or without its password, the file path or database name, the host, the password) replaced by "the
    server's <kind> database": what a page may show."""
    named = f"the server's {database_kind(url)} database"
    parts = [url, safe_url(url)]
    try:
        parsed = make_url(url)
        parts += [parsed.render_as_string(hide_password=False), str(parsed.database or ""), str(parsed.host or ""),
                  str(parsed.password or "")]
    except (ArgumentError, ValueError):
        pass
    for part in sorted({p for p in parts if len(p) >= 4}, key=len, reverse=True):  # the longest form first
        text = text.replace(part, named)
    return text


def _first_line(exc: BaseException) -> str:
    inner = getattr(exc, "orig", None) or exc
    lines = [line for line in str(inner).strip().splitlines() if line.strip()]
    return lines[0].strip() if lines else type(inner).__name__


def _enable_wal(cursor, tries: int = 100) -> None:
    """Switch a database to WAL (persistent once set). The switch needs the database to itself and SQLite answers
    "database is locked" at once, without its busy timeout, while another connection opens it: five sessions
    opening a new database together hit that, so it is retried for up to ~10 s."""
    for attempt in range(tries):
        try:
            if str(cursor.execute("PRAGMA journal_mode").fetchone()[0]).lower() == "wal":
                return
            cursor.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or attempt == tries - 1:
                raise
            time.sleep(0.1)


def _sqlite_setup(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record) -> None:
        dbapi_connection.isolation_level = None  # SQLAlchemy's "begin" event below opens transactions
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute("PRAGMA busy_timeout = 30000")
            _enable_wal(cursor)
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
        """Create the session or update its settings (persona, mode...); turns are untouched. Its ``owner`` is written
        when it is created and never changed: a later save (a teacher continuing a student's chat, an import into an
        existing id) cannot take a session from the browser it belongs to."""
        if info.source not in SOURCES:
            raise ValueError(f"source must be one of {SOURCES}")
        values = {"settings": jsonable(info.settings), "player": info.player, "source": info.source,
                  "meta": jsonable(info.meta)}
        with self._session("saving the session") as session:
            row = session.get(SessionRow, info.id)
            if row is None:
                session.add(SessionRow(id=info.id, created_at=now(), updated_at=now(), owner=info.owner, **values))
            else:
                for key, value in values.items():
                    setattr(row, key, value)
                row.updated_at = now()

    def session_info(self, session_id: str) -> SessionInfo | None:
        with self._session("reading the session") as session:
            row = session.get(SessionRow, session_id)
            return None if row is None else self._info(row)

    @staticmethod
    def _info(row: SessionRow) -> SessionInfo:
        settings = from_jsonable(ChatSettings, row.settings) if row.settings else ChatSettings.unknown()
        return SessionInfo(id=row.id, settings=settings, player=row.player, source=row.source,
                           meta=dict(row.meta or {}), created_at=row.created_at, updated_at=row.updated_at,
                           owner=row.owner)

    def list_sessions(self, source: str | None = None, viewer: Viewer | None = None) -> list[SessionInfo]:
        """The sessions, oldest first; ``viewer``: only those it may see (``Viewer.sees``, asked of the database);
        None: every session (the command line reads the whole database)."""
        with self._session("listing sessions") as session:
            query = select(SessionRow).order_by(SessionRow.created_at)
            if source:
                query = query.where(SessionRow.source == source)
            if viewer is not None and not viewer.teacher:
                query = query.where(SessionRow.owner == viewer.owner if viewer.owner is not None else false())
            return [self._info(row) for row in session.scalars(query)]

    # ------------------------------------------------------------------ turns
    def save_turns(self, session_id: str, turns: Sequence[ChatTurn], methods: Mapping[int, str] | None = None,
                   suggestion_ids: Mapping[int, int] | None = None) -> int:
        """Store the turns not stored yet (by turn index); returns how many were added.

        Idempotent, so the page can call it after every rerun and a turn whose write failed is
        written by the next call. ``methods`` maps a user turn index to how it was written (a goading
        method or "typed").
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
                row = TurnRow(session_id=session_id, turn_index=turn.turn_id, speaker=turn.agent_id, text=turn.text,
                              created_at=now(), method=methods.get(turn.turn_id),
                              suggestion_id=suggestion_ids.get(turn.turn_id),
                              bot=None if turn.settings is None else turn.settings.bot,
                              settings=None if turn.settings is None else jsonable(turn.settings))
                session.add(row)
                session.flush()
                self._write_report(session, row, turn.report)
                added += 1
            parent = session.get(SessionRow, session_id)
            if added and parent is not None:
                parent.updated_at = now()
            return added

    def replace_reports(self, session_id: str, turns: Sequence[ChatTurn]) -> int:
        """Store new guard reports for bot turns already stored (the chat page's re-judge); returns how many."""
        by_index = {t.turn_id: t.report for t in turns if t.report is not None}
        with self._session("saving re-judged turns") as session:
            rows = session.scalars(select(TurnRow).where(TurnRow.session_id == session_id,
                                                         TurnRow.turn_index.in_(list(by_index))))
            replaced = 0
            for row in rows:
                for old in session.scalars(select(CandidateRow).where(CandidateRow.turn_id == row.id)):
                    session.delete(old)
                self._write_report(session, row, by_index[row.turn_index])
                replaced += 1
            return replaced

    @staticmethod
    def _write_report(session: Session, row: TurnRow, report: BotTurnReport | None) -> None:
        """The one place a guard report is written: whole in ``turns.guard``, its flags beside it, and a row
        per candidate for queries."""
        row.guard = None if report is None else report.to_json()
        row.flagged = bool(report is not None and report.any_contradiction)
        row.reply_flagged = bool(report is not None and report.reply_flagged)
        for cand in report.candidates if report is not None else ():
            session.add(CandidateRow(
                turn_id=row.id, position=cand.index, text=cand.text,
                generator_score=float(cand.generator_score),
                contradiction_score=None if cand.contradiction_score is None else float(cand.contradiction_score),
                contradicts=bool(cand.contradicts), category=str(cand.category), chosen=bool(cand.chosen),
                reason=str(cand.reason)))

    def load_session(self, session_id: str) -> StoredSession | None:
        """The session with its turns (bot turns with their guard reports), or None if unknown."""
        with self._session("reading the session") as session:
            row = session.get(SessionRow, session_id)
            if row is None:
                return None
            turns = []
            for t in session.scalars(select(TurnRow).where(TurnRow.session_id == session_id)
                                     .order_by(TurnRow.turn_index)):
                report = BotTurnReport.from_json(t.guard) if t.guard else None
                settings = from_jsonable(ChatSettings, t.settings) if t.settings else None
                turns.append(StoredTurn(ChatTurn(t.turn_index, t.speaker, t.text, report, settings), t.method,
                                        t.suggestion_id))
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
                                  score=s.score, note=s.note, ranking=ranking, created_at=now())
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
            # the persona the turn was judged against (its report's), else the session's
            settings = session.scalar(select(SessionRow.settings).where(SessionRow.id == annotation.session_id))
            persona = ((turn.guard or {}).get("persona") if isinstance(turn.guard, dict) else None) \
                or (settings or {}).get("persona") or []
            unknown = [i for i in annotation.contradicted_persona if not 0 <= int(i) < len(persona)]
            if unknown:
                raise ValueError(f"persona lines {unknown} do not exist: the session's persona has {len(persona)} "
                                 "lines (numbered from 0)")
            row = session.scalar(select(AnnotationRow).where(
                AnnotationRow.session_id == annotation.session_id, AnnotationRow.turn_index == annotation.turn_index,
                AnnotationRow.annotator == annotation.annotator.strip()))
            values = {"contradiction": bool(annotation.contradiction),
                      "contradicted_turns": sorted({int(i) for i in annotation.contradicted_turns}),
                      "contradicted_persona": sorted({int(i) for i in annotation.contradicted_persona}),
                      "category": annotation.category, "guard_right": annotation.guard_right,
                      "note": annotation.note, "updated_at": now()}
            if row is None:
                session.add(AnnotationRow(session_id=annotation.session_id, turn_index=annotation.turn_index,
                                          annotator=annotation.annotator.strip(), created_at=now(), **values))
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
                               list(r.contradicted_turns or []), r.category, r.guard_right, r.note,
                               list(r.contradicted_persona or []))
                    for r in session.scalars(query)]

    # ------------------------------------------------------------------ bookkeeping
    def counts(self) -> dict[str, int]:
        """Rows per table (tests and the concurrency benchmark count what was written)."""
        with self._session("counting rows") as session:
            return {name: int(session.scalar(select(func.count()).select_from(model)) or 0)
                    for name, model in TABLES.items()}


#: one Store per URL for the process (its engine and connection pool, shared by every page, session and request)
_STORES = LoadedOnce()


def open_store(url: str | None = None) -> Store:
    """The Store for ``url`` (default ``default_url()``), created once per process and URL.

    A failed open is not cached: fixing the URL (or the file) and calling again works.
    """
    url = (url or "").strip() or default_url()
    return _STORES.get(("store", url), lambda: Store(url))


def forget_store(url: str) -> None:
    """Drop a cached Store (tests that delete their database file)."""
    store = _STORES.forget(("store", url))
    if store is not None:
        store.dispose()


def iter_session_ids(store: Store, sources: Iterable[str] | None = None) -> list[str]:
    wanted = set(sources or SOURCES)
    return [s.id for s in store.list_sessions() if s.source in wanted]
