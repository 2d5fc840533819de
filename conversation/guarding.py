"""One guarded bot turn, and a conversation judged again: the chat page, self-play and the studio call these.

``guarded_reply``: the bot proposes ``settings.num_candidates`` candidates, the detector judges every one
against the bot's earlier turns and persona in one batch, ``guard.policies.choose`` picks the reply for the
mode, and the turn is appended with its report. ``rejudge``: every bot turn's candidates judged again by
another detector, threshold or mode, nothing regenerated.
"""

from __future__ import annotations

import time
from dataclasses import asdict, replace
from typing import TYPE_CHECKING

from bots.base import Bot, DecodingConfig, Message
from conversation.records import (
    BOT,
    BotTurnReport,
    CandidateReport,
    ChatTurn,
    Conversation,
    GuardSettings,
    ReplySettings,
)
from guard.policies import choose
from guard.records import Candidate, Turn
from guard.verdicts import PairScore
from guard.vocabulary import Category, GuardMode, PremiseSource

if TYPE_CHECKING:  # loads torch; the guard only calls its detect_candidates
    from guard.detector import ContradictionDetector


def guarded_reply(conversation: Conversation, bot: Bot, detector: ContradictionDetector | None,
                  settings: GuardSettings, decoding: DecodingConfig, detector_name: str = "", bot_name: str = "",
                  preset: str = "") -> ChatTurn:
    """Generate candidates for the user's last turn, guard them, append and return the bot turn.

    The turn keeps the settings that produced it (``bot_name``, the decoding ``preset`` and its values, the
    guard's mode, detector, τ, candidates, λ and prefilter). ``detector`` may be None when the mode is off. Raises whatever the bot raises (bots.base.BotError for
    user-actionable failures) before touching the conversation, so a failed turn leaves the transcript as it was.
    """
    if not conversation.awaiting_reply:
        raise ValueError("the last turn is not the user's; there is nothing to reply to")
    messages = [Message(speaker=t.speaker, text=t.text) for t in conversation.turns]
    started = time.perf_counter()
    candidates = bot.generate(messages, settings.num_candidates, decoding, persona=tuple(conversation.persona))
    generated = time.perf_counter()
    if not candidates:
        raise RuntimeError("the bot returned no candidates; try another decoding preset or bot")
    candidates = [Candidate(c.text, float(c.score)) for c in candidates]
    report, reply = _guard(conversation.history(), list(conversation.persona), candidates, detector, settings,
                           detector_name)
    report.timings = {"generate_s": round(generated - started, 4),
                      "guard_s": round(time.perf_counter() - generated, 4)}
    produced_by = ReplySettings(
        bot=bot_name, preset=preset, decoding=asdict(decoding), guard_mode=settings.mode, detector=detector_name,
        threshold=float(settings.threshold), num_candidates=int(settings.num_candidates),
        penalty_lambda=float(settings.penalty_lambda),
        prefilter=None if detector is None else getattr(detector, "prefilter_k", None) is not None)
    return conversation.add(BOT, reply, report, produced_by)


def rejudge(conversation: Conversation, detector: ContradictionDetector, settings: GuardSettings,
            detector_name: str = "") -> Conversation:
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
                           settings, detector_name)
        would = None if report.used_fallback else report.chosen_index
        sent = None if old.used_fallback else old.chosen_index
        for cand in report.candidates:
            cand.chosen = cand.index == sent
        report.chosen_index, report.used_fallback = sent, old.used_fallback
        report.timings = {**old.timings, "rejudge_s": round(time.perf_counter() - started, 4)}
        # the note says who judged; what the policy would now send is the report's own (its summary says it)
        report.rejudge_note = f"re-judged by {detector_name or 'the detector'} at τ = {settings.threshold:.2f}, {settings.mode}"
        if would != sent:
            report.would_send, report.would_fallback = would, would is None
        turns.append(replace(turn, report=report))
    return Conversation(persona=list(conversation.persona), turns=turns, record_id=conversation.record_id)


def _guard(history: list[Turn], persona: list[str], candidates: list[Candidate],
           detector: ContradictionDetector | None, settings: GuardSettings,
           detector_name: str) -> tuple[BotTurnReport, str]:
    """Judge the candidates against the history and persona, let the policy choose; the report and the reply."""
    verdicts = None
    if settings.mode != GuardMode.OFF:
        verdicts = detector.detect_candidates(history, [c.text for c in candidates], speaker=BOT, persona=persona)
    kwargs = {"penalty_lambda": settings.penalty_lambda}
    if settings.fallback:
        kwargs["fallback"] = settings.fallback
    decision = choose(candidates, verdicts, settings.mode, **kwargs)
    reasons = list(decision.reasons)
    reports = []
    for i, candidate in enumerate(candidates):
        verdict = verdicts[i] if verdicts is not None else None
        reports.append(CandidateReport(
            index=i,
            text=candidate.text,
            generator_score=candidate.score,
            contradiction_score=None if verdict is None else float(verdict.score),
            contradicts=bool(verdict is not None and verdict.contradiction),
            category=Category.NONE if verdict is None else Category(verdict.category),
            chosen=(i == decision.chosen_index),
            reason=reasons[i] if i < len(reasons) else "",
            adjusted_score=float(decision.adjusted_scores[i]),
            evidence=[] if verdict is None else [_plain(p) for p in verdict.evidence],
            details=None if verdict is None else verdict.details,
        ))
    report = BotTurnReport(
        mode=settings.mode, threshold=float(settings.threshold), detector=detector_name,
        chosen_index=decision.chosen_index, used_fallback=bool(decision.used_fallback), candidates=reports,
        persona=list(persona),
    )
    return report, decision.reply


def _plain(pair: PairScore) -> PairScore:
    """The pair with plain Python values (another detector's may hold numpy numbers), as the report keeps it."""
    return PairScore(PremiseSource(pair.source), None if pair.turn_id is None else int(pair.turn_id),
                     str(pair.premise), str(pair.hypothesis), float(pair.score))
