"""The sheet as the bot's memory: the facts a reply is about to need, handed to the bot before it writes.

A small bot drifts (asked "What do you do for work?" a nurse persona's bot says it is a Russian teacher) and every
later candidate follows the drift; choosing better cannot fix a turn with nothing good to choose. BlenderBot 3 keeps
its persona in a long-term memory and conditions each reply on the facts it retrieves; here the fact sheet
(``guard.language.fact_sheet``) is that memory. Before the bot writes, ``recall`` reads the user's message: the
relations it asks about or asserts (a goad with another value too: "Aren't you a teacher?" is about the job), and
the sheet's facts of those relations go into the prompt as the bot's own memory, as they were said ("I work as a
nurse.", ``bots.base.chat_messages`` puts them in a note right before the user's message): the persona's first, an
earlier reply's only where the persona says nothing of it and it does not go against the persona (never a drifted
turn's). The first reply gets the persona's name, job and home too, so it does not invent them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from guard.language import grammar
from guard.language.answers import AnswerKind, expected_answer, read_answer
from guard.language.fact_sheet import Fact, FactSheet, Relation, read_facts, sheet_of
from guard.records import Turn
from guard.vocabulary import PremiseSource

#: the relation each kind of question asks about (how many: a count of what it names)
ASKS = {AnswerKind.COUNT: (Relation.COUNT,), AnswerKind.AGE: (Relation.AGE,),
        AnswerKind.PLACE: (Relation.LIVES_IN, Relation.GREW_UP), AnswerKind.NAME: (Relation.NAME,),
        AnswerKind.JOB: (Relation.JOB,), AnswerKind.FOOD: (Relation.DIET,)}
#: who the bot is, recalled before its first reply
IDENTITY = (Relation.NAME, Relation.JOB, Relation.LIVES_IN)


@dataclass(frozen=True)
class Memory:
    """What the bot is reminded of before it writes: the facts (``facts``, the persona's first); ``asked``: the
    relations the user's message is about."""

    facts: tuple[Fact, ...] = ()
    asked: tuple[Relation, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.facts)


def asked_relations(message: str) -> tuple[tuple[Relation, str], ...]:
    """The (relation, thing) pairs a user's message asks about or asserts of the bot: by the kind of answer it expects
    ("How many dogs do you have?": a count of dogs) and by what it claims the bot is ("Aren't you a teacher?",
    "So you live in Berlin?": read as the bot saying yes). ``thing`` is what a count counts ("" otherwise)."""
    found: dict[tuple[Relation, str], None] = {}
    kind = expected_answer(message)
    yes = read_answer(message, "Yes.")
    claimed = read_facts(yes.statement, PremiseSource.HISTORY, -1) if yes is not None else ()
    for fact in claimed:
        found[(fact.relation, fact.thing if fact.relation == Relation.COUNT else "")] = None
    for relation in ASKS.get(kind, ()):
        if relation == Relation.COUNT:
            things = [f.thing for f in claimed if f.relation == Relation.COUNT] or [_counted(message)]
            for thing in things:
                found[(relation, thing)] = None
        else:
            found[(relation, "")] = None
    return tuple(found)


def _counted(message: str) -> str:
    """What "how many" asks about ("How many dogs do you have?" -> "dog"), "" when it names nothing."""
    doc = grammar.parse(message)
    for token in doc:
        if token.lower_ == "many" and token.head.pos_ == "NOUN":
            return token.head.lemma_.lower()
    return ""


def recall(turns: Sequence[Turn], persona: Sequence[str], speaker: str = "bot") -> Memory:
    """The facts the reply to the last turn needs, from ``speaker``'s sheet (module docstring); empty when the last
    turn asks nothing the sheet holds."""
    if not turns or turns[-1].agent_id == speaker:
        return Memory()
    sheet = sheet_of(turns[:-1], persona, speaker)
    asked = asked_relations(turns[-1].text)
    first = not any(t.agent_id == speaker for t in turns)
    wanted = list(asked) + ([(r, "") for r in IDENTITY if (r, "") not in asked] if first else [])
    facts = _facts_for(sheet, wanted)
    return Memory(facts, tuple(dict.fromkeys(r for r, _ in asked)))


def _facts_for(sheet: FactSheet, wanted: Sequence[tuple[Relation, str]]) -> tuple[Fact, ...]:
    current = [f for f in sheet.current() if not f.vague]
    persona = [f for f in current if f.source == PremiseSource.PERSONA]
    out: list[Fact] = []
    for relation, thing in wanted:
        def about(f: Fact) -> bool:
            if f.relation != relation:
                return False
            if relation == Relation.COUNT and thing:
                return f.thing == thing or grammar.same_kind(f.thing, thing)
            return True

        own = [f for f in persona if about(f)]
        if own:
            out += own
            continue
        # an earlier reply's fact, where the persona says nothing of it and it goes against no persona fact
        said = [f for f in current if f.source == PremiseSource.HISTORY and about(f)
                and not sheet_clashes(persona, f)]
        out += said[-1:]
    return tuple(dict.fromkeys(out))


def sheet_clashes(persona: Sequence[Fact], fact: Fact) -> bool:
    """Whether ``fact`` (an earlier reply's) gives a persona fact another value: a drift, never recalled."""
    return bool(FactSheet(tuple(persona)).clashes((fact,)))
