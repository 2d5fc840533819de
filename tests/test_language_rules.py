"""Each rule of English the guard states once (``guard.language.grammar``, ``guard.language.forms``), checked on the
examples of every place that used to state it for itself: the judge's readings (grammar, answers, text, fact sheet),
the perturbations, the goading studio and the training-data builders. Behaviour only: what each place makes of a
sentence, never how it is written."""

from __future__ import annotations

import random

import pytest

from guard.language import answers, fact_sheet, forms, grammar, perturb, text
from guard.records import Turn
from guard.training import bot_turns, facts, hard_negatives, persona
from guard.training.labels import LabelledPair
from guard.vocabulary import PremiseSource
from studio import goading


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


def test_the_training_mix_weighs_entailments_that_count_with_the_same_words():
    pairs = [LabelledPair("a", h, label, "x") for h, label in (
        ("I have eleven cats.", "entailment"), ("I like cats.", "entailment"), ("We both ski.", "entailment"),
        ("I have two.", "neutral"), ("I don't ski.", "entailment"), ("It costs 30 dollars.", "entailment"))]
    chosen = {p.hypothesis for p in hard_negatives.negated_entailment_repeats(pairs, 10)}
    assert chosen == {"I have eleven cats.", "We both ski.", "I don't ski.", "It costs 30 dollars."}


# ------------------------------------------------------------------------------------------------ rules over a parse
def _facts(sentence: str) -> list[tuple]:
    return [(str(f.relation), f.value, f.thing, f.holds, f.time)
            for f in fact_sheet.read_facts(sentence, PremiseSource.HISTORY, 1)]


def _asked(bot_turn: str) -> tuple[list[str], list[str]]:
    """What the goading studio asks about a bot turn: its questions on what was said, and its follow-ups."""
    history = [Turn(0, "user", "Hi"), Turn(1, "bot", bot_turn)]
    return ([s.text for s in goading._inquire(history, "bot")],
            [f.question for f in goading._follow_up_candidates(history)])


def test_the_speaker_is_i_we_or_my_x_wherever_a_reading_asks():
    verb = grammar.parse("I live in Paris and my sister lives in Rome.")
    live, lives = verb[1], verb[7]
    assert grammar.speaker_subject(live) and not grammar.speaker_subject(lives)
    assert grammar.about_speaker(grammar.subjects(lives)[0]) and grammar.speakers_own_subject(lives).text == "sister"
    # the affirmation (the judge's denial reading): I, we and my X deny; you and he do not
    assert grammar.affirmative("We don't own a car.") == "We own a car."
    assert grammar.affirmative("My dog isn't a labrador.") == "My dog is a labrador."
    assert grammar.affirmative("Your dog isn't a labrador.") is None
    assert grammar.affirmative("He doesn't eat meat.") is None
    # the fact sheet: the speaker's clauses only, a clause without a subject of its own has its head's
    assert _facts("I live in Paris and work as a nurse.") == [("lives in", "Paris", "", True, "present"),
                                                               ("job", "nurse", "", True, "present")]
    assert _facts("I used to live in Rome.") == [("lives in", "Rome", "", True, "past")]
    assert _facts("He lives in Paris.") == []
    assert _facts("I had roast lamb last night.") == [("diet", "eats", "lamb", True, "present")]
    assert _facts("She had roast lamb last night.") == []
    assert _facts("My wife is a nurse.") == []  # her job, not the speaker's; a spouse is no "does: marry" row
    assert _facts("Our kids love it.") == [("how many", "at least 2", "child", True, "present")]
    # the goading studio: questions back on "I ..." and "my X is ...", none on "he ..."
    assert _asked("I live in Paris.")[0][0] == "Where do you live?"
    assert _asked("My name is Sarah.")[0][0] == "What is your name?"
    assert _asked("He lives in Paris.") == (["What did you say about Paris?"], [])


def test_a_clause_of_its_own_is_a_coordinated_adverbial_or_complement_verb():
    doc = grammar.parse("I like dogs but I hate cats because they scratch.")
    assert [t.text for t in doc if grammar.starts_clause(t)] == ["hate", "scratch"]
    assert text.clauses("I like dogs but I hate cats because they scratch.") == ("I like dogs", "I hate cats.",
                                                                                 "they scratch")
    assert grammar.affirmative("I've never been there, but I'd love to go.") is None  # two clauses: no one denial


def test_a_negation_is_the_verbs_own():
    assert grammar.affirmative("I'm not a doctor.") == "I'm a doctor."
    assert _facts("I'm not a doctor.") == [("job", "doctor", "", False, "present")]
    assert _facts("I don't have any kids.") == [("how many", "0", "child", True, "present")]
    assert perturb.negate("I don't eat meat.") == "I do eat meat."
    assert perturb.negate("I have not been to Paris.") == "I have been to Paris."  # "not" on the auxiliary's verb


def test_auxiliaries_and_the_passive():
    assert [grammar.time_of(s) for s in ("I was living in Rome.", "I would live in Rome.", "I live in Rome.")] == [
        grammar.PAST, grammar.WISH, grammar.PRESENT]
    assert perturb.negate("I have been to Paris.") == "I have not been to Paris."
    assert perturb.contract("I have been there.") == "I've been there."
    assert perturb.contract("I have a dog.") is None  # "have" the verb, not an auxiliary
    assert _asked("I have been teaching for ten years.")[0][0] == "How long have you been teaching?"
    assert _facts("I was born in Rome.") == [("grew up in", "Rome", "", True, "present")]
    assert _facts("I'm based in Oslo.") == [("lives in", "Oslo", "", True, "present")]


def test_an_auxiliary_split_from_nt_is_read_whole():
    assert grammar.affirmative("I can't swim very well.") == "I can swim very well."
    assert perturb.negate("I can't swim.") == "I can swim."
    assert perturb.expand_contractions("I won't go.") == "I will not go."


def test_any_subject_makes_a_statement_to_perturb():
    assert perturb.negate("There is a dog in my yard.") == "There is not a dog in my yard."  # an expletive subject
    assert perturb.negate("Chatting with you is fun.") == "Chatting with you is not fun."
    assert perturb.negate("Do you like cats?") is None


def test_main_verbs_and_phrases_as_written():
    doc = grammar.parse("I play the guitar and love my dog, who sleeps a lot.")
    assert [t.text for t in grammar.main_verbs(doc)] == ["play", "love"]
    sophie = grammar.parse("I'm Sophie, a no-nonsense AI.")
    assert grammar.phrase_text(sophie[2], skip=(), cut={"appos", "punct"}) == "Sophie"
    assert grammar.phrase_text(sophie[8], skip=()) == "a no-nonsense AI"  # a slice of the text: the hyphen kept
    car = grammar.parse("I drive the old red car.")
    assert grammar.phrase_text(car[5]) == "old red car"  # a leading determiner left out
    assert _asked("I'm Sophie, a no-nonsense AI.")[0][0] == "Are you Sophie?"
    assert _asked("I play the guitar and love my dog.")[1][:2] == ["What kind of guitar do you play?",
                                                                  "Why do you play the guitar?"]


def test_the_speakers_words_said_back():
    assert grammar.to_second_person("I am proud of my dog and we love our home.") == (
        "you are proud of your dog and you love your home.")
    assert _asked("I play the guitar and love my dog.")[0][:2] == ["Do you play guitar?",
                                                                  "What did you say about the guitar?"]
    assert "What did you say about your dog?" in _asked("I play the guitar and love my dog.")[0]


# ------------------------------------------------------------------------------------------------ word forms
def test_plurals_are_written_one_way():
    assert [forms.plural(n) for n in ("dog", "fox", "puppy", "day", "child", "guinea pig")] == [
        "dogs", "foxes", "puppies", "days", "children", "guinea pigs"]
    assert [f.shown for f in fact_sheet.read_facts("I have two puppies and three kids.", PremiseSource.HISTORY,
                                                   1)] == ["puppies 2", "children 3"]  # the judge's fact sheet
    assert [facts.plural(n) for n in ("pony", "canary", "child", "kid")] == ["ponies", "canaries", "children", "kids"]
    assert facts.plural("sheep") == "sheep"  # the fact builder's pets the same in the plural
    said = {persona.realize(persona.Fact("not_have_any", "kid"), random.Random(s)) for s in range(10)}
    assert "i have no kids." in said


@pytest.mark.parametrize(("question", "reply", "statement"), [
    ("Don't you have a dog?", "Yes.", "I have a dog."), ("Aren't you a teacher?", "Yes, I am.", "I am a teacher."),
    ("Won't you come to the party?", "No.", "I will not come to the party."),
    ("Hadn't you been to Paris?", "Yes.", "I had been to Paris.")])
def test_a_negated_contraction_is_its_auxiliary_in_answers(question, reply, statement):
    assert answers.resolve(question, reply) == statement


def test_negated_contractions_are_written_and_undone_one_way():
    assert forms.NEGATED_CONTRACTIONS["will"] == "won't" and forms.POSITIVE_OF["won't"] == "will"
    assert perturb.contract("I do not like cats.") == "I don't like cats."
    assert perturb.negate("She likes cats.", contract_do=True) == "She doesn't like cats."
    assert perturb.negate("I DON'T LIKE CATS.") == "I DO LIKE CATS."  # one token spaCy did not split


@pytest.mark.parametrize(("word", "article"), [
    ("useful", "a"), ("unreal", "an"), ("hour", "an"), ("apple", "an"), ("one", "a"), ("university", "a"),
    ("dog", "a")])
def test_the_article_goes_by_a_words_sound(word, article):
    assert forms.indefinite_article(word) == article


def test_every_writer_puts_the_same_article():
    assert perturb.drop_modifier("I have a big old dog.", random.Random(1)) == "I have an old dog."  # perturbations
    # the answer reading (the judge): a bare job named with its article
    assert answers.resolve("What do you do for a living?", "Engineer.") == "I work as an engineer."
    assert answers.resolve("What do you do for a living?", "University lecturer.") == "I work as a university lecturer."
    # the training templates
    assert {persona.realize(persona.Fact("have", "owl"), random.Random(s)) for s in range(5)} == {
        "i have an owl.", "i've got an owl."}
    assert "i have a unicorn." in {persona.realize(persona.Fact("have", "unicorn"), random.Random(s)) for s in range(5)}
    assert "I'm a union organizer." in {facts.job_sentence("union organizer", random.Random(s)) for s in range(3)}


@pytest.mark.parametrize(("question", "statement"), [
    ("So you like jazz?", "I do not like jazz."), ("So your dog likes cats?", "My dog does not like cats."),
    ("So you played chess?", "I did not play chess.")])
def test_do_support_goes_by_the_verbs_tense_in_answers(question, statement):
    assert answers.resolve(question, "No.") == statement


def test_do_support_goes_by_the_verbs_tense_in_perturbations():
    assert [perturb.negate(s) for s in ("She likes cats.", "I liked it.", "They play chess.")] == [
        "She does not like cats.", "I did not like it.", "They do not play chess."]


def test_a_no_taken_back_by_its_next_words_answers_neither_way():
    """after.json: "No, not always. But I do have some... I've got some cheesemax!" to "So you eat meat sometimes,
    right?" was read as "I do not eat meat sometimes" and counted as the persona's (a vegetarian) answer."""
    from guard.language.grammar import particle

    assert particle("No, not always. But I do have some...") is None
    assert particle("Nope, sometimes I do.") is None
    assert particle("No, not really.") == ("no", False)  # a plain no
    assert particle("Yes, sometimes.") == ("yes", True)  # a softened yes is a yes


@pytest.mark.parametrize("text, place", [
    ("I live in a beautiful city called Paris.", "Paris"), ("so I live in the beautiful French city of BnB.", "BnB"),
    ("I live in the city of Berlin.", "Berlin"), ("I live in a small town named Ely.", "Ely"),
])
def test_a_place_named_after_a_place_noun_is_read(text, place, nlp):
    """after.json: "I live in a beautiful city called Paris." was read as no place, so it did not count as restating
    the persona's "I live in Paris.", and "...the beautiful French city of BnB" did not clash with it."""
    from guard.language.fact_sheet import read_facts
    from guard.vocabulary import PremiseSource

    assert [(f.relation.value, f.value) for f in read_facts(text, PremiseSource.HISTORY, 1)] == [("lives in", place)]
    assert read_facts("I live in the city.", PremiseSource.HISTORY, 1) == ()


def test_a_persona_fact_is_restated_only_with_its_own_value(nlp, wn):
    """The choice puts a candidate that restates a persona fact first, and sets aside a pair with the very line it
    restates: so a restatement must give the persona's value, not only a compatible one (the quantity probes: "All six
    of my cats" read as "at least 2" against "I have two cats.", "married for two years" against "ten years")."""
    from guard.language.fact_sheet import persona_agreements, read_facts, sheet_of
    from guard.vocabulary import PremiseSource

    def restated(persona: str, said: str) -> bool:
        facts = read_facts(said, PremiseSource.HISTORY, -1)
        return bool(persona_agreements(sheet_of((), [persona], "bot"), facts))

    assert restated("I have two cats.", "I have two cats.")
    assert not restated("I have two cats.", "All six of my cats are lovely.")
    assert not restated("I have been married for ten years.", "I've been married for two years now.")
    assert restated("I have never been on a plane.", "No, I have never been on a plane.")
    assert restated("I work as a nurse.", "I'm a Nurse.")  # capitalised after an article: the job, not a name
    assert not restated("I work as a nurse.", "I'm a doctor.")
    assert restated("I live in Paris.", "I live in a beautiful city called Paris.")
