"""Answer particles read as statements (guard.language.answers) and what the detector does with them."""

from __future__ import annotations

import pytest
from fake_nli import ScriptedScorer
from judging import detect

from guard.language.answers import resolve
from guard.language.exchange import asks_back, is_short_reply
from guard.language.grammar import particle
from guard.records import Dialogue, Turn
from guard.vocabulary import Category, PremiseSource

CONTRA = (0.02, 0.03, 0.95)


@pytest.mark.parametrize(("question", "reply", "statement"), [
    ("Do you have any children?", "No, I only have a daughter.", "I do not have any children."),
    ("Do you have any siblings?", "Yes, I'm an only child.", "I have siblings."),  # "any" dropped when affirmed
    ("Are you a student?", "Yep!", "I am a student."),
    ("Can you swim?", "Nope.", "I cannot swim."),
    ("So do you like your job?", "Well, yes, I love it.", "I like my job."),  # pronouns turned round
    ("Cool. And are you married?", "no way", "I am not married."),
    ("Did you see the game?", "Not really, I was working.", "I did not see the game."),
    ("Do you have kids?", "No I don't", "I do not have kids."),  # no comma, as people type
    ("Is your car new?", "No, it is old.", "My car is not new."),  # "your X": the speaker's X
    # a few words fronted before the particle, set off by a comma or a question mark: the topic, or a softener
    ("Do you have a cat?", "Cats, yes.", "I have a cat."),
    ("Do you have a cat?", "Cats? Yes.", "I have a cat."),
    ("Are you a teacher?", "Honestly, no.", "I am not a teacher."),
    ("Do you eat meat?", "Me? No, never.", "I do not eat meat."),
])
def test_a_particle_answering_a_yes_no_question_becomes_a_first_person_statement(question, reply, statement):
    assert resolve(question, reply) == statement


@pytest.mark.parametrize(("question", "reply"), [
    ("What do you do?", "No idea."),                 # not a yes/no question
    ("Do you eat meat?", "Nothing but veggies."),    # no particle up front
    ("I love my dog.", "No, you don't."),            # not a question
    (None, "No."),
    ("Do you have pets?", "Nobody asked."),          # "No" must be a whole word
    ("Do you like animals?", "I have never owned a dog."),  # a first-person statement is not a particle
    ("Can you help me?", "No problem!"),             # opens with "No" but answers nothing
    ("Do you like animals?", "No pets for me."),     # "no" as a determiner
    ("Do you like animals?", "That's a great question, no?"),  # fronted words and a tag asked back
    ("Can you help me?", "Thanks, no problem!"),  # fronted words, then a "No" that answers nothing
    ("Do you like animals?", "I have a dog and a cat, yes."),  # a statement, not a few fronted words
])
def test_anything_else_is_left_alone(question, reply):
    assert resolve(question, reply) is None


def test_particle_polarity():
    assert particle("Yeah, sure.") == ("yeah", True)
    assert particle("Nah") == ("nah", False)
    assert particle("Nothing") is None
    assert particle("Of course not!") == ("of course not", False)
    assert resolve("Do you smoke?", "Absolutely not.") == "I do not smoke."


def test_the_resolved_answer_is_paired_with_the_rest_of_the_reply_as_an_intra_sentence_contradiction():
    scorer = ScriptedScorer({("I do not have any children.", "I only have a daughter"): CONTRA,
                             ("I do not have any children.", "I only have a daughter."): CONTRA})
    dialogue = Dialogue("d", [Turn(0, "user", "Do you have any children?"),
                              Turn(1, "bot", "No, I only have a daughter.")])
    verdict = detect(scorer, dialogue, threshold=0.5, intra_threshold=0.9)
    assert verdict.contradiction and verdict.category == Category.INTRA
    assert verdict.evidence[0].premise == "I do not have any children."


def test_an_earlier_bare_no_is_evidence_for_a_later_history_contradiction():
    scorer = ScriptedScorer({("I do not have pets.", "My dog barks all night."): CONTRA})
    dialogue = Dialogue("d", [Turn(0, "user", "Do you have pets?"), Turn(1, "bot", "Nope."),
                              Turn(2, "user", "What keeps you up?"), Turn(3, "bot", "My dog barks all night.")])
    verdict = detect(scorer, dialogue, threshold=0.5, checks=False)
    assert verdict.contradiction and verdict.evidence_turn_ids == [1]
    # the evidence quotes the turn's own words, with the reading the guard compared beside them
    assert verdict.evidence[0].premise == "Nope."
    assert verdict.evidence[0].premise_reading == "I do not have pets."


def test_asking_back_and_short_replies():
    assert asks_back("I'm in tenth grade, and you?") and asks_back("I have a cat. Do you?")
    assert asks_back("Pizza, for sure. Yours?")
    assert not asks_back("I'm in tenth grade.") and not asks_back("Is it raining there? I love rain.")
    assert not asks_back("I'm in tenth grade. Is school hard?")  # a question, but not about the user
    assert is_short_reply("Hmm.") and is_short_reply("lol ok")
    assert not is_short_reply("I'm in ninth grade at Lincoln High.") and not is_short_reply("and you?")


def _own_question_dialogue(user_turn: str) -> Dialogue:
    return Dialogue("d", [Turn(0, "user", "What grade are you in?"), Turn(1, "bot", "I'm in tenth grade, and you?"),
                          Turn(2, "user", user_turn), Turn(3, "bot", "I'm in twelfth grade.")])


def test_answering_its_own_question_back_after_a_short_reply_is_role_confusion():
    scorer = ScriptedScorer({("I'm in tenth grade, and you?", "I'm in twelfth grade."): CONTRA})
    verdict = detect(scorer, _own_question_dialogue("Hmm."), threshold=0.5)
    assert verdict.contradiction and verdict.category == Category.ROLE
    assert verdict.details.role.signal == "answers-own-question" and "turn 1" in verdict.details.role.why
    assert verdict.evidence[0].source == PremiseSource.HISTORY and verdict.evidence[0].turn_id == 1

    # the user answered with content of their own: the bot contradicting itself is a history contradiction
    verdict = detect(scorer, _own_question_dialogue("I'm in ninth grade at Lincoln High."), threshold=0.5)
    assert verdict.contradiction and verdict.category == Category.HISTORY
