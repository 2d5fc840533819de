"""Training pairs for the embedded contradiction detector, built from installed sources only.

Why each source is here:

* SNLI (``embedded.snli_dir()``) teaches generic 3-way NLI.
* DNLI-style persona pairs (Welleck et al. 2019, appendix A: relation swaps, entity swaps,
  numeric swaps over fact triples) teach the first-person facts a chatbot states about itself.
* Real chit-chat utterances (``chitchat_dataset``) teach that *unrelated* or merely *same-topic*
  utterances are not contradictions (SNLI alone teaches the opposite), that repeating oneself is
  entailment, and, through CDConv's negation / antonym perturbations, what a contradiction
  inside one clause of a long casual reply looks like.

Nothing here reads ``/work/shared/data/rgm``: that set is validation only.
Labels use the checkpoint's own names: ``contradiction``, ``entailment``, ``neutral``.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

LABELS: tuple[str, ...] = ("contradiction", "entailment", "neutral")
LABEL2ID: dict[str, int] = {name: i for i, name in enumerate(LABELS)}


@dataclass
class NLIPair:
    """One training / evaluation example; ``source`` says which builder made it (for counts)."""

    premise: str
    hypothesis: str
    label: str
    source: str

    def __post_init__(self) -> None:
        if self.label not in LABEL2ID:
            raise ValueError(f"label must be one of {LABELS}, got {self.label!r}")


@dataclass
class SyntheticDialogue:
    """A held-out dialogue for calibrating the threshold: does the last turn contradict its speaker?"""

    utterances: list[str]
    speakers: list[str]
    label: bool
    source: str
    meta: dict = field(default_factory=dict)


# --------------------------------------------------------------------------------------------
# SNLI
# --------------------------------------------------------------------------------------------

def load_snli(path: Path | str, limit: int | None = None, seed: int = 0) -> list[NLIPair]:
    """SNLI pairs with a gold label (the ``-`` no-consensus rows are dropped), optionally a random subset."""
    pairs = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            if row.get("gold_label") not in LABEL2ID:
                continue
            pairs.append(NLIPair(row["sentence1"], row["sentence2"], row["gold_label"], "snli"))
    if limit is not None and limit < len(pairs):
        pairs = random.Random(seed).sample(pairs, limit)
    return pairs


# --------------------------------------------------------------------------------------------
# DNLI-style persona facts (Welleck et al. 2019, appendix A)
# --------------------------------------------------------------------------------------------

# Entities per category. Hand lists keep the sentences natural; ``wordnet_entities`` adds more.
ENTITIES: dict[str, list[str]] = {
    "pet": ["dog", "cat", "hamster", "parrot", "rabbit", "goldfish", "turtle", "snake", "horse", "lizard"],
    "sibling": ["brother", "sister"],
    "child": ["son", "daughter"],
    "vehicle": ["car", "truck", "motorcycle", "bike", "minivan", "boat"],
    "food": ["pizza", "sushi", "pasta", "tacos", "burgers", "salad", "steak", "curry", "ice cream",
             "chocolate", "pancakes", "seafood", "spicy food", "vegetables", "cheese", "bacon"],
    "drink": ["coffee", "tea", "beer", "wine", "soda", "orange juice", "milk", "lemonade", "whiskey"],
    "sport": ["football", "basketball", "soccer", "tennis", "baseball", "golf", "hockey", "swimming",
              "volleyball", "boxing", "running", "skiing", "surfing", "cycling"],
    "activity": ["hiking", "reading", "cooking", "painting", "gardening", "dancing", "fishing", "camping",
                 "knitting", "singing", "video games", "yoga", "photography", "traveling", "shopping",
                 "baking", "writing poetry", "watching movies", "playing chess"],
    "music": ["rock music", "jazz", "country music", "hip hop", "classical music", "pop music",
              "heavy metal", "reggae", "the blues", "opera", "rap"],
    "genre": ["horror movies", "comedies", "romance novels", "science fiction", "documentaries",
              "cartoons", "reality shows", "action movies", "mystery novels", "anime"],
    "instrument": ["guitar", "piano", "violin", "drums", "flute", "saxophone", "cello", "trumpet"],
    "color": ["blue", "red", "green", "yellow", "purple", "black", "white", "pink", "orange"],
    "season": ["summer", "winter", "spring", "fall"],
    "city": ["Chicago", "New York", "Los Angeles", "Boston", "Seattle", "Miami", "Denver", "Austin",
             "Toronto", "London", "Paris", "Berlin", "Tokyo", "Sydney", "Dallas", "Atlanta"],
    "country": ["Canada", "Mexico", "France", "Germany", "Japan", "Brazil", "Italy", "Spain", "India",
                "Australia", "Ireland", "China", "Russia", "Egypt", "Kenya"],
    "nationality": ["American", "Canadian", "Mexican", "French", "German", "Japanese", "Brazilian",
                    "Italian", "Spanish", "Indian", "Australian", "Irish", "Chinese"],
    "profession": ["teacher", "nurse", "doctor", "lawyer", "engineer", "chef", "accountant", "pilot",
                   "firefighter", "police officer", "mechanic", "dentist", "farmer", "librarian",
                   "plumber", "architect", "cashier", "electrician", "waitress", "programmer"],
    "company": ["Google", "Walmart", "Amazon", "Microsoft", "a bank", "a hospital", "a bakery",
                "a law firm", "a car dealership", "a grocery store"],
    "marital": ["married", "single", "divorced", "engaged", "widowed"],
    "school": ["high school", "college", "law school", "medical school", "grad school"],
    "experience": ["skiing", "camping", "surfing", "fishing", "skydiving", "hiking", "sailing", "snowboarding",
                   "scuba diving", "bowling", "ice skating", "horseback riding", "rock climbing", "kayaking"],
    "food_diet": ["vegan", "vegetarian"],
    "meat_diet": ["meat lover", "carnivore"],
}

# Antonym pairs for attributes (appendix A.3's hand swaps, plus common personality words).
ATTRIBUTE_ANTONYMS: list[tuple[str, str]] = [
    ("blonde", "brunette"), ("tall", "short"), ("young", "old"), ("rich", "poor"), ("happy", "depressed"),
    ("cheerful", "depressed"), ("clean", "messy"), ("shy", "outgoing"), ("introverted", "extroverted"),
    ("lazy", "hardworking"), ("healthy", "sick"), ("patient", "impatient"), ("calm", "nervous"),
    ("organized", "disorganized"), ("strong", "weak"), ("thin", "overweight"), ("quiet", "loud"),
    ("early riser", "night owl"), ("morning person", "night person"),
]

NUMBER_WORDS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]


@dataclass(frozen=True)
class Fact:
    """A persona triple (subject is always the speaker): relation + entity (+ number)."""

    relation: str
    entity: str
    number: int | None = None
    category: str = "other"


def _plural(noun: str) -> str:
    if noun.endswith(("s", "sh", "ch", "x")):
        return noun + "es"
    if noun.endswith("y") and noun[-2:-1] not in "aeiou":
        return noun[:-1] + "ies"
    return noun + "s"


def _article(noun: str) -> str:
    return ("an " if noun[0].lower() in "aeiou" else "a ") + noun


def _count(n: int, noun: str, rng: random.Random) -> str:
    word = str(n) if rng.random() < 0.5 or n > 10 else NUMBER_WORDS[n - 1]
    return f"{word} {noun if n == 1 else _plural(noun)}"


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
            choices = [f"i have {_article(e)}.", f"i've got {_article(e)}.", f"i own {_article(e)}."
                       if e in ENTITIES["pet"] + ENTITIES["vehicle"] else f"i have {_article(e)}, yes."]
    elif r == "not_have":
        choices = [f"i do not have {_article(e)}.", f"i don't have {_article(e)}.",
                   f"i have never had {_article(e)}.", f"i don't own {_article(e)}."
                   if e in ENTITIES["pet"] + ENTITIES["vehicle"] else f"i have no {_plural(e)}."]
    elif r == "not_have_any":  # e is a super-type ("pet", "kid"): nothing of that kind at all
        choices = [f"i don't have any {_plural(e)}.", f"i have no {_plural(e)}.", f"i've never had {_article(e)}.",
                   f"i do not have any {_plural(e)}.", f"no {_plural(e)} for me, i have none."]
    elif r == "like":
        choices = [f"i like {e}.", f"i love {e}.", f"i really enjoy {e}.", f"{e} is one of my favorite things.",
                   f"i am a big fan of {e}."]
    elif r == "dislike":
        choices = [f"i hate {e}.", f"i don't like {e}.", f"i can't stand {e}.", f"i really dislike {e}.",
                   f"i am not a fan of {e}."]
    elif r == "favorite":
        cat = fact_category(fact)
        what = {"color": "color", "season": "season", "food": "food", "drink": "drink", "sport": "sport",
                "music": "kind of music", "genre": "genre", "city": "city", "activity": "hobby"}.get(cat, "thing")
        choices = [f"my favorite {what} is {e}.", f"{e} is my favorite {what}.", f"i like {e} best."]
    elif r == "live_in":
        choices = [f"i live in {e}.", f"i am from {e}.", f"i grew up in {e} and still live there.",
                   f"my home is in {e}."]
    elif r == "nationality":
        choices = [f"i am {e}.", f"i'm {e} by birth.", f"i was born {e}."]
    elif r == "profession":
        choices = [f"i am {_article(e)}.", f"i work as {_article(e)}.", f"i'm {_article(e)} by trade.",
                   f"my job is being {_article(e)}."]
    elif r == "employed_by":
        choices = [f"i work at {e}.", f"i am employed by {e}.", f"my job is at {e}."]
    elif r == "marital":
        choices = [f"i am {e}.", f"i'm {e}.", f"currently i am {e}."]
    elif r == "age":
        choices = [f"i am {n} years old.", f"i'm {n}.", f"i just turned {n}."]
    elif r == "attribute":
        choices = [f"i am {e}.", f"i'm very {e}." if " " not in e else f"i'm {_article(e)}.",
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


def fact_category(fact: Fact) -> str:
    return fact.category


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
        return Fact(rng.choice(["like", "favorite"]) if fact_category(fact) in _RELATION_CATEGORIES["favorite"]
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
        cat = fact_category(fact)
        pool = [e for e in entities.get(cat, []) if e != fact.entity]
        if r == "live_in":  # a city vs a country could both be true; swap within the same category
            pool = [e for e in entities[cat] if e != fact.entity]
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
        cat = fact_category(fact)
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
                  fillers: Sequence[str] = (), dress: float = 0.0) -> list[NLIPair]:
    """DNLI-style pairs: about 1/3 each of contradiction (relation/entity/numeric swaps),
    entailment (two phrasings of one fact) and neutral (independent facts).

    ``extended`` adds relations and phrasings whose contradictions share few words ("two dogs" vs "no pets",
    "I live in Boston" vs "I've never set foot in Boston", "I'm 45" vs "I'm in my twenties"); off, the data
    are exactly the shipped checkpoint's (tests check its model card's counts); ``dress`` is the share of pairs
    made to look like chat replies (``dress_as_reply`` with real ``fillers``). Both off: the shipped recipe.
    """
    rng = random.Random(seed)
    entities = entities or ENTITIES
    pairs: list[NLIPair] = []
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
        pairs.append(NLIPair(first, second, label, f"persona-{how}"))
    return pairs


def wordnet_entities(wn, base: dict[str, list[str]] | None = None, per_category: int = 40) -> dict[str, list[str]]:
    """Extend a few entity categories with WordNet hyponyms (single common words only)."""
    roots = {"pet": ["domestic_animal.n.01"], "food": ["dish.n.02"], "drink": ["beverage.n.01"],
             "sport": ["sport.n.01"], "instrument": ["musical_instrument.n.01"],
             "profession": ["professional.n.01", "worker.n.01"]}
    out = {k: list(v) for k, v in (base or ENTITIES).items()}
    for cat, names in roots.items():
        found: list[str] = []
        for root in names:
            for syn in wn.synset(root).closure(lambda s: s.hyponyms(), depth=2):
                lemma = syn.lemmas()[0]
                word = lemma.name()
                if "_" in word or not word.isalpha() or not word.islower() or len(word) > 12:
                    continue
                if lemma.count() < 5:  # SemCor frequency: keeps words people actually say
                    continue
                found.append(word)
        for word in sorted(set(found))[:per_category]:
            if word not in out[cat]:
                out[cat].append(word)
    return out


# --------------------------------------------------------------------------------------------
# Chit-chat utterances (chitchat_dataset) and CDConv perturbations
# --------------------------------------------------------------------------------------------

_ASCII_TEXT = re.compile(r"^[\x20-\x7e]+$")


@dataclass
class ChitchatConversation:
    conv_id: str
    speakers: list[str]
    utterances: list[str]


def load_chitchat(path: Path | str | None = None, limit: int | None = None) -> list[ChitchatConversation]:
    """Conversations from the ``chitchat-dataset`` package, one utterance per speaker turn (messages joined)."""
    if path is None:
        import chitchat_dataset  # the package's dataset.json

        path = Path(chitchat_dataset.__file__).with_name("dataset.json")
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    convs = []
    for conv_id, conv in data.items():
        speakers, utterances = [], []
        for turn in conv["messages"]:
            text = " ".join(m["text"].strip() for m in turn if m.get("text", "").strip())
            text = re.sub(r"\s+", " ", text).strip()
            if not text:
                continue
            speakers.append(turn[0]["sender"])
            utterances.append(text)
        if len(utterances) >= 4:
            convs.append(ChitchatConversation(conv_id, speakers, utterances))
        if limit is not None and len(convs) >= limit:
            break
    return convs


def usable_utterance(text: str, min_words: int = 4, max_words: int = 45) -> bool:
    """Plain-English statements of a useful length (no URLs, emoji, or non-ASCII)."""
    words = text.split()
    return (min_words <= len(words) <= max_words and bool(_ASCII_TEXT.match(text))
            and "http" not in text and sum(c.isalpha() for c in text) > 0.6 * len(text.replace(" ", "")))


# Verb / adverb antonyms WordNet lacks or gets wrong for chat; adjectives come from WordNet.
VERB_ANTONYMS: dict[str, str] = {
    "love": "hate", "hate": "love", "like": "dislike", "dislike": "like", "loved": "hated", "hated": "loved",
    "liked": "disliked", "enjoy": "hate", "enjoyed": "hated", "agree": "disagree", "disagree": "agree",
    "always": "never", "never": "always", "remember": "forget", "forgot": "remembered",
    "remembered": "forgot", "win": "lose", "won": "lost", "lost": "won", "accept": "refuse",
    "everyone": "nobody", "everything": "nothing", "nothing": "everything", "more": "less", "less": "more",
    "best": "worst", "worst": "best", "yes": "no", "true": "false", "false": "true", "can": "cannot",
}
_CONTRACTED_NEG = {"don't": "do", "doesn't": "does", "didn't": "did", "isn't": "is", "aren't": "are",
                   "wasn't": "was", "weren't": "were", "can't": "can", "won't": "will", "haven't": "have",
                   "hasn't": "has", "couldn't": "could", "wouldn't": "would", "shouldn't": "should",
                   "dont": "do", "doesnt": "does", "didnt": "did", "isnt": "is", "cant": "can", "wont": "will"}
_AUX_FOR_NEG = {"am", "is", "are", "was", "were", "can", "could", "will", "would", "should", "have", "has",
                "had", "do", "does", "did", "'m", "'re", "'s", "must", "might", "may"}


def _join(tokens: list[str], spaces: list[str]) -> str:
    return "".join(t + s for t, s in zip(tokens, spaces)).strip()


def negate_sentence(doc) -> str | None:
    """Flip the polarity of the main clause of a spaCy-parsed sentence (CDConv's 'Negative' perturbation).

    Removes an existing negation, else inserts ``not`` after the first auxiliary / copula of the root,
    else adds do-support (``I like X`` -> ``I don't like X``). Returns None for questions and
    sentences without a finite main verb, which negation would not turn into a contradiction.
    """
    text = doc.text.strip()
    if not text or text.endswith("?"):
        return None
    tokens = [t.text for t in doc]
    spaces = [t.whitespace_ for t in doc]
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    if root is None or root.pos_ not in ("VERB", "AUX"):
        return None
    # 1. an existing negation on the root clause: remove it
    for t in doc:
        if t.dep_ == "neg" and (t.head == root or t.head.head == root):
            lower = t.text.lower()
            if lower in ("n't", "not", "never") and t.i > 0:
                prev = doc[t.i - 1]
                if lower == "n't":  # "do n't" / "ca n't" / "wo n't" tokens
                    fix = {"ca": "can", "wo": "will", "sha": "shall"}.get(prev.text.lower(), prev.text)
                    tokens[t.i - 1] = fix
                    spaces[t.i - 1] = " "
                tokens[t.i] = "" if lower != "never" else "always"
                if tokens[t.i] == "" and not spaces[t.i - 1]:
                    spaces[t.i - 1] = " "  # "cannot" -> "can" + the following space
                return re.sub(r"\s+", " ", _join(tokens, spaces))
            if lower in _CONTRACTED_NEG:
                tokens[t.i] = _CONTRACTED_NEG[lower]
                return _join(tokens, spaces)
    # 2. an auxiliary or copula on the root: insert "not" after it
    auxes = [c for c in root.children if c.dep_ in ("aux", "auxpass") and c.i < root.i]
    if root.lemma_ == "be" or (root.pos_ == "AUX" and root.text.lower() in _AUX_FOR_NEG):
        auxes = [root] + auxes
    auxes.sort(key=lambda t: t.i)
    if auxes:
        aux = auxes[0]
        if aux.text.lower() in ("'s", "'m", "'re", "am", "is", "are", "was", "were", "can", "will", "would",
                                "could", "should", "have", "has", "had", "do", "does", "did", "must", "might"):
            if aux.text.lower() == "can":
                tokens[aux.i] = aux.text + "not"
            else:
                tokens[aux.i] = aux.text + " not"
            spaces[aux.i] = spaces[aux.i] or " "
            return re.sub(r"\s+", " ", _join(tokens, spaces))
        return None
    # 3. do-support for a simple present / past main verb
    tag = root.tag_
    if (tag in ("VBP", "VBZ", "VBD") and root.pos_ == "VERB" and root.text.isalpha() and len(root.text) > 2
            and root.lemma_ not in ("be", "do") and (root.i == 0 or doc[root.i - 1].whitespace_)):
        do = {"VBP": "don't", "VBZ": "doesn't", "VBD": "didn't"}[tag]
        tokens[root.i] = f"{do} {root.lemma_}"
        return _join(tokens, spaces)
    return None


def antonym_sentence(doc, wn, rng: random.Random) -> str | None:
    """Swap one adjective / verb / adverb for an antonym (CDConv's 'Antonym' perturbation)."""
    text = doc.text.strip()
    if not text or text.endswith("?"):
        return None
    options: list[tuple[int, str]] = []
    for t in doc:
        lower = t.text.lower()
        if lower in VERB_ANTONYMS and t.pos_ in ("VERB", "ADV", "ADJ", "PRON", "INTJ", "AUX"):
            options.append((t.i, VERB_ANTONYMS[lower]))
        elif t.pos_ == "ADJ" and t.text.isalpha():
            ants = {a.name() for s in wn.synsets(lower, pos="a") for lem in s.lemmas()
                    if lem.name() == lower for a in lem.antonyms()}
            ants = {a for a in ants if "_" not in a}
            if ants:
                options.append((t.i, sorted(ants)[0]))
    if not options:
        return None
    i, new = rng.choice(options)
    tokens = [t.text for t in doc]
    spaces = [t.whitespace_ for t in doc]
    old = tokens[i]
    tokens[i] = new.capitalize() if old[:1].isupper() else new
    return _join(tokens, spaces)


def usable_pool(convs: Sequence[ChitchatConversation]) -> list[str]:
    """Every usable utterance (``usable_utterance``) of the conversations, in order."""
    return [u for c in convs for u in c.utterances if usable_utterance(u)]


def _replace_sentence(doc, sent, changed: str) -> str:
    """The utterance ``doc`` with its sentence ``sent`` replaced by ``changed``."""
    return (doc.text[:sent.start_char] + changed + doc.text[sent.end_char:]).strip()


def _statement_sentences(doc) -> list:
    return [s for s in doc.sents if not s.text.strip().endswith("?") and len(s) >= 3]


def _statement_docs(pool: Sequence[str], count: int, nlp, rng: random.Random):
    """Up to ``count`` utterances sampled from ``pool``, parsed, each with its statement sentences."""
    for doc in nlp.pipe(rng.sample(pool, min(len(pool), count)), batch_size=256):
        sents = _statement_sentences(doc)
        if sents:
            yield doc, sents


def negated_neutral_pairs(convs: Sequence[ChitchatConversation], n: int, nlp, seed: int = 0) -> list[NLIPair]:
    """Neutral pairs whose hypothesis carries a negation: an utterance vs an *unrelated* statement negated.

    Counters the shortcut "negation word => contradiction" that the negation perturbations alone teach.
    """
    rng = random.Random(seed)
    pool = usable_pool(convs)
    if not pool:
        return []
    pairs: list[NLIPair] = []
    for doc, sents in _statement_docs(pool, 4 * n, nlp, rng):
        if len(pairs) >= n:
            break
        changed = negate_sentence(rng.choice(sents).as_doc())
        if not changed:
            continue
        premise = rng.choice(pool)
        if premise == doc.text:
            continue
        pairs.append(NLIPair(premise, changed, "neutral", "chitchat-negated-unrelated"))
    return pairs


def negated_entailment_pairs(convs: Sequence[ChitchatConversation], n: int, nlp, seed: int = 0) -> list[NLIPair]:
    """Entailment pairs whose hypothesis carries a negation the premise already states.

    The premise is a real utterance with one statement negated; the hypothesis is that negated
    sentence. Paired with ``negated_neutral_pairs`` it teaches that a negation agreeing with the
    premise is no contradiction (the neutral pairs alone made the model fire on consistent restatements).
    """
    rng = random.Random(seed)
    pool = usable_pool(convs)
    if not pool:
        return []
    pairs: list[NLIPair] = []
    for doc, sents in _statement_docs(pool, 4 * n, nlp, rng):
        if len(pairs) >= n:
            break
        target = rng.choice(sents)
        changed = negate_sentence(target.as_doc())
        if not changed:
            continue
        premise = _replace_sentence(doc, target, changed)
        pairs.append(NLIPair(premise, changed, "entailment", "chitchat-negated-restated"))
    return pairs


# Words that make dropping a modifier unsafe (downward-monotone or non-subsective contexts).
_NOT_UPWARD = {"no", "not", "never", "nobody", "nothing", "none", "nor", "without", "if", "few", "only", "hardly",
               "barely", "unless", "less", "neither", "n't", "cannot", "dont", "doesnt", "didnt", "cant", "wont"}
_NON_SUBSECTIVE = {"former", "fake", "alleged", "false", "fictional", "imaginary", "pretend", "artificial", "mock",
                   "toy", "ex", "counterfeit", "virtual", "fewer", "more", "most", "less", "least", "other", "same",
                   "many", "much", "several", "all", "every", "each", "any", "some", "enough", "first", "last"}


_DROPPABLE_ADVERBS = {"very", "really", "pretty", "so", "too", "also", "just", "actually", "probably", "always",
                      "still", "quite", "super", "totally", "definitely", "even", "already", "often", "usually"}


def drop_modifier(doc, rng: random.Random) -> str | None:
    """The sentence with one adjective or adverb modifier removed, when that keeps it entailed.

    "I have a big old dog" entails "I have a big dog"; skipped where a negation, quantifier or
    conditional could reverse that ("I don't have a big dog" does not entail "I don't have a dog").
    """
    if any(t.lower_ in _NOT_UPWARD or t.dep_ == "neg" for t in doc) or doc.text.strip().endswith("?"):
        return None
    options = [t for t in doc if t.text.isalpha() and t.lower_ not in _NON_SUBSECTIVE and not list(t.children)
               and t.i > 0 and (
                   (t.dep_ == "amod" and t.pos_ == "ADJ" and t.head.pos_ == "NOUN" and t.i < t.head.i)
                   or (t.dep_ == "advmod" and t.pos_ == "ADV" and t.head.pos_ in ("VERB", "ADJ")
                       and (t.lower_.endswith("ly") or t.lower_ in _DROPPABLE_ADVERBS)))]
    if not options:
        return None
    t = rng.choice(options)
    tokens = [x.text for x in doc]
    spaces = [x.whitespace_ for x in doc]
    tokens[t.i], spaces[t.i] = "", ""
    before = doc[t.i - 1]
    if before.lower_ in ("a", "an") and t.i + 1 < len(doc):  # "an old dog" -> "a dog"
        article = "an" if doc[t.i + 1].text[:1].lower() in "aeiou" else "a"
        tokens[before.i] = article.capitalize() if before.text[:1].isupper() else article
    out = re.sub(r"\s+", " ", _join(tokens, spaces)).strip()
    return out if out and out.lower() != doc.text.strip().lower() else None


def restatement_pairs(convs: Sequence[ChitchatConversation], n: int, nlp, seed: int = 0) -> list[NLIPair]:
    """Entailment pairs that look like the perturbations but keep the meaning.

    Every synthetic contradiction is a near copy of its premise, which teaches "near copy with one word
    changed => contradiction" (seen on the probe suite: restatements flagged at 0.99). These pairs are
    near copies that stay true: one noun swapped for a WordNet synonym (guard.probes.synonym) or one
    adjective / adverb modifier dropped; the hypothesis is the changed sentence alone or the whole
    utterance with that sentence changed.
    """
    from guard.probes import synonym

    rng = random.Random(seed)
    pool = usable_pool(convs)
    if not pool:
        return []
    pairs: list[NLIPair] = []
    for doc, sents in _statement_docs(pool, 6 * n, nlp, rng):
        if len(pairs) >= n:
            break
        sent = rng.choice(sents)
        if rng.random() < 0.5:
            changed, kind = drop_modifier(sent.as_doc(), rng), "modifier-dropped"
        else:
            changed, kind = synonym(sent.text.strip(), rng), "synonym"
        if not changed or changed.lower() == sent.text.strip().lower():
            continue
        whole = _replace_sentence(doc, sent, changed)
        premise, hypothesis = doc.text, changed if rng.random() < 0.5 else whole
        if kind == "synonym" and hypothesis == whole and rng.random() < 0.5:  # same content: entails both ways
            premise, hypothesis = hypothesis, premise
        pairs.append(NLIPair(premise, hypothesis, "entailment", f"chitchat-restated-{kind}"))
    return pairs


# Chat filler words scikit-learn's stop list lacks; sharing them says nothing about a shared topic.
_CHAT_STOP_WORDS = {"like", "really", "know", "think", "pretty", "cool", "yeah", "haha", "good", "just", "thing",
                    "things", "kind", "kinda", "much", "going", "want", "maybe", "actually", "sure", "time", "right",
                    "okay", "love", "great", "nice", "stuff", "lots", "doing", "said", "sounds", "probably",
                    "definitely", "guess", "mean", "gonna", "tell", "talk", "people", "hahaha", "make", "does"}


def _content_words(text: str) -> set[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return {w for w in re.findall(r"[a-z]+", text.lower())
            if len(w) >= 4 and w not in ENGLISH_STOP_WORDS and w not in _CHAT_STOP_WORDS}


def overlap_neutral_pairs(convs: Sequence[ChitchatConversation], n: int, seed: int = 0,
                          min_shared: int = 2) -> list[NLIPair]:
    """Neutral pairs of two real utterances by the *same speaker* in one conversation that share content words.

    Against the shortcut "many shared words => contradiction": people rarely contradict themselves in a
    ten-minute chat, yet they keep coming back to the same words ("I teach math" ... "in the summer I
    get a break from teaching math"). Labelled neutral (most are consistent elaborations, not entailments).
    """
    rng = random.Random(seed)
    candidates: list[tuple[str, str]] = []
    for conv in convs:
        by_speaker: dict[str, list[str]] = {}
        for speaker, text in zip(conv.speakers, conv.utterances):
            if usable_utterance(text):
                by_speaker.setdefault(speaker, []).append(text)
        for texts in by_speaker.values():
            words = [_content_words(t) for t in texts]
            for i in range(len(texts)):
                for j in range(i + 1, len(texts)):
                    if len(words[i] & words[j]) >= min_shared and texts[i].lower() != texts[j].lower():
                        candidates.append((texts[i], texts[j]))
    rng.shuffle(candidates)
    pairs = []
    for a, b in candidates[:n]:
        if rng.random() < 0.5:
            a, b = b, a
        pairs.append(NLIPair(a, b, "neutral", "chitchat-same-speaker-overlap"))
    return pairs


def chitchat_pairs(convs: Sequence[ChitchatConversation], n: int, nlp, wn, seed: int = 0) -> list[NLIPair]:
    """Dialogue-domain pairs from real utterances.

    neutral: an utterance vs one from another conversation (unrelated) or from the same one
    (same topic); entailment: a multi-sentence utterance vs one of its own sentences (repetition);
    contradiction: an utterance vs itself with one sentence negated or antonym-swapped.
    Mix: 25% unrelated, 25% same-topic, 10% repetition, 40% perturbation.
    """
    rng = random.Random(seed)
    pool = [(ci, u) for ci, c in enumerate(convs) for u in c.utterances if usable_utterance(u)]
    if not pool:
        return []
    n_unrelated, n_topic, n_repeat = int(0.25 * n), int(0.25 * n), int(0.10 * n)
    n_perturb = n - n_unrelated - n_topic - n_repeat
    pairs: list[NLIPair] = []
    for _ in range(n_unrelated):
        (ca, a), (cb, b) = rng.choice(pool), rng.choice(pool)
        if ca != cb:
            pairs.append(NLIPair(a, b, "neutral", "chitchat-unrelated"))
    by_conv: dict[int, list[str]] = {}
    for ci, u in pool:
        by_conv.setdefault(ci, []).append(u)
    multi = [ci for ci, us in by_conv.items() if len(us) >= 2]
    for _ in range(n_topic):
        us = by_conv[rng.choice(multi)]
        a, b = rng.sample(us, 2)
        if a.lower() != b.lower():
            pairs.append(NLIPair(a, b, "neutral", "chitchat-same-topic"))
    # parse a sample once for repetition and perturbations
    sample = [u for _, u in rng.sample(pool, min(len(pool), 3 * (n_repeat + n_perturb)))]
    made_repeat = made_perturb = 0
    for doc in nlp.pipe(sample, batch_size=256):
        if made_repeat >= n_repeat and made_perturb >= n_perturb:
            break
        sents = _statement_sentences(doc)
        if not sents:
            continue
        if made_repeat < n_repeat and len(list(doc.sents)) >= 2 and rng.random() < 0.3:
            pairs.append(NLIPair(doc.text, rng.choice(sents).text.strip(), "entailment", "chitchat-repeat"))
            made_repeat += 1
            continue
        if made_perturb >= n_perturb:
            continue
        sent = rng.choice(sents)
        use_negation = rng.random() < 0.6
        changed = negate_sentence(sent.as_doc()) if use_negation else antonym_sentence(sent.as_doc(), wn, rng)
        kind = "negation" if use_negation else "antonym"
        if changed is None:
            changed = antonym_sentence(sent.as_doc(), wn, rng) if use_negation else negate_sentence(sent.as_doc())
            kind = "antonym" if use_negation else "negation"
        if not changed or changed.lower() == sent.text.strip().lower():
            continue
        # hypothesis: the changed sentence alone, or the whole utterance with that clause changed
        if rng.random() < 0.5:
            hypothesis = changed
        else:
            hypothesis = _replace_sentence(doc, sent, changed)
        premise = doc.text
        if rng.random() < 0.5:  # either order: the contradiction is symmetric
            premise, hypothesis = hypothesis, premise
        pairs.append(NLIPair(premise, hypothesis, "contradiction", f"chitchat-{kind}"))
        made_perturb += 1
    rng.shuffle(pairs)
    return pairs


def add_context_noise(pairs: Iterable[NLIPair], fillers: Sequence[str], prob: float, seed: int = 0) -> list[NLIPair]:
    """Append an unrelated real chit-chat sentence to the premise of some pairs.

    Bot replies are multi-sentence; a contradiction in one clause must survive unrelated company.
    Only the premise grows, so entailment and contradiction labels stay true.
    """
    rng = random.Random(seed)
    out = []
    for p in pairs:
        if fillers and rng.random() < prob:
            extra = rng.choice(fillers)
            premise = f"{p.premise} {extra}" if rng.random() < 0.5 else f"{extra} {p.premise}"
            out.append(NLIPair(premise, p.hypothesis, p.label, p.source + "+ctx"))
        else:
            out.append(p)
    return out


# --------------------------------------------------------------------------------------------
# Held-out synthetic dialogues for choosing the threshold (never rgm)
# --------------------------------------------------------------------------------------------

def calibration_dialogues(convs: Sequence[ChitchatConversation], n: int, nlp, wn, seed: int = 0
                          ) -> list[SyntheticDialogue]:
    """Dialogues whose last turn does / does not contradict an earlier turn of its speaker.

    Negative (label False): a real conversation prefix ending in a real utterance of the speaker.
    Positive (label True): the same prefix, but the last turn is a real later utterance of the speaker with a
    negated / antonym-swapped sentence of one of their earlier turns appended (the contradiction sits in one
    clause of a longer reply, as in model-generated data).
    """
    rng = random.Random(seed)
    out: list[SyntheticDialogue] = []
    candidates = [c for c in convs if len(c.utterances) >= 5]
    rng.shuffle(candidates)
    wanted = {False: n // 2, True: n - n // 2}  # balanced, so the accuracy-best threshold is not skewed
    for conv in candidates * 3:  # a conversation may serve again with another cut point
        if not wanted[False] and not wanted[True]:
            break
        end = rng.randint(4, min(len(conv.utterances), 10)) - 1  # index of the last turn
        utts, spk = conv.utterances[:end + 1], conv.speakers[:end + 1]
        speaker = spk[end]
        earlier = [i for i in range(end) if spk[i] == speaker and usable_utterance(utts[i])]
        if not earlier or not usable_utterance(utts[end]):
            continue
        names = ["A" if s == spk[0] else "B" for s in spk]
        if wanted[False] and (not wanted[True] or rng.random() < 0.5):
            out.append(SyntheticDialogue(list(utts), names, False, "chitchat-real"))
            wanted[False] -= 1
            continue
        source_i = rng.choice(earlier)
        doc = nlp(utts[source_i])
        sents = _statement_sentences(doc)
        if not sents:
            continue
        sent = rng.choice(sents)
        changed = negate_sentence(sent.as_doc()) if rng.random() < 0.6 else antonym_sentence(sent.as_doc(), wn, rng)
        if not changed or changed.lower() == sent.text.strip().lower():
            continue
        last = f"{utts[end]} {changed}" if rng.random() < 0.5 else f"{changed} {utts[end]}"
        out.append(SyntheticDialogue(list(utts[:end]) + [last], names, True, "chitchat-perturbed",
                                     {"evidence": source_i}))
        wanted[True] -= 1
    return out


def split_conversations(convs: Sequence[ChitchatConversation], heldout_fraction: float, seed: int = 0
                        ) -> tuple[list[ChitchatConversation], list[ChitchatConversation]]:
    """Train / held-out split by conversation, so no utterance leaks into calibration."""
    order = list(convs)
    random.Random(seed).shuffle(order)
    k = int(len(order) * heldout_fraction)
    return order[k:], order[:k]


def save_pairs(pairs: Sequence[NLIPair], path: Path | str) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        for p in pairs:
            handle.write(json.dumps(asdict(p)) + "\n")
