"""The bot's fact sheet: what it has said about itself, as DNLI's (relation, value) triples, and the clashes.

Welleck et al. (2019, DNLI, ``papers/002_*``) write persona sentences as triples; two sentences whose relation is
single-valued but whose values differ contradict. The NLI pair model sees words, and counts, names, ages and places
are where it is weakest ("I have a team of 12 dogs." vs "I have two dogs."), so the guard keeps the facts the bot
stated, read from its persona and every bot turn with spaCy's parse (``guard.language.grammar``) and short trigger lexicons
per relation, and a candidate that gives a single-valued fact another value clashes with the sheet.

Relations: name, age, where it lives now, where it grew up, job, how many of something it has (pets, children,
siblings), diet, what it says it never did or does not have, and the instruments it plays. Each fact keeps the turn
it came from and the sentence in its own words. Not a clash: the past and wishes ("I used to live in ...",
"originally from ...", "I'd love to have a pet one day"), a kind of the same thing (WordNet: "orthopedic surgeon"
after "physician", "vegan" after "vegetarian"), a second value where a fact is not single-valued (instruments: "I
also play the piano"; hobbies and likes are not read), the fact restated (a reply that gives the sheet's value, or a
kind of it, beside another gives the other as an alias: "It's Margaret, call me Maggie"), a vague amount ("a few
dogs": no clash, but no support either), a second kind of thing ("two dogs and a cat" after "two dogs": the sheet
had no cat count). A count is whole where it is meant whole: a persona line's "a little brother" is one brother, a
list of what the bot has ("a cat and a dog") is all of them, "a whole team of dogs" is at least three; the whole
answer to "What instruments do you play?" leaves out what it does not name. One reply that gives a single-valued fact
two values ("My age is 32. I'm 34 years old.") clashes with itself (``own_clashes``), as does one that names a pet and
then calls it another kind of animal ("a dog named Max. He's a big cat."). A food the bot says it never eats ("I never
eat cheese") clashes with eating it or a kind of it (parmesan); "I'm a young man" is an age from 13 to 39.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from embedded.once import BoundedCache
from guard.language import grammar
from guard.language.forms import plural
from guard.vocabulary import PremiseSource


class Relation(StrEnum):
    """What a fact is about (DNLI's relation)."""

    NAME = "name"
    AGE = "age"
    LIVES_IN = "lives in"
    GREW_UP = "grew up in"
    JOB = "job"
    COUNT = "how many"  # how many of ``Fact.thing`` (dogs, children, brothers)
    DIET = "diet"
    DOES = "does"  # an activity it does, or (``holds`` False) never did / does not do (``Fact.thing``)
    PLAYS = "plays"  # an instrument it plays: not single-valued ("I play the guitar and the piano")
    PET_NAME = "pet name"  # the name of a pet of kind ``Fact.thing`` ("a tortoise named Pebble")


#: what a vegetarian does not eat, and what a vegan does not eat besides
MEAT_ROOTS = ("meat.n.01", "fish.n.02", "poultry.n.02", "seafood.n.01")
ANIMAL_PRODUCT_ROOTS = ("dairy_product.n.01", "egg.n.02", "honey.n.01")
DIETS = ("vegetarian", "vegan", "pescatarian")
#: the diet fact of a food the speaker says it never eats ("I never eat cheese": ``Fact.thing`` cheese)
AVOIDS = "avoids"
#: "I'm a young man": the age a person who calls themselves young gives (13 to 39), against an age outside it
_YOUNG_PEOPLE = {"man", "woman", "guy", "girl", "boy", "lady", "lad", "gal", "fellow", "person", "adult", "kid"}
YOUNG = (13, 39)
_EAT_VERBS = {"eat", "love", "like", "enjoy", "have", "cook", "grill", "order", "make", "devour", "adore", "crave",
              "munch", "prefer", "fancy", "barbecue", "roast", "fry", "bake"}
_FAVOURITE = re.compile(r"\bfavou?rite\s+(?:dish|meal|food|dinner|lunch|breakfast|thing to eat)\b", re.IGNORECASE)
_VAGUE = {"few", "several", "some", "couple", "bunch", "plenty", "numerous", "various"}
#: amounts that say more than a couple ("many dogs", "lots of cats", "a whole team of dogs"): at least three
_MANY = {"many", "lots", "lot", "tons", "loads", "dozens", "hundreds", "team", "pack", "herd", "army", "horde",
         "crowd", "flock", "zoo", "menagerie"}
MANY = 3
#: words that make a list of counted things open ("a dog named Max and another one"): not the whole count
_OPEN_LIST = {"another", "other", "others", "more", "also", "too", "including", "like", "such"}
#: "I'm an only child" (also "I'm not only an only child but also a father": "not only" affirms), "no siblings"
_ONLY_CHILD = re.compile(r"\b(?:i'm|i am|i was)\s+(?:not\s+only\s+)?(?:an?\s+)?only child\b|"
                         r"\bno (?:brothers or sisters|siblings)\b", re.IGNORECASE)
#: "I'm not an only child": the speaker has a brother or sister
_NOT_ONLY_CHILD = re.compile(r"\b(?:i'm|i am)\s+not\s+(?:an?\s+)?only child\b", re.IGNORECASE)
#: "I'm (so) lucky to have a dog": an adjective of luck or gladness the speaker is, with "to have" after it, says the
#: speaker has the thing ("I'm ready to have kids", "afraid to have a dog" do not)
_GLAD = {"lucky", "glad", "happy", "proud", "blessed", "fortunate", "thankful", "grateful"}
#: a "never" fact's activity under one name: "been on a plane" is flying
_ACTIVITY = {("be", "plane"): "fly", ("be", "airplane"): "fly", ("take", "flight"): "fly", ("board", "plane"): "fly",
             ("fly", ""): "fly", ("learn", "swim"): "swim", ("swim", ""): "swim", ("marry", ""): "marry",
             ("be", "married"): "marry", ("get", "married"): "marry", ("own", "car"): "own a car",
             ("have", "car"): "own a car", ("smoke", ""): "smoke"}
#: a job WordNet has no noun for: "I'm a stay at home mom" (spaCy parses "stay" as the noun, or as a verb inside "dad")
_STAY_AT_HOME = re.compile(r"\bstay[- ]at[- ]home[- ](?P<who>mom|mum|mother|mama|dad|father|papa|parent)\b",
                           re.IGNORECASE)
_LIVE_VERBS = {"live", "reside", "stay"}
_HOME_NOUNS = {"home", "house", "flat", "apartment", "place", "condo"}


@dataclass(frozen=True)
class Fact:
    """One thing the bot said about itself: the relation, its value as said (``value``), what a count or a "never"
    is about (``thing``), the range a count or age gives (``low``..``high``, None: open), whether it is affirmed
    (``holds``: False for "I'm not a doctor"), vague ("a few dogs") and when it holds (``time``: present, past,
    wish); where it came from (persona line or turn, and the sentence in its own words)."""

    relation: Relation
    value: str
    source: PremiseSource
    turn_id: int
    said: str
    thing: str = ""
    low: int | None = None
    high: int | None = None
    holds: bool = True
    vague: bool = False
    time: str = grammar.PRESENT
    #: the speaker gives the whole of a many-valued fact: "I only play the guitar", or the answer to "What
    #: instruments do you play?" (a value left out of it is denied)
    exhaustive: bool = False
    #: the answer to "Do you have any pets?" (or siblings, children) names the whole of them: this count is one of
    #: them, ``whole_of`` the kind asked about ("pet"), ``among`` every thing the answer counted of it; another kind
    #: said later ("my cat" after "I have two parakeets.") is a clash (a persona line alone closes no set)
    whole_of: str = ""
    among: tuple[str, ...] = ()

    @property
    def where(self) -> str:
        """"persona" or "turn N", for the sheet's table."""
        return "persona" if self.source == PremiseSource.PERSONA else f"turn {self.turn_id}"

    @property
    def counted(self) -> str:
        """What a count counts, in the plural, as the sheet names it ("dogs" for "I have two dogs.")."""
        return plural(self.thing)

    @property
    def whole_words(self) -> str:
        """What a whole set says ("of its pets, only tortoises"), for the sheet and the clash's reason; "" for none."""
        if not self.whole_of:
            return ""
        return f"of its {plural(self.whole_of)}, only {' and '.join(plural(t) for t in self.among)}"

    @property
    def shown(self) -> str:
        """The value as the sheet shows it: "dogs 2", "not a doctor", "job nurse", "tortoises at least 1 (of its
        pets, only tortoises)"."""
        if self.relation == Relation.COUNT:
            whole = f" ({self.whole_words})" if self.whole_of else ""
            return f"{self.counted} {'some' if self.vague else self.value}{whole}"
        if self.relation == Relation.DOES:
            return self.thing if self.holds else f"never: {self.thing}"
        if self.relation == Relation.PET_NAME:
            return f"{self.thing} {self.value}"
        if self.relation == Relation.DIET and self.thing:  # "eats parmesan", "avoids cheese"
            return f"{self.value} {self.thing}"
        return self.value if self.holds else f"not {self.value}"


@dataclass(frozen=True)
class FactClash:
    """A candidate's fact that gives a single-valued fact of the sheet another value (or denies it), or (``within``)
    two facts of one candidate that give one single-valued fact two values (``own_clashes``)."""

    relation: Relation
    sheet: Fact  # what the bot said before (persona or an earlier turn); within: the candidate's first value
    said: Fact  # what the candidate says
    within: bool = False  # both values from the one candidate ("My age is 32. I'm 34 years old.")

    @property
    def why(self) -> str:
        """In words: "job: nurse (persona) vs teacher", "age: 32 vs 34 (the same reply)"."""
        if self.within:
            return f"{self.relation}: {self.sheet.shown} vs {self.said.shown} (the same reply)"
        return f"{self.relation}: {self.sheet.shown} ({self.sheet.where}) vs {self.said.shown}"


@dataclass(frozen=True)
class FactSheet:
    """The facts a speaker has stated about itself, oldest first."""

    facts: tuple[Fact, ...] = ()

    def current(self) -> tuple[Fact, ...]:
        """The facts that hold now (not the past or wishes), the persona's first: what the chat's sheet shows."""
        return tuple(f for f in self.facts if f.time == grammar.PRESENT)

    def clashes(self, said: Sequence[Fact]) -> tuple[FactClash, ...]:
        """Every fact of the sheet that ``said`` (one candidate's facts) contradicts, the persona's first. A fact of an
        earlier turn that itself gave a persona fact another value is set aside (the persona outranks the drift, as
        ``guard.judge.verdicts.PersonaSide`` does for the detector's evidence): going back to the persona is no clash."""
        out: list[FactClash] = []
        persona = [f for f in self.current() if f.source == PremiseSource.PERSONA]
        standing = [f for f in self.current() if f.source == PremiseSource.PERSONA
                    or not any(_clash(p, f, (f,)) for p in persona)]
        for new in said:
            if new.time != grammar.PRESENT or new.vague:
                continue
            for old in standing:
                if _clash(old, new, said):
                    out.append(FactClash(old.relation, old, new))
        seen: set[tuple] = set()
        unique = []
        for clash in sorted(out, key=lambda c: c.sheet.source != PremiseSource.PERSONA):
            key = (clash.sheet.source, clash.sheet.turn_id, clash.said.said, clash.relation)
            if key not in seen:
                seen.add(key)
                unique.append(clash)
        return tuple(unique)


#: the relations one reply cannot give two values of: a name may come with a nickname ("It's Margaret, call me
#: Maggie") and a person may hold two jobs ("I'm a doctor, but I'm also a teacher"); ages, homes, counts, diets do not
SINGLE_IN_ONE_REPLY = (Relation.AGE, Relation.LIVES_IN, Relation.GREW_UP, Relation.COUNT, Relation.DIET,
                       Relation.DOES, Relation.PLAYS)


def own_clashes(said: Sequence[Fact]) -> tuple[FactClash, ...]:
    """The clashes inside one candidate's facts (``read_facts`` of one reply): one single-valued fact given two values
    ("My age is 32. I'm 34 years old.", "I have no pets, but my dog ..."), each pair once, in the reply's order.
    Facts of the past or wishes and vague amounts are no values ("I'm 30, I was 20 then"); names and jobs are not
    read here (``SINGLE_IN_ONE_REPLY``). The sheet's own clashes (``FactSheet.clashes``) let a reply that gives the
    sheet's value beside another pass as an alias; this is where such a reply is caught."""
    facts = [f for f in said if f.relation in SINGLE_IN_ONE_REPLY and f.time == grammar.PRESENT and not f.vague]
    out: list[FactClash] = list(_pet_kind_clashes(said))
    seen: set[tuple] = set()
    for i, first in enumerate(facts):
        for second in facts[i + 1:]:
            key = (first.relation, first.thing, first.value, first.holds, second.thing, second.value, second.holds)
            if key not in seen and _clash(first, second, ()):
                seen.add(key)
                out.append(FactClash(first.relation, first, second, within=True))
    return tuple(out)


def _pet_kind_clashes(said: Sequence[Fact]) -> Iterator[FactClash]:
    """One pet given two kinds in one reply ("a dog named Max. He's a big cat.": ``_pet_kind_again``): the same name,
    kinds neither of which is the other or a kind of it (a golden retriever is a dog, a tortoise a turtle)."""
    named = [f for f in said if f.relation == Relation.PET_NAME and f.holds and f.time == grammar.PRESENT]
    for i, first in enumerate(named):
        for second in named[i + 1:]:
            if first.value.lower() == second.value.lower() and not grammar.same_kind(first.thing, second.thing):
                yield FactClash(Relation.PET_NAME, first, second, within=True)


# ------------------------------------------------------------------------------------------------ clashes
def persona_agreements(sheet: FactSheet, said: Sequence[Fact]) -> tuple[tuple[Fact, Fact], ...]:
    """The persona facts ``said`` (one candidate's facts) states again, as (persona fact, the candidate's fact) pairs:
    the same relation, the same way round, and the persona's value or a more specific one ("I work as a pediatric
    nurse." restates "I work as a nurse."; "I live in Montmartre, Paris" restates "I live in Paris."); a count or
    an age only with the very same number ("All six of my cats" read as "at least 2" restates no "two cats"); of the
    things a speaker does, only a "never" ("I have never been on a plane." again), since the sheet keeps no detail of
    what it does ("married for two years" is no restatement of "married for ten years"). The choice puts such a
    candidate with those a persona line entails (the persona supports it)."""
    out = []
    persona = [f for f in sheet.current() if f.source == PremiseSource.PERSONA and not f.vague]
    for new in said:
        if new.time != grammar.PRESENT or new.vague:
            continue
        for old in persona:
            if old.relation == new.relation and old.holds == new.holds and _gives_again(old, new):
                out.append((old, new))
    return tuple(out)


def _gives_again(old: Fact, new: Fact) -> bool:
    """Whether a candidate's fact gives a persona fact again (``persona_agreements``' rules)."""
    if old.relation in (Relation.COUNT, Relation.AGE):
        exact = old.low is not None and old.low == old.high == new.low == new.high
        return exact and (old.relation == Relation.AGE or old.thing == new.thing
                          or grammar.kind_of(new.thing, old.thing))
    if old.relation == Relation.DOES:
        return not old.holds and old.thing == new.thing
    if old.relation == Relation.JOB:
        return old.value.lower() == new.value.lower() or grammar.kind_of(new.value, old.value)
    return _same_value(old, new)


def _clash(old: Fact, new: Fact, said: Sequence[Fact]) -> bool:
    """Whether ``new`` (one of a candidate's facts, ``said``) contradicts the sheet's ``old``."""
    if old.vague:
        return False
    if old.relation == Relation.COUNT and new.relation == Relation.COUNT:
        return _count_clash(old, new)
    if old.relation == Relation.DOES and new.relation == Relation.DOES:
        return old.thing == new.thing and old.holds != new.holds
    if old.relation == Relation.DIET and new.relation == Relation.DIET:
        return _diet_clash(old, new)
    if old.relation == Relation.PLAYS and new.relation == Relation.PLAYS:
        return _plays_clash(old, new, said)
    if old.relation == Relation.PET_NAME and new.relation == Relation.PET_NAME:
        return _pet_name_clash(old, new, said)
    if old.relation != new.relation:
        return False
    same = _same_value(old, new)
    if old.holds and new.holds:
        if same:
            return False
        if old.relation == Relation.AGE:  # an age has no alias: "No, I am 58 years old. I'm 55 years old." clashes
            return not _ranges_meet(old, new)
        # the reply gives the sheet's value too: the other is an alias or a kind ("It's Margaret, call me Maggie");
        # a more general word is no restatement ("I'm a medical professional. Yes, I'm a doctor." after "nurse")
        return not any(f.relation == old.relation and f.holds and _restates(old, f) for f in said)
    if old.holds != new.holds:  # "I'm not a nurse." after "I work as a nurse."
        held, denied = (old, new) if old.holds else (new, old)
        return _denies(held, denied)
    return False


def _denies(held: Fact, denied: Fact) -> bool:
    """Whether denying ``denied`` denies ``held``: the same value, or (an occupation) a general word the held one is
    mainly a kind of ("not a doctor" after physician), never a word only another sense of it falls under ("not a
    pilot" after ferry captain) nor a kind of it ("not a paediatrician" after doctor)."""
    if held.relation == Relation.JOB:
        return held.value.lower() == denied.value.lower() or grammar.mainly_kind_of(held.value, denied.value)
    return _same_value(held, denied)


def _same_value(a: Fact, b: Fact) -> bool:
    if a.relation == Relation.AGE:
        return _ranges_meet(a, b)
    if a.relation == Relation.JOB:
        return grammar.same_kind(a.value, b.value)
    if a.relation in (Relation.LIVES_IN, Relation.GREW_UP):
        return _same_place(a.value, b.value)
    return a.value.lower() == b.value.lower()


def _restates(old: Fact, new: Fact) -> bool:
    """Whether ``new`` gives the sheet's value again: the same value, or (an occupation) a kind of it ("paediatric
    nurse" restates "nurse"; "medical professional" does not: a doctor is one too)."""
    if old.relation == Relation.JOB:
        return old.value.lower() == new.value.lower() or grammar.is_kind_of(new.value, [
            s.name() for s in grammar.synsets(old.value)])
    return _same_value(old, new)


def _plays_clash(old: Fact, new: Fact, said: Sequence[Fact]) -> bool:
    """Instruments are many-valued: another one is no clash ("I also play the piano"), unless the candidate gives
    the whole of what it plays without the sheet's ("I only play the guitar", or "Guitar and piano." to "What
    instruments do you play?"); a denial clashes with the same instrument affirmed."""
    if old.holds != new.holds:
        return old.value == new.value
    if not (old.holds and new.holds and new.exhaustive):
        return False
    return not any(f.relation == Relation.PLAYS and f.holds and f.value == old.value for f in said)


def _pet_name_clash(old: Fact, new: Fact, said: Sequence[Fact]) -> bool:
    """Another name for the only pet of its kind: "a big, happy tortoise named Ben" after "I have a tortoise named
    Pebble." (``old.low == old.high == 1``: the sentence that named it counted one of its kind). A name for a kind the
    speaker has more of is no clash ("my dog Bella" beside "Max" of two dogs), nor one for "my pet" (which pet is
    meant is not read), nor a reply that gives the sheet's name too ("Pebble, Ben to his friends")."""
    if not (old.holds and new.holds) or old.low != 1 or old.high != 1 or new.thing == "pet":
        return False
    if old.value.lower() == new.value.lower():
        return False
    if new.thing != old.thing and not grammar.kind_of(new.thing, old.thing):
        return False
    return not any(f.relation == Relation.PET_NAME and f.value.lower() == old.value.lower() for f in said)


def _same_place(a: str, b: str) -> bool:
    a_low, b_low = a.lower(), b.lower()
    if a_low == b_low or a_low.startswith(b_low + ",") or b_low.startswith(a_low + ","):
        return True
    a_parts, b_parts = a_low.replace(",", " ").split(), b_low.replace(",", " ").split()
    if a_parts and b_parts and a_parts[-1] != b_parts[-1]:
        # a name given down to its country ("Red Rock, Colorado, USA") is compared without it: read by its last word
        # WordNet would find Portland, Oregon in the USA, and take two homes for one
        a_parts, b_parts = _without_country(a_parts), _without_country(b_parts)
        a, b = " ".join(a_parts), " ".join(b_parts)
    shorter, longer = sorted((a_parts, b_parts), key=len)
    if longer[-len(shorter):] == shorter:  # a place named with the region it is in ("Brooklyn, New York" / "New York")
        return True
    if len(a_parts) > 1 and len(b_parts) > 1 and a_parts[-1] == b_parts[-1]:
        # two places in one region ("Ashton, Oregon" / "Portland, Oregon") are the same only if the places are:
        # WordNet knows neither whole name, and read by its last word each would be Oregon
        return _same_place(" ".join(a_parts[:-1]), " ".join(b_parts[:-1]))
    return grammar.same_kind(a, b)  # WordNet: a place inside the other (Brooklyn, New York)


def _without_country(parts: list[str]) -> list[str]:
    """A place's words without a last one that names a country, when more come before it."""
    return parts[:-1] if len(parts) > 1 and grammar.is_country(parts[-1]) else parts


def _ranges_meet(a: Fact, b: Fact) -> bool:
    lo = max(x for x in (a.low, b.low) if x is not None) if a.low is not None or b.low is not None else None
    hi_values = [x for x in (a.high, b.high) if x is not None]
    hi = min(hi_values) if hi_values else None
    return lo is None or hi is None or lo <= hi


def _count_clash(old: Fact, new: Fact) -> bool:
    if new.vague and new.holds:
        return False
    if _beyond_whole(old, new):
        return True
    if old.thing == new.thing or grammar.same_sense(old.thing, new.thing):
        return not _ranges_meet(old, new)
    if grammar.same_kind(old.thing, new.thing):
        # one is a kind of the other: "a poodle and a chihuahua mix" after "two dogs" gives one poodle among the two;
        # only more of the kind than of the whole clashes ("three poodles", or a poodle after "no dogs")
        general, specific = (old, new) if grammar.kind_of(new.thing, old.thing) else (new, old)
        if specific.exhaustive:  # the answer to "how many": the whole count
            return not _ranges_meet(old, new)
        return general.high is not None and (specific.low or 0) > general.high
    # none of a general thing against some of a kind of it: "no pets" / "two dogs", "an only child" / "a brother"
    if old.high == 0 and (new.low or 0) >= 1:
        return grammar.covers(old.thing, new.thing)
    if new.high == 0 and (old.low or 0) >= 1:
        return grammar.covers(new.thing, old.thing)
    return False


def _beyond_whole(old: Fact, new: Fact) -> bool:
    """Whether ``new`` has some of a thing the whole set ``old`` came from leaves out: "My cat is Kibo." after "Yes,
    I have a tortoise named Pebble." answered "Do you have any pets?"; a kind of a thing in the set is in it ("a
    rescue beagle" after "two dogs")."""
    if not old.whole_of or (new.low or 0) < 1 or not grammar.covers(old.whole_of, new.thing):
        return False
    return not any(counts_of(t, new.thing) for t in old.among)


def counts_of(held: str, asked: str) -> bool:
    """Whether a count of ``held`` says how many ``asked`` the speaker has: the same thing (a shared sense), one a
    kind of the other ("my beagle" is one of "two dogs"), or a kind ``asked`` covers ("two dogs" answers "any
    pets?")."""
    return grammar.same_kind(held, asked) or grammar.covers(asked, held)


def _diet_clash(old: Fact, new: Fact) -> bool:
    if AVOIDS in (old.value, new.value):  # a food it never eats: only eating that food, or a kind of it, clashes
        avoids, eats = (old, new) if old.value == AVOIDS else (new, old)
        return eats.value == "eats" and avoids.holds and eats.holds and (
            eats.thing == avoids.thing or grammar.kind_of(eats.thing, avoids.thing))
    if old.value == "eats" or new.value == "eats":  # someone who eats meat against a vegetarian / vegan
        diet, eats = (new, old) if old.value == "eats" else (old, new)
        if diet.value == "eats" or not diet.holds or not eats.holds:
            return False
        roots = MEAT_ROOTS + (ANIMAL_PRODUCT_ROOTS if diet.value == "vegan" else ())
        if diet.value == "pescatarian":
            roots = ("meat.n.01", "poultry.n.02")
        return eats.thing == "meat" or animal_food(eats.thing, roots)
    if old.holds and not new.holds:
        return grammar.same_kind(old.value, new.value) or new.value == "vegetarian"  # "I'm not a vegetarian"
    if new.holds and not old.holds:
        return grammar.same_kind(old.value, new.value)
    return False


# ------------------------------------------------------------------------------------------------ reading
def sheet_of(turns: Iterable, persona: Sequence[str], speaker: str) -> FactSheet:
    """The facts ``speaker`` stated: its persona lines first, then each of its turns (each read with the question
    before it, ``guard.language.answers``)."""
    facts: list[Fact] = []
    for i, line in enumerate(persona):
        if line.strip():
            facts += _persona_facts(line, i)
    for turn, before in _with_questions(turns):
        if turn.agent_id == speaker and turn.text.strip():
            facts += _turn_facts(turn.text, turn.turn_id, before)
    return FactSheet(tuple(facts))


def prepare(turns: Sequence, persona: Sequence[str]) -> None:
    """Read every turn's facts (each with the other speaker's turn before it) and the persona's ahead of the next
    judgement, as ``guard.judge.detector`` splits and embeds texts when they arrive: ``sheet_of`` then finds them cached."""
    for i, line in enumerate(persona):
        if line.strip():
            _persona_facts(line, i)
    for turn, before in _with_questions(turns):
        if turn.text.strip():
            _turn_facts(turn.text, turn.turn_id, before)


def _with_questions(turns: Iterable) -> Iterator[tuple]:
    """Each turn with the text it answers: the turn before it when another speaker said it, else None. One walk for
    ``sheet_of`` and ``prepare``, so the cache keys the one makes are the ones the other finds."""
    previous = None
    for turn in turns:
        yield turn, (previous.text if previous is not None and previous.agent_id != turn.agent_id else None)
        previous = turn


#: each earlier turn's facts, kept across turns: a chat reads every earlier bot turn again at every turn
_TURN_FACTS: BoundedCache = BoundedCache(grammar.PARSE_CACHE_LIMIT)


def _persona_facts(line: str, index: int) -> tuple[Fact, ...]:
    """One persona line's facts (cached beside the turns')."""
    return _TURN_FACTS.get_or_make((line, PremiseSource.PERSONA, index),
                                   lambda: read_facts(line, PremiseSource.PERSONA, index))


def _turn_facts(text: str, turn_id: int, before: str | None) -> tuple[Fact, ...]:
    """One turn's facts, read with the question before it (cached: facts are frozen, the reading is pure)."""
    from guard.language.answers import read_answer

    def read() -> tuple[Fact, ...]:
        reading = read_answer(before, text) if before is not None else None
        return read_facts(text, PremiseSource.HISTORY, turn_id, reading.statement if reading else None, before)

    return _TURN_FACTS.get_or_make((text, PremiseSource.HISTORY, turn_id, before), read)


#: a question that asks for the whole of what the speaker plays ("What instruments do you play?")
_ASKS_INSTRUMENTS = re.compile(r"\b(?:what|which)\b[^?]*\b(?:instruments?\b[^?]*\bplay|play\b[^?]*\binstruments?)\b",
                               re.IGNORECASE)


#: a question that asks for a whole count ("How many kids do you have?")
_ASKS_HOW_MANY = re.compile(r"\bhow many\b", re.IGNORECASE)


def read_facts(text: str, source: PremiseSource, turn_id: int, reading: str | None = None,
               question: str | None = None) -> tuple[Fact, ...]:
    """The facts one text states about its speaker (``reading``: the statement its answer makes with the question,
    read first: "Yes, I am." to "Aren't you a teacher?" is "I am a teacher."; ``question``: the other speaker's turn it
    answers, whose "What instruments do you play?" makes the instruments it names the whole of them)."""
    from guard.language.text import sentences

    pieces = ([reading] if reading else []) + [s for s in sentences(text) if not s.rstrip().endswith("?")]
    facts: list[Fact] = []
    for piece in pieces:
        said = text if piece is reading else piece
        facts += _sentence_facts(piece, said, source, turn_id)
        facts += _pet_kind_again(piece, said, source, turn_id, facts)
    if question and _ASKS_INSTRUMENTS.search(question):
        facts = [replace(f, exhaustive=True) if f.relation == Relation.PLAYS else f for f in facts]
    if question and _ASKS_HOW_MANY.search(question):  # "How many kids?" "One son.": the whole count, not a part
        facts = [replace(f, exhaustive=True) if f.relation == Relation.COUNT else f for f in facts]
    return tuple(_whole_sets(facts, question))


def _whole_sets(facts: list[Fact], question: str | None) -> list[Fact]:
    """The answer's counts marked as the whole set (``Fact.whole_of``) when ``question`` asks for every thing of a
    kind (``grammar.COVERS``: pets, animals, children, siblings: "Do you have any pets?", "How many kids?") and the
    answer names some of that kind, each with a count, in sentences with no word that leaves the list open
    ("another", "also", "too", "other": ``_OPEN_LIST``; "I'm more than happy to answer." beside them leaves it shut)."""
    kind = _asked_all_of(question) if question else ""
    if not kind:
        return facts
    of_kind = [f for f in facts if f.relation == Relation.COUNT and f.thing != kind and grammar.covers(kind, f.thing)]
    named = [f for f in of_kind if f.holds and f.time == grammar.PRESENT and not f.vague and (f.low or 0) >= 1]
    said = {w for f in named for w in re.findall(r"[a-z]+", f.said.lower())}  # the sentences that name them
    if not named or said & _OPEN_LIST:
        return facts
    among = tuple(dict.fromkeys(f.thing for f in of_kind))  # "my cat since he was a kitten" is one of them too
    return [replace(f, whole_of=kind, among=among) if f in named else f for f in facts]


def _asked_all_of(question: str) -> str:
    """The kind of thing a question asks the speaker for all of ("pet" for "Do you have any pets?" or "Any pets?",
    "child" for "How many kids do you have?"), "" when it asks for none that ``grammar.COVERS`` knows. Only a question
    about "you" counts: "I don't have any pets. Do you?" says what the asker has."""
    for sentence in grammar.parse(question).sents:
        if not sentence.text.rstrip().endswith("?"):
            continue
        for token in sentence:
            if token.lower_ not in ("any", "many") or token.head.pos_ != "NOUN" or token.head.i < token.i:
                continue
            verb = grammar.governing_verb(token.head)
            asks_you = not grammar.is_verb(verb) or any(c.dep_ == "nsubj" and c.lower_ == "you" for c in verb.children)
            word = token.head.lemma_.lower()
            kind = grammar.FAMILY.get(word, word)
            if asks_you and kind in grammar.COVERS:
                return kind
    return ""


def _sentence_facts(sentence: str, said: str, source: PremiseSource, turn_id: int) -> list[Fact]:
    doc = grammar.parse(sentence)

    def fact(relation: Relation, value: str, token=None, **extra) -> Fact:
        clause = _clause_text(token) if token is not None else sentence
        time = extra.pop("time", None) or grammar.time_of(clause)
        return Fact(relation, value, source, turn_id, said, time=time, **extra)

    out: list[Fact] = []
    lowered = sentence.lower()
    # name
    # a name said outright is the name now, whatever the rest of the sentence tells ("my name is Rosalind, I was
    # named after my grandmother")
    for m in grammar.NAME_SAID.finditer(sentence):
        out.append(fact(Relation.NAME, m.group("name"), time=grammar.PRESENT))
    for m in grammar.NAME_TALKED_TO.finditer(sentence):
        out.append(fact(Relation.NAME, m.group("name"), time=grammar.PRESENT))
    for m in grammar.NAME_GIVEN.finditer(sentence):
        token = _token_at(doc, m.start("name"))
        if token is not None and grammar.names_someone(token):
            out.append(fact(Relation.NAME, m.group("name")))
    # age
    for m in grammar.AGE.finditer(sentence):
        n = grammar.number_value(m.group("n"))
        if n is not None and 1 <= n <= 120:
            turned = "turn" in m.group(0).lower()
            out.append(fact(Relation.AGE, str(n), low=n, high=n, time=grammar.PRESENT if turned else None))
    for m in grammar.DECADE.finditer(sentence):
        base = grammar.DECADES[m.group("decade").lower()]
        # "I'm in my twenties" says the age now ("in my twenties" alone puts a clause in the past: "in my twenties I
        # lived in Rome")
        out.append(fact(Relation.AGE, f"in their {m.group('decade').lower()}", low=base, high=base + 9,
                        time=grammar.PRESENT))
    for m in _STAY_AT_HOME.finditer(sentence):
        out += _stay_at_home(doc, m, fact)
    if _ONLY_CHILD.search(sentence):
        out.append(fact(Relation.COUNT, "0", thing="sibling", low=0, high=0))
    elif _NOT_ONLY_CHILD.search(sentence):
        out.append(fact(Relation.COUNT, "at least 1", thing="sibling", low=1))
    persona = source == PremiseSource.PERSONA
    for token in doc:
        out += _token_facts(token, doc, fact, lowered, persona)
    out += _eaten(doc, sentence, fact)
    out += _pet_names(doc, sentence, fact, out)
    return out


def _token_at(doc, offset: int):
    """The token of ``doc`` that starts at character ``offset`` (where a pattern's group begins), or None."""
    return next((t for t in doc if t.idx == offset), None)


#: a pet named: "a tortoise named Pebble", "my big, happy dog called Max"; "my cat's name is Luna"; "my dog is named Rex"
_PET_NAMED = re.compile(r"\b(?i:a|an|one|my|our|the)\s+(?:[\w-]+,?\s+){0,3}?(?P<kind>[a-z]+)\s+(?i:named|called)\s+"
                        r"(?P<name>[A-Z][a-z]+)\b")
_PET_NAME_IS = re.compile(r"\b(?i:my|our)\s+(?P<kind>[a-z]+)'s\s+name\s+is\s+(?P<name>[A-Z][a-z]+)\b")
_PET_IS_NAMED = re.compile(r"\b(?i:my|our)\s+(?P<kind>[a-z]+)\s+is\s+(?i:named|called)\s+(?P<name>[A-Z][a-z]+)\b")


def is_pet_kind(word: str) -> bool:
    """Whether a noun names a kind of pet a name is given to: an animal by WordNet (``grammar.is_animal``) or "pet"."""
    return word == "pet" or grammar.is_animal(word)


def _pet_names(doc, sentence: str, fact, read: list[Fact]) -> list[Fact]:
    """The names the speaker gives its pets in one sentence (``_PET_NAMED``, ``_PET_NAME_IS``, ``_PET_IS_NAMED``):
    the kind a singular noun that names an animal (``grammar.is_animal``) or "pet"; a name that is no capitalised word
    ("called Fluffy" yes, "called it quits" no). When the sentence counted exactly one of that kind (``read``: "I have
    a tortoise named Pebble." as a persona line), the fact's ``low``..``high`` say so: it names the only one."""
    out: list[Fact] = []
    for pattern in (_PET_NAMED, _PET_NAME_IS, _PET_IS_NAMED):
        for m in pattern.finditer(sentence):
            token = _token_at(doc, m.start("kind"))
            kind = m.group("kind").lower()
            if token is None or token.tag_ != "NN" or not is_pet_kind(kind):
                continue
            one = any(f.relation == Relation.COUNT and f.thing == kind and f.holds and f.low == f.high == 1
                      for f in read)
            named = fact(Relation.PET_NAME, m.group("name"), token, thing=kind, low=1 if one else None,
                         high=1 if one else None)
            if all((f.thing, f.value) != (named.thing, named.value) for f in out):
                out.append(named)
    return out


#: the pronouns a reply goes on about a pet it named with ("a dog named Max. He's ...")
_PET_PRONOUNS = {"he", "she", "it"}


def _pet_kind_again(sentence: str, said: str, source: PremiseSource, turn_id: int, read: list[Fact]) -> list[Fact]:
    """A named pet's kind said again through its pronoun, in the reply that named it (``read``: the reply's facts so
    far, this sentence's included): "I have a dog named Max. He's a big cat." reads a pet name fact "cat Max" beside
    "dog Max", which ``own_clashes`` finds clash. The pronoun is read as the pet last named before it; only "he",
    "she" or "it" as the subject of a present "be" with a noun that names an animal ("He's a golden retriever"; "He's
    a good boy" names none, "He's a great pet" no other kind). What is read stays in the reply: a pronoun is not followed across turns."""
    named = [f for f in read if f.relation == Relation.PET_NAME and f.holds and f.time == grammar.PRESENT]
    if not named:
        return []
    doc = grammar.parse(sentence)
    out = []
    for verb in doc:
        if verb.lemma_ != "be" or verb.tag_ not in ("VBZ", "VBP") or grammar.negations(verb):
            continue
        subject = next(iter(grammar.subjects(verb)), None)
        if subject is None or subject.lower_ not in _PET_PRONOUNS:
            continue
        before = [f for f in named if f.said != sentence or _named_before(doc, f.value, subject.i)]
        if not before:
            continue
        pet = before[-1]
        # a compound names something else ("He's a big teddy bear")
        for attr in (c for c in verb.children if c.dep_ == "attr" and c.pos_ == "NOUN" and c.tag_ == "NN"
                     and not any(d.dep_ == "compound" for d in c.children)):
            kind = attr.lemma_.lower()
            # a word that covers the named kind says no other kind ("He's a great pet": WordNet files "pet" apart)
            if kind != pet.thing and grammar.is_animal(kind) and not grammar.covers(kind, pet.thing):
                out.append(Fact(Relation.PET_NAME, pet.value, source, turn_id, said, thing=kind))
    return out


def _named_before(doc, name: str, index: int) -> bool:
    """Whether ``name`` is said in ``doc`` before the token at ``index``."""
    return any(t.text == name.split()[0] for t in doc[:index])


def _stay_at_home(doc, match: re.Match, fact) -> list[Fact]:
    """"I am a stay at home mom" as a job ("stay-at-home mom"), when the speaker says it of themselves with "be" or
    "work" ("My sister is a stay at home mom" is the sister's); "I'm not ..." denies it."""
    token = _token_at(doc, match.start("who"))
    if token is None:
        return []
    verb = grammar.governing_verb(token)
    if verb.lemma_.lower() not in ("be", "work", "become") or not grammar.speakers_clause(verb) \
            or grammar.speakers_own_subject(verb) is not None:  # "my mom is ...": the mom's
        return []
    who = match.group("who").lower()
    return [fact(Relation.JOB, f"stay-at-home {who}", token, holds=not grammar.negations(verb))]


def _clause_text(token) -> str:
    """The clause a token sits in: its nearest verb's subtree, conjoined clauses left out."""
    verb = grammar.governing_verb(token)
    # "used to live in ...": the clause is "used"'s; "(would be) lucky to have a dog": the clause is "be"'s
    while (verb.dep_ == "xcomp" or verb.dep_ == "acomp" and verb.pos_ == "ADJ") and verb.head.i != verb.i:
        verb = verb.head
    words = [t for t in verb.subtree if not (t.dep_ == "conj" and t.head == verb and grammar.is_verb(t))]
    conj_tokens = {t.i for c in verb.children if c.dep_ == "conj" and grammar.is_verb(c) for t in c.subtree}
    words = [t for t in words if t.i not in conj_tokens]
    return "".join(t.text_with_ws for t in words).strip()


def _token_facts(token, doc, fact, lowered: str, persona: bool = False) -> list[Fact]:
    """The facts a token starts: a verb's place, job, food or activity; a noun's count."""
    out: list[Fact] = []
    lemma = token.lemma_.lower()
    if grammar.is_verb(token) and grammar.speakers_clause(token):
        out += _verb_facts(token, lemma, fact, lowered)
    if token.pos_ == "NOUN":
        counted = _count_fact(token, fact, persona)
        if counted is not None:
            out.append(counted)
        home = _home_fact(token, fact)
        if home is not None:
            out.append(home)
    return out


def _home_fact(noun, fact) -> Fact | None:
    """Where the speaker lives, said of its home: "My home is Berlin.", "Berlin is actually our home.", "The famous
    Berlin, it's my home." (the place put before "it"); not "a home away from home", which is not where one lives."""
    if noun.lemma_.lower() not in _HOME_NOUNS | {"hometown"}:
        return None
    owned = grammar.owned_by_speaker(noun) or (noun.dep_ == "compound" and grammar.owned_by_speaker(noun.head))
    head = noun.head if noun.dep_ == "compound" else noun
    verb = head.head
    if not owned or head.dep_ not in ("attr", "nsubj") or verb.lemma_ != "be" or any(
            t.lower_ == "away" for t in verb.subtree):
        return None
    others = [c for c in verb.children if c.dep_ in ("nsubj", "attr", "npadvmod") and c.i != head.i]
    if any(c.lower_ == "it" for c in others):  # "Berlin, it's my home": the place said before
        others += [t for t in noun.doc if t.dep_ in ("npadvmod", "dep", "nsubj") and t.head.i == verb.i]
    for other in others:
        place = grammar.place_name(other)
        if place and grammar.is_place(place):
            return fact(Relation.LIVES_IN, place, verb, holds=not grammar.negations(verb))
    return None


def _eaten(doc, sentence: str, fact) -> list[Fact]:
    """What a sentence says the speaker eats: a first-person sentence with an eating word ("I had roast lamb", "I
    love bacon sandwiches") or "my favourite dish is ...", and each noun in it that WordNet files under meat, fish
    or animal products (the thing eaten; the diet check decides). Read over the whole sentence rather than one
    dependency, which spaCy's small model gets wrong often here ("had roast lamb": "roast" parsed as the verb). A
    denial ("I don't eat ...", "never") reads nothing where it is said - the diet rule has those - and only there:
    "I've had some great steaks, but I'm not sure ..." eats steak. A dish counts by what WordNet files it under or
    what its gloss says it is made of (``grammar.made_of``: a burger is beef in a bun), a word WordNet does not know by
    the food it is spelt closest to (``grammar.food_word``: "Cheeseburgs")."""
    first_person = any(t.dep_ in grammar.NOMINAL_SUBJECT_DEPS and grammar.is_speaker(t) for t in doc)
    favourite = _FAVOURITE.search(sentence) and any(t.lower_ in grammar.SPEAKER_OWNERS for t in doc)
    eating = any(t.lemma_.lower() in _EAT_VERBS for t in doc)
    if not ((first_person and eating) or favourite):
        return []
    time = grammar.time_of(sentence, tense=False)  # last night's dinner says what a vegetarian eats now
    out = []
    for token in doc:
        word = token.lemma_.lower()
        if token.pos_ not in ("NOUN", "PROPN") or word in _EAT_VERBS or _kept_animal(token) or _denied_here(token):
            continue
        food = grammar.food_word(word) if token.pos_ == "NOUN" or token.text[:1].isupper() else word
        if food == "meat" or animal_food(food, MEAT_ROOTS + ANIMAL_PRODUCT_ROOTS):  # no "roast" veg
            out.append(fact(Relation.DIET, "eats", thing=food, time=time))
    return out


def animal_food(food: str, roots) -> bool:
    """Whether a food is (or, by its WordNet gloss, is made of) something under ``roots`` (meat, fish, dairy ...)."""
    return grammar.is_kind_of(food, roots) or grammar.made_of(food, roots)


def _denied_here(token) -> bool:
    """Whether the clause a token sits in is denied ("I don't eat *meat*", "I never had *steak*"), up through the
    verbs it hangs from within its sentence but not into a clause of its own ("..., but I'm not sure")."""
    verb = grammar.governing_verb(token)
    while True:
        if any(c.dep_ == "neg" or c.lower_ == "never" for c in verb.children):
            return True
        if verb.dep_ not in ("xcomp", "aux") or verb.head.i == verb.i:
            return False
        verb = grammar.governing_verb(verb.head)


def _kept_animal(token) -> bool:
    """A noun with an animal sense, counted or owned ("two dogs", "a dog named Max", "my chickens", "chickens"):
    animals one keeps, not food, though WordNet also files a dog under sausages and a chicken under poultry ("I have
    some chicken", "I had lamb" stay food: uncounted)."""
    counted = token.tag_ == "NNS" or any(c.dep_ in ("nummod", "poss") or (c.dep_ == "det" and c.lower_ in ("a", "an"))
                                         for c in token.children)
    return counted and grammar.is_kind_of(token.lemma_.lower(), ("animal.n.01",))


def _verb_facts(verb, lemma: str, fact, lowered: str) -> list[Fact]:
    out: list[Fact] = []
    holds = not grammar.negations(verb)
    preps = [c for c in verb.children if c.dep_ == "prep"]
    objects = [(p.lower_, o) for p in preps for o in p.children if o.dep_ == "pobj"]

    def places(wanted: str) -> list[str]:
        return [grammar.place_name(o) for prep, o in objects if prep == wanted and grammar.place_name(o)]

    # where it lives now, where it grew up
    if lemma in _LIVE_VERBS or (lemma == "base" and grammar.is_passive(verb)):
        out += [fact(Relation.LIVES_IN, p, verb, holds=holds) for p in places("in")]
    if lemma == "move":
        moved = grammar.WISH if grammar.time_of(_clause_text(verb)) == grammar.WISH else grammar.PRESENT
        out += [fact(Relation.LIVES_IN, p, verb, holds=holds, time=moved) for p in places("to")]
    # "I was born and raised in Montevideo": "raised" shares "born"'s passive
    raised = lemma in ("raise", "bear") and (grammar.is_passive(verb)
                                             or verb.dep_ == "conj" and grammar.is_passive(verb.head))
    if (lemma == "grow" and any(c.lower_ == "up" for c in verb.children)) or raised:
        out += [fact(Relation.GREW_UP, p, verb, holds=holds, time=grammar.PRESENT) for p in places("in")]
    if lemma == "be":
        out += [fact(Relation.GREW_UP, p, verb, holds=holds, time=grammar.PRESENT) for p in places("from")]
    if lemma == "spend" and "childhood" in lowered:
        out += [fact(Relation.GREW_UP, p, verb, time=grammar.PRESENT) for p in places("in")]
    if lemma == "call" and any(t.lower_ == "home" for t in verb.subtree):
        # "I call Berlin home" (parsed as the object, or as a compound of "home": "I call Johannesburg home")
        named = [c for c in verb.children if c.dep_ in ("dobj", "oprd", "nsubj")]
        named += [c for home in named if home.lower_ == "home" for c in home.children if c.dep_ == "compound"]
        out += [fact(Relation.LIVES_IN, grammar.place_name(c), verb) for c in named if grammar.place_name(c)]
    if lemma in ("have", "own", "rent", "buy"):  # "I have a home in Berlin"
        for obj in (c for c in verb.children if c.dep_ == "dobj" and c.lemma_.lower() in _HOME_NOUNS):
            for prep in (p for p in obj.children if p.dep_ == "prep" and p.lower_ == "in"):
                out += [fact(Relation.LIVES_IN, grammar.place_name(o), verb, holds=holds) for o in prep.children
                        if o.dep_ == "pobj" and grammar.place_name(o)]
    # job: "I work as a nurse", "I'm a nurse", "I'm not a doctor"; diet: "I'm a vegetarian"
    if lemma == "work":
        for prep, obj in objects:
            if prep == "as" and obj.pos_ == "NOUN" and grammar.is_kind_of(obj.lemma_, ("person.n.01",)):
                out.append(fact(Relation.JOB, _noun_phrase(obj), verb, holds=holds))
    if lemma == "be":
        for attr in (c for c in verb.children if c.dep_ in ("attr", "acomp")):
            out += _attribute_facts(attr, verb, fact, holds)
            # "I'm Anna, your nanny!", "I'm Alex Chen, a medical researcher and freelance writer"
            out += [f for c in attr.children if c.dep_ in ("appos", "conj") and c.pos_ == "NOUN"
                    for f in _attribute_facts(c, verb, fact, holds) if f.relation == Relation.JOB]
    # instruments: "I play the violin", "I only play the guitar", "I don't play the piano"
    if lemma == "play":
        out += _played(verb, fact, holds)
    # "I don't eat meat" as a diet, "I never eat cheese" as a food it avoids (what is eaten is read per sentence:
    # ``_eaten``)
    if lemma == "eat" and (not holds or any(c.lower_ == "never" for c in verb.children)):
        out += _avoided(verb, fact)
    # activities: "I have never been on a plane" (never), "I fly to Spain every summer" (does)
    activity = _activity(verb)
    if activity:
        never = any(c.lower_ == "never" for c in verb.children) or (not holds and activity in ("own a car", "smoke"))
        if never or holds:
            out.append(fact(Relation.DOES, activity, verb, thing=activity, holds=not never, time=grammar.PRESENT
                            if never else None))
    return out


#: "I only play the guitar": the speaker gives the whole of what it plays
_ONLY = {"only", "just", "solely", "exclusively"}
INSTRUMENT_ROOTS = ("musical_instrument.n.01",)


def _played(verb, fact, holds: bool) -> list[Fact]:
    """The instruments a "play" clause names (WordNet's musical instruments: a game or a sport is not one), each a
    value of its own; "never" or a negation denies them, "only" says they are all."""
    objects = [c for c in verb.children if c.dep_ == "dobj"]
    objects += [t for o in objects for t in o.subtree if t.dep_ == "conj" and t.pos_ == "NOUN"]
    never = any(c.lower_ == "never" for c in verb.children)
    only = any(t.lower_ in _ONLY for t in verb.subtree if t.i < (objects[0].i if objects else verb.i + 1)) or any(
        c.lower_ in _ONLY for o in objects for c in o.children)
    return [fact(Relation.PLAYS, o.lemma_.lower(), verb, holds=holds and not never, exhaustive=only,
                 time=grammar.PRESENT if never else None)
            for o in objects if grammar.is_kind_of(o.lemma_.lower(), INSTRUMENT_ROOTS)]


def _avoided(verb, fact) -> list[Fact]:
    """The foods a denied "eat" names ("I never eat cheese", "I can't eat eggs or milk"): each a diet fact ``AVOIDS``
    with the food as its thing; "meat" is the vegetarian diet. A meal or food in general ("I never eat breakfast")
    and what WordNet files under no food ("I don't eat much") read nothing."""
    objects = [c for c in verb.children if c.dep_ == "dobj"]
    objects += [c for o in objects for c in o.conjuncts if c.pos_ == "NOUN"]
    out = []
    for obj in objects:
        word = obj.lemma_.lower()
        if word == "meat":
            out.append(fact(Relation.DIET, "vegetarian", verb))
        elif obj.pos_ == "NOUN" and grammar.is_food(word):
            out.append(fact(Relation.DIET, AVOIDS, verb, thing=word))
    return out


def _attribute_facts(attr, verb, fact, holds: bool) -> list[Fact]:
    """"I'm a nurse" (job), "I'm a vegetarian" / "I'm vegan" (diet), "I am not a doctor" (a denied job), "I'm a young
    man" (an age, ``YOUNG``)."""
    word = attr.lemma_.lower()
    if word in DIETS or attr.lower_ in DIETS:
        return [fact(Relation.DIET, attr.lower_ if attr.lower_ in DIETS else word, verb, holds=holds)]
    if word in _YOUNG_PEOPLE and holds and any(c.dep_ == "amod" and c.lower_ == "young" for c in attr.children) \
            and grammar.is_speaker(next(iter(grammar.subjects(verb)), attr)) \
            and not any(t.lower_ == "heart" for t in verb.subtree):  # "young at heart" is no age
        low, high = YOUNG
        return [fact(Relation.AGE, "young", verb, low=low, high=high)]
    # "I'm a Nurse.": a capitalised job after an article is the job, not a name (spaCy tags it a proper noun)
    capitalised_job = attr.tag_ == "NNP" and any(c.dep_ == "det" and c.lower_ in ("a", "an") for c in attr.children)
    if capitalised_job:
        word = attr.lower_
    elif attr.pos_ != "NOUN" or attr.tag_ not in ("NN",):
        return []
    if not (grammar.is_job(word) or grammar.is_compounded_job(attr)):
        return []
    subject = next(iter(grammar.subjects(verb)), None)
    if subject is not None and not grammar.is_speaker(subject) and subject.lemma_.lower() not in grammar.WORK_NOUNS:
        return []  # "My husband is a chef", "My favorite is a veggie burger": not the speaker's occupation
    return [fact(Relation.JOB, _noun_phrase(attr).lower() if capitalised_job else _noun_phrase(attr), verb,
                 holds=holds)]


def _activity(verb) -> str | None:
    """The activity a clause names, under one name (``_ACTIVITY``): ("be", "plane") is flying."""
    lemma = verb.lemma_.lower()
    objects = [o.lemma_.lower() for c in verb.children if c.dep_ == "prep" for o in c.children if o.dep_ == "pobj"]
    objects += [c.lemma_.lower() for c in verb.children if c.dep_ in ("dobj", "acomp", "attr", "xcomp")]
    for obj in objects:
        if (lemma, obj) in _ACTIVITY:
            return _ACTIVITY[(lemma, obj)]
    return _ACTIVITY.get((lemma, ""))


def _count_fact(noun, fact, persona: bool = False) -> Fact | None:
    """How many of a pet, child or sibling the speaker has, read off the noun phrase: a number ("two dogs", "a team
    of 12 dogs", "my three sons", "two dogs and two more": four), "a" / "an" / "my" (at least one), "many" or a
    team, pack or herd of them (at least three: "a whole team of dogs"; denied: fewer), "no", a denied "have" or
    a "not" on the noun itself ("a dog, but not a cat") (none), a vague word
    ("a few dogs": no clash, no support); the clause must be the speaker's (its verb's subject "I" / "we", or "my
    X"). "A dog" is exactly one where the count is meant whole: in a persona line (the bot's own description: "I
    have a little brother.") and in a list of what the speaker has ("a cat and a dog"; not "a dog named Max and
    another one")."""
    word = noun.lemma_.lower()
    thing = grammar.FAMILY.get(word)
    if thing is None:
        if word in ("pet", "animal") or grammar.is_animal(word) and noun.tag_ in ("NN", "NNS"):
            thing = word
        else:
            return None
    mine = grammar.owned_by_speaker(noun)
    if (word in ("animal",) and noun.tag_ == "NN") or noun.dep_ == "compound" or (noun.dep_ == "poss" and not mine):
        return None  # "the children's hospital", "a dog trainer": no count of children or dogs ("my dog's name" is)
    verb = grammar.governing_verb(noun.head)
    if word in grammar.FAMILY and noun.dep_ == "attr" and verb.lemma_.lower() == "be" and grammar.speakers_clause(verb):
        return None  # what the speaker is ("I'm an only child", "I'm a big sister"), not a child or sister it has
    owning = (verb.lemma_.lower() in ("have", "own", "keep", "get", "adopt", "raise", "be")
              and grammar.speakers_clause(verb)) or _glad_to_have(verb)
    if not (mine or owning):
        return None
    number = next((grammar.number_value(c.text) for c in noun.children if c.dep_ == "nummod"), None)
    determiners = {c.lower_ for c in noun.children if c.dep_ in ("det", "amod", "quantmod")}
    before = {c.lower_ for c in noun.subtree if c.i < noun.i}
    vague = bool(determiners & _VAGUE) or bool(before & _VAGUE)
    many = bool((determiners | before) & _MANY) or _of_many(noun)
    # "I have a few animals, but not a tortoise": spaCy hangs the "not" from the noun, a list's later member
    denied_here = any(c.dep_ == "neg" for c in noun.children)
    denied = "no" in determiners or denied_here or (bool(grammar.negations(verb)) and owning and not mine)
    if number is not None:
        if (grammar.negations(verb) and owning and not mine) or denied_here:
            return None  # "I don't have 2 dogs", "but not two cats": what the count is not, no count
        number += _more(noun)
        return fact(Relation.COUNT, str(number), noun, thing=thing, low=number, high=number)
    if denied and many:  # "I don't have a whole team of dogs" ("No." to "So you have a whole team of dogs?"): fewer
        return fact(Relation.COUNT, f"fewer than {MANY}", noun, thing=thing, low=0, high=MANY - 1,
                    time=grammar.PRESENT)
    if denied:
        return fact(Relation.COUNT, "0", noun, thing=thing, low=0, high=0, time=grammar.PRESENT)
    if many:
        return fact(Relation.COUNT, f"at least {MANY}", noun, thing=thing, low=MANY)
    if vague:
        return fact(Relation.COUNT, "some", noun, thing=thing, low=1, vague=True)
    if determiners & {"a", "an", "one"} and noun.tag_ == "NN" and (persona or _listed(noun)):
        return fact(Relation.COUNT, "1", noun, thing=thing, low=1, high=1)
    if determiners & {"a", "an", "one"} or mine:
        low = 2 if noun.tag_ == "NNS" else 1
        return fact(Relation.COUNT, f"at least {low}", noun, thing=thing, low=low, vague=False)
    if noun.tag_ == "NNS" and owning:  # "I have dogs", or "Yes." to "Do you have any pets?": some, no number
        return fact(Relation.COUNT, "some", noun, thing=thing, low=1, vague=True)
    return None


def _glad_to_have(verb) -> bool:
    """"I'm (so) lucky to have a dog", "I feel blessed to have two cats": "have" in the infinitive after an adjective
    of luck or gladness (``_GLAD``) that the speaker is or feels, not denied ("I'm not lucky enough to have a dog")."""
    adjective = verb.head
    be = adjective.head
    return (verb.lemma_.lower() in ("have", "own") and verb.dep_ == "xcomp" and adjective.dep_ == "acomp"
            and adjective.lower_ in _GLAD and be.lemma_.lower() in ("be", "feel") and grammar.speakers_clause(be)
            and not grammar.negations(be))


def _of_many(noun) -> bool:
    """"a (whole) team / pack / lot of dogs": the noun counted by a word that says many."""
    return noun.dep_ == "pobj" and noun.head.lower_ == "of" and noun.head.head.lemma_.lower() in _MANY


def _more(noun) -> int:
    """What "and two more" adds to a count ("two dogs and two more": four)."""
    added = 0
    for c in noun.children:
        if c.dep_ != "conj":
            continue
        words = {t.lower_ for t in c.subtree}
        if words & {"more", "others"}:
            value = next((grammar.number_value(t.text) for t in c.subtree if grammar.number_value(t.text)), None)
            added += value or 0
    return added


def _listed(noun) -> bool:
    """A noun in a list of the things a speaker has ("a cat and a dog", "two brothers, two sisters, and a
    daughter"), of which none is left open ("another one", "more", "also")."""
    top = noun
    while top.dep_ in ("conj", "appos") and top.head.pos_ in ("NOUN", "PROPN", "NUM"):
        top = top.head
    members = [top] + [t for t in top.subtree if t.dep_ in ("conj", "appos") and t.i != top.i]
    if len(members) < 2:
        return False
    return not any(t.lower_ in _OPEN_LIST for t in top.subtree)


def _noun_phrase(noun) -> str:
    """A noun with its compound and adjective modifiers ("orthopedic surgeon", "science teacher")."""
    parts = [c for c in noun.children if c.dep_ in ("compound", "amod") and c.i < noun.i and c.pos_ in ("NOUN", "ADJ")
             and c.lower_ not in ("big", "good", "great", "little", "small", "real", "huge", "proud", "happy")]
    return " ".join([*(p.lower_ for p in parts), noun.lemma_.lower()])

