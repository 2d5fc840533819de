"""Each rule of English the guard states once (``guard.language.grammar``, ``guard.language.forms``), checked on the
examples of every place that used to state it for itself: the judge's readings (grammar, answers, text, fact sheet),
the perturbations, the goading studio and the training-data builders. Behaviour only: what each place makes of a
sentence, never how it is written."""

from __future__ import annotations

import random

import pytest

from guard.language import answers, grammar
from guard.training import bot_turns, facts, persona


# ------------------------------------------------------------------------------------------------ number words
@pytest.mark.parametrize(("written", "value"), [
    ("twelve", 12), ("twenty-six", 26), ("twenty one", 21), ("ninety\u2011nine", 99), ("a dozen", 12),
    ("hundred", 100), ("a hundred", 100), ("0", 0), ("seventeen", 17),
    ("thirty-ten", None), ("twenty-zero", None), ("lots", None), ("1000", None)])
def test_number_words_are_read_one_way(written, value):
    assert grammar.number_value(written) == value


def test_number_words_are_written_one_way():
    assert [grammar.number_word(n) for n in (0, 7, 13, 20, 40, 100)] == ["zero", "seven", "thirteen", "twenty",
                                                                          "forty", "hundred"]
    assert grammar.number_word(21) is None and grammar.number_word(-1) is None
    assert all(grammar.number_value(grammar.number_word(n)) == n for n in range(20))


@pytest.mark.parametrize(("reply", "statement"), [
    ("Seventeen.", "I have seventeen dogs."), ("Twenty-two.", "I have twenty-two dogs."),
    ("Just ninety.", "I have just ninety dogs."), ("A few.", "I have a few dogs."), ("Lots.", None)])
def test_a_count_answer_needs_a_number_or_an_amount_word(reply, statement):
    reading = answers.read_answer("How many dogs do you have?", reply)
    assert (reading.statement if reading else None) == statement


def test_bot_turn_counts_are_restated_with_the_same_words():
    rng = random.Random(0)
    assert bot_turns.quantity_restatement("i have 2 dogs .", rng) == "i have two dogs ."
    assert bot_turns.quantity_restatement("i have twenty dogs .", rng) == "i have 20 dogs ."
    assert bot_turns.quantity_restatement("i have 21 dogs .", rng) is None  # no one word for 21
    swapped = bot_turns.quantity_swap("i have seventeen cats .", random.Random(1))
    assert swapped is not None and swapped != "i have seventeen cats ."


def test_training_templates_spell_small_counts_with_the_same_words():
    assert {facts.count_words(3, "dog", random.Random(s)) for s in range(20)} == {"3 dogs", "three dogs"}
    assert {facts.count_words(13, "dog", random.Random(s)) for s in range(20)} == {"13 dogs"}
    said = {persona.realize(persona.Fact("have", "dog", 2), random.Random(s)) for s in range(30)}
    assert any("two dogs" in s for s in said) and any("2 dogs" in s for s in said)
    assert not any("eleven" in persona.realize(persona.Fact("have", "dog", 11), random.Random(s)) for s in range(30))
