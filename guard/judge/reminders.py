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

from guard.judge.policies import Group, group_of
from guard.judge.verdicts import PairScore
from guard.language.answers import QuestionKind
from guard.language.grammar import after_particle, particle
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
    SHEET = "sheet"  # the guard, from the fact sheet: the persona's fact the user asked about, as the answer


#: the candidates the guard wrote, not the bot: sent only when nothing the bot wrote stands as well (``policies``)
GUARD_WRITTEN = (CandidateOrigin.COMPOSED, CandidateOrigin.SHEET)


class ReminderSource(StrEnum):
    """What a reminder was planned from."""

    EVIDENCE = "evidence"  # the fact the candidates contradicted (``plan_reminder``)
    SHEET = "sheet"  # the persona's fact the user asked about, which no candidate gave (``plan_from_sheet``)


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
    #: the persona's fact the user asked about, as the persona says it ("I work as a ferry captain."), and the answer
    #: the guard wrote from it, a last candidate of its own (``CandidateOrigin.SHEET``)
    sheet_fact: str = ""
    sheet_answer: str = ""

    @property
    def source(self) -> ReminderSource:
        """What it was planned from: the evidence names the facts contradicted; a reminder from the sheet has none."""
        return ReminderSource.EVIDENCE if self.facts else ReminderSource.SHEET

    @property
    def fact(self) -> str:
        """The fact stated: its reading where the evidence has one ("I have pets." for "Yes, I have a dog."); the
        persona's sentence for a reminder from the sheet."""
        if not self.facts:
            return self.sheet_fact
        top = self.facts[0]
        return top.premise_reading or top.premise

    @property
    def opened_from_sheet(self) -> bool:
        """Whether the bot's reply is opened with the sheet's answer to the user's message, which goes before the
        evidence's fact when the candidates also contradicted (2026-11-29-sheet-first.md): asked "What's your dog's
        name?", the reply opens "I have a dog named Max.", not with the job the candidates got wrong."""
        return bool(self.sheet_answer) and self.opening == self.sheet_answer

    @property
    def reminded_of(self) -> str:
        """The fact the bot is reminded of: the sheet's when its reply opens with the sheet's answer, else ``fact``."""
        return self.sheet_fact if self.opened_from_sheet else self.fact


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


def gives_persona_answer(report) -> bool:
    """Whether the reply the turn's policy chose is a consistent answer the persona supports
    (``guard.judge.policies.Group.SUPPORTED``): when the user asked about a persona fact and it is not, the bot is
    asked once more (``plan_from_sheet``)."""
    chosen = report.chosen
    if chosen is None or chosen.verdict is None or (chosen.contradicts and chosen.repair is None):
        return False
    return group_of(chosen.verdict) == Group.SUPPORTED


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
    the fact alone; otherwise "Actually, " and the fact. An earlier answer is stated without its own particle, which
    answered that turn's question ("Yes, I have two parakeets." -> "Actually, I have two parakeets.", not "Actually,
    yes, ..." to "I bet you have a dog too, right?": 2026-11-29-particle-in-the-fact.md)."""
    said = fact.premise_reading or fact.premise
    said = after_particle(said) or said
    if polarities:
        said_yes = sum(polarities) * 2 >= len(polarities)
        return _said(said, "No, " if said_yes else "Yes, ")
    if question_kind == QuestionKind.WH:
        return _said(said)
    return _said(said, ACTUALLY)


def _said(fact: str, particle: str = "") -> str:
    """A fact as a reply says it, after ``particle`` ("No, I work as a nurse."): one sentence, its first word in
    lower case after a particle (unless it is "I")."""
    text = " ".join(fact.split()).rstrip()
    if text and text[-1] not in ".!?":
        text += "."
    if not particle:
        return text[:1].upper() + text[1:]
    return particle + (text if text.startswith(("I ", "I'")) else text[:1].lower() + text[1:])


def plan_from_sheet(answer) -> Reminder:
    """The reminder for a turn whose user asked about a persona fact that no candidate gave (``answer``: the
    ``guard.judge.memory.SheetAnswer``): the bot's reply opened with the persona's answer ("No, I live in
    Valparaiso."), which also goes in alone, as the guard's (``CandidateOrigin.SHEET``)."""
    particle = "" if answer.yes is None else ("Yes, " if answer.yes else "No, ")
    written = _said(answer.fact.said, particle)
    return Reminder(facts=(), opening=written, sheet_fact=_said(answer.fact.said), sheet_answer=written)


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
    line = RESTATED_PREFIX + reminder.reminded_of
    return [*persona, line] if line not in persona else list(persona)
