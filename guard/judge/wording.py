"""The one place that words what the guard found and did: a verdict, why each candidate was or was not sent, a
repair declined, a reminder, a withheld candidate, and the one-line summary of a turn.

The stages below decide and record (``guard.judge.verdicts``, ``policies``, ``repair``, ``reminders``, ``report``);
this module turns their records into the sentences people read on the pages, in the transcript, the studio and the
server's ``guard`` field. Numbers are written with ``score_and_threshold``, so a score and its threshold never read
as the same number beside opposite outcomes.
"""

from __future__ import annotations

from guard.judge.policies import Group, Why, WhyKind
from guard.judge.reminders import CandidateOrigin, Reminder
from guard.judge.repair import Declined, DeclinedKind
from guard.judge.report import BotTurnReport, CandidateReport, Withheld
from guard.judge.verdicts import Verdict
from guard.vocabulary import Category, GuardMode, PremiseSource, describe_source


def score_and_threshold(score: float, threshold: float) -> tuple[str, str]:
    """A score and the threshold it is compared with, written with enough digits (2 to 6) that the written
    numbers differ and compare the way the real ones do: 0.9306 vs 0.9315, 0.9403 vs 0.9361, never "0.93 (threshold
    0.93)" beside "no contradiction" nor "0.94 (threshold 0.94)" beside a flag. Only a score equal to its threshold
    to six digits is written as the same number (``describe_verdict`` then says it is at the line)."""
    for digits in (2, 3, 4, 5, 6):
        a, b = f"{score:.{digits}f}", f"{threshold:.{digits}f}"
        if a != b and (float(a) >= float(b)) == (score >= threshold):
            return a, b
    return f"{score:.4f}", f"{threshold:.4f}"


def describe_verdict(verdict: Verdict) -> str:
    """One plain sentence on what the detector found, with the strongest evidence; the score quoted is the deciding
    check's (``Verdict.deciding``), the same number as its evidence row."""
    def probability(score: float, threshold: float) -> str:
        shown, limit = score_and_threshold(score, threshold)
        if shown == limit:  # equal to six digits: it flags, at the very line
            return f"probability {shown}, right at its threshold"
        return f"probability {shown} (threshold {limit})"

    tau = verdict.details.threshold
    sides = verdict.details.persona_sides
    if sides:
        side = sides[0]
        turns = sorted({s.turn_id for s in sides})
        did = "went against" if all(s.inferred for s in sides) else "contradicted"
        took = (f"; the guard sided with the persona: turn{'s' if len(turns) > 1 else ''} "
                f"{', '.join(map(str, turns))} {did} persona line {side.persona_line + 1} "
                f'("{side.drift.premise}"), which this reply agrees with, so contradicting '
                f"{'them' if len(turns) > 1 else 'it'} is no error")
    else:
        took = ""
    restated = verdict.details.restated
    if restated:
        lines = sorted({p.turn_id + 1 for p in restated})
        took += (f"; the guard set aside its pair{'s' if len(restated) > 1 else ''} with persona line"
                 f"{'s' if len(lines) > 1 else ''} {', '.join(map(str, lines))}: the reply restates "
                 f"{'them' if len(lines) > 1 else 'it'}")
    if not verdict.contradiction:
        return f"no contradiction found: highest contradiction {probability(verdict.score, tau)}{took}"
    score, limit = verdict.deciding
    top = verdict.evidence[0] if verdict.evidence else None
    if verdict.category == Category.INTRA:
        where = f': "{top.premise}" vs "{top.hypothesis}"' if top and top.source == PremiseSource.INTRA else ""
        said = f"contradicts itself with {probability(score, limit)}{where}"
        # the history or persona pairs that reached τ too: named with their own scores
        outside = [e for e in verdict.evidence if e.source in (PremiseSource.HISTORY, PremiseSource.PERSONA)]
        if outside:
            said += (f'; it also contradicts {describe_source(outside[0])} ("{outside[0].premise}") with '
                     f"{probability(outside[0].score, tau)}"
                     + (f", and {len(outside) - 1} more" if len(outside) > 1 else ""))
        return said
    if top is None:
        return f"contradicts the conversation with {probability(score, limit)}"
    clashes = verdict.details.fact_clashes
    if clashes and verdict.details.history_score < tau:  # the fact sheet decided: in the sheet's words
        clash = clashes[0]
        more = f", and {len(clashes) - 1} more" if len(clashes) > 1 else ""
        measured = verdict.details.fact_confidence
        return (f'contradicts what the bot said about itself in {describe_source(top)} ("{top.premise}"): '
                f"{clash.why}{more} (the fact sheet, at confidence {measured:.2f})" + took)
    what = "role confusion: reads as the user's reply and contradicts" if verdict.category == Category.ROLE \
        else "contradicts"
    return (f'{what} {describe_source(top)} ("{top.premise}") with {probability(score, limit)}'
            + (f", and {len(verdict.evidence) - 1} more" if len(verdict.evidence) > 1 else "") + took)


def declined(why: Declined) -> str:
    """Why a contradicting reply could not be repaired, in words."""
    match why.kind:
        case DeclinedKind.NO_EVIDENCE:
            return "the detector gave no evidence pointing at a sentence"
        case DeclinedKind.UNSTRUCTURED:
            return "the unstructured detector judges the whole reply, not its sentences"
        case DeclinedKind.NOT_A_SENTENCE:
            return f'"{why.detail}" is not a sentence of the reply'
        case DeclinedKind.SEVERAL_SENTENCES:
            return f"the contradiction runs through {why.detail} sentences, not one"
        case DeclinedKind.WHOLE_REPLY:
            return "the contradicting sentence is the whole reply"
        case DeclinedKind.NOTHING_ANSWERS:
            return f'what would remain ("{why.detail}") only asks or greets, it does not answer'
    raise ValueError(f"no words for a repair declined as {why.kind!r}")


def _head(why: Why) -> str:
    """What the policy did with a candidate, before the verdict's own sentence."""
    k = why.kind
    if k == WhyKind.BEST:
        return f"chosen: the bot's favourite (its own score {why.score:.3f})"
    if k == WhyKind.LOWER:
        return f"not chosen: the bot liked it less (its own score {why.score:.3f})"
    if k in (WhyKind.PENALTY_BEST, WhyKind.PENALTY_LOWER):
        head = "chosen: highest adjusted score" if k == WhyKind.PENALTY_BEST else "not chosen: a lower adjusted score"
        return (f"{head} {why.adjusted:.3f} = the bot's own {why.score:.3f} - penalty {why.score - why.adjusted:.3f}"
                f" (λ={why.penalty_lambda:g} × gap {why.gap:.3f} × contradiction {why.contradiction:.2f})")
    if k == WhyKind.KEPT_FLAGGED:
        if why.spares_persona:
            return ("chosen although flagged: every candidate contradicts, so the bot's favourite of those that do "
                    "not contradict the persona is kept")
        return "chosen although flagged: every candidate contradicts, so the bot's favourite is kept"
    among = _AMONG.get(why.chosen_group, "among candidates without a contradiction")
    if k == WhyKind.FAVOURITE:
        under = why.band is not None and why.suspected < why.band
        return (f"chosen: the bot's favourite (its own score {why.score:.3f}) {among}"
                + (f"; the detector suspects it little ({why.suspected:.3f}, under {why.band:.3f}, where a safer "
                   "reply would go instead)" if under else ", and the one the detector suspects least"))
    if k == WhyKind.LEAST_SUSPECTED:
        return (f"chosen: the one the detector suspects least ({why.suspected:.3f}) {among}"
                + ("" if why.chosen_group in _AMONG else " that answer")
                + (f"; the detector suspected the bot's favourite more ({why.favourite_suspected:.3f}, at or over "
                   f"{why.band:.3f}, where a safer reply goes instead)" if why.band is not None else ""))
    if k == WhyKind.GUARD_WRITTEN:
        return f"chosen: the guard's own reply {among}, since nothing the bot wrote stands beside it"
    if k == WhyKind.BEST_CONSISTENT:
        return f"chosen: the bot's favourite (its own score {why.score:.3f}) {among}"
    if k == WhyKind.OUTRANKED:
        if why.group == Group.EVASIVE:
            return "not chosen: it does not answer what was asked, and a consistent candidate does"
        return "not chosen: a consistent candidate that the persona supports answers too"
    if k == WhyKind.ONLY_SAYS_NOTHING:
        return (f"chosen: the bot's favourite (its own score {why.score:.3f}) among candidates without a "
                "contradiction; it says nothing, but no consistent candidate answers")
    if k == WhyKind.SAYS_NOTHING:
        return "not chosen: it says nothing, and a consistent candidate answers"
    if k == WhyKind.REJECTED_ALL:
        return "rejected: every candidate contradicts, so the safe reply is sent"
    if k == WhyKind.REJECTED:
        return "rejected"
    if k == WhyKind.MORE_SUSPECTED:
        return f"not chosen: the detector suspects it more ({why.suspected:.3f})"
    if k == WhyKind.REPAIRED:
        return f'chosen and repaired: "{why.removed}" removed, the rest of the bot\'s favourite sent'
    if k == WhyKind.REPAIR_WON:
        return f"not chosen: the bot's favourite ({why.best_score:.3f}) could be repaired"
    raise ValueError(f"no words for a choice made as {k!r}")


#: how a chosen candidate's group is said after "chosen: ..." (the plain answering group keeps the older words)
_AMONG = {
    Group.SUPPORTED: "among consistent candidates that the persona supports",
    Group.EVASIVE: "among consistent candidates, though it does not answer what was asked (none does)",
}


def reason(why: Why, verdict: Verdict | None) -> str:
    """Why one candidate was or was not sent, with what the detector found in it (the mode off: the choice alone)."""
    line = _head(why)
    if why.mode == GuardMode.FLAG:
        line += ("; FLAGGED, " if why.flagged else "; ") + describe_verdict(verdict)
    elif why.mode != GuardMode.OFF:
        line += f"; {describe_verdict(verdict)}"
    if why.declined is not None:
        line = f"not repaired ({declined(why.declined)}), so {why.decided_by} decided: {line}"
    return line


def withheld_reason(withheld: Withheld) -> str:
    """The reason a withheld candidate gets, in the policy's place."""
    return f"withheld: the {withheld.by} caught words in it, so it was neither judged nor sent"


def _asked_again(reminder: Reminder) -> str:
    """How the bot is asked again: its reply opened with the fact, or the fact restated in its persona."""
    return (f'its reply opened with "{reminder.opening}"' if reminder.method == "opening"
            else "the fact restated in its persona")


def reminding_phrase(reminder: Reminder) -> str:
    """What the guard is doing while it reminds the bot (the live view, before the outcome is known): why, and how
    the bot is asked again."""
    if not reminder.facts:  # from the sheet: the user asked about a persona fact no candidate gave
        return f'No candidate gives the persona\'s answer ("{reminder.fact}"). The bot is asked again, {_asked_again(reminder)}.'
    return (f"Nothing consistent to send: the candidates contradict {describe_source(reminder.facts[0])} "
            f'("{reminder.fact}"). The bot is asked again, {_asked_again(reminder)}.')


def reminder_phrase(reminder: Reminder) -> str:
    """What the reminder did, in words: what the bot was reminded of and who wrote the reply sent after it."""
    top = reminder.facts[0] if reminder.facts else None
    if reminder.opened_from_sheet and top is not None and reminder.fact == reminder.sheet_fact:
        what = f'{describe_source(top)} ("{reminder.fact}"), the persona\'s answer to the question, which candidates contradicted'
    elif reminder.opened_from_sheet:
        what = f'the persona\'s answer to the question ("{reminder.sheet_fact}"), ' + (
            f'after candidates contradicted {describe_source(top)} ("{reminder.fact}")' if top is not None
            else "which no candidate gave")
    elif top is not None:
        what = f'{describe_source(top)} ("{reminder.fact}")'
    else:
        what = "what it said"
    how = _asked_again(reminder)
    if reminder.outcome == CandidateOrigin.REMINDED:
        result = "the bot wrote a consistent reply"
    elif reminder.outcome == CandidateOrigin.COMPOSED:
        result = "every reminded reply still contradicted, so the guard composed the reply from the evidence"
    elif reminder.outcome == CandidateOrigin.SHEET:
        result = ("nothing the bot wrote gave the persona's answer, so the guard wrote the reply from the fact sheet "
                  "(the guard's words, not the bot's)")
    else:
        result = "nothing consistent came of it"
    return f"reminded the bot of {what}, {how}: {result}"


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


def summary(report: BotTurnReport) -> str:
    """One line on what the guard did this turn, in the words of its mode (the transcript's caption): the
    reminder first when there was one; after a re-judge, with what the guard would now send when that is another
    reply than the one sent."""
    line = _outcome(report)
    if report.reminder is not None:
        line = f"{reminder_phrase(report.reminder)}; {line}"
    change = rejudged_change(report)
    return f"{line}; {change}" if change else line


def rejudged_change(report: BotTurnReport) -> str:
    """After a re-judge: which reply the guard would now send, when not the one that was sent ("" else)."""
    if report.would_fallback:
        return f"at τ = {report.threshold:.2f} every candidate contradicts: the guard would now send the safe reply"
    if report.would_send is None or not 0 <= report.would_send < len(report.candidates):
        return ""
    cand = report.candidates[report.would_send]
    how = (f"which contradicts too (p={cand.deciding[0]:.2f})" if cand.contradicts
           else "which does not contradict")
    return f"at τ = {report.threshold:.2f} the guard would now send candidate #{cand.index + 1}, {how}"


def memory_phrase(report: BotTurnReport) -> str:
    """What the bot was reminded of before it wrote (``BotTurnReport.memory``), in words; "" when nothing."""
    if not report.memory:
        return ""
    return "before writing, the bot was reminded of what it says about itself: " + " ".join(
        f'"{line}"' for line in report.memory)


def answer_words(cand: CandidateReport) -> str:
    """What the answer check found of one candidate, in a class's words: "did not answer", "repeats itself", or ""
    when it answers (or was not checked)."""
    if not cand.unanswered:
        return ""
    return "repeats itself" if cand.details.answer.degenerate else "did not answer"


def unanswered_phrase(report: BotTurnReport) -> str:
    """How many judged candidates did not answer the user's message, and whether the sent one is among them ("" when
    every one answered)."""
    judged = [c for c in report.candidates if c.withheld is None]
    missed = report.unanswered
    if not missed:
        return ""
    counted = f"{len(missed)} of {len(judged)} candidates"
    if report.chosen is not None and report.chosen.unanswered:
        return f"the sent reply did not answer what was asked ({counted} did not)"
    return f"{counted} did not answer what was asked"


def _outcome(report: BotTurnReport) -> str:
    held = report.withheld
    if held and len(held) == len(report.candidates):
        by = held[0].withheld.by
        return (f"withheld: every candidate held words the {by} masks, so the safe reply was sent instead"
                if len(held) > 1 else f"withheld: the candidate held words the {by} masks, so the safe reply "
                                      "was sent instead")
    outcome = _decision(report)
    if report.mode == GuardMode.REPAIR and report.repair_declined:
        outcome = f"{outcome} (not repaired: {report.repair_declined})"
    if held:
        listed = ", ".join(f"#{c.index + 1}" for c in held)
        outcome += f"; candidate{'s' if len(held) > 1 else ''} {listed} withheld by the {held[0].withheld.by}"
    unanswered = unanswered_phrase(report)
    return f"{outcome}; {unanswered}" if unanswered else outcome


def _decision(report: BotTurnReport) -> str:
    # repair mode without a repair: the fallback policy decided, and is worded as itself
    mode = report.decided_by if report.mode == GuardMode.REPAIR and report.decided_by else report.mode
    judged = [c for c in report.candidates if c.withheld is None]  # the classroom filter's are worded apart
    n = len(judged)
    candidates = f"{n} candidate{'s' if n != 1 else ''}"
    if report.mode == GuardMode.OFF:
        return f"guard off · {candidates}, not checked"
    every = all(c.contradicts for c in judged)  # after a re-judge, no longer always so
    if report.used_fallback:
        if every:
            return f"blocked: all {candidates} contradict, so the safe reply was sent instead"
        return "blocked: the safe reply was sent (every candidate contradicted when the turn was judged)"
    chosen = report.chosen
    others = [c.index + 1 for c in report.candidates if c.contradicts and not c.chosen]
    listed = ", ".join(f"#{i}" for i in others)
    several = "s" if len(others) > 1 else ""
    if chosen.repair is not None:
        what = (f"{contradiction_phrase(chosen)} (p={chosen.deciding[0]:.2f})" if chosen.contradicts
                else "contradicted when the turn was judged")  # a re-judge at a higher τ may clear it
        return (f'repaired: candidate #{chosen.index + 1} {what} in "{chosen.repair.removed}"; that sentence '
                "was removed and the rest sent")
    if chosen.contradicts:
        what = f"the sent reply {contradiction_phrase(chosen)} (p={chosen.deciding[0]:.2f})"
        if mode == GuardMode.FLAG:
            return f"flagged: {what}; flag mode shows it without preventing it"
        if mode == GuardMode.PENALTY:
            return f"flagged: the penalty did not outweigh the bot's own score for it; {what}"
        if every:
            return f"flagged: every candidate contradicts, so the bot's favourite was sent; {what}"
        return f"flagged: {what}"
    if not others:
        return f"consistent · {candidates}, none contradicts"
    if mode == GuardMode.FLAG:
        return (f"the sent reply is consistent · candidate{several} {listed} would have contradicted "
                "(not sent: the bot liked it less)")
    return f"{mode}: candidate{several} {listed} rejected as contradicting; #{chosen.index + 1} sent"
