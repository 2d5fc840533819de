"""The studio database as the pages reach it: which URL, the open store, the player's name, errors said once.

Without a working database every page goes on (the chat stays in the browser tab) and says what is not being
saved, in one line where it happened.
"""

from __future__ import annotations

import streamlit as st

from studio.storage import SessionInfo, Store, StoreError, default_url, open_store
from ui import ownership

__all__ = ["URL_KEY", "NAME_KEY", "SUGGEST_KEY", "database_url", "default_url", "store", "not_stored", "player_name",
           "sidebar", "import_upload"]

URL_KEY = "studio_db_url"
NAME_KEY = "studio_name"
SUGGEST_KEY = "studio_suggest"


def database_url() -> str:
    return (st.session_state.get(URL_KEY) or "").strip() or default_url()


def store() -> Store | None:
    """The studio database, or None after one error line (the conversation stays in memory)."""
    url = database_url()
    try:
        return open_store(url)
    except StoreError as exc:
        st.error(f"Goading studio: {exc}. Nothing is being saved; the conversation stays in this browser tab — "
                 "fix the database URL in the sidebar or download the transcript.", icon="🗄️")
        return None


def not_stored(what: str, exc: StoreError) -> None:
    """A database failure the page works around (the chat goes on): say what was lost and why, where it happened."""
    st.warning(f"{what}: {exc}", icon="🗄️")


def player_name() -> str:
    return (st.session_state.get(NAME_KEY) or "").strip() or "guest"


def sidebar() -> None:
    """Database URL, the player's name, suggestions on/off, and transcript import."""
    with st.expander("Goading studio", icon="🎯"):
        st.text_input("Your name (player and annotator)", key=NAME_KEY, placeholder="guest")
        st.text_input("Database URL", key=URL_KEY, placeholder=default_url(),
                      help="Where conversations and annotations are saved. Leave it empty for the default.\n\n"
                           "Technical: empty = SQLite in the app's cache folder (or $GUARD_STUDIO_DB); a class "
                           "server: postgresql+psycopg://user:password@host/dbname")
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
        st.error(f"Cannot import: {exc}", icon="🗄️")
        return
    st.query_params["session"] = ids[-1]
    st.success(f"Imported {len(ids)} session(s); opening {ids[-1]}.")
    st.rerun()
