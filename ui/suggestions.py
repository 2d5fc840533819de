"""The goading assistant on the chat page: 3-5 suggested next messages after each bot turn (logic in studio.goading).

One click sends a suggestion, ✏️ puts it in a box to edit first. The set is computed once per bot turn with the
template ranking (about 150 ms); ranking the follow-up questions by FQness runs the bot's own language model
(about 2 s on a laptop CPU), so it is a button rather than part of every turn: the page is done as soon as the
reply is on screen, and the bot's model is free for the next reply.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import streamlit as st

from bots.base import Bot
from conversation.records import BOT, Conversation
from embedded.once import LoadedOnce
from studio.goading import METHOD_HELP, METHOD_LABELS, SuggestionSet, refine_follow_ups, suggest
from studio.storage import StoreError
from ui.render import escape_markdown
from ui.studio_store import SUGGEST_KEY, not_stored, store

PENDING_KEY = "suggestions::pending"
EDIT_KEY = "suggestions::edit"
ORIGIN_KEY = "suggestions::edit_origin"
CACHE_KEY = "suggestions::cache"
EMPTY_EDIT_KEY = "suggestions::edit_was_empty"


@dataclass
class Picked:
    """A suggestion the user chose to send (possibly edited first)."""

    text: str
    method: str
    suggestion_id: int | None
    edited: bool = False


#: the language tools' warm-up thread, started once per server process by whichever page run asks first
_WARM_UP = LoadedOnce()


def _warm_up_in_background() -> threading.Thread:
    """spaCy and WordNet load once per server process, off the request path (~5-15 s on first use; WordNet is
    unpacked from its sdist then if the cache folder lacks it)."""
    return _WARM_UP.get("spaCy and WordNet warm-up", _start_warm_up)


def _start_warm_up() -> threading.Thread:
    from studio.goading import warm_up
    from ui.startup import settle_loaded

    def run() -> None:
        try:
            warm_up()
            settle_loaded()
        except Exception:  # noqa: BLE001 - a failed warm-up only means the first suggestion loads what it needs
            pass

    thread = threading.Thread(target=run, name="studio-warm-up", daemon=True)
    thread.start()
    return thread


def language_tools_ready(wait: float = 0.0) -> bool:
    """Whether the warm-up has loaded spaCy and WordNet (it starts here when it has not yet), after waiting up to
    ``wait`` seconds for it: the chat's fact sheet reads with them, and never loads them in the page run itself
    (about 9 s on first use, beside the warm-up's own loading)."""
    thread = _warm_up_in_background()
    if wait > 0:
        thread.join(wait)
    return not thread.is_alive()


def _pick(text: str, method: str, suggestion_id: int | None, edited: bool) -> None:
    st.session_state[PENDING_KEY] = Picked(text, method, suggestion_id, edited)


def _edit(text: str, method: str, suggestion_id: int | None) -> None:
    st.session_state[EDIT_KEY] = text
    st.session_state[ORIGIN_KEY] = (method, suggestion_id, text)


def _send_edit() -> None:
    text = (st.session_state.get(EDIT_KEY) or "").strip()
    method, suggestion_id, original = st.session_state.get(ORIGIN_KEY, ("typed", None, ""))
    if text:
        _pick(text, method, suggestion_id, edited=text != original)
    else:  # an empty or all-spaces box: said under the button, not silently dropped
        st.session_state[EMPTY_EDIT_KEY] = True
    st.session_state[EDIT_KEY] = ""


def take_pending() -> Picked | None:
    """The suggestion clicked in the last run, if any (it is sent like a typed message)."""
    return st.session_state.pop(PENDING_KEY, None)


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
        st.caption(escape_markdown(f"{ranking_words(result.ranking)} · {result.seconds * 1000:.0f} ms"),
                   help=f"Technical: {result.ranking} (FQness, Sato et al. 2024: how much likelier the question is "
                        "with the bot's claim before it than without, under the bot's own language model).")
    for method, why in result.unavailable.items():
        st.caption(escape_markdown(f"{METHOD_LABELS.get(method, method)}: off — {why}"))


def ranking_words(ranking: str) -> str:
    """How the follow-up questions were ranked, in a class's words (studio.goading's ``ranking``)."""
    if ranking.startswith("FQness"):
        return "follow-up questions ranked by how much they ask about what the bot said (the bot's own language model)"
    if ranking == "template ranking":
        return "follow-up questions in the order of their templates (template ranking)"
    return f"follow-up questions: {ranking}"


def panel(conversation: Conversation, bot: Bot | None = None) -> None:
    """After a bot turn: 3-5 suggested next messages. ``bot``: the loaded bot, whose language model can rank the
    follow-up questions by FQness on request (None: template ranking only)."""
    _warm_up_in_background()
    if not st.session_state.get(SUGGEST_KEY, True) or not conversation.turns \
            or conversation.turns[-1].agent_id != BOT:
        return
    cache = st.session_state.setdefault(CACHE_KEY, {})
    key = f"{conversation.record_id}:{len(conversation.turns)}"
    entry = cache.get(key)
    with st.container(border=True):
        st.markdown("**Goading assistant** — try one of these next:")
        if entry is None:
            result = suggest(conversation.turns)
            entry = cache[key] = {"result": result, "ids": _record(conversation, result), "refined": False}
        _draw(entry["result"], entry["ids"], f"sg::{key}::{int(entry['refined'])}")
        from studio.lm import can_score_continuations, continuation_scorer

        # offered without loading the bot's weights (a CTranslate2 bot's load them, on a new machine after a second
        # de-quantization of its GGUF, only when the button asks: studio.lm.can_score_continuations)
        offer = bot is not None and not entry["refined"] \
            and any(s.method == "follow_up" for s in entry["result"].suggestions) and can_score_continuations(bot)
        if offer and st.button("Pick the follow-up question that asks most about what the bot said (~2 s)",
                               key=f"sg::{key}::refine", icon="🧮",
                               help="The bot's own language model scores each question with and without the bot's "
                                    "claim before it.\n\nTechnical: FQness (Sato et al. 2024)."):
            with st.spinner("Scoring follow-up questions under the bot's language model…"):
                scorer = continuation_scorer(bot)
                refined = None if scorer is None else refine_follow_ups(entry["result"], conversation.turns, scorer)
            if refined is None:
                st.info("This bot's language model cannot rank them (no fast tokenizer): the template ranking stays.")
            else:
                entry["ids"] = _record_replaced(conversation, entry["result"], refined, entry["ids"])
                entry["result"], entry["refined"] = refined, True
                st.rerun()
        st.text_input("Edit a suggestion, then send", key=EDIT_KEY, placeholder="✏️ puts a suggestion here")
        st.button("Send edited message", key="suggestions::send_edit", on_click=_send_edit)
        if st.session_state.pop(EMPTY_EDIT_KEY, False):
            st.warning("The edited message is empty: write something in the box (✏️ puts a suggestion there), or "
                       "click a suggestion to send it as it is.", icon="✍️")


def _record(conversation: Conversation, result: SuggestionSet) -> list[int | None]:
    """Store what was offered (the bot turn must be stored first; the page saves each turn before this)."""
    db = store() if conversation.turns else None
    if db is None:
        return [None] * len(result.suggestions)
    try:
        if db.session_info(conversation.record_id) is None:
            return [None] * len(result.suggestions)
        return db.save_suggestions(conversation.record_id, conversation.turns[-1].turn_id, result.suggestions,
                                   result.ranking)
    except StoreError as exc:
        not_stored("The suggestions are not saved (they still work)", exc)
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
        not_stored("The re-ranked follow-up question is not saved", exc)
        return ids
    ids = list(ids)
    for i, new_id in zip(changed, new_ids):
        ids[i] = new_id
    return ids
