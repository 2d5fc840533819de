"""Schema versions of the studio's database: one recorded step per version, applied in order when a store opens.

To change the schema, change the table classes (``studio.storage.tables``) and append a step to
``MIGRATIONS`` that brings a database of the previous version there; never edit a released step. A
database newer than this program is refused and left alone.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from sqlalchemy import column, func, inspect, select, table, text, update
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError

from studio.storage.errors import StoreError
from studio.storage.tables import (
    AnnotationRow,
    Base,
    CandidateRow,
    SchemaVersionRow,
    SessionRow,
    SuggestionRow,
    TurnRow,
    now,
)


def _columns(conn: Connection, table: str) -> set[str]:
    return {c["name"] for c in inspect(conn).get_columns(table)}


def _add_column_if_missing(conn: Connection, table: str, column: str, ddl_type: str) -> None:
    if column not in _columns(conn, table):
        conn.execute(text(f"ALTER TABLE {table} ADD COLUMN {column} {ddl_type}"))


def _drop_column_if_present(conn: Connection, table: str, column: str) -> None:
    if column in _columns(conn, table):  # SQLite 3.35+ and PostgreSQL drop columns in place
        conn.execute(text(f"ALTER TABLE {table} DROP COLUMN {column}"))


def _schema_1(conn: Connection) -> None:
    """Sessions, turns and candidates with their guard verdicts (the steps create tables from the newest
    classes; a later step adds or drops what an older database lacks or has)."""
    Base.metadata.create_all(conn, tables=[SchemaVersionRow.__table__, SessionRow.__table__, TurnRow.__table__,
                                           CandidateRow.__table__])


def _schema_2(conn: Connection) -> None:
    """Suggestions offered and used, annotations, and the player's name on each session."""
    _add_column_if_missing(conn, "sessions", "player", "VARCHAR(200)")
    Base.metadata.create_all(conn, tables=[SuggestionRow.__table__, AnnotationRow.__table__])


def _schema_3(conn: Connection) -> None:
    """The guard's report is stored once, in ``turns.guard``: ``candidates.verdict`` (a copy of each candidate's
    evidence and detector details) goes."""
    _drop_column_if_present(conn, "candidates", "verdict")


def _schema_4(conn: Connection) -> None:
    """Every bot turn keeps the bot and settings that produced it (``turns.bot``, ``turns.settings``), and a
    session its guard's λ and prefilter (``sessions.penalty_lambda``, ``sessions.prefilter``), so a reload
    restores them. Bot turns stored before get what was known: the session's bot and preset, and the guard
    settings of the turn's own report (else, or when it was re-judged since, the session's), marked
    ``from_session``."""
    _add_column_if_missing(conn, "turns", "bot", "VARCHAR(200)")
    _add_column_if_missing(conn, "turns", "settings", "JSON")
    if "bot" not in _columns(conn, "sessions"):  # created with schema 6's table: nothing stored before to backfill
        return
    _add_column_if_missing(conn, "sessions", "penalty_lambda", "FLOAT")
    _add_column_if_missing(conn, "sessions", "prefilter", "BOOLEAN")
    legacy = _legacy_sessions()
    sessions = {row.id: row for row in conn.execute(select(
        legacy.c.id, legacy.c.bot, legacy.c.preset, legacy.c.guard_mode, legacy.c.detector, legacy.c.threshold,
        legacy.c.num_candidates))}
    turns = conn.execute(select(TurnRow.id, TurnRow.session_id, TurnRow.guard).where(
        TurnRow.speaker == "bot", TurnRow.settings.is_(None))).all()
    for turn_id, session_id, guard in turns:
        session = sessions.get(session_id)
        if session is None:
            continue
        report = guard or {}
        if report.get("rejudge_note"):  # a re-judged report holds the re-judge's settings, not the turn's own
            report = {"candidates": report.get("candidates")}
        settings = {"bot": session.bot or "", "preset": session.preset or "", "decoding": {},
                    "guard_mode": report.get("mode") or session.guard_mode or None,
                    "detector": report.get("detector") or session.detector or "",
                    "threshold": report.get("threshold", session.threshold),
                    "num_candidates": len(report["candidates"]) if report.get("candidates") else session.num_candidates,
                    "penalty_lambda": None, "prefilter": None, "from_session": True}
        conn.execute(update(TurnRow).where(TurnRow.id == turn_id).values(bot=settings["bot"], settings=settings))


def _schema_5(conn: Connection) -> None:
    """An annotation may name persona lines as its evidence (``annotations.contradicted_persona``, 0-based line
    indices); annotations stored before name none."""
    _add_column_if_missing(conn, "annotations", "contradicted_persona", "JSON")


#: the session columns schemas 1-5 kept the chat settings in (folded into ``sessions.settings`` by schema 6)
LEGACY_SETTING_COLUMNS = ("bot", "preset", "guard_mode", "detector", "threshold", "num_candidates", "persona",
                          "penalty_lambda", "prefilter")


def _legacy_sessions():
    """The sessions table as schemas 1-5 had it (the table class describes the newest schema)."""
    return table("sessions", column("id"), *(column(name) for name in LEGACY_SETTING_COLUMNS))


def _schema_6(conn: Connection) -> None:
    """One settings record: a session's chat settings become one JSON value (``sessions.settings``,
    ``conversation.records.ChatSettings``'s fields), taken from the columns of their own, which go; every stored
    guard report takes today's shape (a candidate embeds its verdict instead of copying it field by field)."""
    from guard.judge.report_versions import upgrade_report_json

    _add_column_if_missing(conn, "sessions", "settings", "JSON")
    present = _columns(conn, "sessions")
    if "bot" in present:
        legacy = _legacy_sessions()
        wanted = [legacy.c.id] + [legacy.c[name] for name in LEGACY_SETTING_COLUMNS if name in present]
        for row in conn.execute(select(*wanted)).mappings().all():
            persona = row.get("persona") or []
            if isinstance(persona, str):  # an untyped column reads JSON back as its text
                persona = json.loads(persona or "[]")
            settings = {"bot": row.get("bot") or "", "preset": row.get("preset") or "", "decoding": {},
                        "guard_mode": row.get("guard_mode") or None, "detector": row.get("detector") or "",
                        "threshold": row.get("threshold"), "num_candidates": row.get("num_candidates"),
                        "penalty_lambda": row.get("penalty_lambda"), "prefilter": row.get("prefilter"),
                        "persona": list(persona), "fallback": None, "from_session": False}
            conn.execute(update(SessionRow).where(SessionRow.id == row["id"]).values(settings=settings))
        for name in LEGACY_SETTING_COLUMNS:
            _drop_column_if_present(conn, "sessions", name)
    for turn_id, guard in conn.execute(select(TurnRow.id, TurnRow.guard).where(TurnRow.guard.is_not(None))).all():
        upgraded = upgrade_report_json(guard)
        if upgraded != guard:
            conn.execute(update(TurnRow).where(TurnRow.id == turn_id).values(guard=upgraded))


def _schema_7(conn: Connection) -> None:
    """Sessions belong to the browser that made them (``sessions.owner``, indexed: every browser lists its own). Sessions
    stored before belong to no browser (NULL): only a signed-in teacher sees them, as those the command line writes."""
    _add_column_if_missing(conn, "sessions", "owner", "VARCHAR(64)")
    conn.execute(text("CREATE INDEX IF NOT EXISTS ix_sessions_owner ON sessions (owner)"))  # SQLite and PostgreSQL


#: version -> step that brings a database from version - 1 to it. Append only; never edit a released step.
MIGRATIONS: dict[int, Callable[[Connection], None]] = {1: _schema_1, 2: _schema_2, 3: _schema_3, 4: _schema_4,
                                                         5: _schema_5, 6: _schema_6, 7: _schema_7}
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
                    conn.execute(SchemaVersionRow.__table__.insert().values(version=step, applied_at=now()))
            except IntegrityError:
                pass  # another process recorded the same step at the same moment
        return max(version, target)
