"""The words the guard speaks, defined once: methods, pairings, CDConv categories, guard modes and
where a compared premise comes from, plus the one way to name that premise for people.

Each is a ``StrEnum``: members are the plain strings the command line, the JSON outputs and the
app's widgets already use, so ``Method.STRUCTURED == "structured"`` and ``json.dumps`` writes the
value. No heavy imports here: the command line and the UI import this without loading torch.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Protocol


class Method(StrEnum):
    """How the detector pairs the judged turn with what came before (DECODE §4.1)."""

    STRUCTURED = "structured"  # one pair per earlier same-speaker utterance (or sentence) and persona line
    UNSTRUCTURED = "unstructured"  # one pair: the whole speaker-marked history against the turn


class Pairing(StrEnum):
    """The unit of a structured pair: a whole utterance (DECODE) or a sentence."""

    UTTERANCE = "utterance"
    SENTENCE = "sentence"


class Category(StrEnum):
    """CDConv's contradiction categories (Zheng et al. 2022), plus "none"."""

    NONE = "none"
    INTRA = "intra"  # two clauses of the judged turn contradict each other
    ROLE = "role"  # the turn reads as the other speaker's side of the conversation
    HISTORY = "history"  # the turn contradicts what its speaker said earlier


class GuardMode(StrEnum):
    """What the guard does with the verdicts on the candidate replies (guard.judge.policies)."""

    OFF = "off"
    FLAG = "flag"
    RERANK = "rerank"
    PENALTY = "penalty"
    BLOCK = "block"
    REPAIR = "repair"  # the generator's best with its one contradicting sentence removed, else another mode


class PremiseSource(StrEnum):
    """Where the premise of a scored pair comes from."""

    HISTORY = "history"  # an earlier turn of the conversation
    PERSONA = "persona"  # a persona line
    INTRA = "intra"  # an earlier clause of the judged turn itself
    WHOLE_HISTORY = "whole_history"  # the unstructured method's speaker-marked history, no single turn


class Check(StrEnum):
    """The checks a structured detector may run beside the history check (CDConv's categories, Zheng et al. 2022).
    Each that flags has its own threshold; which run in the chat is the checkpoint's calibration's choice
    (``guard.config.GuardConfig.checks``)."""

    INTRA = "intra"  # two clauses of the judged turn contradict each other (flags)
    OWN_QUESTION = "own_question"  # the bot answers the question it asked the user back (flags, as role confusion)
    ROLE = "role"  # a history contradiction that reads as the user's side is named role confusion (names only)
    FACTS = "facts"  # the bot's fact sheet: a single-valued fact given another value (flags, as history)


METHODS: tuple[Method, ...] = tuple(Method)
CHECKS: tuple[Check, ...] = tuple(Check)
PAIRINGS: tuple[Pairing, ...] = tuple(Pairing)
CATEGORIES: tuple[Category, ...] = tuple(Category)
GUARD_MODES: tuple[GuardMode, ...] = tuple(GuardMode)

#: What each category is called on screen.
CATEGORY_NAMES: dict[Category, str] = {
    Category.NONE: "no contradiction",
    Category.INTRA: "intra-sentence contradiction",
    Category.ROLE: "role confusion",
    Category.HISTORY: "history contradiction",
}


def category_name(category: str) -> str:
    """The on-screen name of a category; an unknown value is shown as it is."""
    return CATEGORY_NAMES.get(category, category)


class Sourced(Protocol):
    """Anything that says where its premise comes from (a scored pair, ``guard.judge.verdicts.PairScore``)."""

    source: str
    turn_id: int | None


def describe_source(premise: Sourced | PremiseSource | str, turn_id: int | None = None) -> str:
    """Name a premise for people: "turn 3", "persona line 2", "its own earlier clause", "the whole history".

    Pass a pair (its ``source`` and ``turn_id`` are read) or a source and the id that goes with it:
    the turn's id for ``history``, the 0-based line index for ``persona`` (shown 1-based).
    """
    if isinstance(premise, str):
        source = PremiseSource(premise)
    else:
        source, turn_id = PremiseSource(premise.source), premise.turn_id
    if source is PremiseSource.INTRA:
        return "its own earlier clause"
    if source is PremiseSource.WHOLE_HISTORY:
        return "the whole history"
    if turn_id is None:
        needed = "line index" if source is PremiseSource.PERSONA else "turn id"
        raise ValueError(f"a {source} premise needs its {needed}")
    if source is PremiseSource.PERSONA:
        return f"persona line {turn_id + 1}"
    return f"turn {turn_id}"
