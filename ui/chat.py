"""The guarded chat turn and its record, without Streamlit.

One bot turn: the bot proposes N candidates, the detector scores every candidate against the bot's
earlier turns (and persona) in one batched pass, a policy picks the reply. Everything the page
shows — candidates, scores, reasons, evidence to highlight — is kept in plain dataclasses so the
transcript can be re-rendered and downloaded as DECODE-shaped JSON.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import asdict, dataclass, field, is_dataclass, replace
from enum import StrEnum
from typing import TYPE_CHECKING

from guard.records import Turn
from guard.vocabulary import GUARD_MODES, Category, GuardMode, PremiseSource, describe_source
from ui.render import DialogueMarks, Mark, turn_html

if TYPE_CHECKING:  # guard.detector loads torch; the record only holds its details
    from guard.detector import VerdictDetails

USER, BOT = "user", "bot"
MODE_HELP: dict[GuardMode, str] = {
    GuardMode.OFF: "no detection: the generator's best candidate is sent",
    GuardMode.FLAG: "the generator's best candidate is sent; contradictions are shown, not prevented",
    GuardMode.RERANK: "the best-scored candidate that does not contradict is sent (DECODE §5.3)",
    GuardMode.PENALTY: "generator scores are lowered by λ·(s₁ − s_k)·p(contradiction) (DNLI re-ranking)",
    GuardMode.BLOCK: "like re-rank, but a safe reply is sent when every candidate contradicts",
}


@dataclass
class GuardSettings:
    """What the sidebar controls: how many candidates, which policy, which threshold."""

    mode: GuardMode | str = GuardMode.RERANK
    threshold: float = 0.5
    num_candidates: int = 4
    penalty_lambda: float = 1.0
    fallback: str | None = None  # None: guard.policies' default safe reply


@dataclass
class EvidencePair:
    """One scored pair that crossed the threshold: earlier text span vs candidate clause.

    ``source`` and ``turn_id`` as in guard.detector.PairScore (persona: the line's 0-based index).
    """

    source: PremiseSource
    turn_id: int | None
    premise: str
    hypothesis: str
    score: float


@dataclass
class CandidateReport:
    """One candidate as the guard saw it."""

    index: int
    text: str
    generator_score: float
    contradiction_score: float | None  # None when the guard is off
    contradicts: bool
    category: Category
    chosen: bool
    reason: str
    adjusted_score: float | None = None
    evidence: list[EvidencePair] = field(default_factory=list)
    details: VerdictDetails | None = None  # None when the guard is off


@dataclass
class BotTurnReport:
    """The guard's annotation of one bot turn."""

    mode: GuardMode | str
    threshold: float
    detector: str
    chosen_index: int | None  # None: the safe fallback was sent
    used_fallback: bool
    candidates: list[CandidateReport]
    timings: dict[str, float] = field(default_factory=dict)
    persona: list[str] = field(default_factory=list)  # the persona lines the guard checked against
    rejudge_note: str = ""  # set by rejudge(): which detector and τ, and what the policy would send now

    @property
    def any_contradiction(self) -> bool:
        return any(c.contradicts for c in self.candidates)

    @property
    def chosen(self) -> CandidateReport | None:
        return None if self.chosen_index is None else self.candidates[self.chosen_index]

    @property
    def status(self) -> TurnStatus:
        """What the transcript's icon says: the sent reply is flagged, the guard stopped a candidate, or neither."""
        if self.mode == GuardMode.OFF:
            return TurnStatus.OFF
        chosen = self.chosen
        if chosen is not None and chosen.contradicts:
            return TurnStatus.FLAGGED
        if self.used_fallback or (self.mode != GuardMode.FLAG and self.any_contradiction):
            return TurnStatus.GUARDED
        return TurnStatus.CONSISTENT

    def summary(self) -> str:
        """One line for the transcript: what the guard did this turn, in the words of its mode."""
        n = len(self.candidates)
        candidates = f"{n} candidate{'s' if n != 1 else ''}"
        if self.mode == GuardMode.OFF:
            return f"guard off · {candidates}, not checked"
        if self.used_fallback:
            return f"blocked: all {candidates} contradict, so the safe reply was sent instead"
        chosen = self.chosen
        others = [c.index + 1 for c in self.candidates if c.contradicts and not c.chosen]
        listed = ", ".join(f"#{i}" for i in others)
        several = "s" if len(others) > 1 else ""
        if chosen.contradicts:
            what = f"the sent reply {contradiction_phrase(chosen)} (p={chosen.contradiction_score:.2f})"
            if self.mode == GuardMode.FLAG:
                return f"flagged: {what}; flag mode shows it without preventing it"
            if self.mode == GuardMode.PENALTY:
                return f"flagged: the penalty did not outweigh its generator score; {what}"
            return f"flagged: every candidate contradicts, so the generator's best was sent; {what}"
        if not others:
            return f"consistent · {candidates}, none contradicts"
        if self.mode == GuardMode.FLAG:
            return (f"the sent reply is consistent · candidate{several} {listed} would have contradicted "
                    "(not sent: a lower generator score)")
        return f"{self.mode}: candidate{several} {listed} rejected as contradicting; #{chosen.index + 1} sent"


class TurnStatus(StrEnum):
    """The guard's outcome for one bot turn, as the transcript shows it."""

    OFF = "off"  # no detection
    CONSISTENT = "consistent"  # the sent reply contradicts nothing
    GUARDED = "guarded"  # a contradicting candidate was rejected, or the safe reply was sent
    FLAGGED = "flagged"  # the sent reply contradicts


#: The transcript's icon per outcome (none when the guard is off).
STATUS_ICONS: dict[TurnStatus, str] = {
    TurnStatus.OFF: "", TurnStatus.CONSISTENT: "✅", TurnStatus.GUARDED: "🛡️", TurnStatus.FLAGGED: "⚠️",
}


def contradiction_phrase(cand: CandidateReport) -> str:
    """What a contradicting candidate contradicts, in words: "contradicts itself", "contradicts turn 3"."""
    outside = [e for e in cand.evidence if e.source not in (PremiseSource.INTRA, PremiseSource.WHOLE_HISTORY)]
    if cand.category == Category.INTRA:
        return "contradicts itself"
    where = describe_source(outside[0]) if outside else "earlier turns"
    more = f" and {len(outside) - 1} more" if len(outside) > 1 else ""
    if cand.category == Category.ROLE:
        return f"reads as the user's side of the conversation (role confusion) and contradicts {where}{more}"
    return f"contradicts {where}{more}"


@dataclass
class ChatTurn:
    turn_id: int
    speaker: str  # "user" | "bot"
    text: str
    report: BotTurnReport | None = None


@dataclass
class Conversation:
    """A session's dialogue plus the guard's annotations (lives in st.session_state)."""

    persona: list[str] = field(default_factory=list)
    turns: list[ChatTurn] = field(default_factory=list)
    record_id: str = field(default_factory=lambda: f"chat-{uuid.uuid4().hex[:12]}")

    def add(self, speaker: str, text: str, report: BotTurnReport | None = None) -> ChatTurn:
        turn = ChatTurn(turn_id=len(self.turns), speaker=speaker, text=text, report=report)
        self.turns.append(turn)
        return turn

    @property
    def awaiting_reply(self) -> bool:
        """The last turn is the user's: a reply failed or is pending (the page offers a retry)."""
        return bool(self.turns) and self.turns[-1].speaker == USER

    def history(self) -> list[Turn]:
        return [Turn(turn_id=t.turn_id, agent_id=t.speaker, text=t.text) for t in self.turns]

    def evidence_marks(self, include_rejected: bool = False) -> DialogueMarks:
        """Highlights for the transcript's turns and persona lines.

        Earlier turns a sent reply contradicts get an ``evidence`` mark with the pair score, and the
        reply its contradicting clause. Candidates that were not sent keep their evidence in their
        own panel (``evidence_context_html``); ``include_rejected`` marks it in the transcript too.
        One earlier sentence contradicted several times gets one badge listing every turn.
        """
        marks = DialogueMarks()
        found: dict[tuple[PremiseSource, int, str], list[tuple[str, int, float]]] = {}
        for turn in self.turns:
            report = turn.report
            if report is None:
                continue
            for cand in report.candidates:
                if not cand.contradicts or not (cand.chosen or include_rejected):
                    continue
                who = "the reply" if cand.chosen else f"candidate #{cand.index + 1}"
                for ev in cand.evidence:
                    if ev.source in (PremiseSource.INTRA, PremiseSource.WHOLE_HISTORY):
                        continue  # clause pairs are marked on the reply itself; the whole history is no one turn
                    if ev.source == PremiseSource.PERSONA and ev.turn_id >= len(self.persona):
                        continue  # the persona has been shortened since
                    found.setdefault((ev.source, ev.turn_id, ev.premise), []).append((who, turn.turn_id, ev.score))
                if cand.chosen:
                    marks.on_turn(turn.turn_id, *candidate_marks(cand))
        for (source, turn_id, premise), hits in found.items():
            marks.on_premise(source, turn_id, Mark(premise, evidence_label(hits), "evidence"))
        return marks

    def to_decode_record(self) -> dict:
        """The transcript in DECODE's shape (record_id, turns with turn_id/agent_id/text, label,
        aggregated_contradiction_indices for the last bot turn) with each bot turn's guard report."""
        turns = []
        for t in self.turns:
            row = {"turn_id": t.turn_id, "agent_id": t.speaker, "text": t.text}
            if t.report is not None:
                row["guard"] = jsonable(t.report)
            turns.append(row)
        last_bot = next((t for t in reversed(self.turns) if t.speaker == BOT and t.report), None)
        chosen = last_bot.report.chosen if last_bot else None
        contradiction = bool(chosen and chosen.contradicts)
        return {
            "record_id": self.record_id,
            "persona": list(self.persona),
            "turns": turns,
            "is_contradiction": contradiction,
            # the earlier turns contradicted, or the reply itself when it clashes inside
            "aggregated_contradiction_indices": sorted({
                e.turn_id for e in chosen.evidence if e.source in (PremiseSource.HISTORY, PremiseSource.INTRA)})
            if contradiction else [],
        }


def evidence_label(hits: list[tuple[str, int, float]]) -> str:
    """The badge on a contradicted sentence: who contradicted it, at which turn, how surely.

    One hit: "p=0.97 · contradicted by the reply at turn 3"; several: "contradicted by the reply at
    turn 3 (p=0.97), candidate #2 at turn 7 (p=0.91)", so a sentence carries one badge, not one per turn.
    """
    if len(hits) == 1:
        who, turn_id, score = hits[0]
        return f"p={score:.2f} · contradicted by {who} at turn {turn_id}"
    return "contradicted by " + ", ".join(f"{who} at turn {turn_id} (p={score:.2f})" for who, turn_id, score in hits)


def candidate_marks(cand: CandidateReport) -> list[Mark]:
    """Marks on a candidate's own text: the clause that contradicts earlier turns, or both
    clauses of a clash inside the candidate."""
    marks: list[Mark] = []
    for ev in cand.evidence:
        if ev.source == PremiseSource.INTRA:
            label = f"clashes inside the reply (p={ev.score:.2f})"
            marks.append(Mark(ev.premise, label, "intra"))
            marks.append(Mark(ev.hypothesis, label, "intra"))
        else:
            marks.append(Mark(ev.hypothesis, f"contradicts {describe_source(ev)} (p={ev.score:.2f})", "clause"))
    return marks


def _evidence(verdict) -> list[EvidencePair]:
    return [EvidencePair(PremiseSource(p.source), None if p.turn_id is None else int(p.turn_id), str(p.premise),
                         str(p.hypothesis), float(p.score)) for p in verdict.evidence]


def jsonable(value):
    """A report as plain JSON values (transcripts, the studio's database): another detector's details may hold numpy
    numbers or tuples; NaN, which JSON has no word for, becomes null."""
    if is_dataclass(value) and not isinstance(value, type):
        return jsonable(asdict(value))
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if hasattr(value, "item") and callable(value.item):
        value = value.item()
    if isinstance(value, float) and value != value:
        return None
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def guarded_reply(conversation: Conversation, bot, detector, settings: GuardSettings, decoding,
                  detector_name: str = "") -> ChatTurn:
    """Generate candidates for the user's last turn, guard them, append and return the bot turn.

    Raises whatever the bot raises (bots.base.BotError for user-actionable failures) before
    touching the conversation, so a failed turn leaves the transcript as it was.
    """
    from bots.base import Message

    if not conversation.awaiting_reply:
        raise ValueError("the last turn is not the user's; there is nothing to reply to")
    if settings.mode not in GUARD_MODES:
        raise ValueError(f"unknown guard mode {settings.mode!r}; choose one of {', '.join(GUARD_MODES)}")
    messages = [Message(speaker=t.speaker, text=t.text) for t in conversation.turns]
    started = time.perf_counter()
    candidates = bot.generate(messages, settings.num_candidates, decoding, persona=tuple(conversation.persona))
    generated = time.perf_counter()
    if not candidates:
        raise RuntimeError("the bot returned no candidates; try another decoding preset or bot")
    scored = [(c.text, float(c.score)) for c in candidates]
    report, reply = _guard(conversation.history(), list(conversation.persona), scored, detector, settings,
                           detector_name)
    report.timings = {"generate_s": round(generated - started, 4),
                      "guard_s": round(time.perf_counter() - generated, 4)}
    return conversation.add(BOT, reply, report)


def _guard(history: list[Turn], persona: list[str], scored: list[tuple[str, float]], detector,
           settings: GuardSettings, detector_name: str) -> tuple[BotTurnReport, str]:
    """Judge the candidates against the history and persona, let the policy choose; the report and the reply."""
    from guard.policies import choose
    from guard.records import Candidate

    verdicts = None
    if settings.mode != GuardMode.OFF:
        verdicts = detector.detect_candidates(history, [text for text, _ in scored], speaker=BOT, persona=persona)
    kwargs = {"penalty_lambda": settings.penalty_lambda}
    if settings.fallback:
        kwargs["fallback"] = settings.fallback
    decision = choose([Candidate(t, s) for t, s in scored], verdicts, settings.mode, **kwargs)
    reasons = list(decision.reasons)
    reports = []
    for i, (text, score) in enumerate(scored):
        verdict = verdicts[i] if verdicts is not None else None
        reports.append(CandidateReport(
            index=i,
            text=text,
            generator_score=float(score),
            contradiction_score=None if verdict is None else float(verdict.score),
            contradicts=bool(verdict is not None and verdict.contradiction),
            category=Category.NONE if verdict is None else Category(verdict.category),
            chosen=(i == decision.chosen_index),
            reason=reasons[i] if i < len(reasons) else "",
            adjusted_score=float(decision.adjusted_scores[i]),
            evidence=[] if verdict is None else _evidence(verdict),
            details=None if verdict is None else verdict.details,
        ))
    report = BotTurnReport(
        mode=settings.mode, threshold=float(settings.threshold), detector=detector_name,
        chosen_index=decision.chosen_index, used_fallback=bool(decision.used_fallback), candidates=reports,
        persona=list(persona),
    )
    return report, decision.reply


def rejudge(conversation: Conversation, detector, settings: GuardSettings, detector_name: str = "") -> Conversation:
    """The conversation judged again by ``detector`` (its τ) and ``settings.mode``, nothing regenerated.

    Every bot turn keeps its candidates and the reply that was sent (the later turns were said after
    it); each candidate gets the new verdict, and the turn says when the policy would now send
    another candidate or the safe reply. Persona lines are the ones the guard saw at that turn.
    """
    if settings.mode == GuardMode.OFF:
        raise ValueError("re-judging needs a guard mode other than off")
    turns = []
    for turn in conversation.turns:
        old = turn.report
        if old is None:
            turns.append(replace(turn))
            continue
        history = [Turn(turn_id=t.turn_id, agent_id=t.speaker, text=t.text) for t in conversation.turns[:turn.turn_id]]
        scored = [(c.text, c.generator_score) for c in old.candidates]
        started = time.perf_counter()
        report, reply = _guard(history, list(old.persona), scored, detector, settings, detector_name)
        would = None if report.used_fallback else report.chosen_index
        sent = None if old.used_fallback else old.chosen_index
        for cand in report.candidates:
            cand.chosen = cand.index == sent
        report.chosen_index, report.used_fallback = sent, old.used_fallback
        report.timings = {**old.timings, "rejudge_s": round(time.perf_counter() - started, 4)}
        report.rejudge_note = f"re-judged by {detector_name or 'the detector'} at τ = {settings.threshold:.2f}, {settings.mode}"
        if would != sent:
            report.rejudge_note += (": the guard would now send the safe reply" if would is None
                                    else f": the guard would now send candidate #{would + 1}")
        turns.append(replace(turn, report=report))
    return Conversation(persona=list(conversation.persona), turns=turns, record_id=conversation.record_id)


@dataclass(frozen=True)
class TurnScore:
    """One point of the per-turn chart: a bot turn's highest contradiction score, sent or not."""

    turn: int
    series: str  # ui.charts.SENT or ui.charts.NOT_SENT
    score: float
    text: str


def turn_scores(conversation: Conversation) -> list[dict]:
    """Per guarded bot turn: the sent reply's contradiction score and the highest among the candidates
    not sent (rows for ui.charts.turn_score_chart). The safe reply is never judged, so a blocked turn
    has only the candidates' point."""
    from ui.charts import NOT_SENT, SENT

    rows = []
    for turn in conversation.turns:
        report = turn.report
        if report is None or report.mode == GuardMode.OFF:
            continue
        chosen = report.chosen
        if chosen is not None and chosen.contradiction_score is not None:
            rows.append(asdict(TurnScore(turn.turn_id, SENT, chosen.contradiction_score, chosen.text)))
        unsent = [c for c in report.candidates if not c.chosen and c.contradiction_score is not None]
        if unsent:
            best = max(unsent, key=lambda c: c.contradiction_score)
            rows.append(asdict(TurnScore(turn.turn_id, NOT_SENT, best.contradiction_score,
                                         f"#{best.index + 1}: {best.text}")))
    return rows


def evidence_context_html(conversation: Conversation, cand: CandidateReport, at_turn: int) -> str:
    """The earlier turns and persona lines a candidate contradicts, each with the contradicted sentence
    marked: what the candidate's own panel shows (the transcript marks only the sent reply's evidence)."""
    who = "the reply" if cand.chosen else f"candidate #{cand.index + 1}"
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


def persona_lines(text: str) -> list[str]:
    """Persona box text -> one fact per non-empty line."""
    return [line.strip() for line in text.splitlines() if line.strip()]


def candidate_table(report: BotTurnReport) -> list[dict]:
    """Rows for the candidates table of one bot turn (plain values, no markup)."""
    rows = []
    for c in report.candidates:
        rows.append({
            "#": c.index + 1,
            "sent": "✔" if c.chosen else "",
            "candidate": c.text,
            "why": c.reason,
            "generator score": round(c.generator_score, 3),
            "contradiction": None if c.contradiction_score is None else round(c.contradiction_score, 3),
            "category": c.category,
        })
    return rows


def evidence_rows(cand: CandidateReport) -> list[dict]:
    """Evidence pairs for the candidate panel, each saying what the candidate clause was compared with."""
    return [
        {"compared with": describe_source(e), "earlier text": e.premise, "candidate clause": e.hypothesis,
         "score": round(e.score, 3)}
        for e in cand.evidence
    ]
