"""The bot's fact sheet: what it has said about itself, as DNLI's (relation, value) triples, and the clashes.

Welleck et al. (2019, DNLI, ``papers/002_*``) write persona sentences as triples; two sentences whose relation is
single-valued but whose values differ contradict. The NLI pair model sees words, and counts, names, ages and places
are where it is weakest ("I have a team of 12 dogs." vs "I have two dogs."), so the guard keeps the facts the bot
stated, read from its persona and every bot turn with spaCy's parse (``guard.language.grammar``) and short trigger lexicons
per relation, and a candidate that gives a single-valued fact another value clashes with the sheet.

Relations: name, age, where it lives now, where it grew up, job, how many of something it has (pets, children,
siblings), diet, and what it says it never did or does not have. Each fact keeps the turn it came from and the
sentence in its own words. Not a clash: the past and wishes ("I used to live in ...", "originally from ...", "I'd
love to have a pet one day"), a kind of the same thing (WordNet: "orthopedic surgeon" after "physician", "vegan"
after "vegetarian"), a second value where a fact is not single-valued (instruments, hobbies, likes: not read here),
the fact restated (a reply that gives the sheet's value too gives the other as an alias), a vague amount ("a few
dogs": no clash, but no support either).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
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


#: people words WordNet files under these are jobs ("I'm a nurse"); "I work as ..." takes any person noun
JOB_ROOTS = ("worker.n.01", "professional.n.01", "skilled_worker.n.01", "creator.n.02", "performer.n.01",
             "entertainer.n.01", "scientist.n.01", "serviceman.n.01", "businessperson.n.01", "communicator.n.01",
             "engineer.n.01", "defender.n.01", "programmer.n.01", "operator.n.02", "educator.n.01",
             "employee.n.01", "health_professional.n.01", "specialist.n.01", "expert.n.01")
#: what a vegetarian does not eat, and what a vegan does not eat besides
MEAT_ROOTS = ("meat.n.01", "fish.n.02", "poultry.n.02", "seafood.n.01")
ANIMAL_PRODUCT_ROOTS = ("dairy_product.n.01", "egg.n.02", "honey.n.01")
DIETS = ("vegetarian", "vegan", "pescatarian")
#: count words: a family member counted by its own word; "kid" and "child" are one thing
FAMILY = {"kid": "child", "child": "child", "baby": "child", "son": "son", "daughter": "daughter",
          "brother": "brother", "sister": "sister", "sibling": "sibling"}
#: the general thing a count of zero covers: "no pets" denies every animal, "no kids" every son and daughter
COVERS = {"pet": ("animal.n.01",), "animal": ("animal.n.01",), "child": ("son", "daughter"),
          "sibling": ("brother", "sister")}
_EAT_VERBS = {"eat", "love", "like", "enjoy", "have", "cook", "grill", "order", "make", "devour", "adore", "crave",
              "munch", "prefer", "fancy", "barbecue", "roast", "fry", "bake"}
_FAVOURITE = re.compile(r"\bfavou?rite\s+(?:dish|meal|food|dinner|lunch|breakfast|thing to eat)\b", re.IGNORECASE)
_VAGUE = {"few", "several", "some", "many", "lots", "lot", "couple", "bunch", "plenty", "numerous", "various"}
_NAME = re.compile(r"\b(?i:my name(?:'s| is)|call me|called me|i go by|the name's|the name is|name's)\s+"
                   r"(?P<name>[A-Z][a-z]+)\b")
_IM_NAME = re.compile(r"\b(?:I'm|I am|it's|It's|it is)\s+(?P<name>[A-Z][a-z]+)\b")
_AGE = re.compile(r"\b(?:i'm|i am|i just turned|i turned|i've just turned|i have just turned|i'll be turning|"
                  r"i'm turning|my age is|i'm only|i am only)\s+(?:only\s+|just\s+|now\s+)?"
                  r"(?P<n>\d{1,3}|[a-z]+(?:-[a-z]+)?)(?P<rest>\s+years?\s+old|\s+y/?o\b|\s*(?:[.,!;]|$|\s+(?:and|but|"
                  r"which|so|now|this|last|next|in|years|though|myself)\b))", re.IGNORECASE)
_DECADE = re.compile(r"\bi'm in my (?P<decade>twenties|thirties|forties|fifties|sixties|seventies|eighties|nineties)\b",
                     re.IGNORECASE)
_DECADES = {"twenties": 20, "thirties": 30, "forties": 40, "fifties": 50, "sixties": 60, "seventies": 70,
            "eighties": 80, "nineties": 90}
_ONLY_CHILD = re.compile(r"\b(?:i'm|i am|i was)\s+(?:an?\s+)?only child\b|\bno (?:brothers or sisters|siblings)\b",
                         re.IGNORECASE)
#: a "never" fact's activity under one name: "been on a plane" is flying
_ACTIVITY = {("be", "plane"): "fly", ("be", "airplane"): "fly", ("take", "flight"): "fly", ("board", "plane"): "fly",
             ("fly", ""): "fly", ("learn", "swim"): "swim", ("swim", ""): "swim", ("marry", ""): "marry",
             ("be", "married"): "marry", ("get", "married"): "marry", ("own", "car"): "own a car",
             ("have", "car"): "own a car", ("smoke", ""): "smoke"}
_SPOUSE = {"wife", "husband", "spouse"}
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

    @property
    def where(self) -> str:
        """"persona" or "turn N", for the sheet's table."""
        return "persona" if self.source == PremiseSource.PERSONA else f"turn {self.turn_id}"

    @property
    def counted(self) -> str:
        """What a count counts, in the plural, as the sheet names it ("dogs" for "I have two dogs.")."""
        return plural(self.thing)

    @property
    def shown(self) -> str:
        """The value as the sheet shows it: "dogs 2", "not a doctor", "job nurse"."""
        if self.relation == Relation.COUNT:
            return f"{self.counted} {'some' if self.vague else self.value}"
        if self.relation == Relation.DOES:
            return self.thing if self.holds else f"never: {self.thing}"
        return self.value if self.holds else f"not {self.value}"


@dataclass(frozen=True)
class FactClash:
    """A candidate's fact that gives a single-valued fact of the sheet another value (or denies it)."""

    relation: Relation
    sheet: Fact  # what the bot said before (persona or an earlier turn)
    said: Fact  # what the candidate says

    @property
    def why(self) -> str:
        """In words: "job: nurse (persona) vs teacher"."""
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


# ------------------------------------------------------------------------------------------------ clashes
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
    if old.relation != new.relation:
        return False
    same = _same_value(old, new)
    if old.holds and new.holds:
        if same:
            return False
        # the reply gives the sheet's value too: the other is an alias or a kind ("It's Margaret, call me Maggie")
        if any(f.relation == old.relation and f.holds and _same_value(old, f) for f in said):
            return False
        if old.relation == Relation.AGE:
            return not _ranges_meet(old, new)
        return True
    if old.holds != new.holds:
        return same  # "I'm not a nurse." after "I work as a nurse." (a kind counts: "not a doctor" after physician)
    return False


def _same_value(a: Fact, b: Fact) -> bool:
    if a.relation == Relation.AGE:
        return _ranges_meet(a, b)
    if a.relation == Relation.JOB:
        return grammar.same_kind(a.value, b.value)
    if a.relation in (Relation.LIVES_IN, Relation.GREW_UP):
        return _same_place(a.value, b.value)
    return a.value.lower() == b.value.lower()


def _same_place(a: str, b: str) -> bool:
    a_low, b_low = a.lower(), b.lower()
    if a_low == b_low or a_low.startswith(b_low + ",") or b_low.startswith(a_low + ","):
        return True
    return grammar.same_kind(a, b)  # WordNet: a place inside the other (Brooklyn, New York)


def _ranges_meet(a: Fact, b: Fact) -> bool:
    lo = max(x for x in (a.low, b.low) if x is not None) if a.low is not None or b.low is not None else None
    hi_values = [x for x in (a.high, b.high) if x is not None]
    hi = min(hi_values) if hi_values else None
    return lo is None or hi is None or lo <= hi


def _covers(general: str, specific: str) -> bool:
    """Whether a count of ``general`` things includes ``specific`` ones ("pet" covers "dog", "child" covers "son")."""
    if general == specific:
        return True
    covered = COVERS.get(general, ())
    if specific in covered:
        return True
    roots = [c for c in covered if "." in c]
    return bool(roots) and grammar.is_kind_of(specific, roots)


def _count_clash(old: Fact, new: Fact) -> bool:
    if new.vague and new.holds:
        return False
    if old.thing == new.thing or grammar.same_kind(old.thing, new.thing):
        return not _ranges_meet(old, new)
    # none of a general thing against some of a kind of it: "no pets" / "two dogs", "an only child" / "a brother"
    if old.high == 0 and (new.low or 0) >= 1:
        return _covers(old.thing, new.thing)
    if new.high == 0 and (old.low or 0) >= 1:
        return _covers(new.thing, old.thing)
    return False


def _diet_clash(old: Fact, new: Fact) -> bool:
    if old.value == "eats" or new.value == "eats":  # someone who eats meat against a vegetarian / vegan
        diet, eats = (new, old) if old.value == "eats" else (old, new)
        if diet.value == "eats" or not diet.holds or not eats.holds:
            return False
        roots = MEAT_ROOTS + (ANIMAL_PRODUCT_ROOTS if diet.value == "vegan" else ())
        if diet.value == "pescatarian":
            roots = ("meat.n.01", "poultry.n.02")
        return eats.thing == "meat" or grammar.is_kind_of(eats.thing, roots)
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
        return read_facts(text, PremiseSource.HISTORY, turn_id, reading.statement if reading else None)

    return _TURN_FACTS.get_or_make((text, PremiseSource.HISTORY, turn_id, before), read)


def read_facts(text: str, source: PremiseSource, turn_id: int, reading: str | None = None) -> tuple[Fact, ...]:
    """The facts one text states about its speaker (``reading``: the statement its answer makes with the question,
    read first: "Yes, I am." to "Aren't you a teacher?" is "I am a teacher.")."""
    from guard.language.text import sentences

    pieces = ([reading] if reading else []) + [s for s in sentences(text) if not s.rstrip().endswith("?")]
    facts: list[Fact] = []
    for piece in pieces:
        said = text if piece is reading else piece
        facts += _sentence_facts(piece, said, source, turn_id)
    return tuple(facts)


def _sentence_facts(sentence: str, said: str, source: PremiseSource, turn_id: int) -> list[Fact]:
    doc = grammar.parse(sentence)

    def fact(relation: Relation, value: str, token=None, **extra) -> Fact:
        clause = _clause_text(token) if token is not None else sentence
        time = extra.pop("time", None) or grammar.time_of(clause)
        return Fact(relation, value, source, turn_id, said, time=time, **extra)

    out: list[Fact] = []
    lowered = sentence.lower()
    # name
    for m in _NAME.finditer(sentence):
        out.append(fact(Relation.NAME, m.group("name")))
    for m in _IM_NAME.finditer(sentence):
        name = m.group("name")
        token = next((t for t in doc if t.text == name), None)
        if token is not None and token.tag_ == "NNP" and not grammar.synsets(name) \
                and not grammar.synsets(name, pos="a"):
            out.append(fact(Relation.NAME, name))
    # age
    for m in _AGE.finditer(sentence):
        n = grammar.number_value(m.group("n"))
        if n is not None and 1 <= n <= 120:
            turned = "turn" in m.group(0).lower()
            out.append(fact(Relation.AGE, str(n), low=n, high=n, time=grammar.PRESENT if turned else None))
    for m in _DECADE.finditer(sentence):
        base = _DECADES[m.group("decade").lower()]
        out.append(fact(Relation.AGE, f"in their {m.group('decade').lower()}", low=base, high=base + 9))
    for m in _STAY_AT_HOME.finditer(sentence):
        out += _stay_at_home(doc, m, fact)
    if _ONLY_CHILD.search(sentence):
        out.append(fact(Relation.COUNT, "0", thing="sibling", low=0, high=0))
    for token in doc:
        out += _token_facts(token, doc, fact, lowered)
    out += _eaten(doc, sentence, fact)
    return out


def _stay_at_home(doc, match: re.Match, fact) -> list[Fact]:
    """"I am a stay at home mom" as a job ("stay-at-home mom"), when the speaker says it of themselves with "be" or
    "work" ("My sister is a stay at home mom" is the sister's); "I'm not ..." denies it."""
    token = next((t for t in doc if t.idx == match.start("who")), None)
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
    while verb.dep_ == "xcomp" and verb.head.i != verb.i:  # "used to live in ...": the clause is "used"'s
        verb = verb.head
    words = [t for t in verb.subtree if not (t.dep_ == "conj" and t.head == verb and grammar.is_verb(t))]
    conj_tokens = {t.i for c in verb.children if c.dep_ == "conj" and grammar.is_verb(c) for t in c.subtree}
    words = [t for t in words if t.i not in conj_tokens]
    return "".join(t.text_with_ws for t in words).strip()


def _place(token) -> str | None:
    """The place name a preposition's object starts ("Berlin", "New York", "Addis Ababa"), or None."""
    if token.tag_ not in ("NNP", "NNPS"):
        return None
    parts = [t for t in token.subtree if t.tag_ in ("NNP", "NNPS") or (t.dep_ == "compound" and t.pos_ == "PROPN")]
    if not parts:
        return None
    return " ".join(t.text for t in parts)


def _token_facts(token, doc, fact, lowered: str) -> list[Fact]:
    """The facts a token starts: a verb's place, job, food or activity; a noun's count."""
    out: list[Fact] = []
    lemma = token.lemma_.lower()
    if grammar.is_verb(token) and grammar.speakers_clause(token):
        out += _verb_facts(token, lemma, fact, lowered)
    if token.pos_ == "NOUN":
        counted = _count_fact(token, fact)
        if counted is not None:
            out.append(counted)
        if token.lemma_.lower() in _SPOUSE and grammar.owned_by_speaker(token):
            out.append(fact(Relation.DOES, "marry", token, thing="marry", time=grammar.PRESENT))
    return out


def _eaten(doc, sentence: str, fact) -> list[Fact]:
    """What a sentence says the speaker eats: a first-person sentence with an eating word ("I had roast lamb", "I
    love bacon sandwiches") or "my favourite dish is ...", and each noun in it that WordNet files under meat, fish
    or animal products (the thing eaten; the diet check decides). Read over the whole sentence rather than one
    dependency, which spaCy's small model gets wrong often here ("had roast lamb": "roast" parsed as the verb). A
    denial ("I don't eat ...", "never") reads nothing: the diet rule has those."""
    first_person = any(t.dep_ in grammar.NOMINAL_SUBJECT_DEPS and grammar.is_speaker(t) for t in doc)
    favourite = _FAVOURITE.search(sentence) and any(t.lower_ in grammar.SPEAKER_OWNERS for t in doc)
    eating = any(t.lemma_.lower() in _EAT_VERBS for t in doc)
    if not ((first_person and eating) or favourite) or any(t.dep_ == "neg" or t.lower_ == "never" for t in doc):
        return []
    time = grammar.time_of(sentence, tense=False)  # last night's dinner says what a vegetarian eats now
    out = []
    for token in doc:
        word = token.lemma_.lower()
        if token.pos_ in ("NOUN", "PROPN") and word not in _EAT_VERBS and not _kept_animal(token) and (
                word == "meat" or grammar.is_kind_of(word, MEAT_ROOTS + ANIMAL_PRODUCT_ROOTS)):  # no "roast" veg
            out.append(fact(Relation.DIET, "eats", thing=word, time=time))
    return out


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
        return [_place(o) for prep, o in objects if prep == wanted and _place(o)]

    # where it lives now, where it grew up
    if lemma in _LIVE_VERBS or (lemma == "base" and grammar.is_passive(verb)):
        out += [fact(Relation.LIVES_IN, p, verb, holds=holds) for p in places("in")]
    if lemma == "move":
        moved = grammar.WISH if grammar.time_of(_clause_text(verb)) == grammar.WISH else grammar.PRESENT
        out += [fact(Relation.LIVES_IN, p, verb, holds=holds, time=moved) for p in places("to")]
    raised = lemma in ("raise", "bear") and grammar.is_passive(verb)
    if (lemma == "grow" and any(c.lower_ == "up" for c in verb.children)) or raised:
        out += [fact(Relation.GREW_UP, p, verb, holds=holds, time=grammar.PRESENT) for p in places("in")]
    if lemma == "be":
        out += [fact(Relation.GREW_UP, p, verb, holds=holds, time=grammar.PRESENT) for p in places("from")]
    if lemma == "spend" and "childhood" in lowered:
        out += [fact(Relation.GREW_UP, p, verb, time=grammar.PRESENT) for p in places("in")]
    if lemma == "call" and any(t.lower_ == "home" for t in verb.subtree):
        out += [fact(Relation.LIVES_IN, _place(c), verb) for c in verb.children
                if c.dep_ in ("dobj", "oprd", "nsubj") and _place(c)]
    if lemma in ("have", "own", "rent", "buy"):  # "I have a home in Berlin"
        for obj in (c for c in verb.children if c.dep_ == "dobj" and c.lemma_.lower() in _HOME_NOUNS):
            for prep in (p for p in obj.children if p.dep_ == "prep" and p.lower_ == "in"):
                out += [fact(Relation.LIVES_IN, _place(o), verb, holds=holds) for o in prep.children
                        if o.dep_ == "pobj" and _place(o)]
    # job: "I work as a nurse", "I'm a nurse", "I'm not a doctor"; diet: "I'm a vegetarian"
    if lemma == "work":
        for prep, obj in objects:
            if prep == "as" and obj.pos_ == "NOUN" and grammar.is_kind_of(obj.lemma_, ("person.n.01",)):
                out.append(fact(Relation.JOB, _noun_phrase(obj), verb, holds=holds))
    if lemma == "be":
        for attr in (c for c in verb.children if c.dep_ in ("attr", "acomp")):
            out += _attribute_facts(attr, verb, fact, holds)
    # "I don't eat meat" as a diet (what is eaten is read per sentence: ``_eaten``)
    if lemma == "eat" and not holds and any(c.lemma_.lower() == "meat" for c in verb.children if c.dep_ == "dobj"):
        out.append(fact(Relation.DIET, "vegetarian", verb))
    # activities: "I have never been on a plane" (never), "I fly to Spain every summer" (does)
    activity = _activity(verb)
    if activity:
        never = any(c.lower_ == "never" for c in verb.children) or (not holds and activity in ("own a car", "smoke"))
        if never or holds:
            out.append(fact(Relation.DOES, activity, verb, thing=activity, holds=not never, time=grammar.PRESENT
                            if never else None))
    return out


def _attribute_facts(attr, verb, fact, holds: bool) -> list[Fact]:
    """"I'm a nurse" (job), "I'm a vegetarian" / "I'm vegan" (diet), "I am not a doctor" (a denied job)."""
    word = attr.lemma_.lower()
    if word in DIETS or attr.lower_ in DIETS:
        return [fact(Relation.DIET, attr.lower_ if attr.lower_ in DIETS else word, verb, holds=holds)]
    if attr.pos_ != "NOUN" or attr.tag_ not in ("NN",):
        return []
    if not grammar.is_kind_of(word, JOB_ROOTS):
        return []
    return [fact(Relation.JOB, _noun_phrase(attr), verb, holds=holds)]


def _activity(verb) -> str | None:
    """The activity a clause names, under one name (``_ACTIVITY``): ("be", "plane") is flying."""
    lemma = verb.lemma_.lower()
    objects = [o.lemma_.lower() for c in verb.children if c.dep_ == "prep" for o in c.children if o.dep_ == "pobj"]
    objects += [c.lemma_.lower() for c in verb.children if c.dep_ in ("dobj", "acomp", "attr", "xcomp")]
    for obj in objects:
        if (lemma, obj) in _ACTIVITY:
            return _ACTIVITY[(lemma, obj)]
    return _ACTIVITY.get((lemma, ""))


def _count_fact(noun, fact) -> Fact | None:
    """How many of a pet, child or sibling the speaker has, read off the noun phrase: a number ("two dogs", "a team
    of 12 dogs", "my three sons"), "a" / "an" / "my" (at least one), "no" or a denied "have" (none), a vague word ("a
    few dogs": no clash, no support); the clause must be the speaker's (its verb's subject "I" / "we", or "my X")."""
    word = noun.lemma_.lower()
    thing = FAMILY.get(word)
    if thing is None:
        if word in ("pet", "animal") or grammar.is_kind_of(word, ("animal.n.01",)) and noun.tag_ in ("NN", "NNS"):
            thing = word
        else:
            return None
    if word in ("animal",) and noun.tag_ == "NN":
        return None
    mine = grammar.owned_by_speaker(noun)
    verb = grammar.governing_verb(noun.head)
    owning = (verb.lemma_.lower() in ("have", "own", "keep", "get", "adopt", "raise", "be")
              and grammar.speakers_clause(verb))
    if not (mine or owning):
        return None
    number = next((grammar.number_value(c.text) for c in noun.children if c.dep_ == "nummod"), None)
    determiners = {c.lower_ for c in noun.children if c.dep_ in ("det", "amod", "quantmod")}
    vague = bool(determiners & _VAGUE) or any(c.lower_ in _VAGUE for c in noun.subtree if c.i < noun.i)
    denied = "no" in determiners or (bool(grammar.negations(verb)) and owning and not mine)
    if number is not None:
        if grammar.negations(verb) and owning and not mine:  # "I don't have 2 dogs": what the count is not, no count
            return None
        return fact(Relation.COUNT, str(number), noun, thing=thing, low=number, high=number)
    if denied:
        return fact(Relation.COUNT, "0", noun, thing=thing, low=0, high=0, time=grammar.PRESENT)
    if vague:
        return fact(Relation.COUNT, "some", noun, thing=thing, low=1, vague=True)
    if determiners & {"a", "an", "one"} or mine:
        low = 2 if noun.tag_ == "NNS" else 1
        return fact(Relation.COUNT, f"at least {low}", noun, thing=thing, low=low, vague=False)
    if noun.tag_ == "NNS" and owning:  # "I have dogs", or "Yes." to "Do you have any pets?": some, no number
        return fact(Relation.COUNT, "some", noun, thing=thing, low=1, vague=True)
    return None


def _noun_phrase(noun) -> str:
    """A noun with its compound and adjective modifiers ("orthopedic surgeon", "science teacher")."""
    parts = [c for c in noun.children if c.dep_ in ("compound", "amod") and c.i < noun.i and c.pos_ in ("NOUN", "ADJ")
             and c.lower_ not in ("big", "good", "great", "little", "small", "real", "huge", "proud", "happy")]
    return " ".join([*(p.lower_ for p in parts), noun.lemma_.lower()])

