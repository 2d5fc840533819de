"""Streamlit components the playground and learn pages share: a verdict card and the heatmap."""

from __future__ import annotations

import html

import altair as alt
import pandas as pd
import streamlit as st

from guard.records import Dialogue
from ui.render import escape_markdown, evidence_marks, pair_score_frame, turn_html

CATEGORY_NAMES = {
    "none": "no contradiction",
    "intra": "intra-sentence contradiction",
    "role": "role confusion",
    "history": "history contradiction",
}


def verdict_line(verdict) -> str:
    """'⚠️ history contradiction · p = 0.93' or '✅ no contradiction · p = 0.12' (markdown-safe)."""
    name = CATEGORY_NAMES.get(verdict.category, verdict.category)
    icon = "⚠️" if verdict.contradiction else "✅"
    return f"{icon} **{escape_markdown(name)}** · p = {verdict.score:.2f}"


def show_dialogue(dialogue: Dialogue, verdict=None, who: str = "the last turn") -> None:
    """The dialogue with the verdict's evidence highlighted (earlier turns and the judged turn)."""
    marks = evidence_marks(verdict.evidence, dialogue.last.turn_id, who) if verdict is not None else {}
    parts = []
    for turn in dialogue.turns:
        body = turn_html(turn.agent_id, turn.text, marks.get(turn.turn_id, ()), turn_id=turn.turn_id)
        parts.append(
            f'<div style="margin:2px 0"><b>{_html(turn.agent_id)}</b> '
            f'<span style="color:#888;font-size:0.8em">turn {turn.turn_id}</span>{body}</div>'
        )
    st.html('<div class="cg-dialogue">' + "".join(parts) + "</div>")


def _html(text: str) -> str:
    return html.escape(text)


def show_evidence_table(verdict) -> None:
    own = (verdict.details or {}).get("turn_id")

    def where(turn_id: int) -> str:
        if turn_id == own:
            return "inside the judged turn"
        return f"persona line {-turn_id}" if turn_id < 0 else f"turn {turn_id}"

    rows = [
        {"compared with": where(e.turn_id), "earlier text": e.premise, "judged clause": e.hypothesis,
         "score": round(e.score, 3)}
        for e in verdict.evidence if e.turn_id > -10_000
    ]
    if rows:
        st.dataframe(pd.DataFrame(rows), hide_index=True)


def show_category_checks(verdict) -> None:
    """What the intra-sentence and role-confusion checks compared."""
    details = verdict.details or {}
    clauses = details.get("clauses")
    if clauses is not None:
        intra = details.get("intra_pairs") or []
        bar = details.get("intra_threshold")
        st.markdown(f"**Intra-sentence check** · {len(clauses)} clause(s), best clash "
                    f"p = {details.get('intra_score', 0.0):.2f}"
                    + (f" (flags at ≥ {bar:.3f}: clauses of one human message clash that often only 1% of the time)"
                       if bar is not None else ""))
        if intra:
            st.dataframe(pd.DataFrame([{"clause A": p.premise, "clause B": p.hypothesis, "score": round(p.score, 3)}
                                       for p in intra]), hide_index=True)
        else:
            st.caption("one clause only: nothing inside the turn to compare")
    role = details.get("role")
    if isinstance(role, dict):
        if role.get("decided"):
            pair = role.get("user_pair")
            st.markdown(
                f"**Role-confusion check** · reading as the user's words {role['user_reading']:.2f} vs as the "
                f"bot's own {role['bot_reading']:.2f} (NLI entailment; role if the user reading ≥ "
                f"{role.get('role_threshold', 0.5):.2f} and wins)")
            if pair is not None:
                st.caption(escape_markdown(f'user turn {pair.turn_id}: "{pair.premise}" → "{pair.hypothesis}"'))
        else:
            st.caption(escape_markdown(f"role check not run: {role.get('why', '')}"))
    elif verdict.contradiction and verdict.category == "history":
        st.caption("role-confusion check: not applicable")


def heatmap(pair_scores, title: str = "pair scores") -> None:
    """Candidate sentences × earlier utterances, coloured by P(contradiction)."""
    frame = pair_score_frame(pair_scores)
    frame = frame[frame["turn_id"] > -10_000]
    if frame.empty:
        st.caption("no earlier same-speaker sentences to pair with")
        return
    order = frame.sort_values("turn_id")["earlier"].drop_duplicates().tolist()
    base = alt.Chart(frame).encode(
        x=alt.X("earlier:N", sort=order, title="earlier utterance (sentence)", axis=alt.Axis(labelAngle=-30,
                                                                                               labelLimit=220)),
        y=alt.Y("candidate:N", title="judged sentence", axis=alt.Axis(labelLimit=260)),
    )
    rect = base.mark_rect().encode(
        color=alt.Color("score:Q", scale=alt.Scale(domain=[0, 1], scheme="reds"), title="P(contra)"),
        tooltip=["earlier", "candidate", alt.Tooltip("score:Q", format=".3f")],
    )
    text = base.mark_text(baseline="middle").encode(
        text=alt.Text("score:Q", format=".2f"),
        color=alt.condition("datum.score > 0.6", alt.value("white"), alt.value("black")),
    )
    st.altair_chart((rect + text).properties(title=title, height=max(120, 40 * frame["candidate"].nunique())),
                    width="stretch")
