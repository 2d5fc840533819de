"""Streamlit components the playground and learn pages share: a verdict card, the heatmap, right and
wrong on the built-in examples."""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import TYPE_CHECKING

import pandas as pd
import streamlit as st

from guard.examples import ExampleJudgement, agreement_line, judge_examples
from guard.policies import deciding_score
from guard.records import Dialogue
from guard.verdicts import PairScore, Verdict
from guard.vocabulary import Category, PremiseSource, category_name, describe_source
from ui.charts import pair_heatmap
from ui.render import escape_markdown, evidence_marks, pair_score_frame, table_html, turn_html

if TYPE_CHECKING:  # loads torch
    from guard.detector import ContradictionDetector


#: Chart type in presentation mode, relative to normal (the page's own type grows 22/16).
PRESENTATION_SCALE = 1.5


def presentation_on() -> bool:
    return bool(st.session_state.get("presentation"))


def show_table(rows: Sequence[dict] | pd.DataFrame, columns: Sequence[str] | None = None,
               interactive: bool = False, css_class: str = "") -> None:
    """A small table as wrapping HTML (ui.render.table_html): every column whole at any width, text wrapped,
    and larger in presentation mode. ``interactive``: a long table (the Review page's) stays a sortable
    st.dataframe, except in presentation mode, where its type must grow with the page's."""
    if isinstance(rows, pd.DataFrame):
        rows = rows.astype(object).where(rows.notna(), None).to_dict("records")
    rows = list(rows)
    if interactive and not presentation_on():
        st.dataframe(pd.DataFrame(rows, columns=list(columns) if columns else None), hide_index=True)
        return
    if not rows:
        st.caption("(nothing yet)")
        return
    st.html(table_html(rows, columns, css_class))


def verdict_line(verdict: Verdict) -> str:
    """'⚠️ history contradiction · p = 0.93' or '✅ no contradiction · p = 0.12' (markdown-safe); p is the score of
    the check that decided (an intra-sentence contradiction's clause pair, not a higher pair under τ)."""
    name = category_name(verdict.category)
    icon = "⚠️" if verdict.contradiction else "✅"
    return f"{icon} **{escape_markdown(name)}** · p = {deciding_score(verdict)[0]:.2f}"


def show_dialogue(dialogue: Dialogue, verdict: Verdict | None = None, who: str = "the last turn") -> None:
    """The dialogue with the verdict's evidence highlighted (earlier turns and the judged turn)."""
    marks = evidence_marks(verdict.evidence, dialogue.last.turn_id, who).turns if verdict is not None else {}
    parts = []
    for turn in dialogue.turns:
        body = turn_html(turn.agent_id, turn.text, marks.get(turn.turn_id, ()), turn_id=turn.turn_id)
        parts.append(
            f'<div style="margin:2px 0"><b>{_html(turn.agent_id)}</b> '
            f'<span style="color:#888;font-size:0.8em">{_html(describe_source(PremiseSource.HISTORY, turn.turn_id))}'
            f"</span>{body}</div>"
        )
    st.html('<div class="cg-dialogue">' + "".join(parts) + "</div>")


def _html(text: str) -> str:
    return html.escape(text)


def show_evidence_table(verdict: Verdict) -> None:
    """The evidence pairs: what each judged clause was compared with, and the score."""
    rows = [
        {"compared with": describe_source(e), "earlier text": e.premise, "judged clause": e.hypothesis,
         "score": round(e.score, 3)}
        for e in verdict.evidence if e.source != PremiseSource.WHOLE_HISTORY
    ]
    if rows:
        show_table(rows, css_class="cg-evidence-table")


def show_category_checks(verdict: Verdict) -> None:
    """What the intra-sentence and role-confusion checks compared."""
    intra, role = verdict.details.intra, verdict.details.role
    if intra is not None:
        st.markdown(f"**Intra-sentence check** · {len(intra.clauses)} clause(s), best clash p = {intra.score:.2f}"
                    f" (flags at ≥ {intra.threshold:.3f}: clauses of one human message clash that often only 1% "
                    "of the time)")
        if intra.pairs:
            show_table([{"clause A": p.premise, "clause B": p.hypothesis, "score": round(p.score, 3)}
                        for p in intra.pairs])
        else:
            st.caption("one clause only: nothing inside the turn to compare")
    if role is not None:
        if role.decided:
            pair = role.user_pair
            st.markdown(
                f"**Role-confusion check** · reading as the user's words {role.user_reading:.2f} vs as the "
                f"bot's own {role.bot_reading:.2f} (NLI entailment; role if the user reading ≥ "
                f"{role.role_threshold:.2f} and wins)")
            if pair is not None:
                st.caption(escape_markdown(f'user {describe_source(pair)}: "{pair.premise}" → "{pair.hypothesis}"'))
        else:
            st.caption(escape_markdown(f"role check not run: {role.why}"))
    elif verdict.contradiction and verdict.category == Category.HISTORY:
        st.caption("role-confusion check: not applicable")


def heatmap(pair_scores: Sequence[PairScore], threshold: float, title: str = "") -> None:
    """Judged sentences (rows) × earlier utterances (columns), coloured by P(contradiction), τ marked."""
    frame = pair_score_frame(pair_scores)
    frame = frame[frame["source"] != PremiseSource.WHOLE_HISTORY]
    if frame.empty:
        st.caption("no earlier same-speaker sentences to pair with")
        return
    st.altair_chart(pair_heatmap(frame, threshold, title, scale=PRESENTATION_SCALE if presentation_on() else 1.0),
                    width="stretch")


def example_judgements(detector_name: str, threshold: float,
                       detector: ContradictionDetector | None) -> list[ExampleJudgement]:
    """Every built-in example judged live by ``detector``; kept per session for this detector and τ
    (both pages show it, and it only changes when the sidebar does)."""
    key = (detector_name, round(float(threshold), 4))
    cached = st.session_state.get("example_judgements")
    if cached is None or cached[0] != key:
        with st.spinner("Judging the built-in examples…"):
            cached = (key, judge_examples(detector))
        st.session_state["example_judgements"] = cached
    return cached[1]


def show_agreement(judgements: list[ExampleJudgement]) -> None:
    """One summary line and, on demand, the right/wrong table of every built-in example."""
    st.markdown(f"**{escape_markdown(agreement_line(judgements).capitalize())}.**")
    with st.expander("Right and wrong per example"):
        show_table([{
            "example": j.title, "people say": category_name(j.expected), "detector says": category_name(j.said),
            "p": round(j.score, 2), "": j.mark(),
        } for j in judgements])


def judgement_text(judgement: ExampleJudgement) -> str:
    """'✔ right: …' in green or '✘ wrong: …' in red (markdown-safe), for under one example."""
    if judgement.agrees:
        return f":green[**{escape_markdown(judgement.mark())}**: the detector agrees with people on this example]"
    return (f":red[**✘ wrong**: the detector says {escape_markdown(category_name(judgement.said))} "
            f"(p = {judgement.score:.2f}); people say {escape_markdown(category_name(judgement.expected))}]")
