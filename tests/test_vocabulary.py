"""The guard's vocabulary: one definition of each set of names, and the one way to name a premise."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from guard.vocabulary import (
    CATEGORIES,
    CATEGORY_NAMES,
    GUARD_MODES,
    METHODS,
    PAIRINGS,
    Category,
    GuardMode,
    Method,
    PremiseSource,
    category_name,
    describe_source,
)


@dataclass
class _Pair:
    source: PremiseSource
    turn_id: int | None


def test_the_names_are_the_strings_the_outputs_always_used():
    assert METHODS == ("structured", "unstructured")
    assert PAIRINGS == ("utterance", "sentence")
    assert CATEGORIES == ("none", "intra", "role", "history")
    assert GUARD_MODES == ("off", "flag", "rerank", "penalty", "block", "repair")
    assert {str(s) for s in PremiseSource} == {"history", "persona", "intra", "whole_history"}
    assert json.dumps({"method": Method.STRUCTURED, "category": Category.ROLE}) == \
        '{"method": "structured", "category": "role"}'
    assert f"{GuardMode.RERANK}" == "rerank" and GuardMode("block") is GuardMode.BLOCK


def test_every_category_has_a_name_for_people():
    assert set(CATEGORY_NAMES) == set(Category)
    assert category_name("intra") == "intra-sentence contradiction"
    assert category_name("something new") == "something new"  # shown as it is, not hidden


def test_describe_source_names_each_kind_of_premise():
    assert describe_source(PremiseSource.HISTORY, 3) == "turn 3"
    assert describe_source(PremiseSource.PERSONA, 1) == "persona line 2"  # 0-based index, shown 1-based
    assert describe_source("persona", 0) == "persona line 1"
    assert describe_source(PremiseSource.INTRA, 5) == "its own earlier clause"
    assert describe_source(PremiseSource.WHOLE_HISTORY) == "the whole history"
    # a pair is read for its source and turn id
    assert describe_source(_Pair(PremiseSource.HISTORY, 0)) == "turn 0"
    assert describe_source(_Pair(PremiseSource.PERSONA, 2)) == "persona line 3"
    assert describe_source(_Pair(PremiseSource.WHOLE_HISTORY, None)) == "the whole history"


def test_describe_source_refuses_what_it_cannot_name():
    with pytest.raises(ValueError, match="turn id"):
        describe_source(PremiseSource.HISTORY)
    with pytest.raises(ValueError, match="line index"):
        describe_source(_Pair(PremiseSource.PERSONA, None))
    with pytest.raises(ValueError):
        describe_source("earlier")
