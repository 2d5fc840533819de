"""The studio database as the pages reach it: the server's database, the open store, the player's name, errors said
once.

The database is the server's: ``GUARD_STUDIO_DB`` as the server was started, else ``studio_db`` in Streamlit's
secrets (``.streamlit/secrets.toml``), else a SQLite file in the cache folder. No page sets it, and no page shows its
address: a database error is said with the database named by its kind ("the server's SQLite database"), the whole
error going to the server's log, and the signed-in teacher sees the kind on the Review page.

Without a working database every page goes on (the chat stays in the browser tab) and says what is not being
saved, in one line where it happened.
"""

from __future__ import annotations

import logging
import os

import streamlit as st

from studio.storage import (
    ENV_URL,
    SessionInfo,
    Store,
    StoreError,
    Viewer,
    database_kind,
    default_url,
    open_store,
    safe_url,
    without_address,
)
from ui import ownership

__all__ = ["NAME_KEY", "SECRET_NAME", "SUGGEST_KEY", "database_kind", "database_url", "store", "not_stored", "said",
           "player_name", "sidebar", "import_upload"]

NAME_KEY = "studio_name"
SUGGEST_KEY = "studio_suggest"
#: the database's URL in Streamlit's secrets, when GUARD_STUDIO_DB is not set
SECRET_NAME = "studio_db"
#: what a page says to do about a database that does not work (nobody at a browser can fix it)
WHO_FIXES = (f"whoever started the server sets the database ({ENV_URL}, or {SECRET_NAME} in "
             ".streamlit/secrets.toml) and finds the whole error in the server's log")
log = logging.getLogger(__name__)


def database_url() -> str:
    """The server's database: ``GUARD_STUDIO_DB``, else ``studio_db`` in Streamlit's secrets, else SQLite in the
    cache folder (``studio.storage.default_url``)."""
    if os.environ.get(ENV_URL, "").strip():
        return default_url()
    if st.secrets.load_if_toml_exists():
        from_secrets = str(st.secrets.get(SECRET_NAME, "") or "").strip()
        if from_secrets:
            return from_secrets
    return default_url()


def said(exc: BaseException) -> str:
    """A database error as a page may say it (``studio.storage.without_address``: the database named by its kind, no
    address); the error itself, address and all, goes to the server's log."""
    url = database_url()
    log.warning("studio database (%s): %s", safe_url(url), exc)
    return without_address(str(exc), url)


def store() -> Store | None:
    """The studio database, or None after one error line (the conversation stays in memory)."""
    try:
        return open_store(database_url())
    except StoreError as exc:
        st.error(f"Goading studio: {said(exc)}. Nothing is being saved; the conversation stays in this browser tab "
                 f"(download the transcript to keep it). To fix it: {WHO_FIXES}.", icon="🗄️")
        return None


def not_stored(what: str, exc: StoreError) -> None:
    """A database failure the page works around (the chat goes on): say what was lost and why, where it happened."""
    st.warning(f"{what}: {said(exc)}", icon="🗄️")


def player_name() -> str:
    return (st.session_state.get(NAME_KEY) or "").strip() or "guest"


def remember_name() -> None:
    """The name box, on a new tab or after a reload, filled with the name this browser last played under (its newest
    session's player): the name is kept per browser, not typed again on every visit."""
    if NAME_KEY in st.session_state:
        return
    st.session_state[NAME_KEY] = ""
    db = store()
    if db is None:
        return
    try:
        mine = db.list_sessions(viewer=Viewer(owner=ownership.owner_key()))
    except StoreError:
        return
    named = [s.player for s in mine if s.player and s.player.strip() and s.player != "guest"]
    if named:
        st.session_state[NAME_KEY] = named[-1]


def sidebar() -> None:
    """The player's name, suggestions on/off, and transcript import (the database is the server's: no page sets it)."""
    remember_name()
    with st.expander("Goading studio", icon="🎯"):
        st.text_input("Your name (player and annotator)", key=NAME_KEY, placeholder="guest",
                      help="Kept for this browser: your sessions and annotations carry it.")
        st.session_state.setdefault(SUGGEST_KEY, True)
        st.toggle("Suggest next messages", key=SUGGEST_KEY)
        upload = st.file_uploader("Import a transcript", type=["json", "jsonl", "txt"],
                                  help="The chat page's downloaded JSON, or playground 'Speaker: text' lines")
        if upload is not None and st.button("Import as a new session", key="studio::import"):
            import_upload(upload.getvalue(), upload.name)


def import_upload(data: bytes, name: str) -> None:
    from studio.transcripts import TranscriptError, import_transcript, read_transcripts

    try:
        transcripts = read_transcripts(data, name)
    except TranscriptError as exc:
        st.error(f"Cannot import: {exc}", icon="📄")
        return
    db = store()
    if db is None:
        return
    try:
        owner = ownership.owner_key()  # an import belongs to the browser that imported it
        ids = [import_transcript(db, t, SessionInfo(id="", player=player_name(), owner=owner)) for t in transcripts]
    except StoreError as exc:
        st.error(f"Cannot import: {said(exc)}", icon="🗄️")
        return
    st.query_params["session"] = ids[-1]
    st.success(f"Imported {len(ids)} session(s); opening {ids[-1]}.")
    st.rerun()
