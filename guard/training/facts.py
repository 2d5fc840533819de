"""Training pairs for the facts people goad a bot about (issue 42): single-valued persona facts and what is not a clash.

DNLI (Welleck et al. 2019) writes a persona sentence as a (relation, value) triple; two sentences that give a
single-valued relation (job, name, age, where one lives now, how many pets / children / siblings, diet) different
values contradict. The pair model sees words, and it is weakest exactly there (counts, names, ages, places), so
these pairs state such facts plainly and wordily, each kind with consistent twins:

* ``value-swap`` (contradiction): the same relation with another value, plain or wordy;
* ``restated`` (entailment): the same value in other words;
* ``kind-of`` (entailment / neutral): a kind of the same thing ("surgeon" after "doctor", WordNet's hyponyms);
* ``past-or-wish`` (neutral): "I lived in ... before", "Someday I want to get a ..." beside the present fact;
* ``agreeing-negation`` (entailment): "I'm not a doctor. I'm a nurse." after "I work as a nurse.";
* ``denial`` (contradiction): "I don't have any dogs." after "I have two dogs.";
* ``diet`` (contradiction / neutral): a meat dish (WordNet: a kind of meat or fish) after "I am a vegetarian";
* ``vague-amount`` (neutral): "a few dogs" after "two dogs".

Values are held out by value: each value belongs to train or dev by a hash of its text (``split_of``), so no job,
city, name, age or animal is in both; the dev side (``fact_pairs(split="dev")``) shows whether a detector learned
the relation rather than the words. Nothing of the fact-sheet issue's frozen probe set
(``guard/data/probe_facts.jsonl``) is used: its values are refused here (``PROBE_VALUES``) and its sentences
share no template with these (``tests/test_fact_training_pairs.py``).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from embedded.once import LoadedOnce
from guard.language import forms
from guard.language.forms import with_article
from guard.language.grammar import number_word
from guard.training.labels import LabelledPair

#: every value the frozen probe set uses (guard/data/probe_facts.jsonl's facts, their contradictions and twins):
#: never a training value (the test reads the probe file and checks this list covers it)
PROBE_VALUES = frozenset({
    "margaret", "maggie", "beatrice", "tobias", "leonard", "ingrid", "rosalind", "rafael", "dominic",
    "34", "61", "71", "26", "19", "43", "58", "32",
    "lisbon", "helsinki", "toronto", "chicago", "montreal", "nairobi", "johannesburg", "melbourne", "auckland",
    "denver", "phoenix", "glasgow", "dublin", "manila", "jakarta", "santiago", "montevideo", "krakow", "prague",
    "pharmacist", "carpenter", "architect", "bus driver", "firefighter", "accountant", "librarian", "dentist",
    "physician", "mechanic", "orthopedic surgeon", "surgeon", "electrician", "lawyer", "musician",
    "cat", "horse", "parrot", "rabbit", "goat", "terrier",
    "pork", "pork chop", "salmon", "bacon", "cheese", "cheddar", "turkey", "lentil", "halloumi", "chickpea",
    "guitar", "violin", "hiking", "baking", "plane", "swim", "pickup truck",
})

NAMES = ("Olivia", "Ethan", "Sofia", "Lucas", "Amelia", "Noah", "Chloe", "Mason", "Harper", "Logan", "Elena",
         "Oscar", "Nina", "Victor", "Clara", "Hugo", "Alice", "Felix", "Maya", "Jasper", "Ruby", "Arthur",
         "Iris", "Simon", "Lena", "Theo", "Nora", "Miles", "Ada", "Caleb", "Zoe", "Isaac", "Hazel", "Owen",
         "Vera", "Ivan", "Greta", "Marco", "Leah", "Jonah", "Paula", "Kofi", "Aisha", "Hiro", "Priya", "Diego",
         "Fatima", "Sven", "Lucia", "Omar", "Yuki", "Mateo", "Anika", "Bruno", "Carmen", "Emil", "Freya",
         "Gustav", "Helen", "Jakob", "Kira", "Luis", "Mina", "Nils", "Pablo", "Rosa", "Tariq", "Ursula")
#: everyday jobs (the words people say); WordNet gives their kinds (``values_for``)
JOBS = ("doctor", "nurse", "teacher", "engineer", "scientist", "writer", "artist", "cook", "chef", "soldier",
        "farmer", "police officer", "salesman", "clerk", "programmer", "designer", "journalist", "photographer",
        "pilot", "taxi driver", "truck driver", "dancer", "singer", "actor", "baker", "plumber", "waiter", "waitress",
        "cashier", "secretary", "banker", "psychologist", "therapist", "professor", "nanny", "gardener", "tailor",
        "barber", "butcher", "judge", "priest", "sailor", "miner", "janitor", "security guard", "hairdresser",
        "translator", "editor", "painter", "manager", "receptionist", "bartender", "cleaner", "fisherman",
        "paramedic", "social worker", "chemist", "biologist", "physicist", "economist", "novelist", "poet",
        "sculptor", "detective", "zookeeper", "florist", "jeweler", "welder", "roofer", "locksmith", "postman",
        "courier", "tour guide", "flight attendant", "lifeguard", "coach", "nutritionist", "optician", "surveyor",
        "midwife", "rancher", "shepherd", "beekeeper", "brewer", "potter", "web developer", "data analyst")
#: hyponyms WordNet lists that are not jobs a person would name
NOT_KINDS = frozenset({"quack", "extern", "classic", "classicist", "symbolist", "stylist", "star", "voice",
                       "ordinary", "father", "cannon fodder", "redcoat", "pistoleer", "color bearer", "wingman",
                       "demonstrator", "missionary", "contributor", "tragedian", "gothic romancer", "folk writer",
                       "regius professor", "naprapath", "electrotherapist", "confessor"})
COUNT_NOUNS = {"pet": ("dog", "hamster", "goldfish", "turtle", "snake", "lizard", "chicken", "guinea pig",
                       "ferret", "canary", "pony", "tortoise", "gerbil", "duck", "sheep", "cow"),
               "child": ("kid", "son", "daughter", "child"),
               "sibling": ("brother", "sister", "sibling")}
#: counts up to this are sometimes written as words ("three dogs"), larger ones always in digits
SPELLED_UP_TO = 12
#: this builder's pets whose plural is the noun itself (``forms.plural`` writes the regular plural, as the persona
#: recipe's shipped data and the fact sheet's table have it)
SAME_IN_PLURAL = frozenset({"sheep", "goldfish"})
FILLERS = ("", "", "Oh, ", "Well, ", "Haha, ", "Honestly, ", "To be honest, ", "Ah, ", "Hmm, ")
TAILS = ("", "", " How about you?", " What about you?", " It keeps me busy.", " Life is good.",
         " I can't complain.", " Do you?")


def split_of(value: str, dev_share: float = 0.2) -> str:
    """``train`` or ``dev`` for a value, fixed by its text alone: a value is in one split only."""
    digest = hashlib.sha1(value.lower().encode()).digest()
    return "dev" if digest[0] / 256 < dev_share else "train"


def allowed(value: str) -> bool:
    low = value.lower()
    return low not in PROBE_VALUES and not any(word in PROBE_VALUES for word in low.split())


# ------------------------------------------------------------------------------------------- values
@dataclass(frozen=True)
class Values:
    """Values of each relation for one split (WordNet where it has them, short lists where it does not)."""

    jobs: tuple[str, ...]
    kinds: tuple[tuple[str, str], ...]   # (general job, a kind of it)
    related: frozenset[tuple[str, str]]  # jobs one of which is a kind of the other (never a value swap)
    cities: tuple[str, ...]
    names: tuple[str, ...]
    ages: tuple[int, ...]
    pets: tuple[str, ...]
    meats: tuple[str, ...]
    veggie_dishes: tuple[str, ...]


def _lemma_words(synset, min_count: int) -> list[str]:
    out = []
    for lemma in synset.lemmas()[:1]:
        word = lemma.name().replace("_", " ")
        if (all(part.isalpha() for part in word.split()) and word.islower() and len(word.split()) <= 2
                and len(word) <= 18 and lemma.count() >= min_count):
            out.append(word)
    return out


#: each split's values, read from WordNet once per process (a few seconds each; train and dev)
_VALUES = LoadedOnce(limit=2)


def values_for(split: str) -> Values:
    """The values of ``split`` (``train`` or ``dev``: ``split_of``), read once per process."""
    return _VALUES.get(("fact values from WordNet", split), lambda: _read_values(split))


def _read_values(split: str) -> Values:
    import embedded

    wn = embedded.wordnet()
    person = wn.synset("person.n.01")
    jobs: set[str] = set()
    kinds: set[tuple[str, str]] = set()
    above: dict[str, set] = {}
    for job in JOBS:
        synsets = [s for s in wn.synsets(job.replace(" ", "_"), pos="n")
                   if person in s.closure(lambda x: x.hypernyms())]
        if not synsets:
            continue  # WordNet does not know it as a kind of person: not a job here
        jobs.add(job)
        above[job] = set(synsets[0].closure(lambda x: x.hypernyms())) | {synsets[0]}
        for hypo in synsets[0].closure(lambda x: x.hyponyms(), depth=2):
            lemma = hypo.lemmas()[0]
            kind = lemma.name().replace("_", " ")
            if (lemma.count() >= 1 and kind.replace(" ", "").isalpha() and kind.islower()
                    and kind not in NOT_KINDS and len(kind.split()) <= 2):
                kinds.add((job, kind))
    cities = {lemma.name().replace("_", " ") for root in ("city.n.01", "national_capital.n.01")
              for syn in wn.synset(root).instance_hyponyms() for lemma in syn.lemmas()[:1]}
    cities = {c for c in cities if c.replace(" ", "").isalpha() and c[0].isupper() and len(c.split()) <= 2}
    meats = {w for root in ("meat.n.01", "fish.n.02", "poultry.n.02")
             for syn in wn.synset(root).closure(lambda s: s.hyponyms(), depth=2) for w in _lemma_words(syn, 0)}
    veggie = {w for root in ("vegetable.n.01", "pasta.n.02", "salad.n.01", "soup.n.01")
              for syn in wn.synset(root).closure(lambda s: s.hyponyms(), depth=1) for w in _lemma_words(syn, 0)}
    veggie -= meats

    def keep(items):
        return tuple(sorted(v for v in items if allowed(v) and split_of(v) == split))

    related = frozenset((a, b) for a in above for b in above
                        if a != b and (above[a] & {wn.synsets(b.replace(" ", "_"), pos="n")[0]}
                                       or above[b] & {wn.synsets(a.replace(" ", "_"), pos="n")[0]}))
    ages = tuple(a for a in range(16, 90) if allowed(str(a)) and split_of(str(a)) == split)
    return Values(jobs=keep(jobs), kinds=tuple(sorted((g, k) for g, k in kinds if allowed(g) and allowed(k)
                                                      and split_of(g) == split and g != k and k not in jobs)),
                  related=related, cities=keep(cities), names=keep(NAMES), ages=ages, pets=keep(COUNT_NOUNS["pet"]),
                  meats=keep(meats), veggie_dishes=keep(veggie))


# ------------------------------------------------------------------------------------------- wording
def plural(noun: str) -> str:
    return noun if noun in SAME_IN_PLURAL else forms.plural(noun)


def count_words(n: int, noun: str, rng: random.Random) -> str:
    number = number_word(n) if n <= SPELLED_UP_TO and rng.random() < 0.6 else str(n)
    return f"{number} {noun if n == 1 else plural(noun)}"


def _say(rng: random.Random, options: Sequence[str]) -> str:
    """One of ``options``, sometimes opened the way people open a chat message ("Oh, i have ..." lower-cased)."""
    text = rng.choice(list(options))
    filler = rng.choice(FILLERS)
    if filler and not text.startswith(("I ", "I'")):
        text = text[0].lower() + text[1:]
    return filler + text


# A relation's sentences: plain (one clause) and wordy (a reason, a time, a place around the fact).
def job_sentence(job: str, rng: random.Random) -> str:
    a_job = with_article(job)
    return _say(rng, (f"I work as {a_job}.", f"I'm {a_job}.", f"I am {a_job} by trade.", f"My job? I'm {a_job}.",
                      f"I've been working as {a_job} for about {rng.randint(2, 25)} years now.",
                      f"For a living I'm {a_job}, and most weeks it keeps me on my feet.",
                      f"I make my money as {a_job}, it pays the bills.",
                      f"Being {a_job} is what I do all day, and I mostly enjoy it."))


def name_sentence(name: str, rng: random.Random) -> str:
    return _say(rng, (f"My name is {name}.", f"I'm {name}.", f"Call me {name}.",
                      f"Everyone I know calls me {name}, it's the name on my passport too.",
                      f"The name's {name}, pleased to meet you.",
                      f"I go by {name}, my mother picked it before I was born."))


def age_sentence(age: int, rng: random.Random) -> str:
    return _say(rng, (f"I am {age} years old.", f"I'm {age}.", f"I'm {age} years old.",
                      f"I turned {age} a few months ago and I'm still getting used to it.",
                      f"I'll be honest, I'm {age} and I feel every one of those years.",
                      f"My age? {age}, and not a day older."))


def city_sentence(city: str, rng: random.Random) -> str:
    return _say(rng, (f"I live in {city}.", f"I'm living in {city}.", f"I'm based in {city}.",
                      f"I've got an apartment in {city}, that's where I live these days.",
                      f"These days I live in {city}, close to the centre.",
                      f"My home is in {city}, I rent a small place near the park."))


def count_sentence(n: int, noun: str, rng: random.Random) -> str:
    many = count_words(n, noun, rng)
    return _say(rng, (f"I have {many}.", f"I've got {many}.", f"I own {many}.",
                      f"At home I have {many} and they keep me busy.",
                      f"I have {many}, which is plenty for me.",
                      f"Right now I keep {many} at home, all mine."))


def family_sentence(n: int, noun: str, rng: random.Random) -> str:
    many = count_words(n, noun, rng)
    return _say(rng, (f"I have {many}.", f"I've got {many}.", f"I have {many} and I love them to bits.",
                      f"My family? I have {many}, we're very close.",
                      f"I've got {many}, and we see each other every weekend."))


# ------------------------------------------------------------------------------------------- pair kinds
Maker = Callable[[random.Random, Values], tuple[str, str, str] | None]


def _two(rng: random.Random, pool: Sequence):
    first, second = rng.sample(list(pool), 2)
    return first, second


def value_swap(rng: random.Random, v: Values) -> tuple[str, str, str] | None:
    relation = rng.choice(("job", "name", "age", "city", "pet", "child", "sibling"))
    if relation == "job":
        a, b = _two(rng, v.jobs)
        if (a, b) in v.related or (a, b) in v.kinds or (b, a) in v.kinds:
            return None
        return job_sentence(a, rng), job_sentence(b, rng), "contradiction"
    if relation == "name":
        a, b = _two(rng, v.names)
        return name_sentence(a, rng), name_sentence(b, rng), "contradiction"
    if relation == "age":
        a, b = _two(rng, v.ages)
        return age_sentence(a, rng), age_sentence(b, rng), "contradiction"
    if relation == "city":
        a, b = _two(rng, v.cities)
        return city_sentence(a, rng), city_sentence(b, rng), "contradiction"
    a, b = _two(rng, range(1, 13))
    if relation == "pet":
        noun = rng.choice(v.pets)
        return count_sentence(a, noun, rng), count_sentence(b, noun, rng), "contradiction"
    noun = rng.choice(COUNT_NOUNS[relation])
    return family_sentence(a, noun, rng), family_sentence(b, noun, rng), "contradiction"


def restated(rng: random.Random, v: Values) -> tuple[str, str, str] | None:
    relation = rng.choice(("job", "name", "age", "city", "pet", "family"))
    if relation == "job":
        job = rng.choice(v.jobs)
        return job_sentence(job, rng), job_sentence(job, rng), "entailment"
    if relation == "name":
        name = rng.choice(v.names)
        return name_sentence(name, rng), name_sentence(name, rng), "entailment"
    if relation == "age":
        age = rng.choice(v.ages)
        return age_sentence(age, rng), age_sentence(age, rng), "entailment"
    if relation == "city":
        city = rng.choice(v.cities)
        return city_sentence(city, rng), city_sentence(city, rng), "entailment"
    n = rng.randint(1, 12)
    if relation == "pet":
        noun = rng.choice(v.pets)
        return count_sentence(n, noun, rng), count_sentence(n, noun, rng), "entailment"
    noun = rng.choice(COUNT_NOUNS[rng.choice(("child", "sibling"))])
    return family_sentence(n, noun, rng), family_sentence(n, noun, rng), "entailment"


def kind_of(rng: random.Random, v: Values) -> tuple[str, str, str] | None:
    if not v.kinds:
        return None
    general, kind = rng.choice(v.kinds)
    if rng.random() < 0.5:  # the kind first: the general job follows from it
        return job_sentence(kind, rng), job_sentence(general, rng), "entailment"
    return job_sentence(general, rng), job_sentence(kind, rng), "neutral"


def past_or_wish(rng: random.Random, v: Values) -> tuple[str, str, str] | None:
    kind = rng.choice(("city-past", "city-grew", "city-wish", "job-past", "job-wish", "pet-wish", "pet-past"))
    if kind.startswith("city"):
        now, other = _two(rng, v.cities)
        said = {"city-past": (f"I lived in {other} before, but I moved away a while ago.",
                              f"Years ago I lived in {other}.", f"I lived in {other} until a few years back."),
                "city-grew": (f"I grew up in {other}.", f"I'm originally from {other}.",
                              f"I was born in {other} and spent my childhood there."),
                "city-wish": (f"I'd love to live in {other} one day.", f"Someday I hope to move to {other}.",
                              f"My dream is to live in {other} when I retire.")}[kind]
        return city_sentence(now, rng), _say(rng, said), "neutral"
    if kind.startswith("job"):
        now, other = _two(rng, v.jobs)
        an_other = with_article(other)
        said = ((f"I used to be {an_other} before this.", f"Back in my twenties I worked as {an_other}.",
                 f"I was {an_other} for a few years, a long time ago.") if kind == "job-past" else
                (f"I've always wanted to be {an_other}.", f"One day I'd like to become {an_other}.",
                 f"If I could start over I'd train as {an_other}."))
        return job_sentence(now, rng), _say(rng, said), "neutral"
    a_pet = with_article(rng.choice(v.pets))
    if kind == "pet-wish":
        return (_say(rng, ("I don't have any pets.", "I have no pets at the moment.")),
                _say(rng, (f"I hope to adopt {a_pet} someday.", f"Someday I want to get {a_pet}.")), "neutral")
    return (_say(rng, ("I don't have any pets now.", "I have no pets these days.")),
            _say(rng, (f"I used to have {a_pet} when I was little.", f"As a kid I had {a_pet}.")), "neutral")


def agreeing_negation(rng: random.Random, v: Values) -> tuple[str, str, str] | None:
    kind = rng.choice(("job", "city", "name"))
    if kind == "job":
        real, other = _two(rng, v.jobs)
        not_this, but_this = with_article(other), with_article(real)
        said = (f"I'm not {not_this}. I'm {but_this}.", f"No, I'm not {not_this}, I work as {but_this}.",
                f"Not {not_this}, no. I'm {but_this}.")
        return job_sentence(real, rng), _say(rng, said), "entailment"
    if kind == "city":
        real, other = _two(rng, v.cities)
        said = (f"I don't live in {other}. I live in {real}.", f"No, not {other}, I'm in {real}.")
        return city_sentence(real, rng), _say(rng, said), "entailment"
    real, other = _two(rng, v.names)
    said = (f"My name isn't {other}, it's {real}.", f"No, I'm not {other}. I'm {real}.")
    return name_sentence(real, rng), _say(rng, said), "entailment"


def denial(rng: random.Random, v: Values) -> tuple[str, str, str] | None:
    kind = rng.choice(("pet", "job", "child", "sibling", "diet"))
    if kind == "pet":
        noun = rng.choice(v.pets)
        fact = count_sentence(rng.randint(1, 6), noun, rng)
        said = (f"I don't have any {plural(noun)}.", f"I've never had {with_article(noun)}.", "I don't have any pets.",
                f"No {plural(noun)} for me, never.", "I have no pets at all.")
    elif kind == "job":
        job = rng.choice(v.jobs)
        fact = job_sentence(job, rng)
        said = (f"I'm not {with_article(job)}.", f"I have never worked as {with_article(job)}.",
                f"I'm not {with_article(job)} and never was.")
    elif kind in ("child", "sibling"):
        noun = rng.choice(COUNT_NOUNS[kind])
        fact = family_sentence(rng.randint(1, 5), noun, rng)
        said = (("I don't have any kids.", "I have no children.", "I've never had children.")
                if kind == "child" else ("I'm an only child.", "I don't have any brothers or sisters.",
                                         "I have no siblings."))
    else:
        diet = rng.choice(("vegetarian", "vegan"))
        fact = _say(rng, (f"I am {with_article(diet)}.", f"I'm {diet}.", f"I've been {diet} for years."))
        said = (f"I'm not {with_article(diet)}.", f"I'm not {diet}, I eat everything.", "I eat meat every day.")
    return fact, _say(rng, said), "contradiction"


def diet(rng: random.Random, v: Values) -> tuple[str, str, str] | None:
    which = rng.choice(("vegetarian", "vegan"))
    fact = _say(rng, (f"I am {with_article(which)}.", f"I'm {which}.", f"I don't eat meat, I'm {which}.",
                      f"I've been {which} since college."))
    if rng.random() < 0.6:
        meat = rng.choice(v.meats)
        said = (f"My favorite dinner is {meat}.", f"I had {meat} for dinner last night.", f"I love eating {meat}.",
                f"Nothing beats a plate of {meat} on a Sunday.", f"I cook {meat} at least twice a week.")
        return fact, _say(rng, said), "contradiction"
    veg = rng.choice(v.veggie_dishes)
    said = (f"My favorite dinner is {veg}.", f"I had {veg} for dinner last night.", f"I love eating {veg}.",
            f"I cook {veg} at least twice a week.")
    return fact, _say(rng, said), "neutral"


def vague_amount(rng: random.Random, v: Values) -> tuple[str, str, str] | None:
    noun = rng.choice(v.pets)
    n = rng.randint(2, 5)
    said = (f"I have a few {plural(noun)}.", f"I have some {plural(noun)}.", f"I've got a couple of {plural(noun)}.",
            f"I have {plural(noun)}, yes.")
    return count_sentence(n, noun, rng), _say(rng, said), "neutral"


KINDS: dict[str, tuple[Maker, float]] = {
    "value-swap": (value_swap, 0.26), "restated": (restated, 0.16), "kind-of": (kind_of, 0.08),
    "past-or-wish": (past_or_wish, 0.14), "agreeing-negation": (agreeing_negation, 0.1), "denial": (denial, 0.12),
    "diet": (diet, 0.09), "vague-amount": (vague_amount, 0.05),
}


def fact_pairs(count: int, seed: int = 0, split: str = "train") -> list[LabelledPair]:
    """``count`` pairs of the kinds above over ``split``'s values, each in either order where the label allows it
    (contradiction and neutral are symmetric enough here; entailment keeps its direction), a bot-like tail
    sometimes added to the second sentence."""
    rng = random.Random(seed)
    values = values_for(split)
    names, weights = list(KINDS), [w for _, w in KINDS.values()]
    made: list[LabelledPair] = []
    while len(made) < count:
        kind = rng.choices(names, weights)[0]
        got = KINDS[kind][0](rng, values)
        if got is None:
            continue
        premise, hypothesis, label = got
        if label == "contradiction" and rng.random() < 0.5:
            premise, hypothesis = hypothesis, premise
        if rng.random() < 0.3:
            hypothesis += rng.choice(TAILS)
        made.append(LabelledPair(premise, hypothesis.strip(), label, f"facts-{kind}"))
    return made
