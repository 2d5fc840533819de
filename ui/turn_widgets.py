"""Streamlit pieces of the guarded-chat page: a bot turn's caption and candidate panel, the per-turn chart and
re-judging the conversation. The records come from conversation/, the pure helpers from ui/transcript.py."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import streamlit as st

from conversation.guarding import GuardStep, guarded_reply, rejudge
from conversation.records import BOT, ChatSettings, ChatTurn, Conversation
from guard.judge.report import BotTurnReport, CandidateReport
from guard.judge.wording import memory_phrase, reminder_phrase, score_and_threshold, summary
from guard.vocabulary import GuardMode, category_name, describe_source
from ui import class_models, ownership, profiling
from ui.app_defaults import shown_threshold
from ui.charts import TURN_CHART_HEIGHT, judged_taus, turn_score_chart
from ui.live_turn import run_live
from ui.render import escape_markdown, tau_words, turn_html
from ui.sheet_widgets import show_candidate_clashes
from ui.transcript import (
    STATUS_ICONS,
    candidate_marks,
    candidate_table,
    evidence_context_html,
    evidence_rows,
    turn_scores,
)
from ui.turn_notes import reminding_line, withheld_notes
from ui.widgets import PRESENTATION_SCALE, presentation_on, show_table

if TYPE_CHECKING:  # loads torch
    from bots.base import Bot
    from guard.judge.pipeline import Guard


def turn_caption(report: BotTurnReport) -> None:
    """What the guard did this turn, one line with its icon (⚠️ only when the sent reply is flagged)."""
    icon = STATUS_ICONS[report.status]
    st.caption((icon + " " if icon else "") + escape_markdown(summary(report)))
    if report.prompt_note:
        st.caption("✂️ " + escape_markdown(report.prompt_note))
    if report.crowd_note:
        st.caption("👥 " + escape_markdown(report.crowd_note))
    if report.rejudge_note:
        st.caption("🔁 " + escape_markdown(report.rejudge_note))


def show_candidates(conversation: Conversation, turn: ChatTurn) -> None:
    """Every candidate of a bot turn with its scores and the policy's reason; each contradicting
    candidate with its clause marked and the earlier turns it contradicts (its evidence lives here,
    not in the transcript, unless it was sent). Drawn when opened (opening it reruns the page), so a long chat's
    transcript does not build every turn's closed panel on every message. Not a fragment: Streamlit's fragment
    wrapper costs about 10 ms a call, which a 30-turn transcript paid 30 times a message."""
    report = turn.report
    panel = st.expander(f"Candidates ({len(report.candidates)}) and why this reply", expanded=False,
                        key=f"candidates::{conversation.record_id}::{turn.turn_id}", on_change="rerun")
    with panel:
        if not panel.open:
            return
        # wrapping HTML: the candidate and its reason wrap, the scores stay whole at any width (an st.dataframe
        # clipped them at 1400 px) and grow in presentation mode
        if report.memory:
            said = memory_phrase(report)
            st.markdown(escape_markdown("🧠 " + said[:1].upper() + said[1:] + "."),
                        help="Technical: guard.judge.memory, the fact sheet's facts the message asks about or asserts, "
                             "put in a note right before the message in the bot's prompt.")
        if report.reminder is not None:
            st.markdown(escape_markdown("🔁 The guard " + reminder_phrase(report.reminder) + "."))
        teacher = ownership.is_teacher()
        show_table(candidate_table(report, original=teacher), css_class="cg-candidates")
        for line in withheld_notes(report, teacher):
            st.caption(escape_markdown(line))
        for cand in report.candidates:
            if not cand.contradicts and cand.repair is None:
                continue
            state = "sent" if cand.chosen else "not sent"
            if cand.repair is not None:
                state = "sent repaired" if cand.chosen else "repaired, not sent"
            what = escape_markdown(category_name(cand.category))
            if cand.deciding is not None:  # the deciding check's score, as the reason and the evidence rows say
                shown, _ = score_and_threshold(*cand.deciding)
                what += f", p = {shown}"
            st.markdown(f"**Candidate #{cand.index + 1}** ({state}) · {what} — {escape_markdown(cand.reason)}")
            st.html(turn_html(BOT, cand.text, candidate_marks(cand)))
            show_candidate_clashes(cand)
            if cand.repair is not None:
                show_repair(cand)
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
                    f"Who is speaking? It follows from the user's words at {role.user_reading:.2f} and from the "
                    f"bot's own at {role.bot_reading:.2f}."), help="Technical: the role-confusion reading, NLI "
                    "entailment of the candidate from the user's and from the bot's earlier sentences.")
        timings = report.timings
        remind = f" · reminder {timings['remind_s']:.2f} s" if "remind_s" in timings else ""
        st.caption(escape_markdown(
            f"generation {timings.get('generate_s', 0):.2f} s · guard {timings.get('guard_s', 0):.2f} s{remind} · "
            f"detector {class_models.shown_name(report.detector)} · τ = {report.threshold:.4f}"))


def show_repair(cand: CandidateReport) -> None:
    """What the repair mode sent of a candidate: the text without the sentence it cut (struck through on the
    candidate above; the candidate's reason says why, in the policy's words)."""
    repair = cand.repair
    st.markdown(f"✂️ **Sent without “{escape_markdown(repair.removed)}”:**")
    st.html(f'<div class="cg-repaired-reply" style="border-left:3px solid #6a6;padding-left:8px">'
            f"{turn_html(BOT, repair.reply)}</div>")


def show_turn_chart(conversation: Conversation, threshold: float | None) -> None:
    """The highest contradiction score per bot turn, sent reply vs the candidates not sent, each turn against the τ it
    was judged at (its report's); the caption says when that is not the sidebar's τ (``threshold``; None: unknown, the
    detector's config unusable, so each turn is drawn at its own τ only)."""
    rows = turn_scores(conversation)
    if not rows:
        return
    if threshold is None:
        threshold = rows[-1]["tau"]
    st.markdown("**Contradiction score per bot turn**")
    scale = PRESENTATION_SCALE if presentation_on() else 1.0
    st.altair_chart(turn_score_chart(rows, threshold, scale), width="stretch", height=round(TURN_CHART_HEIGHT * scale))
    taus = judged_taus(rows)
    if len(taus) > 1:
        line = ("Each turn was judged at its own τ, the red dash over it (" + ", ".join(f"{t:.4g}" for t in taus)
                + "): a point at or above its turn's dash is a contradiction.")
    else:
        line = "A point at or above the dashed τ line is a contradiction."
    if any(abs(r["line"] - r["tau"]) > 1e-9 for r in rows):
        line += (" A point with a short dash of its own colour was decided by a check with its own line (inside the "
                 "reply, or who is who): it is a contradiction at or above that dash.")
    if any(round(t, 4) != round(float(threshold), 4) for t in taus):
        line += (f" The sidebar's τ = {threshold:.4g} judges the next turn; re-judge the conversation to see the "
                 "earlier turns at it.")
    st.caption(line + " A high orange point under a low blue one is the guard at work: a contradicting candidate "
                      "was not sent.")


def rejudge_controls(conversation: Conversation, settings: ChatSettings,
                     load_guard: Callable[[], Guard | None]) -> Conversation | None:
    """A button that judges every bot turn again with the sidebar's detector, τ and mode (the
    candidates stay; nothing is regenerated). Returns the re-judged conversation, or None."""
    if not any(t.report is not None for t in conversation.turns):
        return None
    if settings.mode == GuardMode.OFF:
        st.caption("Pick a guard mode other than off to re-judge the conversation.")
        return None
    label = (f"Re-judge the conversation ({class_models.shown_name(settings.detector)}, τ = {tau_words(shown_threshold(settings))}, "
             f"{settings.mode})")
    if not st.button(label, icon="🔁", help="Scores every candidate of every bot turn again with the detector and "
                                           "threshold in the sidebar; the replies stay as they were sent."):
        return None
    guard = load_guard()
    if guard is None:
        return None
    with st.spinner("Judging every turn again…"):
        return rejudge(conversation, guard, settings)


def _verdict_line(index: int, text: str, step: GuardStep) -> str:
    """One candidate's verdict as the guard reaches it, for the live view (at the τ the verdict was judged with)."""
    verdict = step.verdict
    shown, limit = score_and_threshold(verdict.score, verdict.details.threshold)
    if verdict.contradiction:  # the check that decided, at its own threshold (the reason says the same number)
        shown, limit = score_and_threshold(*verdict.deciding)
    quote = escape_markdown(text if len(text) <= 90 else text[:87] + "…")
    if not verdict.contradiction:
        return f"✅ #{index + 1} “{quote}” — p = {shown} < τ = {limit}: no contradiction"
    top = verdict.evidence[0] if verdict.evidence else None
    where = "itself" if top is None or top.turn_id == verdict.details.turn_id else describe_source(top)
    return f"❌ #{index + 1} “{quote}” — {escape_markdown(category_name(verdict.category))}: contradicts {where} (p = {shown})"


def _choice_line(report: BotTurnReport, mode: GuardMode) -> str:
    """The policy's choice as the live view announces it: which reply the mode sends, a repair's cut sentence, or
    which policy decided when the repair mode could not repair."""
    which = "the safe reply" if report.chosen_index is None else f"candidate #{report.chosen_index + 1}"
    if report.repair is not None:
        return (f"**{mode}** sends {which} without “{escape_markdown(report.repair.removed)}”: "
                f"“{escape_markdown(report.repair.reply)}”")
    if report.decided_by is not None and report.repair_declined:
        return (f"**{mode}** could not repair the bot's favourite reply ({escape_markdown(report.repair_declined)}), "
                f"so **{report.decided_by}** sends {which}")
    return f"**{mode}** sends {which}"


def waiting_label(ahead: int, candidates: int) -> str:
    """The live box's heading while a turn waits for the bot: how many students' replies come first (none left: the
    bot is writing this one)."""
    if ahead <= 0:
        return f"The bot is writing {candidates} candidate{'s' if candidates != 1 else ''}…"
    return f"⏳ Waiting for the bot: {ahead} student{'s' if ahead != 1 else ''} ahead of you…"


def guarded_turn_live(conversation: Conversation, bot: Bot, guard: Guard | None, settings: ChatSettings,
                      while_running: Callable[[Callable[[], None]], None] | None = None) -> ChatTurn:
    """One guarded turn with its steps shown as they happen (``st.status``): the candidates while the bot writes them
    and as they arrive, each candidate's verdict, the policy's choice. The box closes to a one-line summary when the
    reply is in; the chat page then puts the finished turn in its place (a failed turn leaves it, marked failed). It
    runs in a thread (``ui.live_turn.run_live``); ``while_running(pump)`` draws the rest of the page meanwhile."""
    n = int(settings.num_candidates or 1)
    with st.status(waiting_label(0, n), expanded=True) as status:
        profiling.mark("live box")
        header = status.empty()  # "N candidates in s", above the lines once they are in
        lines: dict[int, object] = {}
        texts: list[str] = []
        drawn: dict[int, str] = {}  # each line's streamed text as last drawn: only a changed line is drawn again

        def line(i: int):
            if i not in lines:
                lines[i] = status.empty()
            return lines[i]

        def show(step: GuardStep) -> None:
            if step.kind == "waiting":  # the bot's model is writing other students' replies first (bots.worker)
                status.update(label=waiting_label(step.ahead or 0, n))
            elif step.kind == "writing":
                for i, text in enumerate(step.written):
                    if drawn.get(i) != text:
                        drawn[i] = text
                        line(i).markdown(f"✍️ #{i + 1} “{escape_markdown(text)}…”")
            elif step.kind == "candidates":
                texts[:] = [c.text for c in step.candidates]
                header.markdown(f"**{len(texts)} candidates** in {step.seconds:.1f} s")
                for i, text in enumerate(texts):
                    line(i).markdown(f"⏳ #{i + 1} “{escape_markdown(text)}”")
                for i in [i for i in lines if i >= len(texts)]:  # copies dropped (bots.local.distinct_replies)
                    lines.pop(i).empty()
            elif step.kind == "withheld" and step.index in lines:
                lines[step.index].markdown(f"🚫 #{step.index + 1} {escape_markdown(texts[step.index])}")
            elif step.kind == "judging":
                status.update(label=f"The guard is checking {len(texts)} candidates against the bot's earlier "
                                    "turns and persona…")
            elif step.kind == "verdict" and step.index in lines:
                lines[step.index].markdown(_verdict_line(step.index, texts[step.index], step))
            elif step.kind == "reminding":
                status.write(reminding_line(step.reminder))
                status.update(label="The bot is writing again, reminded of what it said…")
            elif step.kind == "reminded":
                start = len(texts)
                texts.extend(c.text for c in step.candidates)
                own = step.guard_written
                status.write(f"**{len(step.candidates) - own} reminded candidates** and the guard's own "
                             f"repl{'ies' if own > 1 else 'y'} in {step.seconds:.1f} s" if own else
                             f"**{len(step.candidates)} reminded candidates** in {step.seconds:.1f} s")
                for i, text in enumerate(texts[start:], start=start):
                    who = " (written by the guard)" if i >= len(texts) - own else ""
                    lines[i] = status.empty()
                    lines[i].markdown(f"⏳ #{i + 1}{who} “{escape_markdown(text)}”")
            elif step.kind == "chosen":
                status.write(f"{_choice_line(step.report, settings.mode)} · {step.seconds:.1f} s")

        try:
            turn = run_live(lambda on_step: guarded_reply(conversation, bot, guard, settings, on_step=on_step), show,
                            while_running)
        except Exception:
            status.update(label="The turn failed", state="error", expanded=False)
            raise
        if turn.report.prompt_note:  # a message longer than the bot's prompt: the bot read only its end
            status.write("✂️ " + escape_markdown(turn.report.prompt_note))
        total = sum(turn.report.timings.values())
        status.update(label=f"{STATUS_ICONS[turn.report.status]} {summary(turn.report)} · {total:.1f} s".strip(),
                      state="complete", expanded=False)
    return turn

