"""One guarded bot turn, and a conversation judged again: the chat page, self-play, the server and the studio call
these.

``guarded_reply``: the bot proposes ``settings.num_candidates`` candidates, the guard (``guard.judge.pipeline.Guard``)
judges every one against the conversation and persona in one batch and its policy picks the reply for the mode; the
new turn, with the guard's finished report, is handed back (the caller appends it: a worker thread never touches
the page's conversation). When the policy finds nothing consistent that answers, the bot is
reminded before the policy falls back (``guard.judge.reminders``): asked again with its reply opened by the consistent
answer (or, for a bot that cannot continue an opening, with the fact restated in its persona), the opening alone
going in as a last candidate composed by the guard; all candidates are judged again and the policy chooses among
them. Each step is announced to an optional ``on_step`` callback as it happens (candidates generated, judging, each
candidate's verdict, the reminder, the policy's choice), so a page can show the guard at work while the turn runs.
``rejudge``: every bot turn's candidates judged again by another detector, threshold or mode, nothing regenerated.

The classroom filter (``conversation.classroom``, on unless the server was started with it off) checks every candidate
first: a flagged one is withheld, never judged nor sent (the policy chooses among the others, else the safe reply goes
out), and keeps its place and number among the candidates; every step a page shows live carries it only as the line
that says it was withheld and why (``conversation.classroom.withheld_line``), never its text.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

from bots.base import Bot, crowd_note
from conversation.classroom import ClassroomFilter, server_filter
from conversation.records import BOT, ChatSettings, ChatTurn, Conversation
from embedded.turns import cpu_turn
from guard.config import JudgeSettings
from guard.judge.memory import Memory, SheetAnswer, recall, sheet_answer
from guard.judge.pipeline import Guard
from guard.judge.reminders import (
    GUARD_WRITTEN,
    CandidateOrigin,
    Reminder,
    ReminderMethod,
    bare_fact,
    gives_persona_answer,
    needs_reminder,
    plan_from_sheet,
    plan_reminder,
    restated_persona,
)
from guard.judge.report import BotTurnReport, TurnContext, Withheld, rejudged
from guard.judge.verdicts import Verdict
from guard.records import Candidate, Turn
from guard.vocabulary import GuardMode


@dataclass
class GuardStep:
    """One step of a guarded turn as it happens: ``kind`` is "generating", "waiting" (the bot's model is busy with other
    conversations' replies: ``ahead`` of this one, told again whenever it changes; 0 once this one's turn has come),
    "writing" (the candidates' text so far,
    ``written``, while a bot that streams writes them: ``Bot.streams_text``; from the bot's own thread), "candidates",
    "withheld" (a candidate the classroom filter kept back, with its ``index``), "judging", "verdict" (one per judged
    candidate, with its ``index``), "reminding" (the ``reminder`` planned), "reminded" (the new candidates, the
    guard's own last, ``guard_written`` of them; their indices follow the first ones'), "chosen" (the report with the policy's choice) or
    "done"; ``seconds`` since the turn started. With the classroom filter on, a text the filter withholds is carried
    only as the line that says so (what a page may show anyone)."""

    kind: str
    seconds: float
    candidates: list[Candidate] = field(default_factory=list)
    ahead: int | None = None  # "waiting": how many replies the bot writes before this one (bots.worker)
    index: int | None = None
    verdict: Verdict | None = None
    report: BotTurnReport | None = None
    written: list[str] = field(default_factory=list)
    reminder: Reminder | None = None
    guard_written: int = 0  # "reminded": how many of the candidates, the last ones, the guard wrote itself


StepCallback = Callable[[GuardStep], None]
#: ``guarded_reply``'s default classroom filter: the server's (``conversation.classroom.server_filter``)
SERVER = object()


def _shown(screen: ClassroomFilter | None, texts, writing: bool = False) -> list[str]:
    """Texts as a page may show them live: a text the classroom filter withholds only as the line that says so. While
    the bot is still ``writing``, a text's last word may be half written ("nig..."): it is shown once whole."""
    if screen is None:
        return list(texts)
    if writing:
        texts = [t if not t or t[-1].isspace() else t[:max(t.rfind(" "), 0)] for t in texts]
    return [screen.shown(t) for t in texts]


def _masked(screen: ClassroomFilter | None, candidates: list[Candidate]) -> list[Candidate]:
    return [Candidate(t, c.score) for c, t in zip(candidates, _shown(screen, (c.text for c in candidates)))]


def _screened(screen: ClassroomFilter | None, candidates: list[Candidate], step, first_index: int = 0
              ) -> dict[int, Withheld]:
    """The candidates the classroom filter withholds (by index), each announced to the page."""
    held: dict[int, Withheld] = {}
    if screen is not None:
        for i, cand in enumerate(candidates):
            found = screen.check(cand.text)
            if found.flagged:
                held[i] = found.withheld()
    for i in sorted(held):
        if i >= first_index:
            step("withheld", index=i)
    return held


def guarded_reply(conversation: Conversation, bot: Bot, guard: Guard | None, settings: ChatSettings,
                  on_step: StepCallback | None = None, classroom: ClassroomFilter | None | object = SERVER
                  ) -> ChatTurn:
    """Generate candidates for the user's last turn, guard them and return the bot turn (not appended: the caller
    appends it, ``Conversation.append``).

    ``classroom``: the classroom filter every candidate is checked with first (the server's by default, None when it
    was started with it off; None here: no filter).

    The turn keeps a snapshot of the settings that produced it (with the decoding values used and whether the
    prefilter ran). ``guard`` may be None when the mode is off. Raises whatever the bot raises (bots.base.BotError
    for user-actionable failures); the conversation is never touched.
    """
    if not conversation.awaiting_reply:
        raise ValueError("the last turn is not the user's; there is nothing to reply to")
    started = time.perf_counter()
    screen = server_filter() if classroom is SERVER else classroom

    def step(kind: str, **values) -> None:
        if on_step is not None:
            on_step(GuardStep(kind, round(time.perf_counter() - started, 3), **values))

    decoding = settings.decoding_config
    persona = tuple(conversation.persona)
    # what the user's message asks of the sheet: read before the bot writes only when the bot reads it as memory
    recalled = recall(conversation.turns, conversation.persona, BOT) if settings.memory and bot.reads_memory \
        else None
    memory = _memory(recalled, bot, settings)
    remembered = {"memory": memory} if memory else {}
    step("generating")
    stream = {"on_text": lambda texts: step("writing", written=_shown(screen, texts, writing=True))} \
        if on_step is not None and getattr(bot, "streams_text", False) else {}
    if on_step is not None and getattr(bot, "reports_queue", False):
        stream["on_wait"] = lambda ahead: step("waiting", ahead=ahead)
    read = as_the_bot_wrote(conversation.turns)
    candidates = bot.generate(read, int(settings.num_candidates or 1), decoding, persona=persona,
                              **stream, **remembered)
    queued = getattr(bot, "queued_s", None)
    crowded = getattr(bot, "crowded", None)
    if not candidates:
        raise RuntimeError("the bot returned no candidates; try another decoding preset or bot")
    candidates = [Candidate(c.text, float(c.score)) for c in candidates]
    # a message longer than the bot's prompt
    coverage = bot.prompt_coverage(read, conversation.persona, **remembered)
    note = coverage.note("Your message") if coverage is not None and coverage.cut else ""
    step("candidates", candidates=_masked(screen, candidates))
    timings = {"generate_s": round(time.perf_counter() - started, 4)}
    if queued is not None:  # of generate_s, the time the bot's model was busy with other replies
        timings["queued_s"] = round(queued, 4)
    crowding = crowd_note(crowded[0], int(settings.num_candidates or 1), crowded[1]) if crowded else ""
    context = TurnContext(withheld=_screened(screen, candidates, step), prompt_note=note, timings=timings,
                          memory=memory, crowd_note=crowding)
    judge_settings = resolved_settings(guard, settings)
    report = _guard(conversation.history(), persona, candidates, guard, judge_settings, context, step)
    if guard is not None and settings.remind:
        if recalled is None:  # (an empty Memory is falsy: it is not read again)
            recalled = recall(conversation.turns, conversation.persona, BOT)
        answer = sheet_answer(conversation.turns[-1].text, recalled)
        contradicted = needs_reminder(report)
        if contradicted or (answer is not None and not gives_persona_answer(report)):
            report = _remind(conversation, read, bot, guard, settings, judge_settings, report, candidates, step,
                             screen, answer, contradicted)
    produced_by = replace(settings, decoding=decoding, persona=list(persona), prefilter=report.prefilter,
                          from_session=False)
    turn = ChatTurn(turn_id=len(conversation.turns), agent_id=BOT, text=report.sent_reply(), report=report,
                    settings=produced_by)
    step("done", report=report)
    return turn


def as_the_bot_wrote(turns: Sequence[Turn]) -> list[Turn]:
    """The conversation as the bot reads it, without the guard's way of bringing a reminder in: a reply that opens
    with a reminder's opening (the bot wrote on from it, or the guard sent it alone) reads with the opening's bare
    fact instead ("Actually, I work as a nurse. I love it." -> "I work as a nurse. I love it."). A small model
    imitates the openings it reads: after one reminder, eleven replies in a row began "Actually, ..."."""
    seen = []
    for turn in turns:
        report = getattr(turn, "report", None)
        chosen = None if report is None or report.reminder is None else report.chosen
        if chosen is not None and chosen.origin in (CandidateOrigin.REMINDED, *GUARD_WRITTEN):
            opening = report.reminder.opening
            if turn.text.startswith(opening):
                turn = replace(turn, text=(bare_fact(opening) + " " + turn.text[len(opening):].strip()).strip())
        seen.append(turn)
    return seen


def _memory(recalled: Memory | None, bot: Bot, settings: ChatSettings) -> tuple[str, ...]:
    """The facts to put in the bot's prompt as its memory (``recalled``, ``guard.judge.memory.recall``: what the
    user's message asks about or asserts, the persona's facts first, never a drifted turn's), as they were said; ()
    when the setting is off or the bot reads no memory (``Bot.reads_memory``)."""
    if recalled is None or not settings.memory or not bot.reads_memory:
        return ()
    return tuple(dict.fromkeys(" ".join(f.said.split()) for f in recalled.facts))


def resolved_settings(guard: Guard | None, settings: ChatSettings) -> JudgeSettings:
    """The chat's settings as the guard judges with them, resolved once against its checkpoint (no guard: the guard
    that is off, ``Guard.off``, which refuses any mode but off when it judges). τ is the guard's own unless the user
    moved it (``settings.threshold`` None: the checkpoint's calibrated value, unrounded)."""
    return (guard or Guard.off()).settings(mode=settings.mode, threshold=settings.threshold,
                                           prefilter=settings.prefilter, penalty_lambda=settings.penalty_lambda,
                                           fallback=settings.fallback, repair_fallback=settings.repair_fallback)


def _remind(conversation: Conversation, read: list[Turn], bot: Bot, guard: Guard, settings: ChatSettings,
            judge_settings: JudgeSettings, report: BotTurnReport, candidates: list[Candidate], step,
            screen: ClassroomFilter | None = None, answer: SheetAnswer | None = None,
            contradicted: bool = True) -> BotTurnReport:
    """The turn's report after a reminder (``guard.judge.reminders``), the bot asked again with the conversation as it
    reads it (``read``: ``as_the_bot_wrote``): the bot's reminded candidates and the composed
    opening judged with the first candidates, the policy choosing among them all. The reply opens with the sheet's
    answer when the user asked what the sheet answers (``answer``), also when a candidate contradicted
    (``contradicted``: ``needs_reminder``, as the caller found it; its evidence stays on the reminder); else with the
    evidence's fact. With a sheet answer the guard's answer goes in too, as a last candidate of its own (sent only
    when nothing the bot wrote stands beside it). The first report stands when neither gives a fact to remind of."""
    started = time.perf_counter()
    reminder = plan_reminder(report) if contradicted else None
    if answer is not None:  # the answer to what the user asked opens the reply, before the fact a candidate got wrong
        from_sheet = plan_from_sheet(answer)
        reminder = from_sheet if reminder is None else replace(reminder, opening=from_sheet.opening,
                                                               sheet_fact=from_sheet.sheet_fact,
                                                               sheet_answer=from_sheet.sheet_answer)
    if reminder is None:
        return report
    persona = list(conversation.persona)
    n = int(settings.num_candidates or 1)
    step("reminding", reminder=reminder)
    remembered = {"memory": report.memory} if report.memory else {}
    if bot.continues_openings:
        new = bot.continue_reply(read, reminder.opening, n, settings.decoding_config, persona=persona, **remembered)
    else:
        reminder = replace(reminder, method=ReminderMethod.RESTATED,
                           restated=tuple(restated_persona(persona, reminder)[len(persona):]))
        new = bot.generate(read, n, settings.decoding_config, persona=restated_persona(persona, reminder), **remembered)
    said = {c.text.strip() for c in candidates}
    new = [c for c in new if c.text.strip() not in said]  # a bot asked again may repeat itself: one copy is enough
    reminder = replace(reminder, drawn=len(new), seconds=round(time.perf_counter() - started, 4))
    lowest = min(c.score for c in [*candidates, *new])
    # the guard's own: sent only when nothing the bot wrote is consistent (policies.choose's last resort)
    written = {reminder.opening: CandidateOrigin.SHEET if reminder.opened_from_sheet else CandidateOrigin.COMPOSED}
    if reminder.sheet_answer:
        written.setdefault(reminder.sheet_answer, CandidateOrigin.SHEET)
    written = {text: origin for text, origin in written.items()
               if text.strip() not in said | {c.text.strip() for c in new}}
    added = [Candidate(c.text, float(c.score)) for c in new] + \
        [Candidate(text, float(lowest) - 1.0 - k) for k, text in enumerate(written)]
    step("reminded", candidates=_masked(screen, added), guard_written=len(written))
    everything = [*candidates, *added]
    origins = (CandidateOrigin.BOT,) * len(candidates) + (CandidateOrigin.REMINDED,) * len(new) + \
        tuple(written.values())
    timings = {**report.timings, "remind_s": reminder.seconds}
    withheld = {c.index: c.withheld for c in report.candidates if c.withheld is not None}
    withheld.update({i: w for i, w in _screened(screen, everything, step, len(candidates)).items()
                     if i >= len(candidates)})
    context = TurnContext(origins=origins, withheld=withheld, reminder=reminder, prompt_note=report.prompt_note,
                          memory=report.memory, crowd_note=report.crowd_note,
                          timings=timings)
    return _guard(conversation.history(), persona, everything, guard, judge_settings, context, step,
                  first_index=len(candidates))


def rejudge(conversation: Conversation, guard: Guard, settings: ChatSettings) -> Conversation:
    """The conversation judged again by ``guard`` at ``settings.threshold`` and ``settings.mode``, nothing
    regenerated: a new conversation of new reports.

    Every bot turn keeps its candidates and the reply that was sent (the later turns were said after
    it); each candidate gets the new verdict, and the turn says when the policy would now send
    another candidate or the safe reply. Persona lines are the ones the guard saw at that turn.
    """
    if settings.mode == GuardMode.OFF:
        raise ValueError("re-judging needs a guard mode other than off")
    judge_settings = resolved_settings(guard, settings)
    note = f"re-judged by {settings.detector or 'the detector'} at τ = {judge_settings.threshold:.2f}, {settings.mode}"
    turns = []
    for turn in conversation.turns:
        old = turn.report
        if old is None:
            turns.append(turn)
            continue
        candidates = [Candidate(c.text, c.generator_score) for c in old.candidates]
        started = time.perf_counter()
        # what the classroom filter withheld stays withheld: it was never sent, and never will be
        held = TurnContext(withheld={c.index: c.withheld for c in old.candidates if c.withheld is not None})
        fresh = guard.judge(conversation.history(before=turn.turn_id), candidates, speaker=BOT,
                            persona=old.persona, settings=judge_settings, context=held, turn_id=turn.turn_id)
        report = rejudged(old, fresh, turn.text, note, time.perf_counter() - started)
        turns.append(replace(turn, report=report))  # what produced the turn (turn.settings) is never rewritten
    return Conversation(persona=list(conversation.persona), turns=turns, record_id=conversation.record_id)


@contextmanager
def _scorer_turn(guard: Guard):
    """Hold the guard's scorer's turn (``embedded.turns.cpu_turn``, which its judging takes again, re-entrant) and
    yield how long taking it waited (the conversations ahead of this one), so a turn's timings tell that wait
    apart from the judging itself."""
    scorer = getattr(getattr(guard, "detector", None), "scorer", None)
    if scorer is None:
        yield lambda: 0.0
        return
    asked = time.perf_counter()
    with cpu_turn(scorer):
        waited = round(time.perf_counter() - asked, 4)
        yield lambda: waited


def _guard(history: list[Turn], persona: Sequence[str], candidates: list[Candidate], guard: Guard | None,
           settings: JudgeSettings, context: TurnContext, step: Callable[..., None] | None = None,
           first_index: int = 0) -> BotTurnReport:
    """The guard's report on the candidates (judged against the history and persona unless the mode is off; no guard:
    the guard that is off, ``Guard.off``, through the same way in)."""
    judging = settings.mode != GuardMode.OFF
    if step and judging:
        step("judging", candidates=[c for i, c in enumerate(candidates)
                                    if i >= first_index and i not in context.withheld])
    guard = guard or Guard.off()
    with _scorer_turn(guard) as waited:  # the detector's model is shared by every conversation: its turn
        report = guard.judge(history, candidates, speaker=BOT, persona=persona, settings=settings,
                             context=replace(context, timings={
                                 **context.timings,
                                 "guard_queued_s": round(context.timings.get("guard_queued_s", 0.0) + waited(), 4)}))
    if step and judging:
        for cand in report.candidates[first_index:]:
            if cand.withheld is None:
                step("verdict", index=cand.index, verdict=cand.verdict)
    if step:
        step("chosen", report=report)
    return report
