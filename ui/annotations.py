"""People's labels on the chat page: per bot turn, a contradiction or not, which earlier turns or persona lines it
contradicts, what kind of contradiction (CDConv's category, in words), and whether the guard was right (stored as
studio annotations)."""

from __future__ import annotations

import streamlit as st

from conversation.records import ChatTurn, Conversation
from guard.vocabulary import CATEGORIES, Category
from studio.storage import Annotation, Store, StoreError
from ui.class_models import hide_paths
from ui.render import escape_markdown
from ui.review_tables import first_words
from ui.studio_store import not_stored, player_name, said, store
from ui.widgets import plain_category


def _cached(db: Store, session_id: str, turn_id: int) -> list[Annotation]:
    cache_key = f"annotations::{session_id}"
    cached = st.session_state.get(cache_key)
    if cached is None:
        try:
            cached = st.session_state[cache_key] = db.annotations(session_id)
        except StoreError as exc:
            not_stored("Earlier annotations could not be read", exc)
            return []
    return [a for a in cached if a.turn_index == turn_id]


def annotation_box(conversation: Conversation, turn: ChatTurn) -> None:
    """Per bot turn: contradiction yes/no, which earlier turns or persona lines, CDConv category, was the guard
    right. Its controls are built only while it is open (opening it reruns the page), so a long chat does not build
    five widgets a turn on every message; the open form is a fragment: saving redraws the form only."""
    key = f"ann::{conversation.record_id}::{turn.turn_id}"
    box = st.expander(f"Annotate turn {turn.turn_id}", icon="🏷️", key=f"{key}::open", on_change="rerun")
    with box:
        if box.open:
            _annotation_form(conversation, turn, key)


@st.fragment
def _annotation_form(conversation: Conversation, turn: ChatTurn, key: str) -> None:
    """The open box's controls and its Save button (a fragment: saving redraws the form only)."""
    db = store()
    if db is None:
        st.caption("Annotations need the studio database (see the error above).")
        return
    name = player_name()
    mine = {a.annotator: a for a in _cached(db, conversation.record_id, turn.turn_id)}
    previous = mine.get(name)
    yes = st.radio("Does this reply contradict the conversation?", ["no", "yes"], horizontal=True,
                   key=f"{key}::yes", index=1 if previous and previous.contradiction else 0)
    earlier = [t.turn_id for t in conversation.turns if t.turn_id < turn.turn_id]
    texts = {t.turn_id: t.text for t in conversation.turns}
    contradicted = st.multiselect("Turns it contradicts", earlier, key=f"{key}::turns",
                                  default=[i for i in (previous.contradicted_turns if previous else [])
                                           if i in earlier],
                                  format_func=lambda i: f"turn {i}: {first_words(texts[i])}",
                                  disabled=yes == "no")
    persona = (turn.report.persona if turn.report is not None and turn.report.persona
               else list(conversation.persona))
    lines = list(range(len(persona)))
    persona_hits = st.multiselect(
        "Persona lines it contradicts", lines, key=f"{key}::persona",
        default=[i for i in (previous.contradicted_persona if previous else []) if i in lines],
        format_func=lambda i: f"persona line {i + 1}: {persona[i][:60]}", disabled=yes == "no" or not lines,
        help=None if lines else "This turn was made without a persona.")
    categories = [c for c in CATEGORIES if c != Category.NONE]
    category = st.selectbox("Kind of contradiction", categories, key=f"{key}::category",
                            index=categories.index(previous.category)
                            if previous and previous.category in categories else 2,
                            format_func=plain_category, disabled=yes == "no",
                            help="Itself (two parts of the reply clash), who is who (it answers as if it were "
                                 "the user), or something said earlier. Technical: CDConv's categories intra, "
                                 "role and history.")
    right = st.radio("Was the guard right?", ["yes", "no", "not sure"], horizontal=True, key=f"{key}::right",
                     index={True: 0, False: 1, None: 2}[previous.guard_right] if previous else 2)
    if st.button("Save annotation", key=f"{key}::save", icon="💾"):
        try:
            db.annotate(Annotation(conversation.record_id, turn.turn_id, name, yes == "yes",
                                   list(contradicted) if yes == "yes" else [],
                                   category if yes == "yes" else Category.NONE,
                                   {"yes": True, "no": False}.get(right),
                                   contradicted_persona=list(persona_hits) if yes == "yes" else []))
        except (StoreError, ValueError) as exc:
            st.error(f"Annotation not saved: {said(exc) if isinstance(exc, StoreError) else hide_paths(exc)}",
                     icon="🏷️")
        else:
            st.session_state.pop(f"annotations::{conversation.record_id}", None)
            st.success(f"Saved as {name}.", icon="✅")
    others = [a for who, a in mine.items() if who != name]
    if others:
        st.caption(escape_markdown("; ".join(
            f"{a.annotator}: {'contradiction' if a.contradiction else 'consistent'}" for a in others)))
