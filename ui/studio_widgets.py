"""The goading studio on the chat page: storage, suggestions, annotations (Streamlit only; logic in studio/).

The chat page calls a handful of these functions; each keeps its state under ``studio::`` keys in
``st.session_state`` and degrades gracefully: without a working database the chat and the
suggestions still work and the page says what is not being saved.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import streamlit as st

from bots.base import Bot
from conversation.records import ChatTurn, Conversation
from guard.vocabulary import CATEGORIES, Category, GuardMode, category_name
from studio.goading import METHOD_HELP, METHOD_LABELS, SuggestionSet, history_of, refine_follow_ups, suggest
from studio.storage import Annotation, SessionInfo, Store, StoreError, default_url, open_store
from ui.render import escape_markdown

URL_KEY = "studio_db_url"
NAME_KEY = "studio_name"
PENDING_KEY = "studio::pending"
EDIT_KEY = "studio::edit"


@dataclass
class Picked:
    """A suggestion the user chose to send (possibly edited first)."""

    text: str
    method: str
    suggestion_id: int | None
    edited: bool = False


# ---------------------------------------------------------------------------- database
def database_url() -> str:
    return (st.session_state.get(URL_KEY) or "").strip() or default_url()


def store() -> Store | None:
    """The studio database, or None after one error line (the conversation stays in memory)."""
    url = database_url()
    try:
        return open_store(url)
    except StoreError as exc:
        if st.session_state.get("studio::error_shown") != url:
            st.session_state["studio::error_shown"] = url
        st.error(f"Goading studio: {exc}. Nothing is being saved; the conversation stays in this browser tab — "
                 "fix the database URL in the sidebar or download the transcript.", icon="🗄️")
        return None


def _not_stored(what: str, exc: StoreError) -> None:
    """A database failure the page works around (the chat goes on): say what was lost and why, where it happened."""
    st.warning(f"{what}: {exc}", icon="🗄️")


def player_name() -> str:
    return (st.session_state.get(NAME_KEY) or "").strip() or "guest"


def _methods(record_id: str) -> dict[int, str]:
    return st.session_state.setdefault("studio::methods", {}).setdefault(record_id, {})


def _suggestion_ids(record_id: str) -> dict[int, int]:
    return st.session_state.setdefault("studio::suggestion_ids", {}).setdefault(record_id, {})


def resume() -> Conversation:
    """The conversation named by ``?session=`` in the URL (loaded from the database after a refresh or
    a server restart), else the one in this browser session. A loaded session's settings go into the
    sidebar's controls (``restore_settings``), so app.py calls this before any sidebar widget exists."""
    conversation = st.session_state.setdefault("conversation", Conversation())
    wanted = st.query_params.get("session")
    if not wanted or wanted == conversation.record_id:
        return conversation
    db = store()
    if db is None:
        return conversation
    try:
        stored = db.load_session(wanted)
    except StoreError as exc:
        st.error(f"Could not load session {wanted}: {exc}", icon="🗄️")
        return conversation
    if stored is None:
        st.warning(f"Session {wanted} is not in {db.display_url}; starting a new conversation.", icon="🔎")
        del st.query_params["session"]
        return conversation
    loaded = stored.conversation()
    _methods(loaded.record_id).update(stored.methods)
    st.session_state["conversation"] = loaded
    restore_settings(stored.info)
    return loaded


def restore_settings(info: SessionInfo) -> None:
    """Put a stored session's settings into the sidebar's widget keys (before the widgets exist): bot, decoding
    preset, candidates, guard mode, λ, prefilter, persona, detector and τ. A value this app cannot offer (a bot
    not available here, a τ off the slider) is left at the control's current value."""
    from bots import registry
    from bots.base import PRESETS
    from guard.vocabulary import GUARD_MODES

    state = st.session_state
    wanted: dict[str, object] = {}
    if info.bot and info.bot in registry.available_bots():
        wanted["bot_name"] = info.bot
    if info.preset in PRESETS:
        wanted["preset"] = info.preset
    if info.num_candidates:
        wanted["num_candidates"] = min(10, max(1, int(info.num_candidates)))
    if info.guard_mode in GUARD_MODES:
        wanted["guard_mode"] = str(info.guard_mode)
    if info.penalty_lambda is not None:
        wanted["penalty_lambda"] = min(5.0, max(0.0, round(float(info.penalty_lambda), 1)))
    if info.prefilter is not None:
        wanted["prefilter"] = bool(info.prefilter)
    wanted["persona_text"] = "\n".join(info.persona)
    if info.detector:
        wanted["detector_name"] = info.detector
        if info.threshold is not None and 0.05 <= info.threshold <= 0.95:
            wanted[f"threshold::{info.detector}"] = round(float(info.threshold), 2)
    for key, value in wanted.items():
        state[key] = value
        state[f"kept::{key}"] = value  # the chat page's copies, which survive a visit to another page


def save(conversation: Conversation, bot: str, preset: str, mode: GuardMode, detector: str, threshold: float,
         num_candidates: int, penalty_lambda: float | None = None, prefilter: bool | None = None) -> bool:
    """Store the session's settings and any turn not stored yet; put the session id in the URL."""
    if not conversation.turns:
        return False
    db = store()
    if db is None:
        return False
    try:
        existing = db.session_info(conversation.record_id)
        info = SessionInfo(id=conversation.record_id, bot=bot, preset=preset, guard_mode=mode, detector=detector,
                           threshold=float(threshold), num_candidates=int(num_candidates),
                           persona=list(conversation.persona), penalty_lambda=penalty_lambda, prefilter=prefilter,
                           player=existing.player if existing and existing.player else player_name(),
                           source=existing.source if existing else "chat", meta=existing.meta if existing else {})
        db.save_session(info)
        db.save_turns(conversation.record_id, conversation.turns, _methods(conversation.record_id),
                      _suggestion_ids(conversation.record_id))
    except StoreError as exc:
        st.error(f"Not saved: {exc}. The conversation stays in this tab; the next turn tries again.", icon="🗄️")
        return False
    if st.query_params.get("session") != conversation.record_id:
        st.query_params["session"] = conversation.record_id
    return True


def save_rejudged(conversation: Conversation) -> None:
    """After a re-judge: the stored guard reports and flags follow what the page now shows."""
    db = store()
    if db is None or not conversation.turns:
        return
    try:
        db.replace_reports(conversation.record_id, conversation.turns)
    except StoreError as exc:
        st.error(f"Re-judged verdicts not saved: {exc}", icon="🗄️")


def forget_url_session() -> None:
    """After Reset: the next conversation gets its own id once it has a turn."""
    if "session" in st.query_params:
        del st.query_params["session"]


# ---------------------------------------------------------------------------- sidebar
def sidebar() -> None:
    """Database URL, the player's name, and transcript import."""
    with st.expander("Goading studio", icon="🎯"):
        st.text_input("Your name (player and annotator)", key=NAME_KEY, placeholder="guest")
        st.text_input("Database URL", key=URL_KEY, placeholder=default_url(),
                      help="Empty: SQLite in the app's cache folder (or $GUARD_STUDIO_DB). A class server: "
                           "postgresql+psycopg://user:password@host/dbname")
        st.toggle("Suggest next messages", key="studio_suggest", value=True)
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
        ids = [import_transcript(db, t, SessionInfo(id="", player=player_name())) for t in transcripts]
    except StoreError as exc:
        st.error(f"Cannot import: {exc}", icon="🗄️")
        return
    st.query_params["session"] = ids[-1]
    st.success(f"Imported {len(ids)} session(s); opening {ids[-1]}.")
    st.rerun()


# ---------------------------------------------------------------------------- suggestions
@st.cache_resource(show_spinner=False)
def _warm_up_in_background() -> threading.Thread:
    """spaCy and WordNet load once per server process, off the request path (~5-15 s on first use)."""
    from studio.goading import warm_up

    thread = threading.Thread(target=warm_up, name="studio-warm-up", daemon=True)
    thread.start()
    return thread


def _pick(text: str, method: str, suggestion_id: int | None, edited: bool) -> None:
    st.session_state[PENDING_KEY] = Picked(text, method, suggestion_id, edited)


def _edit(text: str, method: str, suggestion_id: int | None) -> None:
    st.session_state[EDIT_KEY] = text
    st.session_state["studio::edit_origin"] = (method, suggestion_id, text)


def _send_edit() -> None:
    text = (st.session_state.get(EDIT_KEY) or "").strip()
    method, suggestion_id, original = st.session_state.get("studio::edit_origin", ("typed", None, ""))
    if text:
        _pick(text, method, suggestion_id, edited=text != original)
    st.session_state[EDIT_KEY] = ""


def take_pending() -> Picked | None:
    return st.session_state.pop(PENDING_KEY, None)


def note_user_turn(conversation: Conversation, picked: Picked | None) -> None:
    """Remember how the user's newest turn was written (a suggestion's method, or typed)."""
    turn_id = conversation.turns[-1].turn_id
    _methods(conversation.record_id)[turn_id] = picked.method if picked else "typed"
    if picked is not None and picked.suggestion_id is not None:
        _suggestion_ids(conversation.record_id)[turn_id] = picked.suggestion_id
        db = store()
        if db is not None:
            try:
                db.mark_suggestion_used(picked.suggestion_id, turn_id, picked.edited)
            except StoreError as exc:  # the turn itself is saved with the page
                _not_stored("Which suggestion you sent is not saved", exc)


def _draw(result: SuggestionSet, ids: list[int | None], key: str) -> None:
    for i, s in enumerate(result.suggestions):
        sid = ids[i] if i < len(ids) else None
        send, edit = st.columns([12, 1], vertical_alignment="center")
        # the label renders Markdown: escaped, it shows the words as they will be sent (the raw text is sent)
        send.button(escape_markdown(s.text), key=f"{key}::send::{i}", width="stretch",
                    help=escape_markdown(f"{METHOD_LABELS.get(s.method, s.method)}: {METHOD_HELP.get(s.method, '')}. "
                                         f"{s.note}"),
                    on_click=_pick, args=(s.text, s.method, sid, False), icon=":material/send:")
        edit.button("✏️", key=f"{key}::edit::{i}", help="edit before sending",
                    on_click=_edit, args=(s.text, s.method, sid))
        send.caption(escape_markdown(f"{METHOD_LABELS.get(s.method, s.method)} · {s.note}"))
    if result.ranking:
        st.caption(escape_markdown(f"follow-up questions: {result.ranking} · {result.seconds * 1000:.0f} ms"))


def suggestions(conversation: Conversation, bot: Bot | None = None, lock: threading.Lock | None = None) -> None:
    """After a bot turn: 3-5 suggested next messages (one click sends, ✏️ edits first).

    The set is computed once per bot turn, with the template ranking first so it shows at once; when
    the bot has a local LM the follow-up question is then re-ranked by FQness and the panel redrawn.
    """
    _warm_up_in_background()
    if not st.session_state.get("studio_suggest", True) or not conversation.turns \
            or conversation.turns[-1].speaker != "bot":
        return
    cache = st.session_state.setdefault("studio::suggestions", {})
    key = f"{conversation.record_id}:{len(conversation.turns)}"
    entry = cache.get(key)
    with st.container(border=True):
        st.markdown("**Goading assistant** — try one of these next:")
        panel = st.empty()
        if entry is None:
            result = suggest(history_of(conversation.turns))
            ids = _record(conversation, result)
            entry = cache[key] = {"result": result, "ids": ids, "refined": False}
        with panel.container():
            _draw(entry["result"], entry["ids"], f"sg::{key}::{int(entry['refined'])}")
        if not entry["refined"] and bot is not None:
            from studio.lm import continuation_scorer

            scorer = continuation_scorer(bot)
            entry["refined"] = True
            if scorer is not None and any(s.method == "follow_up" for s in entry["result"].suggestions):
                if lock is not None:
                    with lock:
                        refined = refine_follow_ups(entry["result"], history_of(conversation.turns), scorer)
                else:
                    refined = refine_follow_ups(entry["result"], history_of(conversation.turns), scorer)
                entry["ids"] = _record_replaced(conversation, entry["result"], refined, entry["ids"])
                entry["result"] = refined
                with panel.container():
                    _draw(refined, entry["ids"], f"sg::{key}::1")
        st.text_input("Edit a suggestion, then send", key=EDIT_KEY, placeholder="✏️ puts a suggestion here")
        st.button("Send edited message", key="studio::send_edit", on_click=_send_edit)


def _record(conversation: Conversation, result: SuggestionSet) -> list[int | None]:
    """Store what was offered (needs the bot turn stored first; the page saves before this)."""
    db = store() if conversation.turns else None
    if db is None:
        return [None] * len(result.suggestions)
    try:
        if db.session_info(conversation.record_id) is None:
            return [None] * len(result.suggestions)
        return db.save_suggestions(conversation.record_id, conversation.turns[-1].turn_id, result.suggestions,
                                   result.ranking)
    except StoreError as exc:
        _not_stored("The suggestions are not saved (they still work)", exc)
        return [None] * len(result.suggestions)


def _record_replaced(conversation: Conversation, before: SuggestionSet, after: SuggestionSet,
                     ids: list[int | None]) -> list[int | None]:
    """Store only the suggestions the FQness re-ranking changed; the others keep their rows."""
    changed = [i for i, (a, b) in enumerate(zip(before.suggestions, after.suggestions)) if a.text != b.text]
    db = store()
    if not changed or db is None:
        return ids
    try:
        new_ids = db.save_suggestions(conversation.record_id, conversation.turns[-1].turn_id,
                                      [after.suggestions[i] for i in changed], after.ranking, positions=changed)
    except StoreError as exc:
        _not_stored("The re-ranked follow-up question is not saved", exc)
        return ids
    ids = list(ids)
    for i, new_id in zip(changed, new_ids):
        ids[i] = new_id
    return ids


# ---------------------------------------------------------------------------- annotations
def annotation_box(conversation: Conversation, turn: ChatTurn) -> None:
    """Per bot turn: contradiction yes/no, which earlier turns, CDConv category, was the guard right."""
    key = f"ann::{conversation.record_id}::{turn.turn_id}"
    with st.expander(f"Annotate turn {turn.turn_id}", icon="🏷️"):
        db = store()
        if db is None:
            st.caption("Annotations need the studio database (see the error above).")
            return
        name = player_name()
        mine = {a.annotator: a for a in _annotations(db, conversation.record_id, turn.turn_id)}
        previous = mine.get(name)
        yes = st.radio("Does this reply contradict the conversation?", ["no", "yes"], horizontal=True,
                       key=f"{key}::yes", index=1 if previous and previous.contradiction else 0)
        earlier = [t.turn_id for t in conversation.turns if t.turn_id < turn.turn_id]
        contradicted = st.multiselect("Turns it contradicts", earlier, key=f"{key}::turns",
                                      default=[i for i in (previous.contradicted_turns if previous else [])
                                               if i in earlier],
                                      format_func=lambda i: f"turn {i}", disabled=yes == "no")
        categories = [c for c in CATEGORIES if c != Category.NONE]
        category = st.selectbox("CDConv category", categories, key=f"{key}::category",
                                index=categories.index(previous.category)
                                if previous and previous.category in categories else 2,
                                format_func=category_name, disabled=yes == "no")
        right = st.radio("Was the guard right?", ["yes", "no", "not sure"], horizontal=True, key=f"{key}::right",
                         index={True: 0, False: 1, None: 2}[previous.guard_right] if previous else 2)
        if st.button("Save annotation", key=f"{key}::save", icon="💾"):
            try:
                db.annotate(Annotation(conversation.record_id, turn.turn_id, name, yes == "yes",
                                       list(contradicted) if yes == "yes" else [],
                                       category if yes == "yes" else Category.NONE,
                                       {"yes": True, "no": False}.get(right)))
            except (StoreError, ValueError) as exc:
                st.error(f"Annotation not saved: {exc}", icon="🏷️")
            else:
                st.session_state.pop(f"studio::ann_cache::{conversation.record_id}", None)
                st.success(f"Saved as {name}.", icon="✅")
        others = [a for who, a in mine.items() if who != name]
        if others:
            st.caption(escape_markdown("; ".join(
                f"{a.annotator}: {'contradiction' if a.contradiction else 'consistent'}" for a in others)))


def _annotations(db: Store, session_id: str, turn_id: int) -> list[Annotation]:
    cache_key = f"studio::ann_cache::{session_id}"
    cached = st.session_state.get(cache_key)
    if cached is None:
        try:
            cached = st.session_state[cache_key] = db.annotations(session_id)
        except StoreError as exc:
            _not_stored("Earlier annotations could not be read", exc)
            return []
    return [a for a in cached if a.turn_index == turn_id]


# ---------------------------------------------------------------------------- self-play from the page
def self_play_form(detector_name: str, threshold: float) -> None:
    """Run studio.redteam from the Review page: the assistant goads a bot, sessions are stored."""

    from bots import registry
    from bots.base import PRESETS
    from studio.goading import METHODS
    from studio.redteam import SELF_PLAY_MODES, Judge, RedteamSettings, run_redteam
    from ui import resources

    bots = registry.available_bots()
    default_bot = resources.defaults().bot
    with st.form("studio_redteam"):
        left, right = st.columns(2)
        bot_name = left.selectbox("Bot", bots, index=bots.index(default_bot) if default_bot in bots else 0)
        mode = right.selectbox("Guard mode", SELF_PLAY_MODES, index=SELF_PLAY_MODES.index(GuardMode.RERANK))
        methods = st.multiselect("Trigger methods (session k uses method k mod n)", list(METHODS),
                                 default=list(METHODS), format_func=lambda m: METHOD_LABELS.get(m, m))
        sessions = left.number_input("Sessions", 1, 200, 2)
        turns = right.number_input("Bot turns per session", 1, 10, 2)
        go = st.form_submit_button("Run self-play", icon="🤖")
    if not go:
        return
    if not methods:
        st.warning("Pick at least one trigger method.")
        return
    db = store()
    kept = "the stored sessions are kept; nothing was played"
    bot = resources.get_bot(bot_name, kept=kept)
    guard = resources.make_detector(detector_name, threshold, prefilter_k=8, kept=kept)
    judge = resources.make_detector(detector_name, threshold, method="unstructured", kept=kept)
    if db is None or bot is None or guard is None or judge is None:
        return
    settings = RedteamSettings(bot=bot_name, guard_mode=mode, methods=list(methods), sessions=int(sessions),
                               turns=int(turns), detector=detector_name, threshold=float(threshold),
                               num_candidates=resources.defaults().num_candidates, player=player_name())
    bar = st.progress(0.0, text="self-play…")
    done = [0]

    def step() -> None:
        done[0] += 1
        bar.progress(min(1.0, done[0] / (settings.sessions * settings.turns)), text=f"{done[0]} bot replies")

    try:
        with resources.model_lock("bot", bot_name):
            run = run_redteam(settings, db, bot, guard, Judge(f"{detector_name}:structured (the guard's own)", guard),
                              Judge(f"{detector_name}:unstructured", judge),
                              PRESETS.get(resources.defaults().preset, PRESETS["fast"]), on_turn=step)
    except (StoreError, RuntimeError, ValueError) as exc:
        st.error(f"Self-play stopped: {exc}. The turns played so far are stored.", icon="🤖")
        return
    report = run.report()
    st.success(f"{report['bot_replies']} bot replies in {report['sessions']} sessions ({report['seconds']} s), "
               f"stored with source 'redteam'.")
    st.caption(escape_markdown(f"judges: {report['guard_judge']} and {report['judge']}"))
    from ui.widgets import show_table

    show_table(report["per_method"], interactive=True)
