"""How a guarded conversation is drawn: evidence marks and badges, the candidates table, the per-turn chart's
rows, the guard modes' help. Pure (no Streamlit); the records come from ``conversation.records``, the
widgets that show these are in ``ui/turn_widgets.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

from conversation.records import BOT, Conversation
from guard.judge.reminders import GUARD_WRITTEN
from guard.judge.report import BotTurnReport, CandidateReport, TurnStatus
from guard.judge.verdicts import PairScore
from guard.judge.wording import answer_words, score_and_threshold
from guard.vocabulary import Category, GuardMode, PremiseSource, describe_source
from ui.fact_sheet import candidate_clashes, clash_words, distinct_clashes
from ui.render import DialogueMarks, Mark, turn_html

#: The transcript's icon per outcome (none when the guard is off).
STATUS_ICONS: dict[TurnStatus, str] = {
    TurnStatus.OFF: "", TurnStatus.CONSISTENT: "✅", TurnStatus.GUARDED: "🛡️", TurnStatus.FLAGGED: "⚠️",
}


def transcript_marks(conversation: Conversation, include_rejected: bool = False) -> DialogueMarks:
    """Highlights for the transcript's turns and persona lines.

    Earlier turns a sent reply contradicts get an ``evidence`` mark with the pair score, and the
    reply its contradicting clause. Candidates that were not sent keep their evidence in their
    own panel (``evidence_context_html``); ``include_rejected`` marks it in the transcript too.
    One earlier sentence contradicted several times gets one badge listing every turn.
    """
    marks = DialogueMarks()
    found: dict[tuple[PremiseSource, int, str], list[tuple[str, int, float]]] = {}
    for turn in conversation.turns:
        report = turn.report
        if report is None:
            continue
        for cand in report.candidates:
            sent = cand.chosen and cand.repair is None  # a repaired reply was sent without what contradicted
            if not cand.contradicts or not (sent or include_rejected):
                continue
            who = "the reply" if sent else f"candidate #{cand.index + 1}"
            for ev in cand.evidence:
                if ev.source in (PremiseSource.INTRA, PremiseSource.WHOLE_HISTORY):
                    continue  # clause pairs are marked on the reply itself; the whole history is no one turn
                if ev.source == PremiseSource.PERSONA and ev.turn_id >= len(conversation.persona):
                    continue  # the persona has been shortened since
                found.setdefault((ev.source, ev.turn_id, ev.premise), []).append((who, turn.turn_id, ev.score))
            if sent:
                marks.on_turn(turn.turn_id, *candidate_marks(cand, report))
    for (source, turn_id, premise), hits in found.items():
        marks.on_premise(source, turn_id, Mark(premise, evidence_label(hits), "evidence"))
    return marks


def badge_tooltip(report: BotTurnReport, band: str) -> str:
    """What a sent reply's badge colour means, as measured (the hover text): the red band's precision, or the
    possible mark's."""
    badge = report.badge
    if badge is None:
        return ""
    if band == "possible":
        share = f" ({badge.possible_precision:.0%} of such flags were real contradictions)" \
            if badge.possible_precision is not None else ""
        return (f"A possible contradiction: its score is over the threshold but under {badge.threshold:.4f}, "
                f"where the red badge starts{share}; measured on {badge.measured_on}.")
    share = f"{badge.precision:.0%} of flags scoring this high were real contradictions" \
        if badge.precision is not None else "the red band"
    return f"A red badge: {share} (from {badge.threshold:.4f} up; measured on {badge.measured_on})."


def evidence_label(hits: list[tuple[str, int, float]]) -> str:
    """The badge on a contradicted sentence: who contradicted it, at which turn, how surely.

    One hit: "p=0.97 · contradicted by the reply at turn 3"; several: "contradicted by the reply at
    turn 3 (p=0.97), candidate #2 at turn 7 (p=0.91)", so a sentence carries one badge, not one per turn.
    """
    if len(hits) == 1:
        who, turn_id, score = hits[0]
        return f"p={score:.2f} · contradicted by {who} at turn {turn_id}"
    return "contradicted by " + ", ".join(f"{who} at turn {turn_id} (p={score:.2f})" for who, turn_id, score in hits)


#: the badge on the sentence a repair removed from a candidate before it was sent
REMOVED_LABEL = "removed before sending"


def candidate_marks(cand: CandidateReport, report: BotTurnReport | None = None) -> list[Mark]:
    """Marks on a candidate's own text: the clause that contradicts earlier turns, or both
    clauses of a clash inside the candidate; for a repaired candidate, the sentence the repair removed. With the
    turn's ``report``, a flag under the red badge's band is marked as a possible contradiction (quieter, its
    measured precision on hover)."""
    marks: list[Mark] = []
    if cand.repair is not None:
        marks.append(Mark(cand.repair.removed, REMOVED_LABEL, "removed"))
    band = report.badge_band(cand.deciding[0]) if report is not None and cand.deciding is not None else "red"
    tooltip = badge_tooltip(report, band) if report is not None else ""
    for ev in cand.evidence:
        if ev.source == PremiseSource.INTRA:
            label = f"clashes inside the reply (p={ev.score:.2f})"
            marks.append(Mark(ev.premise, label, "intra", tooltip))
            marks.append(Mark(ev.hypothesis, label, "intra", tooltip))
        elif band == "possible":
            marks.append(Mark(ev.hypothesis, f"possibly contradicts {describe_source(ev)} (p={ev.score:.2f})",
                              "possible", tooltip))
        else:
            marks.append(Mark(ev.hypothesis, f"contradicts {describe_source(ev)} (p={ev.score:.2f})", "clause",
                              tooltip))
    return marks


@dataclass(frozen=True)
class TurnScore:
    """One point of the per-turn chart: a bot turn's reply, sent or not, at the score of the check that decided its
    verdict, and the line that check compared it with (the one number the candidate table and the "why" text quote
    too; ``Verdict.deciding``)."""

    turn: int
    series: str  # ui.charts.SENT, NOT_SENT or WOULD_SEND
    score: float
    text: str
    tau: float | None = None  # the threshold the turn was judged at (its report's), drawn over it
    line: float | None = None  # the deciding check's own threshold (τ, or the inside-the-reply check's...)
    score_text: str = ""  # score and line written to the digits they need to compare (score_and_threshold)
    line_text: str = ""
    check: str = ""  # which check decided, in words


def _point(turn_id: int, series: str, cand: CandidateReport, text: str, tau: float) -> dict:
    score, line = cand.deciding
    shown, limit = score_and_threshold(score, line)
    return asdict(TurnScore(turn_id, series, float(score), text, tau, float(line), shown, limit, deciding_check(cand)))


def deciding_check(cand: CandidateReport) -> str:
    """The check whose score decided a candidate's verdict, in words."""
    if not cand.contradicts:
        return "no check fired"
    return {Category.INTRA: "inside the reply", Category.ROLE: "who is who"}.get(cand.category, "against earlier turns")


def _worst(candidates: list[CandidateReport]) -> CandidateReport:
    """The candidate a turn's point shows: a contradicting one before any that is not, then the highest score."""
    return max(candidates, key=lambda c: (c.contradicts, c.deciding[0]))


def turn_scores(conversation: Conversation) -> list[dict]:
    """Per guarded bot turn: the sent reply's point, the worst of the candidates not sent and, after a re-judge, the
    candidate the guard would now send when that is not the sent reply (rows for ui.charts.turn_score_chart), each at
    the score of the check that decided it against that check's line, with the τ its turn was judged at. The safe
    reply is never judged, so a blocked turn has only the candidates' point."""
    from ui.charts import NOT_SENT, SENT, WOULD_SEND

    rows = []
    for turn in conversation.turns:
        report = turn.report
        if report is None or report.mode == GuardMode.OFF:
            continue
        chosen, tau = report.chosen, float(report.threshold)
        if chosen is not None and chosen.repair is None and chosen.deciding is not None:
            rows.append(_point(turn.turn_id, SENT, chosen, chosen.text, tau))
        # a repaired candidate was not sent as scored: its score is the removed sentence's, the text sent was cut
        unsent = [c for c in report.candidates if (not c.chosen or c.repair is not None) and c.deciding is not None]
        if unsent:
            best = _worst(unsent)
            repaired = " (repaired before sending)" if best.repair is not None else ""
            rows.append(_point(turn.turn_id, NOT_SENT, best, f"#{best.index + 1}{repaired}: {best.text}", tau))
        if report.would_send is not None and 0 <= report.would_send < len(report.candidates):
            pick = report.candidates[report.would_send]
            if pick.deciding is not None:
                rows.append(_point(turn.turn_id, WOULD_SEND, pick, f"#{pick.index + 1}: {pick.text}", tau))
    return rows


def evidence_context_html(conversation: Conversation, cand: CandidateReport, at_turn: int) -> str:
    """The earlier turns and persona lines a candidate contradicts, each with the contradicted sentence
    marked: what the candidate's own panel shows (the transcript marks only the sent reply's evidence)."""
    who = "the reply" if cand.chosen and cand.repair is None else f"candidate #{cand.index + 1}"
    blocks = []
    for ev in cand.evidence:
        if ev.source == PremiseSource.PERSONA and ev.turn_id < len(conversation.persona):
            text = conversation.persona[ev.turn_id]
        elif ev.source == PremiseSource.HISTORY and ev.turn_id < len(conversation.turns):
            text = conversation.turns[ev.turn_id].text
        else:
            continue  # its own clauses are marked on the candidate; the whole history is no one turn
        mark = Mark(ev.premise, evidence_label([(who, at_turn, ev.score)]), "evidence")
        blocks.append(turn_html(BOT, text, [mark], turn_id=ev.turn_id, show_id=True, source=ev.source,
                                in_panel=True))
    return "".join(blocks)


#: the candidate table's columns, in words (the "why" is the guard's own reason)
CANDIDATE_COLUMNS = ("#", "sent", "reply", "why", "bot's own score", "contradiction score", "its line", "kind")


def candidate_table(report: BotTurnReport, original: bool = False) -> list[dict]:
    """Rows for the candidates table of one bot turn (plain values, no markup). The contradiction score is the
    deciding check's, written as the "why" text writes it, beside the line that check compares it with: one number
    per decision, however many checks scored the reply. A candidate the classroom filter withheld is shown only as
    the line that says it was withheld and why, unless ``original`` (the signed-in teacher)."""
    rows = []
    for c in report.candidates:
        shown, limit = score_and_threshold(*c.deciding) if c.deciding is not None else (None, None)
        rows.append(dict(zip(CANDIDATE_COLUMNS, (
            c.index + 1, ("✔ repaired" if c.repair is not None else "✔") if c.chosen else "", c.shown_text(original),
            # the guard's own reply has no score of the bot's (it is only ranked under every one the bot wrote)
            c.reason, None if c.origin in GUARD_WRITTEN else round(c.generator_score, 3), shown, limit,
            PLAIN_KINDS.get(c.category, str(c.category))))))
        if any(c.origin != "bot" for c in report.candidates):
            rows[-1]["written by"] = ORIGIN_LABELS.get(str(c.origin), str(c.origin)) or "the bot"
        if any(map(candidate_clashes, report.candidates)):
            rows[-1][FACT_COLUMN] = "; ".join(map(clash_words, distinct_clashes(candidate_clashes(c))))
        if report.unanswered:
            rows[-1][ANSWER_COLUMN] = answer_words(c) or ("answers" if c.verdict is not None else "")
    return rows


FACT_COLUMN = "clashes with the fact sheet"  # the candidate table's column, there when a candidate has a clash
#: the candidate table's column saying whether each candidate answers, there when one does not
ANSWER_COLUMN = "answers the question?"


#: what a candidate contradicts, in words (the candidate table's "kind")
PLAIN_KINDS = {Category.NONE: "", Category.INTRA: "contradicts itself", Category.ROLE: "mixes up who is who",
               Category.HISTORY: "contradicts an earlier turn"}


#: who wrote a candidate, for its row in the candidates table
ORIGIN_LABELS = {"bot": "", "reminded": "the bot, reminded", "composed": "the guard, from the evidence",
                 "sheet": "the guard, from the fact sheet"}


def evidence_rows(cand: CandidateReport) -> list[dict]:
    """Evidence pairs for the candidate panel, each saying what the candidate clause was compared with."""
    return pair_rows(cand.evidence, "candidate clause")


def pair_rows(pairs: Sequence[PairScore], judged: str) -> list[dict]:
    """Evidence pairs as table rows in the turns' own words (``judged``: what the judged side is called); where the
    guard read an answer with its question, the reading it compared stands beside the words, marked as the reading
    (those columns appear only when a pair has one)."""
    pairs = [e for e in pairs if e.source != PremiseSource.WHOLE_HISTORY]
    readings = any(e.premise_reading or e.hypothesis_reading for e in pairs)
    rows = []
    for e in pairs:
        row = {"compared with": describe_source(e), "earlier text": e.premise}
        if readings:
            row["read as (the guard's reading)"] = e.premise_reading
        row[judged] = e.hypothesis
        if readings:
            row[f"{judged} read as"] = e.hypothesis_reading
        row["score"] = round(e.score, 3)
        rows.append(row)
    return rows

