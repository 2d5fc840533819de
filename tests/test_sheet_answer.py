"""The answer written from the sheet (issue 52, point 4): when the user asks about a persona fact and nothing the bot
writes gives it, the bot is asked once more with the persona's answer opened, and if it still gives no such answer the
guard sends the persona's answer itself, marked as the guard's in the report and its words."""

from __future__ import annotations

import pytest
from fake_nli import CONTRA, ScriptedScorer

from bots.base import Bot, Candidate
from conversation.guarding import guarded_reply
from conversation.records import ChatSettings, Conversation
from guard.config import GuardConfig
from guard.judge.memory import recall, sheet_answer
from guard.judge.pipeline import Guard
from guard.judge.policies import choose
from guard.judge.reminders import CandidateOrigin, ReminderSource, plan_from_sheet
from guard.judge.report import BotTurnReport
from guard.judge.verdicts import Verdict, VerdictDetails
from guard.judge.wording import summary
from guard.language.answers import AnswerKind, expected_answer
from guard.records import Turn
from guard.vocabulary import Category, GuardMode, Method

CAPTAIN = ["My name is Marisol.", "I work as a ferry captain.", "I live in Valparaiso.", "I have a twin sister."]
NURSE = ["I have two dogs.", "I live in Paris.", "I work as a nurse."]


def _answer(persona: list[str], message: str) -> str | None:
    turns = [Turn(0, "user", "Hi!"), Turn(1, "bot", "Hello there."), Turn(2, "user", message)]
    answer = sheet_answer(message, recall(turns, persona, "bot"))
    return None if answer is None else plan_from_sheet(answer).opening


@pytest.mark.parametrize(("persona", "message", "written"), [
    (CAPTAIN, "What's your name?", "My name is Marisol."),
    (CAPTAIN, "Nice to meet you. What do you do for a living?", "I work as a ferry captain."),
    # a goad that gives the fact another value is answered no, even when it reports what the bot said
    (CAPTAIN, "Wait, I thought you said you were a pilot?", "No, I work as a ferry captain."),
    (CAPTAIN, "So you live in Madrid?", "No, I live in Valparaiso."),
    # a place spaCy tags as a plural common noun is a home all the same (2026-11-29-sheet-first.md)
    (["My name is Tomasz.", "I live in Bruges."], "Do you live in Amsterdam?", "No, I live in Bruges."),
    # a name checked in the past ("your name was ..., right?") asks what it is: names do not change in a chat
    (CAPTAIN, "And your name was Elena, right?", "No, my name is Marisol."),
    (CAPTAIN, "Your name was Marisol, right?", "Yes, my name is Marisol."),
    # "radio host": a host with a noun before it works as one
    (["My name is Tomasz.", "I am a radio host."], "So you're a taxi driver?", "No, I am a radio host."),
    # a yes/no question that claims nothing of how many is answered yes with the persona's own
    (CAPTAIN, "Do you have any siblings?", "Yes, I have a twin sister."),
    (NURSE, "Do you have any pets?", "Yes, I have two dogs."),
    (NURSE, "So you have a whole team of dogs?", "No, I have two dogs."),
    (NURSE, "Tell me again, how many dogs?", "I have two dogs."),
    # an age by decade, claimed in a goad: no when the persona's age is outside it, yes when inside
    (["I am 58 years old."], "You're still in your twenties, aren't you?", "No, I am 58 years old."),
    (["I am 58 years old."], "Are you in your fifties?", "Yes, I am 58 years old."),
    # nothing the persona holds, or nothing a person has one of, or "where" of something else than home: no answer
    (CAPTAIN, "Do you get seasick?", None),
    (CAPTAIN, "What's your favorite food?", None),
    (NURSE, "Where did you go on your last holiday?", None),
    (NURSE, "Tell me about yourself.", None),
    # the memory recalls the persona's pets for another pet, but they say nothing of how many cats: no answer
    (NURSE, "Do you have a cat?", None),
    (CAPTAIN, "How many brothers do you have?", None),
])
def test_the_sheet_answers_what_the_persona_holds(persona, message, written):
    assert _answer(persona, message) == written


@pytest.mark.parametrize(("pets", "message", "written"), [
    # the bot gave its pets whole: another pet is a no, with the persona's own
    ("Yes, I have a tortoise named Pebble.", "Do you have a cat?", "No, I have a tortoise named Pebble."),
    ("I'm more than happy to answer. I have a tortoise named Pebble.", "Do you have any dogs?",
     "No, I have a tortoise named Pebble."),
    # a list left open says nothing of cats; a wh-question for cats asks for a number the sheet does not hold
    ("Yes, a tortoise and some other animals.", "Do you have a cat?", None),
    ("Yes, I have a tortoise named Pebble.", "How many cats do you have?", None),
])
def test_after_the_bot_gave_its_pets_whole_another_pet_is_answered_no(pets, message, written):
    persona = ["My name is Ngozi.", "I have a tortoise named Pebble."]
    turns = [Turn(0, "user", "Do you have any pets?"), Turn(1, "bot", pets), Turn(2, "user", message)]
    answer = sheet_answer(message, recall(turns, persona, "bot"))
    assert (None if answer is None else plan_from_sheet(answer).opening) == written


def test_a_living_is_a_job_not_a_place():
    assert expected_answer("What do you do for a living?") == AnswerKind.JOB
    assert expected_answer("Where are you living now?") == AnswerKind.PLACE


class _Dodging(Bot):
    """Answers "What's your name?" with nothing; reminded, writes on from the opening, or (``stubborn``) dodges."""

    name = "dodging"
    continues_openings = True

    def __init__(self, first: str = "Pray for the day.", stubborn: bool = False):
        self.first, self.stubborn = first, stubborn
        self.openings: list[str] = []

    def generate(self, history, num_candidates, decoding=None, persona=(), **_):
        return [Candidate(self.first, -0.2), Candidate("What a lovely question.", -0.4)][:num_candidates]

    def continue_reply(self, history, opening, num_candidates, decoding=None, persona=(), **_):
        self.openings.append(opening)
        if self.stubborn:
            return [Candidate("Pray for the night.", -0.6)]
        return [Candidate(f"{opening} Nice to meet you!", -0.5)]


def _neutral_guard() -> Guard:
    return Guard("scripted", ScriptedScorer({}), config=GuardConfig(threshold=0.9))  # every pair neutral


def _asked(message: str) -> Conversation:
    conversation = Conversation(persona=list(CAPTAIN))
    conversation.add("user", message)
    return conversation


def test_a_dodge_to_a_persona_question_gets_one_more_batch_and_the_bot_answers():
    bot = _Dodging()
    turn = guarded_reply(_asked("What's your name?"), bot, _neutral_guard(),
                         ChatSettings(bot="t", num_candidates=2, memory=False), classroom=None)
    assert bot.openings == ["My name is Marisol."]
    assert turn.text == "My name is Marisol. Nice to meet you!"
    reminder = turn.report.reminder
    assert reminder.source == ReminderSource.SHEET and reminder.outcome == CandidateOrigin.REMINDED
    assert turn.report.chosen.origin == CandidateOrigin.REMINDED
    # the guard's own answer stood beside it and was not sent: the bot's words come first
    assert [str(c.origin) for c in turn.report.candidates] == ["bot", "bot", "reminded", "sheet"]


def test_when_the_bot_still_gives_no_answer_the_guard_answers_from_the_sheet_and_says_so():
    turn = guarded_reply(_asked("So you live in Madrid?"), _Dodging("Para en Madrid.", stubborn=True),
                         _neutral_guard(), ChatSettings(bot="t", num_candidates=2, memory=False), classroom=None)
    report = turn.report
    assert turn.text == "No, I live in Valparaiso."
    assert report.chosen.origin == CandidateOrigin.SHEET and report.reminder.outcome == CandidateOrigin.SHEET
    assert "the guard wrote the reply from the fact sheet" in summary(report)
    # its reason says whose words it is, not "the bot's favourite" (a screenshot showed that)
    assert report.chosen.reason.startswith("chosen: the guard's own reply"), report.chosen.reason
    # the candidates table: written by the guard, and no score of the bot's for it
    from ui.transcript import candidate_table

    row = candidate_table(report)[report.chosen_index]
    assert row["written by"] == "the guard, from the fact sheet" and row["bot's own score"] is None
    again = BotTurnReport.from_json(report.to_json())
    assert again.chosen.origin == CandidateOrigin.SHEET and again.reminder.source == ReminderSource.SHEET
    assert again.reminder.sheet_answer == "No, I live in Valparaiso."


class _Drifting(_Dodging):
    """Answers with a job its persona does not hold, whatever it is asked."""

    def generate(self, history, num_candidates, decoding=None, persona=(), **_):
        return [Candidate("I work as a pilot.", -0.2), Candidate("I'm a pilot.", -0.4)][:num_candidates]


def test_a_reminder_opens_with_the_answer_asked_for_not_the_fact_the_candidates_got_wrong():
    """2026-11-29-sheet-first.md: asked "What's your name?", candidates that say the wrong job got their reply opened
    with the job ("I work as a ferry captain."), an answer to nothing asked; the sheet's answer opens it now, and the
    evidence stays on the reminder."""
    scorer = ScriptedScorer({("I work as a ferry captain.", "I work as a pilot."): CONTRA,
                             ("I work as a ferry captain.", "I'm a pilot."): CONTRA})
    bot = _Drifting()
    turn = guarded_reply(_asked("What's your name?"), bot, Guard("scripted", scorer, config=GuardConfig(threshold=0.9)),
                         ChatSettings(bot="t", num_candidates=2, memory=False), classroom=None)
    reminder = turn.report.reminder
    assert bot.openings == ["My name is Marisol."]
    assert turn.text == "My name is Marisol. Nice to meet you!"
    assert reminder.source == ReminderSource.EVIDENCE and reminder.facts[0].premise == "I work as a ferry captain."
    assert reminder.opened_from_sheet and reminder.reminded_of == "My name is Marisol."
    # the guard's own answer is the sheet's, marked so, not "composed from the evidence"
    assert [str(c.origin) for c in turn.report.candidates] == ["bot", "bot", "reminded", "sheet"]
    assert 'the persona\'s answer to the question ("My name is Marisol."), after candidates contradicted' in \
        summary(turn.report)


def test_no_more_batches_when_a_candidate_gives_the_persona_answer_or_reminders_are_off():
    bot = _Dodging(first="I'm Marisol, nice to meet you!")
    turn = guarded_reply(_asked("What's your name?"), bot, _neutral_guard(),
                         ChatSettings(bot="t", num_candidates=2, memory=False), classroom=None)
    assert bot.openings == [] and turn.report.reminder is None and turn.text == "I'm Marisol, nice to meet you!"
    bot = _Dodging()
    turn = guarded_reply(_asked("What's your name?"), bot, _neutral_guard(),
                         ChatSettings(bot="t", num_candidates=2, memory=False, remind=False), classroom=None)
    assert bot.openings == [] and turn.report.reminder is None


def test_the_guards_own_words_go_only_when_nothing_the_bot_wrote_stands_in_their_group():
    def clean(suspected: float) -> Verdict:
        details = VerdictDetails(Method.STRUCTURED, turn_id=3, threshold=0.9, n_pairs=1, history_score=suspected)
        return Verdict(False, suspected, Category.NONE, (), (), details)

    candidates = [Candidate("I love the sea.", -1.0), Candidate("I love ferries.", -2.0)]
    verdicts = [clean(0.5), clean(0.1)]
    assert choose(candidates, verdicts, GuardMode.RERANK).chosen_index == 1  # the least suspected
    assert choose(candidates, verdicts, GuardMode.RERANK, last_resort=[1]).chosen_index == 0
    assert choose(candidates[1:], verdicts[1:], GuardMode.RERANK, last_resort=[0]).chosen_index == 0
