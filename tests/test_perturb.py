"""guard.language.perturb: the one implementation of the text perturbations the probes and the training pairs share."""

from __future__ import annotations

import random

import pytest

from guard.language import perturb
from guard.language.perturb import Perturb


@pytest.mark.parametrize("text, expected", [
    ("I'll see you there.", "I will not see you there."),  # not "I'll not see"
    ("I'd love to go.", "I would not love to go."),
    ("She'd gone home.", "She had not gone home."),
    ("Yes it is.", "Yes it is not."),  # no space before the full stop
    ("I can swim.", "I cannot swim."),
    ("I cannot swim.", "I can swim."),
    ("She is never late.", "She is always late."),
    ("I dont like pizza.", "I do like pizza."),  # chat spelling, split by spaCy into "do" + "nt"
    ("AND YOU DON'T KNOW IT", "AND YOU DO KNOW IT"),  # spaCy keeps a shouted "DON'T" as one token
    ("Chatting is a good skill.", "Chatting is not a good skill."),  # a clause as the subject
    ("Hi there. I like dogs.", "Hi there. I do not like dogs."),  # the first declarative sentence
])
def test_negate_flips_the_first_declarative_sentence(text, expected):
    assert perturb.negate(text) == expected


@pytest.mark.parametrize("text", [
    "Do you like dogs?", "Thank you that would be amazing.",  # a question; no subject
    "thats what i am most worried about",  # "thats" = "that" + "s": no "thatdoes not s"
    "Trump gets blasted all the time.",  # a passive "get" takes no "not"
    "I ain't going.",  # "ain't" has no single positive form
])
def test_negate_declines_what_it_cannot_negate_cleanly(text):
    assert perturb.negate(text) is None


def test_chat_negation_contracts_only_the_do_support():
    assert perturb.negate("I went home.", contract_do=True) == "I didn't go home."
    assert perturb.negate("I went home.") == "I did not go home."
    assert perturb.negate("I am home.", contract_do=True) == "I am not home."


def test_doc_and_string_api_agree(nlp):
    text = "We have lived in Ohio for ten years."
    assert Perturb.negation(nlp(text)) == perturb.negate(text) == "We have not lived in Ohio for ten years."
    assert Perturb.remove_negation(nlp(text)) is None
    assert Perturb.add_negation(nlp("I don't eat meat.")) is None  # negated already
    assert Perturb.remove_negation(nlp("I don't eat meat.")) == "I do eat meat."


@pytest.mark.parametrize("text, expected", [
    ("I'm sure he's been there, but I can't go.", "I am sure he has been there, but I cannot go."),
    ("She'd gone home and we'll see.", "She had gone home and we will see."),
    ("It's John's car.", "It is John's car."),  # the possessive stays
    ("I dont know.", "I do not know."),
    ("I have a dog.", None),
])
def test_expand_contractions(text, expected):
    assert perturb.expand_contractions(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("I am sure I will not go.", "I'm sure I won't go."),
    ("I have been there and it is not far.", "I've been there and it isn't far."),
    ("I am not sure.", "I'm not sure."),
    ("I cannot swim.", "I can't swim."),
    ("I have a dog.", None),  # a main-verb "have" is not contracted
])
def test_contract(text, expected):
    assert perturb.contract(text) == expected


def test_antonym_synonym_and_modifier_swaps(wn):
    assert perturb.antonym("I won the lottery.") == "I lost the lottery."
    assert perturb.antonym("I know what you mean.") is None  # WordNet's "ignore" is no opposite in chat
    assert perturb.antonym("Is it cold?") is None
    assert perturb.synonym("I don't watch TV at all.") == "I don't watch Television at all."  # "TV" is no shouting
    assert perturb.drop_modifier("I have a big old dog.", random.Random(1)) == "I have an old dog."


def test_first_statement_skips_greetings_and_questions():
    assert perturb.first_statement("Hi! Do you like dogs? I have two dogs.") == "I have two dogs."
    assert perturb.first_statement("Do you like dogs?") is None
