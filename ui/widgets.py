"""Streamlit components the playground and learn pages share: a verdict card, the heatmap, right and
wrong on the built-in examples."""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import TYPE_CHECKING

import pandas as pd
import streamlit as st

from guard.eval.examples import ExampleJudgement, agreement_line, judge_examples
from guard.judge.verdicts import PairScore, Verdict
from guard.judge.wording import score_and_threshold
from guard.records import Dialogue
from guard.vocabulary import Category, PremiseSource, category_name, describe_source
from ui.charts import pair_heatmap
from ui.render import escape_markdown, evidence_marks, turn_html
from ui.tables import pair_score_frame, table_html
from ui.transcript import pair_rows

if TYPE_CHECKING:  # loads torch
    from guard.config import JudgeSettings
    from guard.judge.pipeline import Guard


#: Chart type in presentation mode, relative to normal (the page's own type grows 22/16).
PRESENTATION_SCALE = 1.5


def presentation_on() -> bool:
    return bool(st.session_state.get("presentation"))


def show_table(rows: Sequence[dict] | pd.DataFrame, columns: Sequence[str] | None = None,
               interactive: bool = False, css_class: str = "", pinned: Sequence[float] = ()) -> None:
    """A small table as wrapping HTML (ui.tables.table_html; ``pinned``: leading columns kept in view when it
    scrolls): every column whole, text wrapped, larger in presentation mode. ``interactive``: a long table (the
    Review page's) stays a sortable st.dataframe, except in presentation mode, where its type must grow."""
    if isinstance(rows, pd.DataFrame):
        rows = rows.astype(object).where(rows.notna(), None).to_dict("records")
    rows = list(rows)
    if interactive and not presentation_on():
        st.dataframe(pd.DataFrame(rows, columns=list(columns) if columns else None), hide_index=True)
        return
    if not rows:
        st.caption("(nothing yet)")
        return
    st.html(table_html(rows, columns, css_class, pinned))


def verdict_line(verdict: Verdict) -> str:
    """'⚠️ history contradiction · p = 0.93' or '✅ no contradiction · p = 0.12' (markdown-safe); p is the score of
    the check that decided (an intra-sentence contradiction's clause pair, not a higher pair under τ)."""
    name = category_name(verdict.category)
    icon = "⚠️" if verdict.contradiction else "✅"
    shown, line = score_and_threshold(*verdict.deciding)  # the digits it needs beside its line
    return f"{icon} **{escape_markdown(name)}** · p = {shown} (a contradiction from {line} on)"


#: The kinds of contradiction in a class's words (the Learn page); the papers' names are guard.vocabulary's.
PLAIN_CATEGORY_NAMES: dict[Category, str] = {
    Category.NONE: "no contradiction",
    Category.INTRA: "contradicts itself",
    Category.ROLE: "mixes up who is who",
    Category.HISTORY: "contradicts something said earlier",
}


def plain_category(category: str) -> str:
    """A kind of contradiction in a class's words ("contradicts something said earlier")."""
    return PLAIN_CATEGORY_NAMES.get(category, category_name(category))


def percents(score: float, threshold: float) -> tuple[str, str]:
    """A score and its threshold as percentages, with the digits they need to compare the way the numbers do
    (94.7% under 94.9%, never "95% sure" beside "its line is 95%" and no contradiction)."""
    shown, limit = score_and_threshold(score, threshold)
    digits = max(len(shown.split(".")[1]) - 2, 0)
    return f"{float(shown) * 100:.{digits}f}%", f"{float(limit) * 100:.{digits}f}%"


def plain_verdict_line(verdict: Verdict, expected: str | None = None) -> str:
    """The verdict in a class's words, and what people say (markdown-safe): '⚠️ Detector: **contradicts something
    said earlier**, 98% sure · people say: **contradicts something said earlier**'."""
    tau = verdict.details.threshold
    if verdict.contradiction:
        score, limit = verdict.deciding
        sure, line = percents(score, limit)
        said = f"⚠️ Detector: **{plain_category(verdict.category)}**, {sure} sure"
        if round(limit, 4) != round(tau, 4):
            said += f" (its line for this kind is {line})"
    else:
        strongest, line = percents(verdict.score, tau)
        said = f"✅ Detector: **no contradiction**: the strongest clash it found is {strongest}, under its {line} line"
    if expected is not None:
        said += f" · people say: **{plain_category(expected)}**"
    return said


def show_dialogue(dialogue: Dialogue, verdict: Verdict | None = None, who: str = "the last turn",
                  plain: bool = False) -> None:
    """The dialogue with the verdict's evidence highlighted (earlier turns and the judged turn); ``plain``: badges in
    a class's words."""
    marks = evidence_marks(verdict.evidence, dialogue.last.turn_id, who, plain).turns if verdict is not None else {}
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
    rows = pair_rows(verdict.evidence, "judged clause")
    if rows:
        show_table(rows, css_class="cg-evidence-table")


def heatmap(pair_scores: Sequence[PairScore], threshold: float, title: str = "") -> None:
    """Judged sentences (rows) × earlier utterances (columns), coloured by P(contradiction), τ marked."""
    frame = pair_score_frame(pair_scores)
    frame = frame[frame["source"] != PremiseSource.WHOLE_HISTORY]
    if frame.empty:
        st.caption("no earlier same-speaker sentences to pair with")
        return
    st.altair_chart(pair_heatmap(frame, threshold, title, scale=PRESENTATION_SCALE if presentation_on() else 1.0),
                    width="stretch")


def example_judgements(guard: Guard, settings: JudgeSettings) -> list[ExampleJudgement]:
    """Every built-in example judged live by ``guard`` with ``settings``; kept per session for this detector and
    these settings (both pages show it, and it only changes when the sidebar does)."""
    key = (guard.name, settings)
    cached = st.session_state.get("example_judgements")
    if cached is None or cached[0] != key:
        with st.spinner("Judging the built-in examples…"):
            cached = (key, judge_examples(guard, settings))
        st.session_state["example_judgements"] = cached
    return cached[1]


def show_agreement(judgements: list[ExampleJudgement], plain: bool = False,
                   titles: dict[str, str] | None = None) -> None:
    """One summary line and, on demand, the right/wrong table of every built-in example; ``plain``: in a class's
    words, with ``titles`` (example key -> title) in place of the papers' titles."""
    if not plain:
        st.markdown(f"**{escape_markdown(agreement_line(judgements).capitalize())}.**")
        with st.expander("Right and wrong per example"):
            show_table([{
                "example": j.title, "people say": category_name(j.expected), "detector says": category_name(j.said),
                "p": round(j.score, 2), "": j.mark(),
            } for j in judgements])
        return
    agree = sum(j.agrees for j in judgements)
    same = sum(j.agrees and j.same_category for j in judgements)
    line = f"The detector agrees with people on {agree} of the {len(judgements)} examples"
    if same != agree:
        line += f" (on {same} of them it also names the same kind of contradiction)"
    st.markdown(f"**{line}.**")
    with st.expander("Right and wrong, example by example"):
        show_table([{
            "example": (titles or {}).get(j.key, j.title), "people say": plain_category(j.expected),
            "the detector says": plain_category(j.said), "": "✔ right" if j.agrees else "✘ wrong",
        } for j in judgements])


def judgement_text(judgement: ExampleJudgement, plain: bool = False) -> str:
    """'✔ right: …' in green or '✘ wrong: …' in red (markdown-safe), for under one example; ``plain``: in a class's
    words."""
    if plain:
        if not judgement.agrees:
            return (f":red[**✘ wrong**: the detector says: {escape_markdown(plain_category(judgement.said))}; "
                    f"people say: {escape_markdown(plain_category(judgement.expected))}]")
        if not judgement.same_category:
            return (f":green[**✔ right** that something clashes, though the detector says it "
                    f"{escape_markdown(plain_category(judgement.said))} and people say it "
                    f"{escape_markdown(plain_category(judgement.expected))}]")
        return ":green[**✔ right**: the detector agrees with people here]"
    if judgement.agrees:
        return f":green[**{escape_markdown(judgement.mark())}**: the detector agrees with people on this example]"
    return (f":red[**✘ wrong**: the detector says {escape_markdown(category_name(judgement.said))} "
            f"(p = {judgement.score:.2f}); people say {escape_markdown(category_name(judgement.expected))}]")
