"""Goading sessions in a real database: SQLite by default, PostgreSQL when given a URL.

What is kept: sessions (bot, decoding preset, guard mode, detector, persona, player), every turn with
the guard's report on each bot turn, every candidate of a bot turn as a row (its scores, category and
reason, for queries), the suggestions offered after each bot turn and which one was used, and people's
annotations (contradiction yes/no, the turns contradicted, the CDConv category, whether the guard was right).

* The URL comes from the caller, else ``GUARD_STUDIO_DB``, else a SQLite file
  ``<embedded.cache_dir()>/studio.db`` (nothing to set up). SQLite runs in WAL mode with a busy
  timeout and takes its write lock at the start of each transaction (``BEGIN IMMEDIATE``), so
  several Streamlit sessions and command-line runs can write at once without "database is locked".
* The schema is versioned: a ``schema_version`` table and ``MIGRATIONS``, applied in order when a
  store opens, so an upgrade keeps old sessions. A database written by a newer version is refused.
* Every database failure becomes one ``StoreError`` line (password hidden); nothing is deleted or
  recreated on error, so a broken URL or an unreadable file loses nothing already stored.

One module per job; callers import from the package:

| module | what |
|---|---|
| ``studio.storage.records`` | what callers read and write: ``SessionInfo``, ``Annotation``, ``StoredTurn``, ``StoredSession``, ``TurnJudgement``, and who may see a session (``Viewer``) |
| ``studio.storage.tables`` | the SQLAlchemy tables, one class a table |
| ``studio.storage.migrations`` | schema versions: ``MIGRATIONS`` (append a step to change the schema), ``migrate`` |
| ``studio.storage.store`` | ``Store`` (one database), ``open_store`` / ``forget_store``, ``default_url``, ``database_kind`` / ``without_address`` (what a page may say of it) |
| ``studio.storage.errors`` | ``StoreError`` |
"""

from __future__ import annotations

from studio.storage.errors import StoreError
from studio.storage.migrations import MIGRATIONS, SCHEMA_VERSION, migrate
from studio.storage.records import (
    SOURCES,
    Annotation,
    SessionInfo,
    StoredSession,
    StoredTurn,
    TurnJudgement,
    Viewer,
)
from studio.storage.store import (
    ENV_URL,
    Store,
    database_kind,
    default_url,
    forget_store,
    iter_session_ids,
    open_store,
    safe_url,
    without_address,
)

__all__ = [
    "ENV_URL", "MIGRATIONS", "SCHEMA_VERSION", "SOURCES", "Annotation", "SessionInfo", "Store", "StoreError",
    "StoredSession", "StoredTurn", "TurnJudgement", "Viewer", "database_kind", "default_url", "forget_store",
    "iter_session_ids", "migrate", "open_store", "safe_url", "without_address",
]
