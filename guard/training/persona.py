"""DNLI-style persona pairs (Welleck et al. 2019, appendix A): first-person facts a chatbot states about itself.

A fact is a triple (the speaker, a relation, an entity or number) realised through several sentence
templates. Two phrasings of one fact make an entailment pair; relation, entity and numeric swaps make
contradictions; independent facts make neutral pairs. The extended recipe adds contradictions whose
two sides share few words ("two dogs" vs "no pets"); off, the data are exactly the shipped
checkpoint's (a test checks its model card's counts).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from guard.language.forms import plural, with_article
from guard.language.grammar import number_word
from guard.training.labels import LabelledPair
from guard.training.sources import ENTITIES

# Antonym pairs for attributes (appendix A.3's hand swaps, plus common personality words).
ATTRIBUTE_ANTONYMS: list[tuple[str, str]] = [
    ("blonde", "brunette"), ("tall", "short"), ("young", "old"), ("rich", "poor"), ("happy", "depressed"),
    ("cheerful", "depressed"), ("clean", "messy"), ("shy", "outgoing"), ("introverted", "extroverted"),
    ("lazy", "hardworking"), ("healthy", "sick"), ("patient", "impatient"), ("calm", "nervous"),
    ("organized", "disorganized"), ("strong", "weak"), ("thin", "overweight"), ("quiet", "loud"),
    ("early riser", "night owl"), ("morning person", "night person"),
]

#: counts up to this are written as words half the time ("two dogs"), larger ones always in digits
SPELLED_UP_TO = 10


@dataclass(frozen=True)
class Fact:
    """A persona triple (subject is always the speaker): relation + entity (+ number)."""

    relation: str
    entity: str
    number: int | None = None
    category: str = "other"


def _count(n: int, noun: str, rng: random.Random) -> str:
    word = str(n) if rng.random() < 0.5 or n > SPELLED_UP_TO else number_word(n)
    return f"{word} {noun if n == 1 else plural(noun)}"


# Surface templates per relation: several phrasings of one triple give entailment pairs.
def realize(fact: Fact, rng: random.Random, extended: bool = False) -> str:
    """One first-person sentence stating ``fact`` (phrasing picked at random).

    ``extended`` adds phrasings that share few words with the other side of a contradiction
    ("I'm in my twenties", "I can't eat X", "I'm an only child") and the relations of
    ``EXTENDED_RELATIONS``; off, the choices (and so the random stream) are the shipped recipe's.
    """
    if extended:
        extra = _extended_choices(fact, rng)
        if extra:
            return rng.choice(extra)
    e, n, r = fact.entity, fact.number, fact.relation
    choices: list[str]
    if r == "have":
        if n is not None:
            choices = [f"i have {_count(n, e, rng)}.", f"i've got {_count(n, e, rng)}.",
                       f"i own {_count(n, e, rng)}." if e not in ENTITIES["sibling"] + ENTITIES["child"]
                       else f"i have {_count(n, e, rng)} in my family."]
        else:
            choices = [f"i have {with_article(e)}.", f"i've got {with_article(e)}.", f"i own {with_article(e)}."
                       if e in ENTITIES["pet"] + ENTITIES["vehicle"] else f"i have {with_article(e)}, yes."]
    elif r == "not_have":
        choices = [f"i do not have {with_article(e)}.", f"i don't have {with_article(e)}.",
                   f"i have never had {with_article(e)}.", f"i don't own {with_article(e)}."
                   if e in ENTITIES["pet"] + ENTITIES["vehicle"] else f"i have no {plural(e)}."]
    elif r == "not_have_any":  # e is a super-type ("pet", "kid"): nothing of that kind at all
        choices = [f"i don't have any {plural(e)}.", f"i have no {plural(e)}.", f"i've never had {with_article(e)}.",
                   f"i do not have any {plural(e)}.", f"no {plural(e)} for me, i have none."]
    elif r == "like":
        choices = [f"i like {e}.", f"i love {e}.", f"i really enjoy {e}.", f"{e} is one of my favorite things.",
                   f"i am a big fan of {e}."]
    elif r == "dislike":
        choices = [f"i hate {e}.", f"i don't like {e}.", f"i can't stand {e}.", f"i really dislike {e}.",
                   f"i am not a fan of {e}."]
    elif r == "favorite":
        cat = fact.category
        what = {"color": "color", "season": "season", "food": "food", "drink": "drink", "sport": "sport",
                "music": "kind of music", "genre": "genre", "city": "city", "activity": "hobby"}.get(cat, "thing")
        choices = [f"my favorite {what} is {e}.", f"{e} is my favorite {what}.", f"i like {e} best."]
    elif r == "live_in":
        choices = [f"i live in {e}.", f"i am from {e}.", f"i grew up in {e} and still live there.",
                   f"my home is in {e}."]
    elif r == "nationality":
        choices = [f"i am {e}.", f"i'm {e} by birth.", f"i was born {e}."]
    elif r == "profession":
        choices = [f"i am {with_article(e)}.", f"i work as {with_article(e)}.", f"i'm {with_article(e)} by trade.",
                   f"my job is being {with_article(e)}."]
    elif r == "employed_by":
        choices = [f"i work at {e}.", f"i am employed by {e}.", f"my job is at {e}."]
    elif r == "marital":
        choices = [f"i am {e}.", f"i'm {e}.", f"currently i am {e}."]
    elif r == "age":
        choices = [f"i am {n} years old.", f"i'm {n}.", f"i just turned {n}."]
    elif r == "attribute":
        choices = [f"i am {e}.", f"i'm very {e}." if " " not in e else f"i'm {with_article(e)}.",
                   f"people say i am {e}."]
    elif r == "play":
        choices = [f"i play the {e}.", f"i can play the {e}.", f"i have played the {e} for years."]
    elif r == "not_play":
        choices = [f"i do not play the {e}.", f"i can't play the {e}.", f"i have never played the {e}."]
    elif r == "school":
        choices = [f"i am in {e}.", f"i go to {e}.", f"i'm currently attending {e}."]
    else:
        raise ValueError(f"no template for relation {r!r}")
    return rng.choice(choices)


def _decade(n: int) -> str:
    return {1: "teens", 2: "twenties", 3: "thirties", 4: "forties", 5: "fifties", 6: "sixties",
            7: "seventies", 8: "eighties"}[n // 10]


# Super-type words for "none of that kind at all" facts beyond *have* (like X vs no sports / no music).
_KIND_WORDS = {"sport": "sports", "music": "music", "instrument": "instrument"}


def _extended_choices(fact: Fact, rng: random.Random) -> list[str]:
    """Phrasings only the extended recipe uses; [] means "use the plain templates"."""
    e, n, r, cat = fact.entity, fact.number, fact.relation, fact.category
    if r == "been_to":
        return [f"i have been to {e}.", f"i visited {e} last year.", f"i went to {e} on vacation once.",
                f"my best trip ever was to {e}.", f"i spent a summer in {e}."]
    if r == "never_been":
        return [f"i have never been to {e}.", f"i've never visited {e}.", f"i have never set foot in {e}.",
                f"i've never traveled to {e}, not even once."]
    if r == "did":
        return [f"i have been {e} before.", f"i've tried {e}.", f"i went {e} once.", f"i went {e} last year.",
                f"i have done some {e}."]
    if r == "never_did":
        return [f"i have never been {e}.", f"i've never tried {e}.", f"i have never gone {e} in my life.",
                f"{e} is something i have never done."]
    if r == "no_job":
        return ["i don't have a job.", "i'm unemployed right now.", "i have never had a job.",
                "i've never worked anywhere.", "i'm out of work at the moment."]
    if r == "none_of_kind":  # e is a _KIND_WORDS value
        if e == "sports":
            return ["i hate all sports.", "sports bore me to death.", "i never play or watch any sports.",
                    "i'm not into sports at all."]
        if e == "music":
            return ["i don't listen to music at all.", "music just isn't for me.", "i never listen to any music."]
        return ["i can't play any instrument.", "i don't play any instruments.", "i'm not musical at all."]
    if r == "age" and n is not None and 13 <= n < 90 and rng.random() < 0.4:
        return [f"i'm in my {_decade(n)}." if n >= 20 else "i'm a teenager."]
    if r == "not_have_any" and e == "sibling" and rng.random() < 0.5:
        return ["i am an only child.", "i'm an only child, it was just me growing up."]
    if r == "dislike" and cat in ("food", "drink") and rng.random() < 0.5:
        verb = "eat" if cat == "food" else "drink"
        return [f"i can't {verb} {e}.", f"{e} makes me sick.", f"i never {verb} {e}.", f"no {e} for me, ever."]
    if r == "like" and cat in ("food", "drink") and rng.random() < 0.4:
        verb = "eat" if cat == "food" else "drink"
        return [f"i {verb} {e} every day.", f"i could {verb} {e} all day long.", f"{e} is my go-to."]
    return []


# Relations only the extended recipe draws, and which categories they take.
EXTENDED_RELATIONS: dict[str, list[str]] = {"been_to": ["city", "country"], "did": ["experience"],
                                            "never_been": ["city", "country"], "never_did": ["experience"]}


# relation -> entity categories it takes
_RELATION_CATEGORIES: dict[str, list[str]] = {
    "have": ["pet", "sibling", "child", "vehicle"],
    "like": ["food", "drink", "sport", "activity", "music", "genre"],
    "favorite": ["color", "season", "food", "drink", "sport", "music", "city"],
    "live_in": ["city", "country"],
    "nationality": ["nationality"],
    "profession": ["profession"],
    "employed_by": ["company"],
    "marital": ["marital"],
    "play": ["instrument"],
    "school": ["school"],
}
# Relations where one value excludes another (appendix A.3 entity swaps).
_EXCLUSIVE = {"favorite", "live_in", "nationality", "profession", "marital", "school"}
# Super-type pairs for the neutral/contradiction have-swaps of appendix A.2.
_SUPERTYPES = {"pet": "pet", "sibling": "sibling", "child": "kid", "vehicle": "vehicle"}


def _random_fact(rng: random.Random, entities: dict[str, list[str]], extended: bool = False) -> Fact:
    relations = list(_RELATION_CATEGORIES) + ["age", "attribute"]
    if extended:
        relations += list(EXTENDED_RELATIONS)
    relation = rng.choice(relations)
    if relation == "age":
        return Fact("age", "", rng.randint(16, 80))
    if relation == "attribute":
        return Fact("attribute", rng.choice(rng.choice(ATTRIBUTE_ANTONYMS)))
    cat = rng.choice(_RELATION_CATEGORIES.get(relation) or EXTENDED_RELATIONS[relation])
    entity = rng.choice(entities[cat])
    number = rng.randint(1, 6) if relation == "have" and rng.random() < 0.4 else None
    return Fact(relation, entity, number, cat)


def _contradicting_fact(fact: Fact, rng: random.Random, entities: dict[str, list[str]],
                        extended: bool = False) -> tuple[Fact, str]:
    """A fact that cannot hold together with ``fact``, and the swap kind that made it."""
    r = fact.relation
    if extended:
        other = _extended_contradiction(fact, rng)
        if other is not None:
            return other
    if r == "have":
        if fact.number is not None and rng.random() < 0.6:
            other = rng.choice([k for k in range(1, 9) if k != fact.number])
            return Fact("have", fact.entity, other, fact.category), "numeric"
        if extended and fact.category in _SUPERTYPES and rng.random() < 0.4:  # "two dogs" vs "no pets"
            return Fact("not_have_any", _SUPERTYPES[fact.category], category=fact.category), "supertype"
        return Fact("not_have", fact.entity, category=fact.category), "relation"
    if r == "not_have":
        return Fact("have", fact.entity, category=fact.category), "relation"
    if r == "like":
        return Fact("dislike", fact.entity, category=fact.category), "relation"
    if r == "dislike":
        return Fact(rng.choice(["like", "favorite"]) if fact.category in _RELATION_CATEGORIES["favorite"]
                    else "like", fact.entity, category=fact.category), "relation"
    if r == "play":
        return Fact("not_play", fact.entity, category=fact.category), "relation"
    if r == "not_play":
        return Fact("play", fact.entity, category=fact.category), "relation"
    if r == "age":
        return Fact("age", "", rng.choice([k for k in range(16, 80) if abs(k - (fact.number or 0)) >= 3])), "numeric"
    if r == "attribute":
        for a, b in ATTRIBUTE_ANTONYMS:
            if fact.entity == a:
                return Fact("attribute", b), "entity"
            if fact.entity == b:
                return Fact("attribute", a), "entity"
    if r == "favorite" and rng.random() < 0.4:
        return Fact("dislike", fact.entity, category=fact.category), "relation"
    if r in _EXCLUSIVE or r == "employed_by":
        cat = fact.category
        # within the same category: a city vs a country could both be true
        pool = [e for e in entities.get(cat, []) if e != fact.entity]
        return Fact(r, rng.choice(pool), category=cat), "entity"
    raise ValueError(f"no contradiction rule for {fact}")


def _extended_contradiction(fact: Fact, rng: random.Random) -> tuple[Fact, str] | None:
    """Contradictions whose two sides share few words (the extended recipe), or None."""
    r, e, cat = fact.relation, fact.entity, fact.category
    if r == "age" and fact.number is not None:  # "in my forties" must not meet 47: another decade
        return Fact("age", "", rng.choice([k for k in range(16, 81) if k // 10 != fact.number // 10])), "numeric"
    if r in ("live_in", "been_to") and rng.random() < (0.5 if r == "live_in" else 1.0):
        return Fact("never_been", e, category=cat), "never-been"
    if r == "never_been":
        return Fact(rng.choice(["live_in", "been_to"]), e, category=cat), "never-been"
    if r == "did":
        return Fact("never_did", e, category=cat), "never-did"
    if r == "never_did":
        return Fact("did", e, category=cat), "never-did"
    if r in ("profession", "employed_by") and rng.random() < 0.4:
        return Fact("no_job", "", category=cat), "no-job"
    if r in ("like", "favorite", "play") and cat in _KIND_WORDS and rng.random() < 0.5:
        return Fact("none_of_kind", _KIND_WORDS[cat], category=cat), "supertype"
    return None


def _neutral_fact(fact: Fact, rng: random.Random, entities: dict[str, list[str]],
                  extended: bool = False) -> tuple[Fact, str]:
    """A fact independent of ``fact`` (appendix A.2's neutral swaps: have_x vs have_y, other relations)."""
    r = fact.relation
    if extended and r in ("live_in", "been_to", "never_been", "did", "never_did") and rng.random() < 0.6:
        # never been to Y / never tried Y says nothing about X: many shared words, no conflict
        cat = fact.category
        pool = [x for x in entities[cat] if x != fact.entity]
        flip = {"live_in": "never_been", "been_to": "never_been", "never_been": "been_to", "did": "never_did",
                "never_did": "did"}[r]
        return Fact(flip, rng.choice(pool), category=cat), "negated-other-entity"
    if extended and r == "have" and rng.random() < 0.3:  # "no kids" says nothing about a dog
        others = [c for c in _SUPERTYPES if c != fact.category]
        cat = rng.choice(others)
        return Fact("not_have_any", _SUPERTYPES[cat], category=cat), "negated-other-kind"
    if r in ("have", "like") and rng.random() < 0.6:
        cat = fact.category
        if r == "have":  # having a dog says nothing about having a car (or another pet)
            cat = rng.choice(_RELATION_CATEGORIES["have"])
        pool = [e for e in entities[cat] if e != fact.entity]
        return Fact(r, rng.choice(pool), category=cat), "relation-neutral"
    while True:
        other = _random_fact(rng, entities, extended)
        if other.relation != r and not (r == "attribute" and other.relation == "attribute"):
            if extended and {r, other.relation} & {"no_job", "none_of_kind"}:
                continue  # "no job" conflicts with a profession; keep unrelated facts clearly unrelated
            return other, "unrelated-fact"


# Openings a chat reply often has; none changes what the fact says.
_OPENERS = ["yes, ", "yeah, ", "well, ", "oh, ", "haha ", "honestly, ", "actually, ", "to be honest, ", "lol ",
            "hmm, ", "oh nice, ", "ha, "]


def dress_as_reply(sentence: str, rng: random.Random, fillers: Sequence[str], tail: bool) -> str:
    """A fact sentence as a chat reply: maybe an opener, maybe a real unrelated chit-chat sentence around it.

    Templates alone are short and bare; bot replies are not. Only call with ``tail`` where an extra
    sentence keeps the label true (premises; hypotheses of contradiction and neutral pairs).
    """
    if rng.random() < 0.4:
        sentence = rng.choice(_OPENERS) + sentence
    if tail and fillers and rng.random() < 0.5:
        extra = rng.choice(fillers)
        sentence = f"{sentence} {extra}" if rng.random() < 0.6 else f"{extra} {sentence}"
    return sentence


def persona_pairs(n: int, seed: int = 0, entities: dict[str, list[str]] | None = None, extended: bool = False,
                  fillers: Sequence[str] = (), dress: float = 0.0) -> list[LabelledPair]:
    """DNLI-style pairs: about 1/3 each of contradiction (relation/entity/numeric swaps),
    entailment (two phrasings of one fact) and neutral (independent facts).

    ``extended`` adds relations and phrasings whose contradictions share few words ("two dogs" vs "no pets",
    "I live in Boston" vs "I've never set foot in Boston", "I'm 45" vs "I'm in my twenties"); off, the data
    are exactly the shipped checkpoint's (tests check its model card's counts); ``dress`` is the share of pairs
    made to look like chat replies (``dress_as_reply`` with real ``fillers``). Both off: the shipped recipe.
    """
    rng = random.Random(seed)
    entities = entities or ENTITIES
    pairs: list[LabelledPair] = []
    while len(pairs) < n:
        fact = _random_fact(rng, entities, extended)
        kind = rng.random()
        if kind < 0.4:
            other, how = _contradicting_fact(fact, rng, entities, extended)
            label = "contradiction"
        elif kind < 0.7:
            other, how, label = fact, "paraphrase", "entailment"
        else:
            other, how = _neutral_fact(fact, rng, entities, extended)
            label = "neutral"
        first, second = realize(fact, rng, extended), realize(other, rng, extended)
        if label == "entailment" and first == second and rng.random() < 0.7:
            second = realize(other, rng, extended)
        if dress and rng.random() < dress:
            first = dress_as_reply(first, rng, fillers, tail=True)
            second = dress_as_reply(second, rng, fillers, tail=label != "entailment")
            how += "+dressed"
        if rng.random() < 0.5:
            first, second = first[0].upper() + first[1:], second[0].upper() + second[1:]
        if extended and label != "entailment" and rng.random() < 0.5:  # both relations are symmetric
            first, second = second, first
        pairs.append(LabelledPair(first, second, label, f"persona-{how}"))
    return pairs
