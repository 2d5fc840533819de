"""The bot's fact sheet (guard/language/fact_sheet.py): facts read from the persona and the bot's turns, and what clashes.

Written as development cases beside the frozen probe set (guard/data/probe_facts.jsonl, measured, never tuned on):
the issue's own examples and new wordings, each relation with a clash and a consistent twin.
"""

from __future__ import annotations

import pytest

from guard.language.answers import read_answer
from guard.language.fact_sheet import FactSheet, Relation, own_clashes, read_facts, sheet_of
from guard.records import Turn
from guard.vocabulary import PremiseSource

pytest.importorskip("nltk")


def clashes(persona: list[str], reply: str, question: str = "Tell me about yourself.", before=()) -> list[str]:
    turns = [Turn(i, speaker, text) for i, (speaker, text) in enumerate(before)]
    sheet = sheet_of(turns, persona, "bot")
    reading = read_answer(question, reply)
    said = read_facts(reply, PremiseSource.HISTORY, len(turns) + 1, reading.statement if reading else None, question)
    return [c.why for c in sheet.clashes(said)]


CLASHING = [
    # "Bruges" is tagged a plural common noun ("bruge"); WordNet names it a city (2026-11-29-sheet-first.md)
    (["I live in Bruges."], "I live in Amsterdam, it's a lovely city.", "Where do you live?"),
    (["I work as a nurse."], "I'm a teacher, but my specialty is the medical side of things.", "What do you do?"),
    (["I work as a nurse."], "I'm a doctor, and I've always loved helping people.", "What do you do?"),
    (["I work as a nurse."], "Yes, I am.", "Wait, aren't you a teacher?"),
    (["I have two dogs."], "I have a team of 12 dogs.", "How many dogs do you have?"),
    (["I have two dogs."], "I have thirty dogs at home.", "How many dogs do you have?"),
    (["I have two dogs."], "I don't have any pets.", "Do you have pets?"),
    (["I live in Paris."], "I have a home in Berlin, but I'm also a big fan of my team in Paris.", "Where do you live?"),
    (["I live in Paris."], "I live in London with my sister.", "Where do you live?"),
    (["I am a vegetarian."], "My favorite dish is steak with fries.", "What's your favorite dish?"),
    (["I am a vegetarian."], "I had roast lamb with a big salad.", "What did you have for dinner?"),
    (["I am a vegetarian."], "I'm not a vegetarian, I eat everything.", "Are you a vegetarian?"),
    (["My name is Sophie."], "My name is Claire.", "What's your name?"),
    (["I am 45 years old."], "I'm 23 and just out of college.", "How old are you?"),
    (["I grew up in Ohio."], "I grew up in Texas on a ranch.", "Where did you grow up?"),
    (["I am an only child."], "My brother is a pilot.", "Any siblings?"),
    (["I have never been on a plane."], "I fly to Rome every spring.", "Do you travel?"),
    (["I have three kids."], "I have one son, he is ten.", "How many kids do you have?"),
    (["I am a vegan."], "I put butter on everything I cook.", "Any cooking secrets?"),
    (["I have no pets."], "My dog's name is Rex.", "What's your dog's name?"),
    (["I'm Sophie."], "My name is Anna, nice to meet you.", "Who are you?"),
]

CONSISTENT = [
    # a common noun written with a capital is no place's name: "Village" is first a village, not Greenwich Village
    (["I live in Bruges."], "I live in a small Village near Bruges.", None),
    # animals one keeps are no food, though WordNet files a dog under sausages and a chicken under poultry
    (["I am a vegetarian."], "I have two dogs.", None),
    (["I am a vegan."], "I have a dog named Max and three chickens.", None),
    (["I work as a nurse."], "No, I work as a nurse at the hospital.", "Wait, aren't you a teacher?"),
    (["I work as a nurse."], "I'm not a doctor. I'm a nurse.", "Are you a doctor?"),
    (["I am a physician."], "I'm a pediatrician at the children's clinic.", "What kind of doctor are you?"),
    (["I am a nurse."], "I'm a good host, I love having friends over.", "Do you like parties?"),
    # a denied job denies the persona's only if the persona's is mainly a kind of it: WordNet files an airship's
    # captain under pilot, and "No, I work as a ferry captain." to the pilot goad was rejected as "not pilot"
    (["I work as a ferry captain."], "No, I work as a ferry captain.", "Wait, I thought you said you were a pilot?"),
    (["I am a doctor."], "I'm not a pediatrician, I treat adults.", "Do you treat kids?"),
    (["I am a nurse."], "I am a bird watcher on weekends.", "Any hobbies?"),
    (["I have two dogs."], "I have a few dogs and a cat.", "Do you have pets?"),
    (["I have two dogs."], "My two dogs are my best friends.", "Tell me about your dogs."),
    (["I have two dogs."], "I also have a cat.", "Any other pets?"),
    (["I live in Paris."], "I used to live in Berlin, but now I'm in Paris.", "Where do you live?"),
    (["I live in Paris."], "I'd love to live in Tokyo one day.", "Dream city?"),
    (["I live in Paris."], "I'm originally from Lyon.", "Where are you from?"),
    (["I am a vegetarian."], "I had a bean burrito for dinner.", "What did you have for dinner?"),
    (["I am a vegetarian."], "I'm vegan now, actually.", "Still vegetarian?"),
    (["I am a vegetarian."], "I used to eat a lot of bacon as a kid.", "Did you always avoid meat?"),
    (["My name is Sophie."], "Sophie, but everyone calls me Soph.", "What's your name?"),
    (["I am 45 years old."], "I'm in my forties.", "How old are you?"),
    (["I have never been on a plane."], "I'd love to fly somewhere one day.", "Do you travel?"),
    (["I play the guitar."], "I also play the piano.", "Any other instruments?"),
    (["I have three kids."], "I have three kids, two boys and a girl.", "Kids?"),
    (["I am a vegetarian."], "I love cheese and roast vegetables.", "What do you eat?"),
    (["I have two dogs."], "I have a dog named Max and another one named Rex.", "Tell me about your dogs."),
    (["I live in Paris."], "I work in London some days, but I live in Paris.", "Where do you live?"),
    (["I am a teacher."], "I'm a big fan of jazz.", "What music do you like?"),
    # a pet's name clashes only with another name for the only pet of its kind (2026-11-29-pet-names.md)
    (["I have a tortoise named Pebble."], "My tortoise Pebble is very old.", "Tell me about your pet."),
    (["I have a tortoise named Pebble."], "My tortoise's name is Pebble.", "What's your tortoise called?"),
    # a kind the speaker has more of, or none counted: another name is another pet
    (["I have two dogs."], "My dog's name is Rex.", "What's your dog called?"),
    (["I have two dogs. One is named Max."], "My dog Bella loves the park, and my dog called Rex too.", "Dogs?"),
    (["I have a dog named Max."], "I have a cat named Luna.", "Any other pets?"),
    # which pet "my pet" means is not read
    (["I have a dog named Max."], "My pet's name is Luna.", "What's your pet's name?"),
    # no pet: a person, a thing, a word that is no name
    (["I have a dog named Max."], "I have a friend named Rex.", "Friends?"),
    (["I have a dog named Max."], "I read a book called Dune.", "Reading anything?"),
    (["I have a dog named Max."], "Max, or Maxie as we call him, is my dog named Max.", "Dog?"),
]


@pytest.mark.parametrize("persona, reply, question", CLASHING)
def test_a_reply_that_gives_another_value_clashes(persona, reply, question):
    assert clashes(persona, reply, question), f"no clash found for {reply!r} after {persona}"


@pytest.mark.parametrize("persona, reply, question", CONSISTENT)
def test_a_consistent_reply_does_not_clash(persona, reply, question):
    assert not clashes(persona, reply, question)


def test_facts_keep_their_turn_and_words():
    turns = [Turn(0, "user", "Where do you live?"), Turn(1, "bot", "I live in Madrid, near the park."),
             Turn(2, "user", "Nice! Pets?"), Turn(3, "bot", "Yes, three cats.")]
    sheet = sheet_of(turns, ["I work as a baker."], "bot")
    by = {(f.relation, f.where): f for f in sheet.current()}
    assert by[(Relation.JOB, "persona")].value == "baker"
    assert by[(Relation.LIVES_IN, "turn 1")].value == "Madrid"
    assert by[(Relation.LIVES_IN, "turn 1")].said == "I live in Madrid, near the park."


def test_past_facts_are_kept_but_not_current():
    sheet = sheet_of([], ["I used to live in Oslo."], "bot")
    assert sheet.facts and not sheet.current()


def test_an_empty_sheet_clashes_with_nothing():
    assert FactSheet().clashes(read_facts("I have two dogs.", PremiseSource.HISTORY, 1)) == ()


def test_facts_read_ahead_are_the_facts_a_judgement_reads():
    """``prepare`` (the guard's, when turns arrive) reads each turn with the other speaker's turn before it, as
    ``sheet_of`` does: the sheet built after it is the same one, from the cache."""
    from guard.language import fact_sheet

    turns = [Turn(0, "user", "Aren't you a teacher?"), Turn(1, "bot", "Yes, I am."), Turn(2, "bot", "I have 3 cats."),
             Turn(3, "user", "How many dogs do you have?"), Turn(4, "bot", "Two.")]
    fresh = sheet_of(turns, ["I live in Paris."], "bot")
    fact_sheet.prepare(turns, ["I live in Paris."])
    assert sheet_of(turns, ["I live in Paris."], "bot") == fresh
    assert [(f.relation, f.value, f.turn_id) for f in fresh.facts] == [
        (Relation.LIVES_IN, "Paris", 0), (Relation.JOB, "teacher", 1), (Relation.COUNT, "3", 2),
        (Relation.COUNT, "2", 4)]


# ------------------------------------------------------------------- issue 51: the forms the sheet missed, and twins
ISSUE_51_CLASHING = [
    # a name and an occupation in one breath (three times in the issue's runs)
    (["My name is Sophie."], "I'm Anna, your nanny! I'm so grateful when you needed me.", "Is your name Anna?"),
    # an occupation read with its question; a more general word beside it restates nothing
    (["I work as a nurse."], "Yes, I'm a doctor.", "You're a doctor, right?"),
    (["I work as a nurse."], "I'm a medical professional. Yes, I'm a doctor.", "You're a doctor, right?"),
    # a list of what the bot has is the whole count, and so is the persona's "a little brother"
    (["I have a little brother."], "I have two brothers, two sisters, and a daughter, one son-one.",
     "How many siblings do you have?"),
    (["I have two dogs."], "I have a few furry friends, a cat and a dog. They're named Luna and Max.",
     "Do you have any pets?"),
    # foods WordNet files as a sandwich but glosses as beef, or does not know ("Cheeseburgs"), and a clause of its own
    (["I am a vegetarian."], "My favorite dish is *Cheeseburgs! I love them!", "What's your favorite dish?"),
    (["I am a vegetarian."], "No, I just love spicy burgers. I'm a big fan of burgers.", "Do you like steak?"),
    (["I am a vegetarian."], "I really do. Yes, I've had some great steaks, but I'm not sure if I'm ready to eat "
                             "steak anytime soon.", "Do you like steak?"),
    # where the bot lives, said of its home
    (["I live in Paris."], "The famous Berlin, it's my home, and I've got my happy place here.",
     "So you live in Berlin?"),
    (["I live in Paris."], "Berlin is actually our home.", "Where do you live?"),
    # "a whole team of dogs", confirmed: many, against two; "two dogs and two more": four
    (["I have two dogs."], "Yes!", "So you have a whole team of dogs?"),
    # a name, a home, a hometown in the forms the probe set says them
    (["My name is Ingrid."], "Not at all, my name is Rosalind, I was named after my grandmother.", "Your name?"),
    (["My name is Rafael."], "You're talking to Dominic, and it's a pleasure.", "Who am I talking to?"),
    (["I live in Nairobi."], "I call Johannesburg home.", "Which city do you call home?"),
    (["I grew up in Santiago."], "I was born and raised in Montevideo.", "Where were you born and raised?"),
    # a host named by what it hosts is an occupation ("I'm a good host" is not: see the consistent cases)
    (["I am a radio host."], "I work as a taxi driver.", "What do you do?"),
    (["I am a physician."], "No, I'm not a doctor.", "You're a doctor, right?"),
    # an age after "actually" ("Really? I would have guessed you were 25." got "I'm actually 55.")
    (["I am 58 years old."], "I'm actually 55. I've been working with people for over 20 years.",
     "Really? I would have guessed you were 25."),
    # more of a kind than of the whole, or a kind of what there is none of
    (["I have two dogs."], "I have three poodles.", "What kind of dogs?"),
    (["I have no dogs."], "I have a poodle.", "Any pets?"),
    # a dish WordNet's gloss says is meat stays meat
    (["I am a vegetarian."], "I had a burger for lunch.", "What did you eat?"),
    # an age by decade said now ("in my twenties" had put it in the past)
    (["I am 58 years old."], "I'm actually in my early twenties.", "How old are you?"),
    (["I am 58 years old."], "Yes, I am.", "You're still in your twenties, aren't you?"),
    (["I have two dogs."], "I have 3 - two dogs … and two more.", "How many dogs do you have?"),
    (["I have two dogs."], "I have lots of dogs at home.", "Pets?"),
    # the instruments the bot plays: the whole answer to "what do you play" leaves the violin out
    (["I play the violin."], "I only play the guitar.", "Music?"),
    (["I play the violin."], "I don't play the violin.", "Do you play the violin?"),
]

ISSUE_51_CONSISTENT = [
    # a second kind of thing is news, not another value of the first: the sheet has no cat count to clash with
    (["I have two dogs."], "I have two dogs and a cat.", "Do you have pets?"),
    (["I have a little brother."], "I have a brother and a sister.", "How many siblings?"),
    # one of them named, another added: no whole count
    (["I have two dogs."], "I have a dog named Max and another one named Rex.", "Tell me about your dogs."),
    (["I have two dogs."], "I have a dog named Max.", "Tell me about your dogs."),  # one of the two
    (["I have two dogs."], "I have a few dogs and a cat.", "Pets?"),  # vague: no clash, no support
    (["I work as a nurse."], "I'm Anna, a nurse at the children's hospital.", "Who are you?"),
    (["I work as a nurse."], "I'm a medical professional, a nurse.", "What do you do?"),  # the value, and its kind
    (["I live in Paris."], "Berlin is my home away from home.", "Do you travel?"),  # not where it lives
    (["I live in Paris."], "Paris is my home, and I love it.", "Where do you live?"),
    (["I am a vegetarian."], "I love lasagna with spinach.", "Favourite food?"),  # "meat or vegetables": no meat
    (["I am a vegetarian."], "I don't eat burgers, I'm a vegetarian.", "Burgers?"),
    (["I am a vegetarian."], "My husband loves steak.", "Does anyone cook meat at home?"),  # not the speaker
    (["I play the violin."], "I also play the guitar and the piano.", "Any other instruments?"),
    (["I play the violin."], "I play the violin and the piano.", "What instruments do you play?"),
    (["I play the violin."], "I play the guitar.", "Do you play anything else?"),  # another one, not the whole
    (["I play the violin."], "I play tennis on weekends.", "What do you do for fun?"),  # a game is no instrument
    # a fruit or a pulse is no meat: WordNet's glosses are read for their nouns, and only a food sense's ("lentil":
    # 'round flat seed', where "round" is no cut of beef; "lemon" the colour and its taste say nothing of food)
    (["I am a vegan."], "I had a big bowl of lentil curry with rice.", "What did you have for dinner?"),
    (["I'm a vegetarian."], "I had grilled halloumi with lemon and peppers.", "What's your favorite meal?"),
    # one of a kind among the whole: a poodle and a chihuahua after "two dogs" (a DECODE human-bot false alarm)
    (["I have two dogs."], "I have a poodle and a chihuahua mix. They're so cute!", "What kind of dogs do you have?"),
    # "no" to many is fewer, not none (the guard's own "No, I have two dogs." was flagged as "dogs 0")
    (["I have two dogs."], "No, I have two dogs.", "So you have a whole team of dogs?"),
    (["I have two dogs."], "No.", "So you have a whole team of dogs?"),
    # an age by decade, the persona's decade
    (["I am 58 years old."], "I'm in my fifties.", "How old are you?"),
]


@pytest.mark.parametrize("persona, reply, question", ISSUE_51_CLASHING)
def test_the_forms_issue_51_saw_the_sheet_miss_clash(persona, reply, question):
    assert clashes(persona, reply, question), f"no clash found for {reply!r} after {persona}"


@pytest.mark.parametrize("persona, reply, question", ISSUE_51_CONSISTENT)
def test_their_twins_do_not_clash(persona, reply, question):
    assert not clashes(persona, reply, question)


def test_a_name_and_an_occupation_in_one_breath_are_both_read():
    said = read_facts("I'm Anna, your nanny! I'm so grateful when you needed me.", PremiseSource.HISTORY, 1)
    assert [(f.relation, f.value) for f in said] == [(Relation.NAME, "Anna"), (Relation.JOB, "nanny")]


def clashes_with_question(persona: list[str], reply: str, question: str) -> list[str]:
    """As ``clashes``, the candidate read with the question as the sheet reads an earlier turn (``read_facts`` with
    the question: "What instruments do you play?" asks for the whole)."""
    sheet = sheet_of([], persona, "bot")
    reading = read_answer(question, reply)
    said = read_facts(reply, PremiseSource.HISTORY, 1, reading.statement if reading else None, question)
    return [c.why for c in sheet.clashes(said)]


def test_an_answer_to_what_the_bot_plays_is_the_whole_of_it():
    assert clashes_with_question(["I play the violin."], "I play the guitar and the piano.",
                                 "What instruments do you play?") == ["plays: violin (persona) vs guitar"]
    assert clashes_with_question(["I play the violin."], "I play the guitar and the piano.", "Anything else?") == []


@pytest.mark.parametrize(("answer", "later", "why"), [
    # the answer to "any pets?" names them all: another kind said later clashes, whatever way it is said
    ("Yes, I have a tortoise named Pebble.", "Yes, she's a small cat named Luna.",
     ["how many: tortoises at least 1 (of its pets, only tortoises) (turn 1) vs cats at least 1"]),
    ("I have two parakeets.", "My dog is a rescue named Max.",
     ["how many: parakeets 2 (of its pets, only parakeets) (turn 1) vs dogs at least 1"]),
    # what the set holds, a kind of it, or none of another kind: no clash
    ("I have two dogs and a cat.", "My cat is called Luna.", []),
    ("I have two dogs.", "One of them is a beagle; my beagle is called Max.", []),
    ("Yes, I have a tortoise named Pebble.", "No, I don't have a cat.", []),
    # a fronted answer says yes as plainly (the running script's "Cats, yes.")
    ("Yes, I have a tortoise named Pebble.", "Cats, yes.",
     ["how many: tortoises at least 1 (of its pets, only tortoises) (turn 1) vs cats at least 1"]),
    # a list left open ("and other animals", "too") is no whole set
    ("I have two dogs and some other animals.", "My cat is called Luna.", []),
    # a word that opens a list opens it only beside the things named ("more than happy" elsewhere does not)
    ("I'm more than happy to answer your question. I have two parakeets.", "I do have a dog, yes.",
     ["how many: parakeets 2 (of its pets, only parakeets) (turn 1) vs dogs at least 1"]),
])
def test_the_answer_to_any_pets_is_the_whole_set(answer, later, why):
    turns = [Turn(0, "user", "Do you have any pets?"), Turn(1, "bot", answer), Turn(2, "user", "Do you have a cat?")]
    sheet = sheet_of(turns, ["My name is Ngozi."], "bot")
    reading = read_answer("Do you have a cat?", later)
    said = read_facts(later, PremiseSource.HISTORY, 3, reading.statement if reading else None, "Do you have a cat?")
    assert [c.why for c in sheet.clashes(said)] == why


@pytest.mark.parametrize(("question", "whole"), [
    ("Do you have any pets?", "pet"), ("Any pets?", "pet"), ("How many animals do you have?", "animal"),
    ("Do you have any brothers or sisters?", ""),  # no kind COVERS knows by that name
    # what the user says of themselves asks nothing ("Do you?" says no more than that): DECODE's evaluation half had
    # "As I mentioned, I don't have any pets...How long have you had your pets for?"
    ("I understand. I don't have any pets. Do you?", ""),
    ("As I mentioned, I don't have any pets...How long have you had your pets for?", ""),
])
def test_only_a_question_to_the_bot_for_all_of_a_kind_opens_a_set(question, whole):
    facts = read_facts("I have a dog and a cat.", PremiseSource.HISTORY, 1, None, question)
    assert {f.whole_of for f in facts} == {whole}


@pytest.mark.parametrize(("reply", "clash"), [
    # another city in the persona's region: WordNet knows neither "Ashton, Oregon" nor "Portland, Oregon" whole, and
    # read by their last word both were Oregon (the ten-turn chat with the default bot sent "I live in Ashton, Oregon")
    ("I live in Ashton, Oregon.", True),
    ("I live in Salem, Oregon.", True),
    # the same city, or the region it is in, or the city with its region
    ("I live in Portland.", False),
    ("I live in Oregon.", False),
    ("I live in downtown Portland, Oregon.", False),
])
def test_two_cities_of_one_region_are_two_places(reply, clash):
    assert bool(clashes(["I live in Portland, Oregon."], reply, "Where do you live?")) == clash


def test_a_persona_line_alone_closes_no_set():
    """The persona names some of the bot's pets, not all: "I have two dogs." then "my cat" is new, not a clash (the
    labelling brief's reading: only an answer that gave the whole set closes it)."""
    turns = [Turn(0, "user", "Do you have a cat?")]
    assert clashes_with_question(["I have two dogs."], "Yes, my cat is called Luna.", "Do you have a cat?") == []
    assert sheet_of(turns, ["I have two dogs."], "bot").current()[0].whole_of == ""


def test_an_earlier_turn_is_read_with_the_question_it_answered():
    turns = [Turn(0, "user", "What instruments do you play?"), Turn(1, "bot", "I play the guitar and the piano.")]
    sheet = sheet_of(turns, ["I play the violin."], "bot")
    assert [(f.value, f.exhaustive) for f in sheet.current()] == [("violin", False), ("guitar", True),
                                                                 ("piano", True)]


@pytest.mark.parametrize(("reply", "why"), [
    ("My age is 32. I'm 34 years old.", ["age: 32 vs 34 (the same reply)"]),
    ("No, I am 63 years old. I'm a 22-year-old.", ["age: 63 vs 22 (the same reply)"]),
    ("I live in Paris. I live in Berlin.", ["lives in: Paris vs Berlin (the same reply)"]),
    ("I have no pets, but my dog Max is great.", ["how many: pets 0 vs dogs at least 1 (the same reply)"]),
    ("I'm a vegetarian, but I love steak.", ["diet: vegetarian vs eats steak (the same reply)"]),
    # twins: one value said twice, a correction, a place and the city it is in, a nickname, two jobs, one of two dogs
    ("I'm about 42, I'm not sure I'd call myself 42 but, I'm 42 years old.", []),
    ("I'm 12 years old, I'm not 13, I'm 12.", []),
    ("I live in Brooklyn, New York.", []),
    ("It's Margaret, call me Maggie.", []),
    ("I'm a doctor, but I'm also a teacher.", []),
    ("I have two dogs. My dog Max is a lab.", []),
    ("I'm 30 now. I was 20 when I moved here.", []),
    # a named pet called another kind, and an avoided food eaten, in one reply (2026-11-29-three-readings.md)
    ("I have a dog named Max. He's a big cat.", ["pet name: dog Max vs cat Max (the same reply)"]),
    ("I have a cat named Juniper, and he's a faithful dog.", ["pet name: cat Juniper vs dog Juniper (the same reply)"]),
    ("Actually, I am lactose intolerant, so I never eat cheese. I have a famous parmesan pizza.",
     ["diet: avoids cheese vs eats parmesan (the same reply)"]),
    # twins: the same kind or a kind of it, no animal, a compound, the past, the pronoun before the name
    ("I have a dog named Max. He's a golden retriever.", []),
    ("I have a tortoise named Pebble. He's a big, brown turtle with a beautiful shell.", []),
    ("I have a dog named Max. He's a good boy.", []),
    ("I have a dog named Max. He is a great pet.", []),
    ("I have a dog named Max. He's a big teddy bear.", []),
    ("I have a dog named Max. He was a cat in a past life.", []),
    ("He's a big cat. I have a dog named Max.", []),
])
def test_one_reply_that_gives_one_fact_two_values_clashes_with_itself(reply, why):
    assert [c.why for c in own_clashes(read_facts(reply, PremiseSource.HISTORY, -1))] == why


def test_one_reply_with_the_sheets_value_and_another_is_caught_by_its_own_clash():
    """A reply that gives the sheet's value beside another may be giving an alias: the sheet lets "My name is
    Margaret, but call me Maggie." pass. An age has no alias: "My age is 32. I'm 34 years old." clashes with a persona
    of 32 (2026-11-29-two-ages.md), and ``own_clashes`` finds the two values in the one reply too."""
    said = read_facts("My name is Margaret, but call me Maggie.", PremiseSource.HISTORY, 1)
    assert sheet_of([], ["My name is Margaret."], "bot").clashes(said) == ()
    aged = read_facts("My age is 32. I'm 34 years old.", PremiseSource.HISTORY, 1)
    assert [c.why for c in sheet_of([], ["I am 32 years old."], "bot").clashes(aged)] == ["age: 32 (persona) vs 34"]
    assert [c.within for c in own_clashes(aged)] == [True]


@pytest.mark.parametrize(("text", "rows"), [
    ("My husband is a father of two.", []),  # a spouse makes no "does: marry" row
    ("My hobbies are reading and hiking.", []),  # a hobby is also a falcon: no "hobbies: at least 1" row
    ("I have three chickens.", [("how many", "3")]),  # a chicken is food first, and a bird one keeps
    ("I have two turtles.", [("how many", "2")]),
    ("I'm Sophie's sister.", []),  # WordNet also files a sister as a nun: no occupation, and no name
    ("My favorite is a veggie burger.", []),  # a Burger was a chief justice: no occupation
])
def test_the_sheet_reads_no_junk_rows(text, rows):
    assert [(f.relation.value, f.value) for f in read_facts(text, PremiseSource.PERSONA, 0)] == rows


def test_a_denied_number_is_no_count_so_each_value_is_where_it_was_said():
    """Issue 54: "No, I have 3 dogs." to "Do you have 2 dogs?" is read with the question as "I do not have 2 dogs.",
    which was read as two dogs at that turn: the sheet said "dogs 2 … turn 1" while turn 1 said 3 (and a persona of
    three dogs would have clashed with it). A number denied says what the count is not: no count."""
    turns = [Turn(0, "user", "Do you have 2 dogs?"), Turn(1, "bot", "No, I have 3 dogs.")]
    sheet = sheet_of(turns, ["I have two dogs."], "bot")
    assert [(f.shown, f.where) for f in sheet.facts] == [("dogs 2", "persona"), ("dogs 3", "turn 1")]
    assert read_facts("I don't have two dogs.", PremiseSource.HISTORY, 1) == ()
    assert clashes(["I have 3 dogs."], "No, I have 3 dogs.", "Do you have 2 dogs?") == []


@pytest.mark.parametrize("said, job, holds", [
    ("I am a stay at home mom.", "stay-at-home mom", True),  # DECODE's human-bot example (the playground's first)
    ("I'm a stay-at-home dad and I love it.", "stay-at-home dad", True),
    ("I'm not a stay at home mom.", "stay-at-home mom", False),
])
def test_a_stay_at_home_parent_is_a_job(said, job, holds):
    """Issue 54: the playground's sheet read no fact in "I am a stay at home mom" (WordNet has no such noun)."""
    [fact] = [f for f in read_facts(said, PremiseSource.HISTORY, 3) if f.relation == Relation.JOB]
    assert (fact.value, fact.holds) == (job, holds)
    assert not [f for f in read_facts("My sister is a stay at home mom.", PremiseSource.HISTORY, 3)
                if f.relation == Relation.JOB]  # the sister's job, not the speaker's
    assert clashes(["I am a stay at home mom."], "I work as a nurse at the hospital.", "What do you do?")


PET_NAMES_CLASHING = [
    # the report script's tortoise (2026-11-29-pet-names.md): the detector scored it 0.72, under τ
    (["I have a tortoise named Pebble."], "My pet's name is Ben. He's a big, happy tortoise named Ben.",
     "What's your pet's name?"),
    (["I have a dog named Max."], "My dog's name is Rex.", "What's your dog called?"),
    (["I have a cat called Luna."], "My cat is named Bella and she loves naps.", "Tell me about your cat."),
    (["I have one parrot named Kiwi."], "I have a lovely parrot called Mango.", "Any pets?"),
]



@pytest.mark.parametrize("persona, reply, question", PET_NAMES_CLASHING)
def test_another_name_for_the_only_pet_of_its_kind_clashes(persona, reply, question):
    assert any(why.startswith("pet name:") for why in clashes(persona, reply, question))


def test_a_pets_name_is_a_fact_on_the_sheet():
    sheet = sheet_of([], ["I have a tortoise named Pebble."], "bot")
    named = [f for f in sheet.facts if f.relation == Relation.PET_NAME]
    assert [(f.thing, f.value, f.low, f.high) for f in named] == [("tortoise", "Pebble", 1, 1)]
    # names of several pets at once are not read as one pet's
    assert not [f for f in read_facts("My dogs are called Rex and Bo.", PremiseSource.HISTORY, 1)
                if f.relation == Relation.PET_NAME]


@pytest.mark.parametrize(("persona", "reply", "clash"), [
    # a home given down to its country is compared without it (2026-11-29-place-with-country.md): read by its last
    # word, "Red Rock, Colorado, USA" was in the USA, and so was Portland, Oregon
    (["I live in Portland, Oregon."], "I'm currently residing in Red Rock, Colorado, USA.", True),
    (["I live in Berlin."], "I live in Munich, Germany.", True),
    (["I live in Portland, Oregon."], "I live in Portland, Oregon, USA.", False),
    (["I live in Portland, Oregon."], "I live in Portland, USA.", False),
    (["I live in Paris."], "I live in Paris, France.", False),
    (["I live in France."], "I live in Paris, France.", False),
    (["I live in Atlanta, Georgia."], "I live in Atlanta.", False),  # Georgia is first a state, kept
])
def test_a_home_named_down_to_its_country_is_compared_without_it(persona, reply, clash):
    assert bool(clashes(persona, reply, "Where do you live?")) == clash


# 2026-11-29-three-readings.md: what the report script's seeds 3-4 sent that the sheet did not read
@pytest.mark.parametrize(("persona", "reply", "why"), [
    # a food the persona never eats, and a kind of it (WordNet: parmesan is a cheese; bacon is pork)
    (["I am lactose intolerant, so I never eat cheese."], "I have a famous parmesan pizza.",
     ["diet: avoids cheese (persona) vs eats parmesan"]),
    (["I am lactose intolerant, so I never eat cheese."], "I love a cheese pizza.",
     ["diet: avoids cheese (persona) vs eats cheese"]),
    (["I never eat pork."], "I had bacon for breakfast.", ["diet: avoids pork (persona) vs eats bacon"]),
    # twins: a dish that need not hold it (WordNet's pizza is "spread with ... cheese"), another food, no diet
    (["I am lactose intolerant, so I never eat cheese."], "I love pizza.", []),
    (["I am lactose intolerant, so I never eat cheese."], "I love steak.", []),
    (["I never eat pork."], "I had beef for breakfast.", []),
    (["I am lactose intolerant, so I never eat cheese."], "I'm not a vegetarian.", []),
    # "young" as an age: against 58, not against 30, nor at heart, in the past or of someone else
    (["I am 58 years old."], "I'm a young man, and I'm really excited to meet you.", ["age: 58 (persona) vs young"]),
    (["I am 58 years old."], "I am a young woman.", ["age: 58 (persona) vs young"]),
    (["I am 30 years old."], "I'm a young man.", []),
    (["I am 58 years old."], "I'm a young man at heart.", []),
    (["I am 58 years old."], "When I was a young man I lived in Rome.", []),
    (["I am 58 years old."], "My son is a young man.", []),
])
def test_an_avoided_food_and_a_young_age_clash_with_what_contradicts_them(persona, reply, why):
    assert clashes(persona, reply) == why


def test_a_denied_eat_reads_each_food_and_no_meal():
    facts = read_facts("I never eat breakfast. I don't eat much. I can't eat eggs or milk.", PremiseSource.HISTORY, 1)
    assert [f.shown for f in facts] == ["avoids egg", "avoids milk"]
    assert [f.value for f in read_facts("I don't eat meat.", PremiseSource.PERSONA, 0)] == ["vegetarian"]


# 2026-11-29-denied-in-a-list.md: "not" hung from a list's later member, not from the verb
@pytest.mark.parametrize(("said", "shown"), [
    ("I have a few animals, but not a tortoise.", ["animals some", "tortoises 0"]),
    ("I have a dog, but not a cat.", ["dogs 1", "cats 0"]),
    ("I have a dog and a cat.", ["dogs 1", "cats 1"]),
])
def test_a_thing_denied_in_a_list_is_not_had(said, shown):
    assert [f.shown for f in read_facts(said, PremiseSource.HISTORY, 1)] == shown


# 2026-11-29-guessed-lucky-only-child.md: what the report script's seeds 7-8 sent that the sheet read wrong or not at all
@pytest.mark.parametrize(("said", "shown"), [
    ("I'm an only child.", ["siblings 0"]),  # not also "children: at least 1"
    ("I am not only an only child but also a father.", ["siblings 0"]),  # "not only" affirms
    ("I am not an only child.", ["siblings at least 1"]),
    ("I'm a big sister.", []),  # what the speaker is, not a sister it has
    ("I have a little sister.", ["sisters at least 1"]),
    ("I'm so lucky to have a dog.", ["dogs at least 1"]),
    ("I'm happy to have two cats.", ["cats 2"]),
    ("I'm not lucky enough to have a dog.", []),
    ("I'm ready to have kids.", []),
])
def test_what_the_speaker_is_and_is_glad_to_have(said, shown):
    assert [f.shown for f in read_facts(said, PremiseSource.HISTORY, 1)] == shown


def test_a_wished_glad_to_have_is_a_wish():
    [fact] = read_facts("I would be lucky to have a dog.", PremiseSource.HISTORY, 1)
    assert fact.time == "wish"


@pytest.mark.parametrize(("persona", "before", "reply", "question", "why"), [
    (["I have two parakeets."], [("user", "Do you have any pets?"), ("bot", "I have two parakeets.")],
     "I'm so lucky to have a dog.", "I bet you have a dog too, right?",
     ["how many: parakeets 2 (of its pets, only parakeets) (turn 1) vs dogs at least 1"]),
    (["I have a twin sister."], [], "I am not only an only child but also a father.", "Are you an only child then?",
     ["how many: sisters 1 (persona) vs siblings 0"]),
    (["I have a twin sister."], [], "No, I am not an only child.", "Are you an only child then?", []),
    (["I am 58 years old."], [], "Yes, it is 25! That's so cool.", "Really? I would have guessed you were 25.",
     ["age: 58 (persona) vs 25"]),
    (["I am 58 years old."], [], "No, I'm 58.", "Really? I would have guessed you were 25.", []),
    # an age has no alias: a reply that gives the persona's age and another clashes (2026-11-29-two-ages.md); ranges
    # that meet do not
    (["I am 58 years old."], [], "No, I am 58 years old. I'm 55 years old.", "Tell me again, how old are you?",
     ["age: 58 (persona) vs 55"]),
    (["I am 58 years old."], [], "I am 58 years old. I'm in my fifties.", "Tell me again, how old are you?", []),
])
def test_replies_the_runs_sent_clash_and_their_twins_do_not(persona, before, reply, question, why):
    assert clashes(persona, reply, question, before) == why


def test_a_denied_persona_pet_in_a_list_clashes_and_a_denied_other_pet_does_not():
    assert clashes(["I have a tortoise named Pebble."], "I have a few animals, but not a tortoise.",
                   "Do you have any pets?") == ["how many: tortoises 1 (persona) vs tortoises 0"]
    assert clashes(["I have a dog named Max."], "I have a dog, but not a cat.", "Do you have a cat?") == []


# 2026-11-29-ages-only.md: an age after "a", and a comparison that gives no age
@pytest.mark.parametrize(("said", "shown"), [
    ("I am a 59 years old.", ["59"]),
    ("I'm a 22-year-old student.", ["22"]),
    ("I'm 30 years old.", ["30"]),
    ("I'm 13 years older than you.", []),
    ("I'm 13 years younger.", []),
    ("I'm a year older.", []),
])
def test_an_age_after_an_article_and_no_age_in_a_comparison(said, shown):
    assert [f.shown for f in read_facts(said, PremiseSource.HISTORY, 1)] == shown


@pytest.mark.parametrize(("persona", "reply", "why"), [
    (["I am 58 years old."], "No, I am 58 years old. I am a 59 years old.", ["age: 58 (persona) vs 59"]),
    (["I am 58 years old."], "I'm 13 years older than you.", []),
    (["I am 58 years old."], "No, I'm 58. My brother is 13 years younger.", []),
])
def test_a_second_age_after_an_article_clashes_and_a_comparison_does_not(persona, reply, why):
    assert clashes(persona, reply) == why
