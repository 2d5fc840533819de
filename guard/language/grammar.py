"""One place for the grammar the guard reads sentences with: one spaCy parse per text, kept across turns.

Answers read with their question (``guard.language.answers``), the bot's fact sheet (``guard.language.fact_sheet``), the sentence and
clause splitting of the intra check (``guard.language.text``), the negation perturbation (``guard.language.perturb``) and the goading
studio's pronoun swaps (``studio.goading``) all read sentences. They share:

* ``parse`` / ``parse_many``: the embedded spaCy pipeline (en_core_web_sm, without NER), each text parsed once and
  kept in one bounded cache (``embedded.once.BoundedCache``) across turns: a conversation's earlier turns are read
  again every turn;
* ``INTERJECTIONS``: the words a chat message opens with that say nothing ("oh", "well", "haha");
* ``SWAP_PERSON``: one pronoun table, first and second person swapped both ways ("your" → "my" to read the user's
  question as the bot's claim, "my" → "your"), and ``TO_SECOND_PERSON`` with the subject and its verb ("I am" →
  "you are") to ask the bot's own words back to it;
* ``affirmative`` / ``negated``: the one affirm / negate pair ("I don't have pets." ↔ "I have pets.");
* ``time_of``: whether a clause speaks of the present, the past ("I used to live in ...", "originally from ...")
  or a wish ("I'd love to have a dog one day");
* ``number_value``: a count or age written in digits or words ("twenty-six" → 26);
* ``is_kind_of`` / ``same_kind``: WordNet's "is a kind of" over nouns (a surgeon is a doctor, steak is meat).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from embedded.once import BoundedCache
from embedded.turns import cpu_turn

#: parsed texts kept across turns (a chat reads its earlier turns again every turn)
PARSE_CACHE_LIMIT = 8_192

_PARSES: BoundedCache = BoundedCache(PARSE_CACHE_LIMIT)


def nlp():
    """The embedded spaCy pipeline (``embedded.spacy_nlp``: loaded once per process)."""
    from embedded import spacy_nlp

    return spacy_nlp()


def parse(text: str):
    """The spaCy ``Doc`` of ``text``, parsed once and kept."""
    return _PARSES.get_or_make(text, lambda: nlp()(text))


def parse_many(texts: Iterable[str]) -> list:
    """The ``Doc`` of each text, the ones not parsed before in one spaCy batch."""
    texts = list(texts)
    found = _PARSES.found(dict.fromkeys(texts))
    todo = [t for t in dict.fromkeys(texts) if t not in found]
    if todo:
        for text, doc in zip(todo, nlp().pipe(todo, batch_size=64)):
            found[text] = doc
            _PARSES.put(text, doc)
    return [found[t] for t in texts]


def clear_parses() -> None:
    """Forget every parse (benchmarks time a first reading)."""
    _PARSES.clear()


# ------------------------------------------------------------------------------------------------ shared words
#: words a chat message opens with that claim nothing
INTERJECTIONS: tuple[str, ...] = ("oh", "well", "haha", "hahaha", "lol", "um", "umm", "hmm", "ah", "uh", "wow",
                                  "hey", "actually")
#: first and second person swapped: the user's "your dog" is "my dog" in the bot's mouth, and the bot's "my dog" is
#: "your dog" when it is asked back (a subject "you" is "I" where a caller knows it is the subject)
SWAP_PERSON: dict[str, str] = {"you": "me", "u": "me", "your": "my", "ur": "my", "yours": "mine",
                               "yourself": "myself", "me": "you", "my": "your", "mine": "yours",
                               "myself": "yourself"}
#: the speaker's own words said back to them ("I am", "we", "our"): the subject and its verb, beside ``SWAP_PERSON``
#: (not part of it: "you are" read in the bot's mouth is "I am", which the answer reading writes itself)
TO_SECOND_PERSON: dict[str, str] = {**SWAP_PERSON, "i": "you", "am": "are", "'m": "are", "we": "you",
                                    "our": "your", "us": "you"}


# ------------------------------------------------------------------------------------------------ answer particles
#: answer particles by polarity; a reply must start with one (case-insensitive), followed by punctuation, a space
#: or the end. First-person openers ("I have ...") are statements already, not particles.
_YES = ("yes", "yeah", "yep", "yup", "yea", "ya", "sure", "of course", "definitely", "absolutely", "certainly",
        "indeed")
_NO = ("no", "nope", "nah", "not really", "not at all", "no way", "of course not", "definitely not",
       "absolutely not", "certainly not")
#: confirmations: "yes" to the question as it was put, negative or not ("So you don't eat meat?" "Right.")
CONFIRMATIONS = ("right", "correct", "exactly", "that's right", "that is right", "that's correct", "true", "that's true")
#: openers that start with a particle word but answer nothing ("No problem!", "Sure thing")
_NOT_ANSWERS = re.compile(r"^\s*(?:no\s+(?:problem|worries|doubt|idea|clue|kidding|offense|offence)|sure\s+thing|"
                          r"right\s+now|true\s+story)\b", re.IGNORECASE)
_INTERJECTION = r"(?:(?:" + "|".join(INTERJECTIONS) + r")[,!.]?\s+)?"
_PARTICLE = re.compile(
    r"^\s*" + _INTERJECTION + r"(?P<particle>" + "|".join(
        sorted((re.escape(p) for p in _YES + _NO + CONFIRMATIONS), key=len, reverse=True))
    # then punctuation, the end, or a word that starts a new clause ("No I don't"); "No pets for me" is a determiner
    + r")(?=[,.!?;:]|\s*$|\s+(?:i|i'm|i've|it|it's|that|we|my|not|but|thanks|thank|sorry|haha|lol|never|"
      r"definitely|absolutely|of course|i\s+do|i\s+am)\b)[,.!?;:]*",
    re.IGNORECASE)
#: an elliptical answer that echoes the question's auxiliary ("I do.", "i am not .", "I haven't!", "Not anymore.",
#: "Never."), standing alone before punctuation or the end - "I do not have time" is a statement, not an echo
ECHO_ANSWER = re.compile(
    r"^\s*" + _INTERJECTION + r"(?P<particle>i\s*(?:do|am|'m|have|'ve|can|did|will|would|was|could|does)"
    r"(?:\s*not|n't)?|i\s+(?:don't|dont|can't|cant|won't|wont|didn't|didnt|haven't|havent|wasn't|wasnt|couldn't|"
    r"wouldn't)|it\s+(?:is|was|does|did)(?:\s*not|n't)?|it's\s+not|not\s+(?:anymore|any more|yet)|never)"
    r"\s*(?=[,.!?;:]|$)[,.!?;:]*",
    re.IGNORECASE)
_NEGATIVE_ECHO = re.compile(r"not|n't|\bdont\b|\bcant\b|\bwont\b|didnt|havent|wasnt|never", re.IGNORECASE)


def answer_opening(reply: str):
    """The regex match of the reply's opening particle or echo answer, or None."""
    if _NOT_ANSWERS.match(reply):
        return None
    return _PARTICLE.match(reply) or ECHO_ANSWER.match(reply)


def particle(reply: str) -> tuple[str, bool] | None:
    """The reply's opening answer particle (or echo, "I do.", "Not anymore.", or confirmation, "Right.") and its
    polarity (True = yes), or None."""
    match = answer_opening(reply)
    if not match:
        return None
    word = " ".join(match.group("particle").lower().split())
    if match.re is ECHO_ANSWER:
        return word, not _NEGATIVE_ECHO.search(word)
    echo = ECHO_ANSWER.match(reply[match.end():])  # "Right, I don't.": the echo says which way
    if echo is not None:
        return word, not _NEGATIVE_ECHO.search(echo.group("particle"))
    return word, word in _YES or word in CONFIRMATIONS


def after_particle(reply: str) -> str:
    """The reply with its opening answer particle taken off ("No, I only have a daughter." -> "I only have a
    daughter."); the reply itself when it opens with none."""
    match = answer_opening(reply)
    rest = reply[match.end():].strip() if match else reply.strip()
    return rest[:1].upper() + rest[1:] if rest else rest


# ------------------------------------------------------------------------------------------------ affirm / negate
_CONTRACTED_AUX = {"ca": "can", "wo": "will", "sha": "shall"}
_FIRST_PERSON = frozenset({"i", "we"})
#: a sentence without one of these words denies nothing (checked before spaCy parses it: most sentences pass here)
_DENIAL_WORD = re.compile(r"\b(?:not|never|no)\b|n't\b|\bnt\b", re.IGNORECASE)
_AFFIRMED: BoundedCache = BoundedCache(PARSE_CACHE_LIMIT)


def affirmative(sentence: str) -> str | None:
    """What a first-person denial denies, as an affirmation: "I'm not really a doctor." -> "I'm really a doctor.",
    "I don't work as a teacher." -> "I do work as a teacher.", "I have no pets." -> "I have pets.",
    "I've never been to Paris." -> "I've been to Paris."; None for a sentence that is no such denial (not about "I",
    "we" or "my X", no negation of its main verb, more than one, or too little left to affirm). An answer particle
    in front ("No, I don't ...") is read past: the sentence denies as its rest does.

    A denial contradicts only what entails its affirmation: "I'm not a teacher." does not contradict "I work as a
    nurse.", while "I don't have any pets." contradicts "I have two dogs." The detector asks the NLI model that
    question (``guard.language.reading.denial_support``), because a model trained on negation-heavy contradictions reads
    almost any denial against any statement as a clash."""
    if not _DENIAL_WORD.search(sentence):
        return None
    rest = after_particle(sentence)
    return _AFFIRMED.get_or_make(rest, lambda: _affirmed(rest))


def _affirmed(sentence: str) -> str | None:
    doc = parse(sentence)
    sents = list(doc.sents)
    if len(sents) != 1:
        return None
    root = sents[0].root
    subjects = [t for t in root.children if t.dep_ in ("nsubj", "nsubjpass")]
    if len(subjects) != 1:
        return None
    subject = subjects[0]
    owner = [t for t in subject.children if t.dep_ == "poss"]
    if subject.lower_ not in _FIRST_PERSON and not (owner and owner[0].lower_ in ("my", "our")):
        return None
    if any(t.dep_ in ("conj", "advcl", "ccomp") and t.pos_ in ("VERB", "AUX") for t in doc):
        return None  # one clause only: "I've never been there, but I'd love to go" affirms no single statement
    negations = [t for t in root.children if t.dep_ == "neg"]
    determiners = [t for t in doc if t.lower_ == "no" and t.dep_ == "det" and t.head.head.i == root.i]
    if len(negations) + len(determiners) != 1 or any(t.dep_ == "intj" for t in root.children):
        return None
    dropped = {t.i for t in negations}
    # "I don't have any pets" affirms "I have pets": the do-support of a first-person present and "any" go too
    dropped |= {t.i for t in doc if t.dep_ == "aux" and t.lower_ == "do" and t.head.i == root.i and negations
                and subject.lower_ in _FIRST_PERSON}
    dropped |= {t.i for t in doc if t.lower_ == "any" and t.dep_ == "det"}
    words: list[str] = []
    for token in doc:
        if token.i in dropped:
            continue
        if token in determiners:  # "no pets" -> "pets", "no car" -> "a car"
            if token.head.tag_ == "NN":
                words.append("a" + token.whitespace_)
            continue
        joined = token.i + 1 in dropped and not token.whitespace_  # "do" of "don't", "ca" of "can't"
        text = _CONTRACTED_AUX.get(token.lower_, token.text) if joined else token.text
        words.append(text + (" " if joined else token.whitespace_))
    result = re.sub(r"\s+", " ", "".join(words)).strip()
    content = [t for t in parse(result) if not t.is_punct and t.pos_ not in ("INTJ", "PART")]
    if len(content) < 3 or (root.lemma_ == "do" and len(content) < 4):
        return None
    return result


# ------------------------------------------------------------------------------------------------ time of a clause
PRESENT, PAST, WISH = "present", "past", "wish"
_PAST_WORDS = re.compile(r"\b(?:used to|originally|as a (?:kid|child|boy|girl|teenager)|when i was|back then|"
                         r"years ago|a long time ago|in my (?:youth|childhood|twenties|teens)|growing up|before that|"
                         r"no longer|any ?more)\b", re.IGNORECASE)
_WISH_WORDS = re.compile(r"\b(?:one day|someday|some day|i'd love to|i would love to|i'd like to|i would like to|"
                         r"i hope to|i want to|i wish|my dream|dream of|if i could|if i were|if i had|"
                         r"i'm thinking of|i am thinking of|i plan to|i'm planning to|i might|maybe i'll)\b",
                         re.IGNORECASE)


def time_of(clause: str, tense: bool = True) -> str:
    """Whether a clause speaks of the present (``PRESENT``), the past (``PAST``: "I used to live in Rome", "I
    lived in Rome", "originally from Rome") or a wish (``WISH``: "I'd love to have a dog one day"). Words decide
    first; otherwise the tense of the clause's main verb (a past-tense root without a present auxiliary is past,
    a modal "would" / "might" is a wish). ``tense`` False: a plain past tense is the present's ("I had lamb for
    dinner" says what a vegetarian does now; only "used to", "as a kid" ... put it in the past)."""
    if _WISH_WORDS.search(clause):
        return WISH
    if _PAST_WORDS.search(clause):
        return PAST
    if not tense:
        return PRESENT
    doc = parse(clause)
    roots = [s.root for s in doc.sents]
    if not roots:
        return PRESENT
    root = roots[0]
    aux = [c for c in root.children if c.dep_ in ("aux", "auxpass")]
    if any(a.lower_ in ("would", "'d", "might", "could") for a in aux):
        return WISH
    if any(a.lower_ in ("will", "'ll") for a in aux):
        return WISH
    if root.tag_ == "VBD" and not any(a.tag_ in ("VBP", "VBZ") for a in aux):
        return PAST
    if any(a.tag_ == "VBD" and a.lemma_ in ("be", "have", "do") for a in aux) and root.tag_ in ("VBN", "VBG", "VB"):
        return PAST  # "I was living in ...", "I had lived in ...", "I did live in ..."
    return PRESENT


# ------------------------------------------------------------------------------------------------ numbers
_ONES = {w: i for i, w in enumerate(("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                                     "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen",
                                     "seventeen", "eighteen", "nineteen"))}
_TENS = {w: 10 * i for i, w in enumerate(("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty",
                                          "ninety")) if w}
_NUMBER = re.compile(r"^(?:(?P<digits>\d{1,3})|(?P<words>[a-z]+(?:[- ][a-z]+)?))$")


def number_value(text: str) -> int | None:
    """A whole number written in digits or words ("12", "twelve", "twenty-six", "a hundred"), else None."""
    text = text.strip().lower().replace("\u2011", "-")
    if text in ("a dozen", "dozen"):
        return 12
    if text in ("a hundred", "one hundred", "hundred"):
        return 100
    m = _NUMBER.match(text)
    if m is None:
        return None
    if m.group("digits"):
        return int(m.group("digits"))
    parts = re.split(r"[- ]", m.group("words"))
    if len(parts) == 1:
        return _ONES.get(parts[0], _TENS.get(parts[0]))
    if parts[0] in _TENS and parts[1] in _ONES and 0 < _ONES[parts[1]] < 10:
        return _TENS[parts[0]] + _ONES[parts[1]]
    return None


# ------------------------------------------------------------------------------------------------ kinds (WordNet)
def _wordnet():
    import embedded

    return embedded.wordnet()


def wordnet_turn():
    """The lock every look-up in WordNet holds: NLTK's reader seeks and reads shared file handles, so one thread at a
    time (the chat's sessions, the goading assistant's warm-up, the guard's fact sheet). It is the reader's own turn
    (``embedded.turns.cpu_turn``), one for everyone who reads it, and re-entrant: a look-up inside another is free."""
    return cpu_turn(_wordnet())


def synsets(word: str, pos: str = "n") -> list:
    """WordNet's senses of a word or phrase ("orthopedic surgeon" looked up whole, then by its head noun)."""
    with wordnet_turn():
        return _senses(word, pos)


def _senses(word: str, pos: str = "n") -> list:
    wn = _wordnet()
    key = word.strip().lower().replace(" ", "_")
    found = wn.synsets(key, pos=pos)
    if not found and "_" in key:
        found = wn.synsets(key.rsplit("_", 1)[1], pos=pos)
    return found


def _above(word: str) -> set[str]:
    """Every sense of ``word`` and everything WordNet places it under (hypernyms, instance hypernyms, and the
    places it is part of: Brooklyn is in New York)."""
    out: set[str] = set()
    with wordnet_turn():
        for sense in _senses(word):
            out.add(sense.name())
            out |= {s.name() for s in sense.closure(
                lambda s: s.hypernyms() + s.instance_hypernyms() + s.part_holonyms())}
    return out


_KINDS: BoundedCache = BoundedCache(PARSE_CACHE_LIMIT)


def above(word: str) -> frozenset[str]:
    """``word``'s senses and all that WordNet puts above them (cached)."""
    return _KINDS.get_or_make(word.lower(), lambda: frozenset(_above(word)))


def is_kind_of(word: str, roots: Sequence[str]) -> bool:
    """Whether some sense of ``word`` is (under) one of the WordNet synsets ``roots`` ("steak", ["meat.n.01"])."""
    return bool(above(word) & set(roots))


def same_kind(a: str, b: str) -> bool:
    """Whether two nouns name the same thing or one a kind of the other ("physician" / "orthopedic surgeon",
    "vegan" / "vegetarian"): a sense of one is a sense of the other or above it. Words WordNet does not know are
    the same kind only when they are the same word."""
    if a.lower() == b.lower():
        return True
    senses_a = {s.name() for s in synsets(a)}
    senses_b = {s.name() for s in synsets(b)}
    if not senses_a or not senses_b:
        return False
    return bool(senses_a & above(b)) or bool(senses_b & above(a))
