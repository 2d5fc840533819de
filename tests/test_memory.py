"""The fact sheet as the bot's memory (issue 52, point 1): what the guard recalls before the bot writes, where the
prompt carries it, and that a guarded turn hands it to the bot and records it."""

from __future__ import annotations

import pytest

from bots.base import MEMORY_NOTE, Bot, chat_messages
from conversation.guarding import guarded_reply
from conversation.records import BOT, USER, ChatSettings, ChatTurn, Conversation
from guard.judge.memory import recall
from guard.judge.report import BotTurnReport
from guard.language.fact_sheet import Relation
from guard.records import Candidate, Turn

NURSE = ["I have two dogs.", "I live in Paris.", "I work as a nurse."]


def _turns(*texts: str) -> list[Turn]:
    return [Turn(i, USER if i % 2 == 0 else BOT, text) for i, text in enumerate(texts)]


def _said(turns, persona=NURSE) -> list[str]:
    return [f.said for f in recall(turns, persona).facts]


@pytest.mark.parametrize(("message", "said", "asked"), [
    # a goad with another value is about the relation it asserts
    ("Wait, aren't you a teacher?", ["I work as a nurse."], [Relation.JOB]),
    ("So you live in Berlin?", ["I live in Paris."], [Relation.LIVES_IN]),
    ("How many dogs do you have?", ["I have two dogs."], [Relation.COUNT]),
    ("What do you do for work?", ["I work as a nurse."], [Relation.JOB]),
    # another thing of a kind the persona has some of: the persona's own, so the bot can say which pets it has
    ("Do you have a cat?", ["I have two dogs."], [Relation.COUNT]),
    # a message about nothing the sheet holds recalls nothing
    ("Do you like the rain?", [], []),
    ("Do you have a brother?", [], [Relation.COUNT]),
])
def test_the_message_decides_what_is_recalled(message, said, asked):
    memory = recall(_turns("Hi!", "Hello there!", message), NURSE)
    assert [f.said for f in memory.facts] == said
    assert list(memory.asked) == asked


def test_a_question_about_what_a_pet_is_called_recalls_and_answers_nothing_of_the_bots_own_name():
    """"What is your dog called?" asked the bot's name once (any "called" did): the memory put "My name is Sam." before
    the bot's reply, and the sheet's answer to it was "My name is Sam." (the embedded bot's persona, 2026-11-29)."""
    from guard.judge.memory import sheet_answer

    persona = ["My name is Sam.", "I have a dog named Max."]
    memory = recall(_turns("Do you have any pets?", "I have a dog named Max.", "What is your dog called?"), persona)
    assert Relation.NAME not in memory.asked and "My name is Sam." not in [f.said for f in memory.facts]
    answer = sheet_answer("What is your dog called?", memory)
    assert answer is None or answer.fact.said == "I have a dog named Max."


def test_the_first_reply_gets_who_the_bot_is():
    """Before its first reply the bot is reminded of its job and home, so it does not invent them."""
    assert set(_said(_turns("Hi! Tell me about yourself."))) == {"I work as a nurse.", "I live in Paris."}


def test_a_drifted_turn_is_never_recalled_and_the_persona_comes_first():
    """The bot's drift ("I teach Russian") is never its memory: the persona's job is; an earlier reply's fact is
    recalled only where the persona says nothing of it."""
    drifted = _turns("Hi!", "I'm Alexei, and I teach Russian in Paris.", "What's your job again?")
    assert _said(drifted) == ["I work as a nurse."]
    told = _turns("Hi!", "I'm 34 years old and I love hiking.", "How old are you?")
    assert _said(told) == ["I'm 34 years old and I love hiking."]


def test_the_prompt_carries_the_memory_right_before_the_message():
    turns = _turns("Hi!", "Hello!", "Aren't you a teacher?")
    messages = chat_messages(turns, NURSE, memory=["I work as a nurse."])
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "system", "user"]
    assert messages[3]["content"] == f"{MEMORY_NOTE} I work as a nurse."
    assert messages[-1]["content"] == "Aren't you a teacher?"
    assert chat_messages(turns, NURSE) == [m for i, m in enumerate(messages) if i != 3]  # no memory, no note


class _Remembering(Bot):
    """A bot that reads a memory and says what it was handed."""

    name = "remembering"
    reads_memory = True

    def __init__(self):
        self.memories: list[tuple[str, ...]] = []

    def generate(self, history, num_candidates, decoding=None, persona=(), memory=()):
        self.memories.append(tuple(memory))
        return [Candidate("I work as a nurse at a children's hospital.", -0.5)]


@pytest.mark.parametrize("on", [True, False])
def test_a_guarded_turn_hands_the_memory_to_the_bot_and_records_it(on):
    conversation = Conversation(persona=list(NURSE))
    conversation.append(ChatTurn(turn_id=0, agent_id=USER, text="Wait, aren't you a teacher?"))
    bot = _Remembering()
    settings = ChatSettings(bot="remembering", guard_mode="off", num_candidates=1, persona=list(NURSE), memory=on)
    turn = guarded_reply(conversation, bot, None, settings, classroom=None)
    expected = ("I work as a nurse.", "I live in Paris.") if on else ()  # its first reply: who it is too
    assert bot.memories == [expected]
    assert turn.report.memory == expected
    assert BotTurnReport.from_json(turn.report.to_json()).memory == expected


def test_a_fact_said_once_may_be_said_again(embedded_bot):
    """The 'fast' preset bans every 4-token run of an earlier turn; a run of the persona or the memory stays allowed,
    so the bot can say its home again ("I live in Valparaiso." banned once said: the next answer wrote
    "Valparaisos"), while the rest of what it said stays banned."""
    history = _turns("Where do you live?", "I live in Valparaiso, by the sea.", "So you live in Madrid?")
    banned = {tuple(g) for g in embedded_bot.history_ngrams(history, 4)}
    kept = {tuple(g) for g in embedded_bot.history_ngrams(history, 4, allowed=["I live in Valparaiso."])}
    fact = embedded_bot.tokenizer("I live in Valparaiso", add_special_tokens=False)["input_ids"][:4]
    assert tuple(fact) in banned and tuple(fact) not in kept
    assert kept and kept < banned  # ", by the sea" stays banned


SAM = ["My name is Sam.", "I live in Portland, Oregon.", "I have a dog named Max."]


@pytest.mark.parametrize(("message", "yes"), [
    ("What's your dog's name?", None),
    ("What is your dog called again?", None),
    ("What's your pet's name?", None),
    ("Wait, isn't your dog called Buddy?", False),
    ("So your dog is Rex, right?", False),
    ("So your dog is Max, right?", True),
])
def test_a_pets_name_asked_or_claimed_is_recalled_and_answered_from_the_sheet(message, yes):
    """The persona's only dog's name is the memory and the sheet's answer (2026-11-29-pet-name-answers.md): "No, I have
    a dog named Max." to "Isn't your dog called Buddy?", which once got "Yes, I have a dog named Max."."""
    from guard.judge.memory import sheet_answer

    memory = recall(_turns("Do you have any pets?", "I do!", message), SAM)
    assert Relation.PET_NAME in memory.asked and "I have a dog named Max." in [f.said for f in memory.facts]
    answer = sheet_answer(message, memory)
    assert answer is not None and answer.fact.relation == Relation.PET_NAME and answer.yes is yes


def test_no_answer_from_the_sheet_where_it_cannot_tell_which_pet_is_meant():
    from guard.judge.memory import sheet_answer

    two = ["I have two dogs.", "One of my dogs is named Max.", "I have a cat named Luna."]
    for message in ("What's your pet's name?", "What's your dog's name?"):
        answer = sheet_answer(message, recall(_turns("Hi!", "Hello!", message), two))
        assert answer is None or answer.fact.relation != Relation.PET_NAME, message
