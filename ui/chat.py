"""The guarded chat turn and its record, without Streamlit.

One bot turn: the bot proposes N candidates, the detector scores every candidate against the bot's
earlier turns (and persona) in one batched pass, a policy picks the reply. Everything the page
shows — candidates, scores, reasons, evidence to highlight — is kept in plain dataclasses so the
transcript can be re-rendered and downloaded as DECODE-shaped JSON.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import asdict, dataclass, field, is_dataclass
from typing import TYPE_CHECKING

from guard.records import Turn
from guard.vocabulary import GUARD_MODES, Category, GuardMode, PremiseSource, describe_source
from ui.render import DialogueMarks, Mark

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

    @property
    def any_contradiction(self) -> bool:
        return any(c.contradicts for c in self.candidates)

    @property
    def chosen(self) -> CandidateReport | None:
        return None if self.chosen_index is None else self.candidates[self.chosen_index]

    def summary(self) -> str:
        """One line for the transcript: what the guard did this turn."""
        flagged = [c.index + 1 for c in self.candidates if c.contradicts]
        n = len(self.candidates)
        if self.mode == GuardMode.OFF:
            return f"guard off · {n} candidate{'s' if n != 1 else ''}"
        if self.used_fallback:
            return f"blocked: all {n} candidates contradict, safe reply sent"
        chosen = self.chosen
        if chosen is not None and chosen.contradicts:
            return f"flagged: the reply contradicts earlier turns (p={chosen.contradiction_score:.2f})"
        if flagged:
            listed = ", ".join(f"#{i}" for i in flagged)
            return f"{self.mode}: candidate{'s' if len(flagged) > 1 else ''} {listed} rejected as contradicting; #{chosen.index + 1} sent"
        return f"consistent · {n} candidate{'s' if n != 1 else ''}, none contradicts"


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

    def evidence_marks(self) -> DialogueMarks:
        """Highlights for the transcript's turns and persona lines.

        Earlier turns a candidate contradicts get an ``evidence`` mark with the pair score; a sent
        reply that itself contradicts gets its contradicting clause marked too.
        """
        marks = DialogueMarks()
        for turn in self.turns:
            report = turn.report
            if report is None:
                continue
            for cand in report.candidates:
                if not cand.contradicts:
                    continue
                who = "the reply" if cand.chosen else f"candidate #{cand.index + 1}"
                for ev in cand.evidence:
                    if ev.source in (PremiseSource.INTRA, PremiseSource.WHOLE_HISTORY):
                        continue  # clause pairs are marked on the reply itself; the whole history is no one turn
                    if ev.source == PremiseSource.PERSONA and ev.turn_id >= len(self.persona):
                        continue  # the persona has been shortened since
                    label = f"p={ev.score:.2f} · contradicted by {who} at turn {turn.turn_id}"
                    marks.on_premise(ev, Mark(ev.premise, label, "evidence"))
                if cand.chosen:
                    marks.on_turn(turn.turn_id, *candidate_marks(cand))
        return marks

    def to_decode_record(self) -> dict:
        """The transcript in DECODE's shape (record_id, turns with turn_id/agent_id/text, label,
        aggregated_contradiction_indices for the last bot turn) with each bot turn's guard report."""
        turns = []
        for t in self.turns:
            row = {"turn_id": t.turn_id, "agent_id": t.speaker, "text": t.text}
            if t.report is not None:
                row["guard"] = _jsonable(t.report)
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


def _jsonable(value):
    """A report as plain JSON values: another detector's details may hold numpy numbers or tuples."""
    if is_dataclass(value) and not isinstance(value, type):
        return _jsonable(asdict(value))
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "item") and callable(value.item):
        return value.item()
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
    from guard.policies import choose

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
    texts = [c.text for c in candidates]
    scored = [(c.text, float(c.score)) for c in candidates]
    verdicts = None
    if settings.mode != GuardMode.OFF:
        verdicts = detector.detect_candidates(
            conversation.history(), texts, speaker=BOT, persona=list(conversation.persona)
        )
    kwargs = {"penalty_lambda": settings.penalty_lambda}
    if settings.fallback:
        kwargs["fallback"] = settings.fallback
    decision = choose(scored, verdicts, settings.mode, **kwargs)
    chosen_index, used_fallback, reply = decision.chosen_index, decision.used_fallback, decision.reply
    reasons = list(decision.reasons)
    adjusted = [float(s) for s in decision.adjusted_scores]
    guarded = time.perf_counter()
    reports = []
    for i, cand in enumerate(candidates):
        verdict = verdicts[i] if verdicts is not None else None
        reports.append(CandidateReport(
            index=i,
            text=cand.text,
            generator_score=float(cand.score),
            contradiction_score=None if verdict is None else float(verdict.score),
            contradicts=bool(verdict is not None and verdict.contradiction),
            category=Category.NONE if verdict is None else Category(verdict.category),
            chosen=(i == chosen_index),
            reason=reasons[i] if i < len(reasons) else "",
            adjusted_score=adjusted[i],
            evidence=[] if verdict is None else _evidence(verdict),
            details=None if verdict is None else verdict.details,
        ))
    report = BotTurnReport(
        mode=settings.mode, threshold=float(settings.threshold), detector=detector_name,
        chosen_index=chosen_index, used_fallback=bool(used_fallback), candidates=reports,
        timings={"generate_s": round(generated - started, 4), "guard_s": round(guarded - generated, 4)},
    )
    return conversation.add(BOT, reply, report)


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
