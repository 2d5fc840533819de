"""One guarded bot turn, and a conversation judged again: the chat page, self-play, the server and the studio call
these.

``guarded_reply``: the bot proposes ``settings.num_candidates`` candidates, the detector judges every one against
the bot's earlier turns and persona in one batch, ``guard.policies.choose`` picks the reply for the mode, and the
turn is appended with its report. Each step is announced to an optional ``on_step`` callback as it happens
(candidates generated, each candidate's verdict, the policy's choice), so a page can show the guard at work while the
turn runs. ``rejudge``: every bot turn's candidates judged again by another detector, threshold or mode, nothing
regenerated.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING

from bots.base import PRESETS, Bot, DecodingConfig
from conversation.records import BOT, BotTurnReport, CandidateReport, ChatSettings, ChatTurn, Conversation
from guard.policies import PolicyDecision, choose
from guard.records import Candidate, Turn
from guard.verdicts import PairScore, Verdict
from guard.vocabulary import GuardMode, PremiseSource

if TYPE_CHECKING:  # loads torch; the guard only calls its detect_candidates
    from guard.detector import ContradictionDetector


@dataclass
class GuardStep:
    """One step of a guarded turn as it happens: ``kind`` is "generating", "candidates", "judging", "verdict"
    (one per candidate, with its ``index``), "chosen" or "done"; ``seconds`` since the turn started."""

    kind: str
    seconds: float
    candidates: list[Candidate] = field(default_factory=list)
    index: int | None = None
    verdict: Verdict | None = None
    decision: PolicyDecision | None = None
    report: BotTurnReport | None = None


StepCallback = Callable[[GuardStep], None]


def decoding_of(settings: ChatSettings) -> DecodingConfig:
    """The decoding the settings ask for: their own recorded values, else their preset's."""
    if settings.decoding:
        return DecodingConfig(**settings.decoding)
    return PRESETS.get(settings.preset, PRESETS["fast"])


def guarded_reply(conversation: Conversation, bot: Bot, detector: ContradictionDetector | None,
                  settings: ChatSettings, on_step: StepCallback | None = None) -> ChatTurn:
    """Generate candidates for the user's last turn, guard them, append and return the bot turn.

    The turn keeps a snapshot of the settings that produced it (with the decoding values used and whether the
    prefilter ran). ``detector`` may be None when the mode is off. Raises whatever the bot raises (bots.base.BotError
    for user-actionable failures) before touching the conversation, so a failed turn leaves the transcript as it was.
    """
    if not conversation.awaiting_reply:
        raise ValueError("the last turn is not the user's; there is nothing to reply to")
    started = time.perf_counter()

    def step(kind: str, **values) -> None:
        if on_step is not None:
            on_step(GuardStep(kind, round(time.perf_counter() - started, 3), **values))

    decoding = decoding_of(settings)
    step("generating")
    candidates = bot.generate(conversation.turns, int(settings.num_candidates or 1), decoding,
                              persona=tuple(conversation.persona))
    generated = time.perf_counter()
    if not candidates:
        raise RuntimeError("the bot returned no candidates; try another decoding preset or bot")
    candidates = [Candidate(c.text, float(c.score)) for c in candidates]
    step("candidates", candidates=list(candidates))
    report, reply = _guard(conversation.history(), list(conversation.persona), candidates, detector, settings,
                           step)
    report.timings = {"generate_s": round(generated - started, 4),
                      "guard_s": round(time.perf_counter() - generated, 4)}
    produced_by = replace(settings, decoding=asdict(decoding), persona=list(conversation.persona),
                          prefilter=None if detector is None else getattr(detector, "prefilter_k", None) is not None,
                          from_session=False)
    turn = conversation.add(BOT, reply, report, produced_by)
    step("done", report=report)
    return turn


def rejudge(conversation: Conversation, detector: ContradictionDetector, settings: ChatSettings) -> Conversation:
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
        candidates = [Candidate(c.text, c.generator_score) for c in old.candidates]
        started = time.perf_counter()
        report, _ = _guard(conversation.history(before=turn.turn_id), list(old.persona), candidates, detector,
                           settings)
        would = None if report.used_fallback else report.chosen_index
        sent = None if old.used_fallback else old.chosen_index
        for cand, was in zip(report.candidates, old.candidates):
            cand.chosen = cand.index == sent
            cand.repair = was.repair  # the reply that was sent, as it was sent (repaired or not)
        report.chosen_index, report.used_fallback = sent, old.used_fallback
        report.repair_declined, report.decided_by = old.repair_declined, old.decided_by
        report.timings = {**old.timings, "rejudge_s": round(time.perf_counter() - started, 4)}
        # the note says who judged; what the policy would now send is the report's own (its summary says it)
        report.rejudge_note = (f"re-judged by {settings.detector or 'the detector'} at τ = "
                               f"{settings.threshold:.2f}, {settings.mode}")
        if would != sent:
            report.would_send, report.would_fallback = would, would is None
        turns.append(replace(turn, report=report))  # what produced the turn (turn.settings) is never rewritten
    return Conversation(persona=list(conversation.persona), turns=turns, record_id=conversation.record_id)


def _guard(history: list[Turn], persona: list[str], candidates: list[Candidate],
           detector: ContradictionDetector | None, settings: ChatSettings,
           step: Callable[..., None] | None = None) -> tuple[BotTurnReport, str]:
    """Judge the candidates against the history and persona, let the policy choose; the report and the reply."""
    verdicts = None
    if settings.mode != GuardMode.OFF:
        if step:
            step("judging", candidates=list(candidates))
        verdicts = detector.detect_candidates(history, [c.text for c in candidates], speaker=BOT, persona=persona)
        if step:
            for i, verdict in enumerate(verdicts):
                step("verdict", index=i, verdict=verdict)
    kwargs = {"penalty_lambda": 1.0 if settings.penalty_lambda is None else float(settings.penalty_lambda),
              "repair_fallback": settings.repair_fallback or GuardMode.RERANK}
    if settings.fallback:
        kwargs["fallback"] = settings.fallback
    decision = choose(candidates, verdicts, settings.mode, **kwargs)
    if decision.repair is not None:
        decision.repair.evidence = [_plain(p) for p in decision.repair.evidence]
    if step:
        step("chosen", decision=decision)
    reasons = list(decision.reasons)
    reports = [CandidateReport(index=i, text=candidate.text, generator_score=candidate.score,
                               chosen=(i == decision.chosen_index), reason=reasons[i] if i < len(reasons) else "",
                               verdict=None if verdicts is None else _kept(verdicts[i]),
                               adjusted_score=float(decision.adjusted_scores[i]),
                               repair=decision.repair if decision.repair is not None and decision.repair.index == i
                               else None)
               for i, candidate in enumerate(candidates)]
    report = BotTurnReport(
        mode=settings.mode, threshold=float(settings.threshold), detector=settings.detector,
        chosen_index=decision.chosen_index, used_fallback=bool(decision.used_fallback), candidates=reports,
        persona=list(persona), repair_declined=decision.repair_declined, decided_by=decision.decided_by,
    )
    return report, decision.reply


def _kept(verdict: Verdict) -> Verdict:
    """The verdict as a report keeps it: plain Python values (another detector's may hold numpy numbers), its
    evidence, details and category, without the full list of scored pairs (the playground's heatmap draws those
    from a fresh verdict; a stored chat turn would grow by every pair)."""
    return replace(verdict, contradiction=bool(verdict.contradiction), score=float(verdict.score),
                   evidence=[_plain(p) for p in verdict.evidence], pair_scores=[])


def _plain(pair: PairScore) -> PairScore:
    return PairScore(PremiseSource(pair.source), None if pair.turn_id is None else int(pair.turn_id),
                     str(pair.premise), str(pair.hypothesis), float(pair.score))
