"""Streamlit pieces of the guarded-chat page: a bot turn's caption and candidate panel, the per-turn
chart and re-judging the conversation. The records come from conversation/, the pure
helpers from ui/transcript.py (tested alone)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import streamlit as st

from conversation.guarding import rejudge
from conversation.records import BOT, BotTurnReport, ChatTurn, Conversation, GuardSettings
from guard.vocabulary import GuardMode, category_name
from ui.charts import TURN_CHART_HEIGHT, turn_score_chart
from ui.render import escape_markdown, turn_html
from ui.transcript import (
    STATUS_ICONS,
    candidate_marks,
    candidate_table,
    evidence_context_html,
    evidence_rows,
    turn_scores,
)
from ui.widgets import PRESENTATION_SCALE, presentation_on, show_table

if TYPE_CHECKING:  # loads torch
    from guard.detector import ContradictionDetector


def turn_caption(report: BotTurnReport) -> None:
    """What the guard did this turn, one line with its icon (⚠️ only when the sent reply is flagged)."""
    icon = STATUS_ICONS[report.status]
    st.caption((icon + " " if icon else "") + escape_markdown(report.summary()))
    if report.rejudge_note:
        st.caption("🔁 " + escape_markdown(report.rejudge_note))


def show_candidates(conversation: Conversation, turn: ChatTurn) -> None:
    """Every candidate of a bot turn with its scores and the policy's reason; each contradicting
    candidate with its clause marked and the earlier turns it contradicts (its evidence lives here,
    not in the transcript, unless it was sent)."""
    report = turn.report
    with st.expander(f"Candidates ({len(report.candidates)}) and why this reply", expanded=False):
        # wrapping HTML: the candidate and its reason wrap, the scores stay whole at any width (an st.dataframe
        # clipped them at 1400 px) and grow in presentation mode
        show_table(candidate_table(report), css_class="cg-candidates")
        for cand in report.candidates:
            if not cand.contradicts:
                continue
            state = "sent" if cand.chosen else "not sent"
            st.markdown(f"**Candidate #{cand.index + 1}** ({state}) · {escape_markdown(category_name(cand.category))}"
                        f", p = {cand.contradiction_score:.2f} — {escape_markdown(cand.reason)}")
            st.html(turn_html(BOT, cand.text, candidate_marks(cand)))
            context = evidence_context_html(conversation, cand, turn.turn_id)
            if context:
                st.html(f'<div class="cg-evidence-context" style="border-left:3px solid #d77;padding-left:8px">'
                        f"{context}</div>")
            rows = evidence_rows(cand)
            if rows:
                show_table(rows, css_class="cg-evidence-table")
            role = cand.details.role if cand.details is not None else None
            if role is not None and role.decided:
                st.caption(escape_markdown(
                    f"role reading: as the user's words {role.user_reading:.2f} vs as the bot's "
                    f"{role.bot_reading:.2f} (NLI entailment)"))
        timings = report.timings
        st.caption(escape_markdown(
            f"generation {timings.get('generate_s', 0):.2f} s · guard {timings.get('guard_s', 0):.2f} s · "
            f"detector {report.detector} · τ = {report.threshold:.2f}"))


def show_turn_chart(conversation: Conversation, threshold: float) -> None:
    """The highest contradiction score per bot turn, sent reply vs the candidates not sent, τ as a rule."""
    rows = turn_scores(conversation)
    if not rows:
        return
    st.markdown("**Contradiction score per bot turn**")
    scale = PRESENTATION_SCALE if presentation_on() else 1.0
    st.altair_chart(turn_score_chart(rows, threshold, scale), width="stretch", height=round(TURN_CHART_HEIGHT * scale))
    st.caption("Points above the dashed τ line are contradictions. A high orange point under a low blue one "
               "is the guard at work: a contradicting candidate was not sent.")


def rejudge_controls(conversation: Conversation, settings: GuardSettings, detector_name: str,
                     load_detector: Callable[[], ContradictionDetector | None]) -> Conversation | None:
    """A button that judges every bot turn again with the sidebar's detector, τ and mode (the
    candidates stay; nothing is regenerated). Returns the re-judged conversation, or None."""
    if not any(t.report is not None for t in conversation.turns):
        return None
    if settings.mode == GuardMode.OFF:
        st.caption("Pick a guard mode other than off to re-judge the conversation.")
        return None
    label = f"Re-judge the conversation ({detector_name}, τ = {settings.threshold:.2f}, {settings.mode})"
    if not st.button(label, icon="🔁", help="Scores every candidate of every bot turn again with the detector and "
                                           "threshold in the sidebar; the replies stay as they were sent."):
        return None
    detector = load_detector()
    if detector is None:
        return None
    with st.spinner("Judging every turn again…"):
        return rejudge(conversation, detector, settings, detector_name=detector_name)
