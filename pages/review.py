"""Review: what goading sessions caught, how well annotators agree, and the DECODE-shaped export.

A browser sees the sessions it made (``ui.ownership``); the teacher, signed in here, sees every session."""

from __future__ import annotations

import json
from dataclasses import replace

import streamlit as st

from studio.export import decode_records
from studio.scores import agreement, by_turn, outcome_frame, player_board, scoreboard, session_score
from studio.storage import StoreError
from ui import navigation, ownership, studio_store
from ui.app_defaults import current_settings
from ui.render import escape_markdown
from ui.review_tables import (
    PLAYER_WORDS,
    SESSION_COLUMNS,
    SOURCE_WORDS,
    in_words,
    player_label,
    scoreboard_rows,
    session_details,
    session_label,
    session_name,
    session_rows,
)
from ui.self_play import self_play_form
from ui.widgets import show_table

navigation.only_in_the_app(navigation.REVIEW)  # run alone by Streamlit: the app is offered instead

st.title("Review goading sessions")
with st.sidebar:
    ownership.sign_in_box()
db = studio_store.store()
if db is None:
    st.stop()
with st.expander("Self-play: the goading assistant talks to a bot", icon="🤖"):
    st.caption("Each session opens with a question, then sends the assistant's suggestion every turn; replies go "
               "through the guard as on the chat page, and two judges check each reply sent (the guard's own "
               "detector, and the same detector reading the whole conversation at once). Same as "
               "`python -m studio redteam`; the sessions belong to this browser.")
    self_play_form(current_settings())
viewer = ownership.viewer()
try:
    infos = db.list_sessions(viewer=viewer)
    sessions = [s for s in (db.load_session(info.id) for info in infos) if s is not None]
    ids = {s.info.id for s in sessions}
    annotations = [a for a in db.annotations() if a.session_id in ids]
except StoreError as exc:
    st.error(f"Cannot read the sessions: {studio_store.said(exc)}", icon="🗄️")
    st.stop()
whose = ("every browser's sessions and the command line's (signed in as the teacher)" if viewer.teacher else
         "the sessions of this browser; a teacher signed in (sidebar) sees everyone's")
st.caption(escape_markdown(f"{len(sessions)} session{'' if len(sessions) == 1 else 's'} · {len(annotations)} "
                           f"annotation{'' if len(annotations) == 1 else 's'} · {whose}"))
if viewer.teacher:  # the kind only: the address is the server's, set where it was started
    st.caption(escape_markdown(f"Stored in the server's {studio_store.database_kind(studio_store.database_url())} "
                               f"database (schema {db.schema_version}), set where the server was started."))
if not sessions:
    st.info("No sessions yet: chat on the Guarded chat page (every conversation is saved in this browser), or run "
            "self-play above." + ("" if viewer.teacher else " Sessions from other browsers, from before sessions "
                                  "belonged to a browser, and from the command line are listed for the teacher."))
    st.stop()

sources = sorted({s.info.source for s in sessions})
chosen = st.multiselect("Sessions from", sources, default=sources, key="review_sources",
                        format_func=lambda s: SOURCE_WORDS.get(s, s))
sessions = [s for s in sessions if s.info.source in chosen]
grouped = by_turn(annotations)
# each player by name, or "guest" with the browser's first key characters: two browsers without a name stay apart
scores = [replace(session_score(s, grouped), player=player_label(s.info)) for s in sessions]
outcomes = outcome_frame(sessions, annotations)

st.subheader("Scoreboard")
st.caption("Per bot, decoding, guard mode and the way the user's message before each bot reply was written. "
           "Flagged by the guard: it found a contradicting reply among the bot's drafts, sent or not; flagged and "
           "sent: the reply that went out contradicts. Confirmed: annotators said the reply contradicts (majority; "
           "the share is over annotated replies).")
# wrapping HTML, every header whole, few enough columns to fit a 1,024 px window (ui.review_tables.scoreboard_rows)
show_table(scoreboard_rows(scoreboard(outcomes)), css_class="cg-scoreboard")
st.markdown("**Players**: fewest bot replies to a contradiction (confirmed by annotators where annotated, else "
            "flagged by the guard); contradictions sent and those the guard caught are counted apart")
show_table(in_words(player_board(scores), PLAYER_WORDS), css_class="cg-players")

st.subheader("Sessions")
# wrapping HTML, the columns that fit a 1,024 px window; the rest of a session below, for the one picked
rows = {row["id"]: row for row in session_rows(scores, {s.info.id: session_name(s) for s in sessions})}
show_table(list(rows.values()), columns=SESSION_COLUMNS, css_class="cg-sessions")
st.caption("Each bot reply keeps the detector and threshold it was judged with when it was made; a session's "
           "details (below, for the session picked) list them.")
by_id = {s.info.id: s for s in sessions}
left, right = st.columns([5, 2], vertical_alignment="bottom")  # the link whole at 1,024 px
opened = left.selectbox("A session to read or annotate on the chat page", list(by_id),
                        format_func=lambda i: session_label(by_id[i]), key="review_open")
if opened:  # a link within the app: this tab's Streamlit session (the teacher's sign-in) goes along
    right.page_link(navigation.page(navigation.CHAT), label="Open in the chat", icon="💬",
                    query_params={"session": opened})
    with st.expander("This session in detail: bot, decoding, guard mode, detector, first flagged, …"):
        show_table(session_details(rows[opened]), css_class="cg-session-details")

st.subheader("Annotator agreement")
report = agreement(annotations)
if not report.items_with_two_or_more:
    st.info("Agreement needs bot replies annotated by two or more people (type your name in the chat page's "
            "Goading studio box, then annotate).")
else:
    def kappa_rows(results, question):
        return [{"question": question, "annotators": r.raters, "replies": r.items,
                 "kappa": "undefined (one label everywhere)" if r.value is None else f"{r.value:.3f}"} for r in results]

    cohen = kappa_rows(report.cohen_contradiction, "contradiction yes/no") + \
        kappa_rows(report.cohen_category, "kind of contradiction")
    st.markdown("**Agreement of each pair of annotators** (Cohen's kappa, scikit-learn), on the replies both "
                "annotated; 1 is full agreement, 0 no better than chance")
    show_table(cohen, interactive=True)
    fleiss = kappa_rows([r for r in (report.fleiss_contradiction,) if r], "contradiction yes/no") + \
        kappa_rows([r for r in (report.fleiss_category,) if r], "kind of contradiction")
    st.markdown("**Agreement of all annotators** (Fleiss' kappa, statsmodels), on the replies with the most common "
                "number of annotators")
    show_table(fleiss, interactive=True)

st.subheader("Export")
annotated_only = st.toggle("Annotated bot replies only", value=True, key="review_annotated_only")
records = list(decode_records(db, annotated_only=annotated_only, session_ids=[s.info.id for s in sessions]))
st.download_button(f"Download for training and evaluation ({len(records)} records)", icon="⬇️",
                   data="".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records),
                   file_name="studio-decode.jsonl", mime="application/jsonl", disabled=not records,
                   on_click="ignore",  # a download changes nothing on the page: no rerun
                   help="One record per bot reply in DECODE's format (JSON lines); "
                        "`python -m guard evaluate --format decode FILE` reads it.")
st.caption("The sessions listed above. Same as `python -m studio export --db URL --format decode -o OUT.jsonl"
           + (" --annotated-only`" if annotated_only else "`"))
