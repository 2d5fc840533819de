"""Review: what goading sessions caught, how well annotators agree, and the DECODE-shaped export."""

from __future__ import annotations

import json

import streamlit as st

from studio.export import decode_records
from studio.scores import agreement, by_turn, outcome_frame, player_board, scoreboard, session_score
from studio.storage import StoreError
from ui import studio_store
from ui.app_defaults import current_settings
from ui.render import escape_markdown
from ui.self_play import self_play_form
from ui.widgets import show_table

st.title("Review goading sessions")
with st.sidebar:
    st.text_input("Database URL", key=studio_store.URL_KEY, placeholder=studio_store.default_url(),
                  help="Empty: SQLite in the app's cache folder (or $GUARD_STUDIO_DB)")
db = studio_store.store()
if db is None:
    st.stop()
with st.expander("Self-play red-teaming: the goading assistant talks to a bot", icon="🤖"):
    st.caption("Each session opens with a question, then sends the assistant's suggestion of its method every "
               "turn; replies go through the guard as on the chat page and are judged by the guard's detector "
               "and by its unstructured reading. Same as `python -m studio redteam`.")
    self_play_form(current_settings())
try:
    infos = db.list_sessions()
    annotations = db.annotations()
    sessions = [s for s in (db.load_session(info.id) for info in infos) if s is not None]
except StoreError as exc:
    st.error(f"Cannot read the sessions: {exc}", icon="🗄️")
    st.stop()
st.caption(escape_markdown(f"{len(sessions)} sessions · {len(annotations)} annotations · {db.display_url} "
                           f"(schema {db.schema_version})"))
if not sessions:
    st.info("No sessions yet: chat on the Guarded chat page (every conversation is saved), run self-play "
            "above, or `python -m studio redteam ...`.")
    st.stop()

sources = sorted({s.info.source for s in sessions})
chosen = st.multiselect("Sessions from", sources, default=sources, key="review_sources")
sessions = [s for s in sessions if s.info.source in chosen]
grouped = by_turn(annotations)
scores = [session_score(s, grouped) for s in sessions]
outcomes = outcome_frame(sessions, annotations)

st.subheader("Scoreboard")
st.caption("Per bot, decoding preset, guard mode and the method of the user message before each bot reply. "
           "Guard flags: the guard found a contradicting candidate. Confirmed: annotators said the reply "
           "contradicts (majority; rate over annotated replies).")
show_table(scoreboard(outcomes), interactive=True)
st.markdown("**Players** — fewest bot turns to a contradiction (confirmed by annotators where annotated, "
            "else flagged by the guard)")
show_table(player_board(scores), interactive=True)

st.subheader("Sessions")
rows = [{"session": s.session_id, "player": s.player or "", "bot": s.bot, "preset": s.preset, "guard": s.guard_mode or "",
         "detector": s.detector, "source": s.source, "bot turns": s.bot_turns, "guard flags": s.guard_flags,
         "flagged replies sent": s.flagged_replies, "repaired replies sent": s.repaired_replies, "annotated": s.annotated_turns, "confirmed": s.confirmed,
         "first flag (bot turn)": s.turns_to_first_flag, "first confirmed (bot turn)": s.turns_to_first_confirmed,
         "provoked by": ", ".join(f"{m} × {n}" for m, n in sorted(s.triggers.items()))} for s in scores]
# a wrapping HTML table: every column fits at 1400 px (a dataframe scrolled sideways); open a session on the chat
# page with ?session=ID to annotate it
show_table(rows, css_class="cg-sessions")
st.caption("Each bot turn keeps the detector and τ it was judged with when it was made; the detector column lists "
           "them. Open a session on the chat page with ?session=ID to annotate it.")

st.subheader("Annotator agreement")
report = agreement([a for a in annotations if any(a.session_id == s.info.id for s in sessions)])
if not report.items_with_two_or_more:
    st.info("Agreement needs bot turns annotated by two or more people (type your name in the chat page's "
            "Goading studio box, then annotate).")
else:
    def kappa_rows(results, question):
        return [{"question": question, "annotators": r.raters, "items": r.items,
                 "kappa": "undefined (one label everywhere)" if r.value is None else f"{r.value:.3f}"} for r in results]

    cohen = kappa_rows(report.cohen_contradiction, "contradiction yes/no") + \
        kappa_rows(report.cohen_category, "CDConv category")
    st.markdown("**Cohen's kappa** (scikit-learn), each pair of annotators on the turns both annotated")
    show_table(cohen, interactive=True)
    fleiss = kappa_rows([r for r in (report.fleiss_contradiction,) if r], "contradiction yes/no") + \
        kappa_rows([r for r in (report.fleiss_category,) if r], "CDConv category")
    st.markdown("**Fleiss' kappa** (statsmodels), all annotators, turns with the most common number of raters")
    show_table(fleiss, interactive=True)

st.subheader("Export")
annotated_only = st.toggle("Annotated bot turns only", value=True, key="review_annotated_only")
ids = [s.info.id for s in sessions]
records = list(decode_records(db, annotated_only=annotated_only, session_ids=ids))
st.download_button(f"Download DECODE jsonl ({len(records)} records)", icon="⬇️",
                   data="".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records),
                   file_name="studio-decode.jsonl", mime="application/jsonl", disabled=not records,
                   help="One record per bot turn; `python -m guard evaluate --format decode FILE` reads it.")
st.caption("Same as `python -m studio export --db URL --format decode -o OUT.jsonl"
           + (" --annotated-only`" if annotated_only else "`"))
