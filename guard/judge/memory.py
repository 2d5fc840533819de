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

When nothing the bot writes, even asked once more, gives the persona's answer to such a question, ``sheet_answer``
says what the guard may answer for it from the sheet: the persona's single-valued fact the user asked about ("What's
your name?" -> "My name is Marisol."; "So you live in Madrid?" -> "No, I live in Valparaiso."). The reply is then
the guard's, marked so (``guard.judge.reminders.CandidateOrigin.SHEET``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from guard.language import grammar
from guard.language.answers import AnswerKind, expected_answer, read_answer
from guard.language.fact_sheet import (
    Fact,
    FactSheet,
    Relation,
    counts_of,
    is_pet_kind,
    persona_agreements,
    read_facts,
    sheet_of,
)
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
    #: the sets the bot gave whole ("Yes, I have a tortoise named Pebble." to "Do you have any pets?": ``Fact.whole_of``)
    #: that the message asks about, so the sheet can answer "Do you have a cat?" with no
    closed: tuple[Fact, ...] = ()
    #: the things the message asks how many of, or claims ("cat" for "Do you have a cat?"); ``sheet_answer`` answers
    #: a count of these only
    counted: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.facts)


def _claimed(message: str) -> tuple[Fact, ...]:
    """What a yes/no message claims of the bot, read as the bot saying yes ("Aren't you a teacher?": "I am a
    teacher.")."""
    yes = read_answer(message, "Yes.")
    return read_facts(yes.statement, PremiseSource.HISTORY, -1) if yes is not None else ()


def asked_relations(message: str) -> tuple[tuple[Relation, str], ...]:
    """The (relation, thing) pairs a user's message asks about or asserts of the bot: by the kind of answer it expects
    ("How many dogs do you have?": a count of dogs) and by what it claims the bot is ("Aren't you a teacher?",
    "So you live in Berlin?": read as the bot saying yes). ``thing`` is what a count counts ("" otherwise)."""
    found: dict[tuple[Relation, str], None] = {(Relation.PET_NAME, kind): None for kind in _pets_named(message)}
    kind = expected_answer(message)
    claimed = _claimed(message)
    # a name claimed for a pet first: "Isn't your dog called Buddy?" is about its name before its count
    for fact in sorted(claimed, key=lambda f: f.relation != Relation.PET_NAME):
        found[(fact.relation, fact.thing if fact.relation in (Relation.COUNT, Relation.PET_NAME) else "")] = None
    for relation in ASKS.get(kind, ()):
        if relation == Relation.COUNT:
            things = [f.thing for f in claimed if f.relation == Relation.COUNT] or [_counted(message)]
            for thing in things:
                found[(relation, thing)] = None
        else:
            found[(relation, "")] = None
    return tuple(found)


#: a question for the name of the listener's pet: "What's your dog's name?", "What is your cat called?", "What's the
#: name of your dog?" (``_pets_named``)
_ASKS_PET_NAME = re.compile(r"\b(?:your|ur)\s+(?P<a>[a-z]+)'s\s+name\b|\bwhat(?:'s|\s+is|\s+was)\s+(?:your|ur)\s+"
                            r"(?P<b>[a-z]+)\s+(?:called|named)\b|\bname\s+of\s+(?:your|ur)\s+(?P<c>[a-z]+)\b",
                            re.IGNORECASE)


#: a name the message gives the listener's pet: "Isn't your dog called Buddy?", "So your dog is Rex, right?", "Is
#: your cat's name Mittens?" (``claimed_pet_names``)
_CLAIMS_PET_NAME = re.compile(r"\b(?:your|ur)\s+(?P<a>[a-z]+)(?:\s+(?:is|was))?\s+(?:called|named)\s+(?P<n1>[A-Z][a-z]+)\b|"
                              r"\b(?:your|ur)\s+(?P<b>[a-z]+)'s\s+name(?:\s+(?:is|was))?\s+(?P<n2>[A-Z][a-z]+)\b|"
                              r"\b(?:your|ur)\s+(?P<c>[a-z]+)\s+(?:is|was)\s+(?P<n3>[A-Z][a-z]+)\b")


def claimed_pet_names(message: str) -> list[tuple[str, str]]:
    """The (kind, name) pairs ``message`` claims for the listener's pets ("Wait, isn't your dog called Buddy?" ->
    ("dog", "Buddy")): read off the words, as a yes/no question's statement does not always keep them whole."""
    out = []
    for m in _CLAIMS_PET_NAME.finditer(message):
        kind = (m.group("a") or m.group("b") or m.group("c")).lower()
        name = m.group("n1") or m.group("n2") or m.group("n3")
        if is_pet_kind(kind):
            out.append((kind, name))
    return list(dict.fromkeys(out))


def _pets_named(message: str) -> list[str]:
    """The kinds of pet whose name ``message`` asks the listener for or claims ("dog" for "What's your dog's name?"
    and for "Isn't your dog called Buddy?"; "pet" for "What's your pet's name?"): an animal by WordNet
    (``grammar.is_animal``) or "pet"."""
    kinds = [next(k for k in m.groups() if k).lower() for m in _ASKS_PET_NAME.finditer(message)]
    kinds += [kind for kind, _ in claimed_pet_names(message)]
    return [k for k in dict.fromkeys(kinds) if is_pet_kind(k)]


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
    persona = [f for f in sheet.current() if f.source == PremiseSource.PERSONA]
    counted = [thing for relation, thing in asked if relation == Relation.COUNT and thing]
    closed = tuple(f for f in sheet.current() if f.whole_of and not sheet_clashes(persona, f)
                   and any(grammar.covers(f.whole_of, thing) for thing in counted))
    return Memory(facts, tuple(dict.fromkeys(r for r, _ in asked)), closed, tuple(counted))


def _facts_for(sheet: FactSheet, wanted: Sequence[tuple[Relation, str]]) -> tuple[Fact, ...]:
    current = [f for f in sheet.current() if not f.vague]
    persona = [f for f in current if f.source == PremiseSource.PERSONA]
    # the persona's one pet, when it has one ("my pet" means it): "" with two dogs and a cat
    pets = [f for f in persona if f.relation == Relation.COUNT and f.holds and grammar.covers("pet", f.thing)]
    only_pet = pets[0].thing if len(pets) == 1 and pets[0].low == pets[0].high == 1 else ""
    out: list[Fact] = []
    for relation, thing in wanted:
        def about(f: Fact) -> bool:
            if f.relation != relation:
                return False
            if relation == Relation.COUNT and thing:
                return counts_of(f.thing, thing) or _of_one_kind(f.thing, thing)
            if relation == Relation.PET_NAME and thing:  # "pet": the only pet's; else that kind's, or a kind of it
                if thing == "pet":
                    return bool(only_pet) and f.thing == only_pet
                return f.thing == thing or grammar.kind_of(thing, f.thing)
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


def _of_one_kind(held: str, asked: str) -> bool:
    """Whether ``held`` and ``asked`` are two things of one kind a person has a set of (``grammar.COVERS``: pets,
    children, siblings): "Do you have a cat?" recalls the persona's tortoise, so the bot can say which pet it has."""
    return any(grammar.covers(kind, held) and grammar.covers(kind, asked) for kind in grammar.COVERS)


def sheet_clashes(persona: Sequence[Fact], fact: Fact) -> bool:
    """Whether ``fact`` (an earlier reply's) gives a persona fact another value: a drift, never recalled."""
    return bool(FactSheet(tuple(persona)).clashes((fact,)))


#: the facts the guard answers from the sheet: those a person has one of (a name, an age, a home, a job, how many of
#: a thing); what it eats or plays is no answer to "What's your favourite dish?"
ANSWERED_FROM_SHEET = (Relation.NAME, Relation.AGE, Relation.LIVES_IN, Relation.GREW_UP, Relation.JOB, Relation.COUNT,
                       Relation.PET_NAME)
#: a "where" question asks about home only when it says so ("Where did you go on holiday?" does not)
_ABOUT_HOME = re.compile(r"\b(?:live[sd]?|living|from|home|hometown|based|grow|grew|raised|born)\b", re.IGNORECASE)


@dataclass(frozen=True)
class SheetAnswer:
    """The persona's answer to the user's message, from the sheet: the fact (a persona line's) and, for a yes/no
    message, which way round it answers (``yes``: True "Yes, ...", False "No, ...", None after a wh-question)."""

    fact: Fact
    yes: bool | None = None


def sheet_answer(message: str, memory: Memory) -> SheetAnswer | None:
    """The answer the persona gives to ``message`` (the user's last turn) from ``memory`` (``recall``'s for it): a
    persona fact of a single-valued relation the message asks about (``ANSWERED_FROM_SHEET``), or None when the
    message asks none the persona holds, asks openly ("Tell me about yourself."), or asks "where" of something else
    than home. After a yes/no message the answer says no when what the message claims gives the fact another value
    ("So you live in Madrid?" to "I live in Valparaiso."), else yes ("Are you in your fifties?" to "I am 58."). A count
    answers only the thing asked about, except that after the bot gave a set whole ("Yes, I have a tortoise named
    Pebble." to "Do you have any pets?") a yes/no message about another thing of it is answered no with the
    persona's own ("Do you have a cat?" -> "No, I have a tortoise named Pebble.")."""
    kind = expected_answer(message)
    pet_name = Relation.PET_NAME in memory.asked
    if kind in (None, AnswerKind.OPEN) and not pet_name:
        return None
    if kind == AnswerKind.PLACE and not _ABOUT_HOME.search(message):
        return None
    # a wh-question asks for the relations of its kind ("What do you do for a living?": the job), in their order; one
    # for a pet's name ("What's your dog's name?") for that
    wanted = memory.asked if kind == AnswerKind.YES_NO else (Relation.PET_NAME,) if pet_name else ASKS.get(kind, ())
    facts = [f for relation in wanted for f in memory.facts if f.relation == relation
             and f.source == PremiseSource.PERSONA and f.relation in ANSWERED_FROM_SHEET
             and f.time == grammar.PRESENT and not f.vague]
    # a pet's name is the answer only when the persona names one pet of that kind, its only one ("I have a dog named
    # Max."): of two named dogs, which is meant is not read
    named = [f for f in facts if f.relation == Relation.PET_NAME]
    if named and (len(named) > 1 or named[0].low != 1 or named[0].high != 1):
        facts = [f for f in facts if f.relation != Relation.PET_NAME]
    if not facts:
        return None
    # a count answers only the thing asked about: the tortoise the memory recalls for "Do you have a cat?" says
    # nothing of cats, so the sheet has no answer to it
    counted = memory.counted
    others = [f for f in facts if f.relation == Relation.COUNT and counted
              and not any(counts_of(f.thing, thing) for thing in counted)]
    facts = [f for f in facts if f not in others]
    if not facts:
        # "Do you have a cat?" after the bot gave its pets whole ("Yes, I have a tortoise named Pebble."): no, and the
        # persona's own of that set
        outside = kind == AnswerKind.YES_NO and any(
            not any(counts_of(held, thing) for held in whole.among) for whole in memory.closed for thing in counted)
        kept = [f for f in others if any(f.thing in whole.among for whole in memory.closed)]
        return SheetAnswer(kept[0], yes=False) if outside and kept else None
    fact = facts[0]
    if kind != AnswerKind.YES_NO:
        return SheetAnswer(fact)
    # what the message claims of this fact, as holding now ("I thought you said you were a pilot?" claims the job;
    # "Do you have any pets?" claims nothing of how many)
    if fact.relation == Relation.PET_NAME:  # yes when the message names the persona's pet as the persona does
        names = [name for kind, name in claimed_pet_names(message)]
        return SheetAnswer(fact, yes=not names or any(name.lower() == fact.value.lower() for name in names))
    claimed = [replace(f, time=grammar.PRESENT) for f in _claimed(message) if f.relation == fact.relation
               and not f.vague]
    if not claimed:
        return SheetAnswer(fact, yes=fact.holds)
    # yes when the claim gives the persona's value again ("Is your name Marisol?"), or a range it falls in ("Are you in
    # your fifties?" to 58); a job or a home that is not the persona's is a no, even where the sheet would let both
    # stand ("a pilot" beside "a ferry captain")
    persona = FactSheet((fact,))
    ranged = fact.relation in (Relation.AGE, Relation.COUNT) and not persona.clashes(claimed)
    return SheetAnswer(fact, yes=bool(persona_agreements(persona, claimed)) or ranged)
