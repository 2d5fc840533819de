"""Remind, don't mute: when every candidate contradicts, the bot is asked again with the consistent answer opened.

A guard that only rejects leaves a bot nothing to send but the candidate that says least ("Yes, I am." to "Aren't
you a teacher?" once read as "I am a teacher." is no better than "I don't know."). This module plans the reminder
from the evidence of the turn's report: the fact the candidates contradicted (a persona line first, else the bot's
own earlier words) and the opening that states it ("No, I work as a nurse." when the candidates answered a yes/no
question the wrong way round, the fact itself after a wh-question, "Actually, ..." otherwise). The conversation
(``conversation.guarding``) asks a bot that continues openings for replies that begin with it, and a bot that
cannot (a remote server) for replies with the fact restated in its persona; the opening alone goes in as a last
candidate, composed by the guard from the evidence and marked so. The guard then judges them all and its policy
chooses: the bot's own consistent reply first, the composed one only when every reminded candidate still
contradicts.

Measured ways and what each gave: docs/experiments/2026-11-27-conversation-reading.md.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from enum import StrEnum

from guard.judge.verdicts import PairScore
from guard.language.answers import QuestionKind
from guard.language.grammar import particle
from guard.vocabulary import GuardMode, PremiseSource


class ReminderMethod(StrEnum):
    """How the bot was reminded."""

    OPENING = "opening"  # its reply was opened with the consistent answer and it wrote on from there
    RESTATED = "restated"  # the fact was restated in its persona (a bot that cannot continue an opening)


class CandidateOrigin(StrEnum):
    """Who wrote a candidate."""

    BOT = "bot"  # the bot, unprompted
    REMINDED = "reminded"  # the bot, after a reminder (its text begins with the opening, for ``opening``)
    COMPOSED = "composed"  # the guard, from the evidence: the opening alone


#: what a restated fact is put in front of, in the persona of a bot that cannot continue an opening
RESTATED_PREFIX = "Remember, you said: "
#: the policies under which the guard reminds (flag mode only reports; off judges nothing)
REMINDING_MODES = (GuardMode.RERANK, GuardMode.PENALTY, GuardMode.BLOCK, GuardMode.REPAIR)


@dataclass(frozen=True)
class Reminder:
    """The reminder of one turn: what the candidates contradicted (``facts``, the strongest first), the opening
    that states it, how the bot was reminded, and what came of it (``outcome``: who wrote the reply sent, or
    "none" when the policy still had nothing consistent to send) and its cost in seconds."""

    facts: tuple[PairScore, ...]
    opening: str
    method: ReminderMethod = ReminderMethod.OPENING
    drawn: int = 0  # reminded candidates the bot gave
    outcome: str = ""  # a CandidateOrigin, or "none": the policy's, filled in when the report is built
    seconds: float = 0.0
    restated: tuple[str, ...] = ()  # RESTATED: the persona lines added

    @property
    def fact(self) -> str:
        """The fact stated: its reading where the evidence has one ("I have pets." for "Yes, I have a dog.")."""
        top = self.facts[0]
        return top.premise_reading or top.premise


def needs_reminder(report) -> bool:
    """Whether the turn's policy found nothing consistent that answers: the sent reply contradicts, the safe reply
    was sent, or the reply sent says nothing (``guard.language.answers.says_nothing``) while a candidate contradicted."""
    if report.mode not in REMINDING_MODES or not report.any_contradiction:
        return False
    chosen = report.chosen
    if chosen is None:
        return True
    if chosen.contradicts and chosen.repair is None:
        return True
    return bool(chosen.details is not None and chosen.details.says_nothing)


def plan_reminder(report) -> Reminder | None:
    """The reminder for a turn whose candidates contradicted (``report``): the fact most of them contradicted (a
    persona line before an earlier turn, then the highest score) and the opening that states it; None when the
    evidence names no persona line or earlier turn (a reply that only contradicts itself)."""
    cited: Counter = Counter()
    best: dict[tuple, PairScore] = {}
    contradicting = [c for c in report.candidates if c.contradicts]
    for cand in contradicting:
        for pair in cand.evidence:
            if pair.source not in (PremiseSource.PERSONA, PremiseSource.HISTORY):
                continue
            key = (pair.source, pair.turn_id)
            cited[key] += 1
            if key not in best or pair.score > best[key].score:
                best[key] = pair
    if not best:
        return None
    order = sorted(best, key=lambda k: (k[0] != PremiseSource.PERSONA, -cited[k], -best[k].score))
    facts = tuple(best[k] for k in order)
    # the answers that contradicted the fact as read with the question: their particles say which way round not to
    # answer ("Yes, I am." to "Aren't you a teacher?" against "I work as a nurse." -> "No, ...")
    polarities, kinds = [], set()
    for cand in contradicting:
        if not any((p.source, p.turn_id) == order[0] and p.hypothesis_reading for p in cand.evidence):
            continue
        opened = particle(cand.text)
        if opened is not None:
            polarities.append(opened[1])
        kinds.add(cand.details.answer_kind)
    wh = QuestionKind.WH if kinds == {QuestionKind.WH} else ""
    return Reminder(facts=facts, opening=opening_for(facts[0], polarities, wh))


def opening_for(fact: PairScore, polarities: list[bool], question_kind: str = "") -> str:
    """The words a consistent reply opens with: the answer particle the contradicting candidates did not give (when
    they answered a yes/no question), then the fact in its own words ("No, I work as a nurse."); after a wh-question
    the fact alone; otherwise "Actually, " and the fact."""
    text = " ".join((fact.premise_reading or fact.premise).split()).rstrip()
    if text and text[-1] not in ".!?":
        text += "."
    lowered = text if text.startswith(("I ", "I'")) else text[:1].lower() + text[1:]
    if polarities:
        said_yes = sum(polarities) * 2 >= len(polarities)
        return f"{'No' if said_yes else 'Yes'}, {lowered}"
    if question_kind == QuestionKind.WH:
        return text[:1].upper() + text[1:]
    return f"{ACTUALLY}{lowered}"


#: the word an opening that answers no question starts with (``opening_for``)
ACTUALLY = "Actually, "
#: the particles ``opening_for`` puts before the fact
_PARTICLES = ("No, ", "Yes, ", ACTUALLY)


def bare_fact(opening: str) -> str:
    """An opening without the particle ``opening_for`` put before its fact ("Actually, I work as a nurse." -> "I work
    as a nurse."): the fact as the bot would say it, without the guard's way of bringing it in."""
    for said in _PARTICLES:
        if opening.startswith(said):
            rest = opening[len(said):].strip()
            return rest[:1].upper() + rest[1:] if rest else opening
    return opening


def restated_persona(persona: list[str], reminder: Reminder) -> list[str]:
    """The persona of a bot that cannot continue an opening, with the reminder's fact restated at its end."""
    line = RESTATED_PREFIX + reminder.fact
    return [*persona, line] if line not in persona else list(persona)
