"""The detector's training-pair builders must produce the labels they claim (guard/training/)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from guard.language.perturb import Perturb
from guard.training import calibration, persona, sources
from guard.training import pairs as builders
from guard.training.labels import LabelledPair


@pytest.mark.parametrize("sentence, expected", [
    ("I like pizza.", "I don't like pizza."),
    ("I don't like pizza.", "I do like pizza."),
    ("I am a teacher.", "I am not a teacher."),
    ("I can't swim.", "I can swim."),
    ("I went to the store yesterday.", "I didn't go to the store yesterday."),
    ("She is never late.", "She is always late."),
    ("I have been to Paris.", "I have not been to Paris."),
])
def test_negation_flips_the_main_clause(nlp, sentence, expected):
    assert builders.negate_chat(nlp(sentence)) == expected


def test_negation_leaves_questions_and_fragments_alone(nlp):
    assert builders.negate_chat(nlp("Do you like pizza?")) is None
    assert builders.negate_chat(nlp("medium rare steak")) is None


def test_antonym_swap_uses_an_antonym(nlp, wn):
    rng = random.Random(0)
    assert Perturb.antonym(nlp("We loved the show."), rng, wn) == "We hated the show."
    assert Perturb.antonym(nlp("It's cold outside."), rng, wn) == "It's hot outside."
    assert Perturb.antonym(nlp("Is it cold?"), rng, wn) is None


def test_relation_swaps_make_contradictions():
    rng = random.Random(1)
    like = persona.Fact("like", "pizza", category="food")
    other, how = persona._contradicting_fact(like, rng, sources.ENTITIES)
    assert (other.relation, other.entity, how) == ("dislike", "pizza", "relation")
    have = persona.Fact("have", "dog", category="pet")
    other, how = persona._contradicting_fact(have, rng, sources.ENTITIES)
    assert (other.relation, other.entity) == ("not_have", "dog")


def test_entity_and_numeric_swaps_change_the_value():
    rng = random.Random(2)
    city = persona.Fact("live_in", "Boston", category="city")
    other, how = persona._contradicting_fact(city, rng, sources.ENTITIES)
    assert how == "entity" and other.relation == "live_in" and other.entity != "Boston"
    assert other.entity in sources.ENTITIES["city"]
    age = persona.Fact("age", "", 30)
    other, how = persona._contradicting_fact(age, rng, sources.ENTITIES)
    assert how == "numeric" and abs(other.number - 30) >= 3
    assert "30" in persona.realize(age, rng) and str(other.number) in persona.realize(other, rng)


def test_persona_pairs_label_by_construction():
    pairs = persona.persona_pairs(600, seed=3)
    labels = Counter(p.label for p in pairs)
    assert set(labels) == {"contradiction", "entailment", "neutral"} and min(labels.values()) > 100
    for p in pairs:
        if p.source == "persona-relation" and "like" in p.premise.lower() and "dislike" not in p.premise.lower():
            assert p.label == "contradiction"
        if p.source in ("persona-relation-neutral", "persona-unrelated-fact"):
            assert p.label == "neutral"
        if p.source == "persona-paraphrase":
            assert p.label == "entailment"
    # the same seed gives the same data (reproducible training)
    assert [(p.premise, p.hypothesis) for p in persona.persona_pairs(50, seed=3)] == \
        [(p.premise, p.hypothesis) for p in pairs[:50]]


CONVS = [
    sources.ChitchatConversation("c1", ["a", "b", "a", "b", "a"], [
        "I really love hiking in the mountains.", "That sounds great, where do you usually go?",
        "Mostly in Colorado. I am a big fan of the Rockies.", "I have never been there before.",
        "You should go! The views are amazing and the air is clean."]),
    sources.ChitchatConversation("c2", ["a", "b", "a", "b"], [
        "My cat knocked my coffee off the table today.", "Oh no, was it hot coffee?",
        "It was cold, so nobody got hurt.", "Cats are so funny sometimes, my dog is calmer."]),
]


def test_chitchat_pairs_labels(nlp, wn):
    pairs = builders.chitchat_pairs(CONVS * 3, 80, nlp, wn, seed=0)
    by_source = Counter(p.source for p in pairs)
    assert by_source["chitchat-unrelated"] > 0 and by_source["chitchat-same-topic"] > 0
    for p in pairs:
        if p.source in ("chitchat-unrelated", "chitchat-same-topic"):
            assert p.label == "neutral"  # unrelated and same-topic utterances are not contradictions
            assert p.premise != p.hypothesis
        elif p.source == "chitchat-repeat":
            assert p.label == "entailment" and p.hypothesis in p.premise
        else:
            assert p.label == "contradiction" and p.premise != p.hypothesis
            assert p.source in ("chitchat-negation", "chitchat-antonym")


def test_context_noise_only_grows_the_premise():
    pairs = [LabelledPair("i have a dog.", "i do not have a dog.", "contradiction", "persona-relation")]
    noisy = builders.add_context_noise(pairs * 20, ["What a nice day it is."], prob=1.0, seed=0)
    assert all(p.hypothesis == "i do not have a dog." and "i have a dog." in p.premise for p in noisy)
    assert all(p.label == "contradiction" and p.source.endswith("+ctx") for p in noisy)


def test_calibration_dialogues_are_balanced_and_positives_hold_a_perturbed_clause(nlp, wn):
    convs = CONVS * 40  # one usable conversation, cut at different points
    dialogues = calibration.calibration_dialogues(convs, 20, nlp, wn, seed=0)
    assert Counter(d.label for d in dialogues) == {True: 10, False: 10}
    for d in dialogues:
        assert d.speakers[-1] in ("A", "B") and len(d.utterances) == len(d.speakers)
        if d.label:
            evidence = d.meta["evidence"]
            assert d.speakers[evidence] == d.speakers[-1] and evidence < len(d.utterances) - 1


def test_bad_label_is_refused():
    with pytest.raises(ValueError, match="label must be one of"):
        LabelledPair("a", "b", "contradict", "x")


def test_snli_loader_drops_no_consensus_rows(tmp_path):
    path = tmp_path / "snli.jsonl"
    path.write_text('{"gold_label": "neutral", "sentence1": "A man.", "sentence2": "A tall man."}\n'
                    '{"gold_label": "-", "sentence1": "A dog.", "sentence2": "A cat."}\n')
    pairs = sources.load_snli(path)
    assert [(p.premise, p.label) for p in pairs] == [("A man.", "neutral")]


def test_negated_neutral_pairs_are_neutral_and_negated(nlp):
    pairs = builders.negated_neutral_pairs(CONVS * 3, 6, nlp, seed=0)
    assert pairs, "the chit-chat fixtures hold negatable statements"
    originals = {u for c in CONVS for u in c.utterances}
    for p in pairs:
        assert p.label == "neutral" and p.source == "chitchat-negated-unrelated"
        assert p.hypothesis not in originals  # the statement was changed
        assert any(w in p.hypothesis.lower() for w in ("not", "n't", "never", "always", " do ", " did "))
        assert p.premise != p.hypothesis


def test_negated_entailment_pairs_restate_a_negation_the_premise_holds(nlp):
    pairs = builders.negated_entailment_pairs(CONVS * 3, 6, nlp, seed=0)
    assert pairs, "the chit-chat fixtures hold negatable statements"
    originals = {u for c in CONVS for u in c.utterances}
    for p in pairs:
        assert p.label == "entailment" and p.source == "chitchat-negated-restated"
        assert p.hypothesis in p.premise  # the premise states the negated sentence itself
        assert p.premise not in originals  # ...which is not what the speaker originally said
        assert any(w in p.hypothesis.lower() for w in ("not", "n't", "never", "always", " do ", " did "))


def test_have_swaps_include_the_super_type(nlp):
    """'two dogs' vs 'no pets': a contradiction in other words (DNLI appendix A's have / not_have)."""
    rng = random.Random(0)
    have = persona.Fact("have", "dog", category="pet")
    swaps = Counter()
    for _ in range(60):
        other, how = persona._contradicting_fact(have, rng, sources.ENTITIES, extended=True)
        swaps[(other.relation, other.entity, how)] += 1
    assert swaps[("not_have_any", "pet", "supertype")] > 0 and swaps[("not_have", "dog", "relation")] > 0
    said = {persona.realize(persona.Fact("not_have_any", "pet"), rng) for _ in range(40)}
    assert all("pet" in s for s in said) and len(said) > 1
    neutral, how = persona._neutral_fact(have, random.Random(3), sources.ENTITIES, extended=True)
    while how != "negated-other-kind":
        neutral, how = persona._neutral_fact(have, rng, sources.ENTITIES, extended=True)
    assert neutral.relation == "not_have_any" and neutral.entity != "pet"  # no kids says nothing about dogs


@pytest.mark.parametrize("sentence, allowed", [
    ("I have a big old dog.", {"I have an old dog.", "I have a big dog."}),
    ("I really love hiking.", {"I love hiking."}),
    ("I have an old car.", {"I have a car."}),
])
def test_dropping_a_modifier_keeps_an_entailed_sentence(nlp, sentence, allowed):
    out = Perturb.drop_modifier(nlp(sentence), random.Random(0))
    assert out in allowed


@pytest.mark.parametrize("sentence", ["I don't have a big dog.", "I never eat spicy food.", "Do you have a big dog?",
                                      "If it is sunny we go out."])
def test_no_modifier_is_dropped_where_that_could_flip_the_meaning(nlp, sentence):
    assert Perturb.drop_modifier(nlp(sentence), random.Random(0)) is None


def test_restatement_pairs_are_changed_entailments(nlp, wn):
    pairs = builders.restatement_pairs(CONVS * 3, 8, nlp, seed=0)
    assert pairs, "the chit-chat fixtures hold restatable statements"
    for p in pairs:
        assert p.label == "entailment" and p.source.startswith("chitchat-restated-")
        assert p.premise != p.hypothesis
        assert not any(w in p.hypothesis.lower().split() for w in ("not", "never")) or \
            any(w in p.premise.lower().split() for w in ("not", "never"))  # no negation is introduced


def test_extended_persona_contradictions_share_few_words():
    """The extended recipe's contradictions say the opposite in other words ("live in X" vs "never been to X")."""
    rng = random.Random(5)
    seen = Counter()
    for fact in [persona.Fact("live_in", "Boston", category="city"),
                 persona.Fact("did", "skiing", category="experience"),
                 persona.Fact("profession", "nurse", category="profession"),
                 persona.Fact("like", "jazz", category="music"), persona.Fact("play", "piano", category="instrument")]:
        for _ in range(30):
            other, how = persona._contradicting_fact(fact, rng, sources.ENTITIES, extended=True)
            seen[(fact.relation, other.relation, how)] += 1
    assert seen[("live_in", "never_been", "never-been")] > 0
    assert seen[("did", "never_did", "never-did")] == 30
    assert seen[("profession", "no_job", "no-job")] > 0
    assert seen[("like", "none_of_kind", "supertype")] > 0 and seen[("play", "none_of_kind", "supertype")] > 0
    said = persona.realize(persona.Fact("none_of_kind", "instrument"), rng, extended=True)
    assert "instrument" in said or "musical" in said
    # without the flag, none of the new relations or swaps appears (the shipped recipe's data)
    plain = persona.persona_pairs(400, seed=3)
    assert not any(how in p.source for p in plain
                   for how in ("never-been", "never-did", "no-job", "dressed", "supertype", "negated-other-kind"))


def test_shipped_recipe_persona_data_is_reproduced(wn):
    """The documented command must rebuild the shipped checkpoint's persona data (counts in its model card)."""
    import json
    from pathlib import Path

    shipped = json.loads((Path(__file__).resolve().parent.parent / "models" / "detector"
                          / "training_data_counts.json").read_text())["train_by_source"]
    rebuilt = Counter(p.source for p in persona.persona_pairs(8000, seed=13, entities=sources.wordnet_entities(wn)))
    assert dict(rebuilt) == {k: v for k, v in shipped.items() if k.startswith("persona")}


def test_extended_age_phrasing_agrees_with_the_number():
    rng = random.Random(0)
    said = {persona.realize(persona.Fact("age", "", 45), rng, extended=True) for _ in range(60)}
    assert "i'm in my forties." in said and all("45" in s or "forties" in s for s in said)
    for _ in range(50):  # a numeric swap in the extended recipe never lands in the same decade
        other, _how = persona._contradicting_fact(persona.Fact("age", "", 45), rng, sources.ENTITIES, extended=True)
        assert other.number // 10 != 4


def test_neutral_negations_about_another_entity():
    """'never been to Miami' says nothing about living in Boston: many shared words, still neutral."""
    rng = random.Random(2)
    kinds = Counter()
    for _ in range(40):
        boston = persona.Fact("live_in", "Boston", category="city")
        other, how = persona._neutral_fact(boston, rng, sources.ENTITIES, extended=True)
        kinds[how] += 1
        if how == "negated-other-entity":
            assert other.relation == "never_been" and other.entity != "Boston"
    assert kinds["negated-other-entity"] > 0


def test_dressed_persona_pairs_keep_entailment_hypotheses_bare():
    fillers = ["we went to the lake yesterday.", "that movie was so long lol"]
    pairs = persona.persona_pairs(500, seed=4, extended=True, fillers=fillers, dress=1.0)
    assert all(p.source.endswith("+dressed") for p in pairs)
    assert any(f in p.premise for p in pairs for f in fillers)
    for p in pairs:
        if p.label == "entailment":  # an extra sentence in the hypothesis would not follow from the premise
            assert not any(f in p.hypothesis for f in fillers)
    again = persona.persona_pairs(500, seed=4, extended=True, fillers=fillers, dress=1.0)
    assert [(p.premise, p.hypothesis) for p in again] == [(p.premise, p.hypothesis) for p in pairs]


def test_overlap_neutral_pairs_are_one_speaker_sharing_content_words():
    convs = [sources.ChitchatConversation("c", ["a", "b", "a", "b", "a"], [
        "I teach math at the middle school downtown.", "Do you like teaching math there?",
        "In the summer I get a break from teaching math at school.", "That sounds really nice honestly.",
        "Yeah the weather is really nice here today."])]
    pairs = builders.overlap_neutral_pairs(convs, 10, seed=0)
    assert len(pairs) == 1 and pairs[0].label == "neutral"
    assert {pairs[0].premise, pairs[0].hypothesis} == {convs[0].utterances[0], convs[0].utterances[2]}
    # the other speaker's question shares the words too, but pairs are within one speaker only
    assert all("Do you like" not in p.premise + p.hypothesis for p in pairs)
