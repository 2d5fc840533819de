"""The chat session's controller: the one owner of the chat's session keys, the URL's ``?session=`` and saving.

* ``follow_script_link`` (app.py, before ``resume``): a link's ``?script=<name>`` has this browser session's scripted
  bot play the server's script of that name (``GUARD_APP_SCRIPTS``; a name, never a file).
* ``resume`` (app.py, before any sidebar widget exists): the conversation named by ``?session=`` in the URL (a
  reload, a shared link, a server restart) comes back from the studio database with its settings, which go into the
  sidebar's controls (``ui.chat_state``) - when it belongs to this browser, or the teacher is signed in
  (``ui.ownership``). Another browser's link is refused, with a new chat offered; nothing of it is shown.
* ``current`` / ``reset``: the conversation of this browser session.
* ``save_turns``: once per new turn - the session's settings (those of its newest turn) and the turns not stored
  yet; a rerun that added no turn writes nothing. The session id goes into the URL.
* ``note_user_turn``: how the user's turn was written (a suggestion's method, or typed).

What produced each stored bot turn (its own settings snapshot, ``ChatTurn.settings``) is never rewritten: changing
the sidebar after reopening a session changes what the *next* turn is made with.
"""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from bots.base import BotError
from bots.scripted import named_script
from conversation.records import ChatSettings, Conversation
from studio.storage import SessionInfo, StoreError
from ui import chat_state, ownership
from ui.app_defaults import scripts_folder
from ui.render import escape_markdown
from ui.studio_store import not_stored, player_name, said, store

CONVERSATION_KEY = "chat::conversation"
METHODS_KEY = "chat::methods"  # record id -> {user turn index: how it was written}
SUGGESTION_IDS_KEY = "chat::suggestion_ids"  # record id -> {user turn index: suggestion row id}
SAVED_KEY = "chat::saved_turns"  # record id -> turns already stored
#: the link parameter that names the server's script a session's scripted bot plays
SCRIPT_PARAM = "script"


def current() -> Conversation:
    return st.session_state.setdefault(CONVERSATION_KEY, Conversation())


def methods(record_id: str) -> dict[int, str]:
    return st.session_state.setdefault(METHODS_KEY, {}).setdefault(record_id, {})


def suggestion_ids(record_id: str) -> dict[int, int]:
    return st.session_state.setdefault(SUGGESTION_IDS_KEY, {}).setdefault(record_id, {})


def _saved() -> dict[str, int]:
    return st.session_state.setdefault(SAVED_KEY, {})


def follow_script_link() -> None:
    """A link's ``?script=<name>``: this browser session's bot becomes the scripted one, playing the server's script of
    that name (its ``script`` setting, put before the sidebar is drawn), and the parameter leaves the address, so the
    sidebar decides from then on; a ``?session=`` link, read next, brings its own settings. Only the names of the
    folder the server was started with are played (``GUARD_APP_SCRIPTS``); any other changes nothing and is said,
    with the names there are. Lets a teacher hand out a link per demo, and the browser tests share one server."""
    name = st.query_params.get(SCRIPT_PARAM)
    if name is None:
        return
    del st.query_params[SCRIPT_PARAM]
    folder = scripts_folder()
    try:
        if folder is None:
            raise BotError("this server offers no scripts by name (it was started without GUARD_APP_SCRIPTS)")
        named_script(folder, name)
    except BotError as exc:
        st.warning(escape_markdown(f"The link asks for a bot script this server does not have: {exc}. The chat "
                                   "goes on with the sidebar's bot."), icon="📜")
        return
    st.session_state[chat_state.key("bot")] = "scripted"
    st.session_state[chat_state.key("script")] = name


def resume() -> Conversation:
    """The conversation named by ``?session=`` (loaded once, its settings put into the sidebar's keys), else this
    browser session's."""
    conversation = current()
    wanted = st.query_params.get("session")
    if not wanted or wanted == conversation.record_id:
        return conversation
    db = store()
    if db is None:
        return conversation
    try:
        stored = db.load_session(wanted)
    except StoreError as exc:
        st.error(f"Could not load session {wanted}: {said(exc)}. This tab's conversation is kept.", icon="🗄️")
        return conversation
    if stored is None:
        st.warning(f"Session {wanted} is not in the server's database; starting a new conversation.", icon="🔎")
        del st.query_params["session"]
        return conversation
    if not ownership.sees(stored.info):
        refuse(wanted)
        return conversation
    loaded = stored.conversation()
    methods(loaded.record_id).update(stored.methods)
    _saved()[loaded.record_id] = len(loaded.turns)
    st.session_state[CONVERSATION_KEY] = loaded
    chat_state.write_settings(stored.info.settings, st.session_state, only_offered=True)
    return loaded


def _leave_link() -> None:
    if "session" in st.query_params:
        del st.query_params["session"]


def refuse(session_id: str) -> None:
    """A ``?session=`` link this browser may not open: say so, offer a new chat, show nothing of the session."""
    with st.container(border=True):
        st.warning(f"The conversation {session_id} was started in another browser, so it is not shown here and "
                   "cannot be continued: conversations belong to the browser that started them. A teacher signed "
                   "in on the Review page can open it.", icon="🔒")
        st.button("Start a new chat", icon="💬", key="owner::new_chat", on_click=_leave_link)


def reset(persona: list[str]) -> Conversation:
    """A new, empty conversation; the next one gets its own id (and URL) once it has a turn."""
    conversation = st.session_state[CONVERSATION_KEY] = Conversation(persona=list(persona))
    _leave_link()
    return conversation


def save_turns(conversation: Conversation, settings: ChatSettings) -> bool:
    """Store the turns not stored yet, with the session's settings; nothing when no turn is new."""
    if not conversation.turns or _saved().get(conversation.record_id, 0) >= len(conversation.turns):
        return False
    db = store()
    if db is None:
        return False
    newest = next((t.settings for t in reversed(conversation.turns) if t.settings is not None), None)
    try:
        existing = db.session_info(conversation.record_id)
        if existing is not None and not ownership.sees(existing):  # never write into another browser's session
            st.error("Not saved: this conversation belongs to another browser. Reset the conversation to start your "
                     "own.", icon="🔒")
            return False
        db.save_session(SessionInfo(
            id=conversation.record_id, settings=replace(newest or settings, persona=list(conversation.persona)),
            # a session keeps its player's name; one saved as a guest takes the name typed since
            player=existing.player if existing and existing.player not in (None, "", "guest") else player_name(),
            source=existing.source if existing else "chat", meta=existing.meta if existing else {},
            owner=existing.owner if existing else ownership.owner_key()))
        db.save_turns(conversation.record_id, conversation.turns, methods(conversation.record_id),
                      suggestion_ids(conversation.record_id))
    except StoreError as exc:
        st.error(f"Not saved: {said(exc)}. The conversation stays in this tab; the next turn tries again.", icon="🗄️")
        return False
    _saved()[conversation.record_id] = len(conversation.turns)
    if st.query_params.get("session") != conversation.record_id:
        st.query_params["session"] = conversation.record_id
    return True


def save_rejudged(conversation: Conversation) -> None:
    """After a re-judge: the stored guard reports and flags follow what the page now shows (the turns' own
    settings stay)."""
    db = store()
    if db is None or not conversation.turns or not _saved().get(conversation.record_id):
        return
    try:
        db.replace_reports(conversation.record_id, conversation.turns)
    except StoreError as exc:
        st.error(f"Re-judged verdicts not saved: {said(exc)}", icon="🗄️")


def note_user_turn(conversation: Conversation, method: str, suggestion_id: int | None = None,
                   edited: bool = False) -> None:
    """Remember how the user's newest turn was written (a suggestion's method, or "typed")."""
    turn_id = conversation.turns[-1].turn_id
    methods(conversation.record_id)[turn_id] = method
    if suggestion_id is not None:
        suggestion_ids(conversation.record_id)[turn_id] = suggestion_id
        db = store()
        if db is not None:
            try:
                db.mark_suggestion_used(suggestion_id, turn_id, edited)
            except StoreError as exc:  # the turn itself is saved with the page
                not_stored("Which suggestion you sent is not saved", exc)
