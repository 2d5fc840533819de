"""Whether a reply answers what it was asked (guard.language.answers: ``expected_answer``, ``answer_check``,
``degenerate``), issue 51's third point. The replies are the issue's own, the goading script's stored candidates
(benchmarks/results/goading/after.json) and new wordings of ours, each with a twin that must go the other way."""

from __future__ import annotations

import pytest

from guard.language.answers import AnswerKind, AnswerWhy, answer_check, degenerate, expected_answer, says_nothing

pytest.importorskip("nltk")


@pytest.mark.parametrize(("message", "kind"), [
    ("How many dogs do you have?", AnswerKind.COUNT),
    ("Tell me again, how many dogs?", AnswerKind.COUNT),
    ("How old are you?", AnswerKind.AGE),
    ("Where do you live?", AnswerKind.PLACE),
    ("Where did you grow up?", AnswerKind.PLACE),
    ("Where was your last vacation?", AnswerKind.PLACE),
    ("Hello! What's your name?", AnswerKind.NAME),
    ("Good evening! Who am I talking to?", AnswerKind.NAME),
    ("And what are you called?", AnswerKind.NAME),
    # "called" of something else asks no name of the speaker: "My name is Sam." is no answer to the dog's name
    ("What is your dog called?", AnswerKind.OPEN),
    ("What's the town you grew up in called?", AnswerKind.PLACE),
    ("What do you do for work?", AnswerKind.JOB),
    ("What did you say your job was?", AnswerKind.JOB),
    ("Tell me again, what do you do all day?", AnswerKind.JOB),
    ("What's your favorite dish?", AnswerKind.FOOD),
    ("What did you have for dinner last night?", AnswerKind.FOOD),
    ("What would you cook for a barbecue?", AnswerKind.FOOD),
    ("Do you have any pets?", AnswerKind.YES_NO),
    ("Wait, aren't you a teacher?", AnswerKind.YES_NO),
    ("So you live in Paris?", AnswerKind.YES_NO),  # a statement asked
    ("You're still in your twenties, aren't you?", AnswerKind.YES_NO),  # a tag
    ("Is your name Anna?", AnswerKind.YES_NO),  # yes/no first, whatever it is about
    ("Hi! Tell me about yourself.", AnswerKind.OPEN),  # a request asks too
    ("How long have you been working?", AnswerKind.OPEN),
    ("What do you do for fun?", AnswerKind.OPEN),  # not an occupation
    ("Do you prefer cats or dogs?", AnswerKind.OPEN),  # a choice is no yes/no question
    ("I love dogs.", None),  # a statement asks nothing
    ("Hi there!", None),
    ("", None),
])
def test_a_message_expects_the_kind_of_answer_its_words_name(message, kind):
    assert expected_answer(message) == kind


ANSWERED = [
    # an open request about the listener's things: a statement of one the speaker names, or of the thing asked
    ("Tell me about your pets", "Max loves long walks in the park."),
    ("Tell me about your pets", "The pets are lovely."),
    ("How many dogs do you have?", "I have a total of 5 dogs."),
    ("How many dogs do you have?", "I have a dog named Stella, and she's a 23-year-olds."),
    ("How many dogs do you have?", "Just one."),
    ("How many dogs do you have?", "I don't have any dogs."),
    ("Tell me again, how many dogs?", "Two."),
    ("How many siblings do you have?", "I have a brother, a boy, and a sister."),  # brothers and sisters are siblings
    ("How many siblings do you have?", "Four!"),
    ("How many pets do you have?", "I have a few furry friends, a cat and a dog."),
    ("How old are you?", "Actually, I am 63 years old."),
    ("How old are you?", "I'm in my forties."),
    ("Where do you live?", "The city I'm from is amazing, Paris, and I'm happy to live here."),
    ("Where do you live?", "I live in a small village by the sea."),
    ("Where did you grow up?", "My home in Winnipeg! That's right, my childhood was all around here."),
    ("Where was your last vacation?", "My last vacation was to Barcelona, I must say."),
    ("Hello! What's your name?", "I'm Sophie and I'm a dedicated vegan."),
    ("Good evening! Who am I talking to?", "Hello, I'm Emily Black! I'm a freelance writer."),  # a name tagged oddly
    ("What's your name again?", "Call me Max."),
    ("What do you do for work?", "I'm a nurse and I work in the medical unit of a hospital."),
    ("What's your job?", "My job is building and repairing bicycles."),
    ("What's your job?", "I repair bicycles for a living."),
    ("So what do you do for work?", "Working as a nurse in Paris."),  # a fragment ("I've been working as" too)
    ("What's your favorite dish?", "My favorite dish is *Cheeseburgs! I love them!"),  # a food WordNet misspelt
    ("What did you have for dinner last night?", "I had a lovely salad with goat cheese."),
    # yes/no: a particle or an echo opening any sentence, the value asked about, or the relation stated
    ("So you have a whole team of dogs?", "Yes!"),
    ("You're a doctor, right?", "I'm a medical professional. Yes, I'm a doctor."),
    ("Do you like steak?", "I really do."),
    ("You're a doctor, right?", "Bien sûr. I'm a nurse working in the emergency room."),
    ("So you live in Berlin?", "The famous Berlin, it's my home, and I've got my happy place here."),
    ("So you live in Berlin?", "I live in Paris, France."),
    ("Is your name Anna?", "I'm Anna, your nanny! I'm so grateful when you needed me."),
    ("Have you ever flown anywhere?", "I've flown a few times, it's funny."),
    ("Have you ever flown anywhere?", "Actually, I have never been on a plane."),
    ("Do you have any pets?", "My cat, Luna! She's my little rescue."),
    ("Do you like steak?", "I have a special type of steak that I really love."),
    ("You're still in your twenties, aren't you?", "No worries, I'm a little older than that."),
    ("Do you have any pets?", "I'm a big fan of my pet Pomerama! He's a playful marmalade."),
    ("So you're a pilot?", "My role's a security service, a bit of an oddball, but I love it."),
    ("Hi! Tell me about yourself.", "I'm Elena, a freelance writer living in Paris."),
    ("I love dogs.", "Me too, I have two."),  # nothing asked: any claim will do
]

NOT_ANSWERED = [
    ("Tell me about yourself", "Paris is lovely.", AnswerWhy.MISSING),  # a place named tells nothing of the speaker
    ("How many dogs do you have?", "In Paris, we say, I'm a dog to one, but I'm pretty confident in my ability to "
                                   "care for the animals.", AnswerWhy.MISSING),
    ("Tell me again, how many dogs?", "We have a fantastic team, and some of them are some of the best.",
     AnswerWhy.MISSING),
    ("How many dogs do you have?", "I have three cats, a sassy white cat named Luna.", AnswerWhy.MISSING),
    ("How many siblings do you have?", "Sophie, her husband has 11 siblings.", AnswerWhy.MISSING),  # not the speaker's
    ("Where do you live?", "I'm currently working on a team in a beautiful city, but I can come to Paris.",
     AnswerWhy.MISSING),
    ("Where did you grow up?", "Where I grew up was a pretty vibrant place, I'm sure of it.", AnswerWhy.MISSING),
    ("Hello! What's your name?", "I'm still working on my new book, \"The Story of Food.\"", AnswerWhy.MISSING),
    ("Is your name Anna?", "Ah, Sophie's favorite name, Anna. She loves animals.", AnswerWhy.MISSING),
    ("Is your name Anna?", "Sophie, I'm Anna's sister's aunt.", AnswerWhy.MISSING),
    ("What's your job?", "My job is actually a pretty good one.", AnswerWhy.MISSING),
    ("What do you do for work?", "When I'm not lost in the Parisian streets, I'm happy to be working with French "
                                 "expats.", AnswerWhy.MISSING),
    ("What's your favorite dish?", "The best thing about life, Sophie.", AnswerWhy.MISSING),
    ("What's your favorite dish?", "My favorite dish is *accuse-er-my-favorite-dish-1*.", AnswerWhy.MISSING),
    ("What did you have for dinner last night?", "Last night was a big dinner.", AnswerWhy.MISSING),
    ("What would you cook for a barbecue?", "I'm so glad you're enjoying the barbecue.", AnswerWhy.MISSING),
    ("You're a doctor, right?", "In Paris, that's a wonderful choice, a doctor.", AnswerWhy.MISSING),
    ("So you live in Berlin?", "I'm just a bit of a traveler, and Berlin is my favorite city overall.",
     AnswerWhy.MISSING),
    ("So you live in Berlin?", "Europa AB is my home away from home.", AnswerWhy.MISSING),
    ("Do you like steak?", "No worries, Sophie. I'm glad you like it, but you might want to see what I have.",
     AnswerWhy.MISSING),
    ("Are you an only child?", "I'm a little man with a heart.", AnswerWhy.MISSING),
    ("Hi! Tell me about yourself.", "The best thing about life, Sophie.", AnswerWhy.MISSING),
    ("Where do you live?", "I don't know.", AnswerWhy.SAYS_NOTHING),
    ("Do you have any pets?", "What about you?", AnswerWhy.SAYS_NOTHING),
    ("I love dogs.", "Cool!", AnswerWhy.SAYS_NOTHING),
    # the loops: never an answer, whatever particle they open with
    ("You're not a nurse, are you?", "No, no, no, no, no, no. No, I'm not.", AnswerWhy.DEGENERATE),
    ("Is your name Anna?", "No no please, no no please, no no please", AnswerWhy.DEGENERATE),
]


@pytest.mark.parametrize(("question", "reply"), ANSWERED)
def test_a_reply_that_gives_what_was_asked_answers(question, reply):
    check = answer_check(question, reply)
    assert check.answered and not check.degenerate, check
    assert check.expected == expected_answer(question)


@pytest.mark.parametrize(("question", "reply", "why"), NOT_ANSWERED)
def test_a_reply_without_it_does_not_answer(question, reply, why):
    check = answer_check(question, reply)
    assert not check.answered and check.why == why, check
    assert check.degenerate == (why == AnswerWhy.DEGENERATE)


@pytest.mark.parametrize(("reply", "loop"), [
    ("No, no, no, no, no, no. No, I'm not.", True),  # one word six times
    ("No no please, no no please, no no please...", True),  # a phrase three times
    ("No, no please, no no please, no.", True),  # few distinct words for its length
    ("Yes yes yes yes.", True),
    ("No, no, no! I'm not a big meat-eater. I'm a vegetarian.", False),  # emphasis: three, then other words
    ("Yes, yes, yes, I am, Sophie, but I'm not a man.", False),
    ("I'm so sorry, I'm so sorry and I'm sorry. Yes, my name is Sophie.", False),
    ("No, no.", False),  # too short to tell
    ("", False),
])
def test_a_reply_that_repeats_its_words_is_degenerate(reply, loop):
    assert degenerate(reply) == loop


def test_a_reply_that_says_nothing_never_answers():
    """``says_nothing`` and ``answer_check`` agree: whatever claims nothing answers nothing."""
    for question, reply in [("How old are you?", "I'm not sure."), ("Where do you live?", "Nice!"),
                            ("Do you have pets?", "Do you?"), (None, "Yes, I am.")]:
        assert says_nothing(reply) and not answer_check(question, reply).answered


def test_nothing_asked_expects_nothing():
    check = answer_check(None, "I have two dogs.")
    assert check.expected is None and check.answered and check.why == AnswerWhy.CLAIM
