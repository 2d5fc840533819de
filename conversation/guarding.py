"""One guarded bot turn, and a conversation judged again: the chat page, self-play, the server and the studio call
these.

``guarded_reply``: the bot proposes ``settings.num_candidates`` candidates, the guard (``guard.pipeline.Guard``)
judges every one against the conversation and persona in one batch and its policy picks the reply for the mode, and
the turn is appended with the guard's report. When the policy finds nothing consistent that answers, the bot is
reminded before the policy falls back (``guard.reminders``): asked again with its reply opened by the consistent
answer (or, for a bot that cannot continue an opening, with the fact restated in its persona), the opening alone
going in as a last candidate composed by the guard; all candidates are judged again and the policy chooses among
them. Each step is announced to an optional ``on_step`` callback as it happens (candidates generated, judging, each
candidate's verdict, the reminder, the policy's choice), so a page can show the guard at work while the turn runs.
``rejudge``: every bot turn's candidates judged again by another detector, threshold or mode, nothing regenerated.

The classroom filter (``conversation.classroom``, on unless the server was started with it off) checks every candidate
first: a flagged one is withheld, never judged nor sent (the policy chooses among the others, else the safe reply goes
out), and keeps its place and number among the candidates, its text masked in every step a page shows live.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from bots.base import Bot
from conversation.classroom import ClassroomFilter, Screened, server_filter
from conversation.records import BOT, ChatSettings, ChatTurn, Conversation
from guard.config import DEFAULT_SAFE_REPLY, FALLBACK_THRESHOLD, JudgeSettings
from guard.records import Candidate, Turn
from guard.reminders import (
    CandidateOrigin,
    Reminder,
    ReminderMethod,
    needs_reminder,
    plan_reminder,
    restated_persona,
)
from guard.report import BotTurnReport, CandidateReport, Withheld, decide
from guard.verdicts import Verdict
from guard.vocabulary import GuardMode

if TYPE_CHECKING:  # loads torch
    from guard.pipeline import Guard


@dataclass
class GuardStep:
    """One step of a guarded turn as it happens: ``kind`` is "generating", "writing" (the candidates' text so far,
    ``written``, while a bot that streams writes them: ``Bot.streams_text``; from the bot's own thread), "candidates",
    "withheld" (a candidate the classroom filter kept back, with its ``index``), "judging", "verdict" (one per judged
    candidate, with its ``index``), "reminding" (the ``reminder`` planned), "reminded" (the new candidates, the
    composed one last; their indices follow the first ones'), "chosen" (the report with the policy's choice) or
    "done"; ``seconds`` since the turn started. With the classroom filter on, every text a step carries has the
    filter's words masked (what a page may show anyone)."""

    kind: str
    seconds: float
    candidates: list[Candidate] = field(default_factory=list)
    index: int | None = None
    verdict: Verdict | None = None
    report: BotTurnReport | None = None
    written: list[str] = field(default_factory=list)
    reminder: Reminder | None = None


StepCallback = Callable[[GuardStep], None]
#: ``guarded_reply``'s default classroom filter: the server's (``conversation.classroom.server_filter``)
SERVER = object()
#: a withheld candidate's reason, in the policy's place
WITHHELD_REASON = "withheld: the classroom filter caught words in it, so it was neither judged nor sent"


def _shown(screen: ClassroomFilter | None, texts):
    """Texts as a page may show them live: the classroom filter's words masked."""
    return list(texts) if screen is None else [screen.mask(t) for t in texts]


def guarded_reply(conversation: Conversation, bot: Bot, guard: Guard | None, settings: ChatSettings,
                  on_step: StepCallback | None = None, classroom: ClassroomFilter | None | object = SERVER
                  ) -> ChatTurn:
    """Generate candidates for the user's last turn, guard them, append and return the bot turn.

    ``classroom``: the classroom filter every candidate is checked with first (the server's by default, None when it
    was started with it off; None here: no filter).

    The turn keeps a snapshot of the settings that produced it (with the decoding values used and whether the
    prefilter ran). ``guard`` may be None when the mode is off. Raises whatever the bot raises (bots.base.BotError
    for user-actionable failures) before touching the conversation, so a failed turn leaves the transcript as it was.
    """
    if not conversation.awaiting_reply:
        raise ValueError("the last turn is not the user's; there is nothing to reply to")
    started = time.perf_counter()
    screen = server_filter() if classroom is SERVER else classroom

    def step(kind: str, **values) -> None:
        if on_step is not None:
            on_step(GuardStep(kind, round(time.perf_counter() - started, 3), **values))

    decoding = settings.decoding_config
    step("generating")
    stream = {"on_text": lambda texts: step("writing", written=_shown(screen, texts))} \
        if on_step is not None and getattr(bot, "streams_text", False) else {}
    candidates = bot.generate(conversation.turns, int(settings.num_candidates or 1), decoding,
                              persona=tuple(conversation.persona), **stream)
    generated = time.perf_counter()
    if not candidates:
        raise RuntimeError("the bot returned no candidates; try another decoding preset or bot")
    candidates = [Candidate(c.text, float(c.score)) for c in candidates]
    step("candidates", candidates=[Candidate(t, c.score) for c, t in zip(candidates, _shown(screen, (
        c.text for c in candidates)))])
    report = _guard(conversation.history(), list(conversation.persona), candidates, guard, settings, step,
                    screen=screen)
    judged = time.perf_counter()
    if guard is not None and settings.remind and needs_reminder(report):
        report = _remind(conversation, bot, guard, settings, report, candidates, step, screen)
    reading = bot.reading(conversation.turns, conversation.persona)  # a message longer than the bot's prompt
    if reading is not None and reading.cut:
        report.prompt_note = reading.note("Your message")
    reply = report.sent_reply()
    report.timings = {"generate_s": round(generated - started, 4), "guard_s": round(judged - generated, 4)}
    if report.reminder is not None:  # timed apart: the reminder's generation and judging
        report.timings["remind_s"] = report.reminder.seconds
    produced_by = replace(settings, decoding=decoding, persona=list(conversation.persona),
                          prefilter=report.prefilter, from_session=False)
    turn = conversation.add(BOT, reply, report, produced_by)
    step("done", report=report)
    return turn


def _remind(conversation: Conversation, bot: Bot, guard: Guard, settings: ChatSettings, report: BotTurnReport,
            candidates: list[Candidate], step, screen: ClassroomFilter | None = None) -> BotTurnReport:
    """The turn's report after a reminder (``guard.reminders``): the bot's reminded candidates and the composed
    opening judged with the first candidates, the policy choosing among them all. The first report stands when the
    evidence gives no fact to remind of."""
    started = time.perf_counter()
    reminder = plan_reminder(report)
    if reminder is None:
        return report
    persona = list(conversation.persona)
    n = int(settings.num_candidates or 1)
    step("reminding", reminder=reminder)
    if bot.continues_openings:
        new = bot.continue_reply(conversation.turns, reminder.opening, n, settings.decoding_config, persona=persona)
    else:
        reminder.method = ReminderMethod.RESTATED
        reminder.restated = restated_persona(persona, reminder)[len(persona):]
        new = bot.generate(conversation.turns, n, settings.decoding_config, persona=restated_persona(persona, reminder))
    said = {c.text.strip() for c in candidates}
    new = [c for c in new if c.text.strip() not in said]  # a bot asked again may repeat itself: one copy is enough
    reminder.drawn = len(new)
    lowest = min(c.score for c in [*candidates, *new])
    composed = Candidate(reminder.opening, float(lowest) - 1.0)  # sent only when nothing the bot wrote is consistent
    added = [Candidate(c.text, float(c.score)) for c in new] + [composed]
    step("reminded", candidates=[Candidate(t, c.score) for c, t in zip(added, _shown(screen, (c.text for c in added)))])
    everything = [*candidates, *added]
    again = _guard(conversation.history(), persona, everything, guard, settings, step, first_index=len(candidates),
                   screen=screen)
    origins = [CandidateOrigin.BOT] * len(candidates) + [CandidateOrigin.REMINDED] * len(new) + \
        [CandidateOrigin.COMPOSED]
    for cand, origin in zip(again.candidates, origins):
        cand.origin = origin
    chosen = again.chosen
    consistent = chosen is not None and not again.reply_flagged
    reminder.outcome = chosen.origin if consistent and chosen.origin != CandidateOrigin.BOT else "none"
    reminder.seconds = round(time.perf_counter() - started, 4)
    again.reminder = reminder
    return again


def rejudge(conversation: Conversation, guard: Guard, settings: ChatSettings) -> Conversation:
    """The conversation judged again by ``guard`` at ``settings.threshold`` and ``settings.mode``, nothing
    regenerated.

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
        # what the classroom filter withheld stays withheld: it was never sent, and never will be
        report = _guard(conversation.history(before=turn.turn_id), list(old.persona), candidates, guard, settings,
                        withheld={c.index: c.withheld for c in old.candidates if c.withheld is not None})
        would = None if report.used_fallback else report.chosen_index
        sent = None if old.used_fallback else old.chosen_index
        for cand, was in zip(report.candidates, old.candidates):
            cand.chosen = cand.index == sent
            cand.repair = was.repair  # the reply that was sent, as it was sent (repaired or not)
            cand.origin = was.origin  # who wrote it: the bot, the bot reminded, or the guard
        report.reminder = old.reminder  # nothing is regenerated: the reminder stays what it was
        report.chosen_index, report.used_fallback = sent, old.used_fallback
        report.sent = turn.text  # what was sent stays what was sent
        report.repair_declined, report.decided_by = old.repair_declined, old.decided_by
        report.prompt_note = old.prompt_note  # what the bot read stays what it read
        report.timings = {**old.timings, "rejudge_s": round(time.perf_counter() - started, 4)}
        # the note says who judged; what the policy would now send is the report's own (its summary says it)
        report.rejudge_note = (f"re-judged by {settings.detector or 'the detector'} at τ = "
                               f"{settings.threshold:.2f}, {settings.mode}")
        if would != sent:
            report.would_send, report.would_fallback = would, would is None
        turns.append(replace(turn, report=report))  # what produced the turn (turn.settings) is never rewritten
    return Conversation(persona=list(conversation.persona), turns=turns, record_id=conversation.record_id)


def _guard(history: list[Turn], persona: list[str], candidates: list[Candidate], guard: Guard | None,
           settings: ChatSettings, step: Callable[..., None] | None = None, first_index: int = 0,
           screen: ClassroomFilter | None = None, withheld: dict[int, Withheld] | None = None) -> BotTurnReport:
    """The guard's report on the candidates (judged against the history and persona unless the mode is off). The
    classroom filter's (``screen``) and those ``withheld`` before keep their places, unjudged; the policy chooses
    among the others, and the safe reply is sent when none is left."""
    held = dict(withheld or {})
    if screen is not None:
        for i, cand in enumerate(candidates):
            if i not in held:
                found: Screened = screen.check(cand.text)
                if found.flagged:
                    held[i] = found.withheld()
    kept = [i for i in range(len(candidates)) if i not in held]
    if step:
        for i in sorted(held):
            if i >= first_index:
                step("withheld", index=i)
    options = {"mode": settings.mode, "threshold": settings.threshold, "prefilter": settings.prefilter,
               "penalty_lambda": settings.penalty_lambda, "fallback": settings.fallback,
               "repair_fallback": settings.repair_fallback}
    if not kept:
        report = BotTurnReport(mode=settings.mode, threshold=float(settings.threshold or FALLBACK_THRESHOLD),
                               detector=settings.detector, chosen_index=None, used_fallback=True, candidates=[],
                               persona=list(persona), sent=settings.fallback or DEFAULT_SAFE_REPLY)
    elif settings.mode == GuardMode.OFF:
        options["threshold"] = settings.threshold or FALLBACK_THRESHOLD
        report, _ = decide([candidates[i] for i in kept], None, JudgeSettings.resolve(**options),
                           detector=settings.detector, persona=persona)
    else:
        if step:
            step("judging", candidates=[candidates[i] for i in kept if i >= first_index])
        report = guard.judge(history, [candidates[i] for i in kept], speaker=BOT, persona=persona,
                             settings=guard.settings(**options))
    report = _in_place(report, kept, held, candidates)
    if step and settings.mode != GuardMode.OFF:
        for cand in report.candidates[first_index:]:
            if cand.withheld is None:
                step("verdict", index=cand.index, verdict=cand.verdict)
    if step:
        step("chosen", report=report)
    return report


def _in_place(report: BotTurnReport, kept: list[int], held: dict[int, Withheld],
              candidates: list[Candidate]) -> BotTurnReport:
    """The report on the ``kept`` candidates as the report on them all: each judged candidate back at its own place
    and number, each withheld one in its place, unjudged."""
    if not held:
        return report
    at = dict(enumerate(kept))  # the judged report's index -> the candidate's own
    places: dict[int, CandidateReport] = {}
    for cand in report.candidates:
        cand.index = at[cand.index]
        if cand.repair is not None:
            cand.repair.index = cand.index
        places[cand.index] = cand
    for i, why in held.items():
        places[i] = CandidateReport(index=i, text=candidates[i].text, generator_score=float(candidates[i].score),
                                    chosen=False, reason=WITHHELD_REASON, withheld=why)
    report.candidates = [places[i] for i in range(len(candidates))]
    if report.chosen_index is not None:
        report.chosen_index = at[report.chosen_index]
    return report
