"""One place for the grammar the guard reads sentences with: one spaCy parse per text, kept across turns.

Answers read with their question (``guard.language.answers``), the bot's fact sheet
(``guard.language.fact_sheet``), the sentence and clause splitting of the intra check (``guard.language.text``), the
perturbations (``guard.language.perturb``), the goading studio's questions (``studio.goading``) and the training-data
builders (``guard.training``) all read sentences. Each rule they share is stated here once:

* ``parse`` / ``parse_many``: the embedded spaCy pipeline (en_core_web_sm, without NER), each text parsed once and
  kept in one bounded cache (``embedded.once.BoundedCache``) across turns: a conversation's earlier turns are read
  again every turn;
* ``INTERJECTIONS``: the words a chat message opens with that say nothing ("oh", "well", "haha");
* ``particle`` / ``after_particle`` / ``ECHO_ANSWER``: the answer a reply opens with ("No, ...", "Yep!", "I do.");
* ``SWAP_PERSON``: one pronoun table, first and second person swapped both ways ("your" → "my" to read the user's
  question as the bot's claim, "my" → "your"), and ``TO_SECOND_PERSON`` with the subject and its verb ("I am" →
  "you are") to ask the bot's own words back to it (``to_second_person``);
* the rules over a parse: what a subject, an auxiliary, a negation and a clause of its own are (``subjects``,
  ``auxiliaries``, ``negations``, ``starts_clause``), when the speaker is the subject or owns it ("I", "we", "my X":
  ``speaker_subject``, ``about_speaker``, ``speakers_clause``), a sentence's main verbs and a phrase as written;
* ``affirmative``: what a first-person denial denies ("I don't have pets." → "I have pets."; the negation the other
  way is ``guard.language.perturb.negate``);
* ``time_of``: whether a clause speaks of the present, the past ("I used to live in ...", "originally from ...")
  or a wish ("I'd love to have a dog one day");
* ``NUMBER_WORDS``: the number words, read by ``number_value`` ("twenty-six" → 26), written by ``number_word``;
* ``is_kind_of`` / ``same_kind``: WordNet's "is a kind of" over nouns (a surgeon is a doctor, steak is meat);
* the values a reply gives, read alike by the answer check (``guard.language.answers.answer_check``) and the fact
  sheet: a name (``NAME_SAID``, ``NAME_GIVEN``, ``names_someone``), an age (``AGE``, ``DECADE``), a place
  (``place_name``, ``is_place``), an occupation (``JOB_ROOTS``, ``is_job``), a food (``is_food``, ``made_of``: a
  dish whose WordNet gloss names meat, ``food_word``: a misspelt one), what a count covers (``FAMILY``, ``covers``).
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
_WORDS_AND_GAPS = re.compile(r"[A-Za-z']+|[^A-Za-z'\s]+|\s+")


def to_second_person(text: str) -> str:
    """The speaker's words as the listener says them back (``TO_SECOND_PERSON``): "my dog" -> "your dog", "I am"
    -> "you are"; everything else as written."""
    return "".join(TO_SECOND_PERSON.get(word.lower(), word) for word in _WORDS_AND_GAPS.findall(text))


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
#: a few words put before the answer and set off by a comma or a question mark, the topic or a softener ("Cats, yes.",
#: "Honestly, no.", "Me? No."): the particle after them answers as it would alone
_FRONTED = r"[a-z']+(?:\s+[a-z']+){0,2}\s*[,?]\s+"
_PARTICLES = r"(?P<particle>" + "|".join(sorted((re.escape(p) for p in _YES + _NO + CONFIRMATIONS), key=len, reverse=True)) + r")"
#: what follows a particle: a word that starts a new clause ("No I don't"); "No pets for me" is a determiner
_NEW_CLAUSE = (r"\s+(?:i|i'm|i've|it|it's|that|we|my|not|but|thanks|thank|sorry|haha|lol|never|definitely|absolutely|"
               r"of course|i\s+do|i\s+am)\b")
_PARTICLE = re.compile(
    # the particle, then punctuation, the end, or a word that starts a new clause
    r"^\s*" + _INTERJECTION + _PARTICLES + r"(?=[,.!?;:]|\s*$|" + _NEW_CLAUSE + r")[,.!?;:]*",
    re.IGNORECASE)
#: the same after fronted words, but not asking back ("That's great, no?" is a tag, not an answer)
_FRONTED_PARTICLE = re.compile(
    r"^\s*" + _INTERJECTION + _FRONTED + _PARTICLES + r"(?=[,.!;:]|\s*$|" + _NEW_CLAUSE + r")[,.!;:]*",
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


#: words right after a "no" that take it back ("No, not always.", "No, sometimes.", "Nah, kind of."): the reply answers
#: neither way (after a "yes" they only soften it: "Yes, sometimes." is a yes)
_HEDGE = re.compile(r"^\s*(?:not\s+(?:always|exactly|usually|often|entirely|quite|necessarily)|sometimes|occasionally|"
                    r"kind\s+of|sort\s+of|now\s+and\s+then|from\s+time\s+to\s+time|it\s+depends|depends|"
                    r"more\s+or\s+less)\b", re.IGNORECASE)


def answer_opening(reply: str):
    """The regex match of the reply's opening particle or echo answer, or None (also when the words after it take
    its yes or no back: "No, not always. But I do have some...")."""
    if _NOT_ANSWERS.match(reply):
        return None
    match = _PARTICLE.match(reply) or ECHO_ANSWER.match(reply) or _FRONTED_PARTICLE.match(reply)
    if match is not None and " ".join(match.group("particle").lower().split()) in _NO \
            and _HEDGE.match(reply[match.end():]):
        return None
    return match


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


# ------------------------------------------------------------------------------------------------ rules over a parse
#: what spaCy leaves of an auxiliary when it splits off "n't" ("ca|n't", "wo|n't", "sha|n't") and the auxiliary
NT_STEMS: dict[str, str] = {"ca": "can", "wo": "will", "sha": "shall"}
#: the dependency labels of a clause's nominal subject ("I like dogs", "My dog was adopted")
NOMINAL_SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass"})
#: ... and of any subject, clausal and expletive ones too ("Chatting is fun", "There is a dog")
SUBJECT_DEPS = NOMINAL_SUBJECT_DEPS | {"csubj", "csubjpass", "expl"}
#: the dependency labels whose verb starts a clause of its own: a coordinated clause, an adverbial clause, a clausal
#: complement ("I like dogs *but I hate cats*", "... *because I work late*", "I think *I left*")
CLAUSE_DEPS = frozenset({"conj", "advcl", "ccomp"})
#: a verb's auxiliaries: tense, mood and the passive ("have" of "have been", "was" of "was hired")
AUXILIARY_DEPS = frozenset({"aux", "auxpass"})
#: the "do" a verb's negation or question takes, by the verb's tag ("She likes" -> "does", "I liked" -> "did")
DO_SUPPORT: dict[str, str] = {"VBZ": "does", "VBD": "did", "VBP": "do", "VB": "do"}
#: the subjects that are the speaker ("I", "we"), and the possessives that make a noun the speaker's ("my", "our")
SPEAKER_WORDS = frozenset({"i", "we"})
SPEAKER_OWNERS = frozenset({"my", "our"})


def is_verb(token) -> bool:
    """A verb or an auxiliary (spaCy's VERB / AUX)."""
    return token.pos_ in ("VERB", "AUX")


def subjects(verb) -> list:
    """The verb's nominal subjects (``NOMINAL_SUBJECT_DEPS``), in sentence order."""
    return [c for c in verb.children if c.dep_ in NOMINAL_SUBJECT_DEPS]


def auxiliaries(verb) -> list:
    """The verb's auxiliaries (``AUXILIARY_DEPS``), in sentence order."""
    return [c for c in verb.children if c.dep_ in AUXILIARY_DEPS]


def negations(verb) -> list:
    """The negations on the verb itself ("not", "n't", "never" as spaCy's ``neg``), in sentence order."""
    return [c for c in verb.children if c.dep_ == "neg"]


def is_passive(verb) -> bool:
    """Whether the verb is in the passive ("I was *born* in Rome", "I'm *based* in Oslo": a passive auxiliary)."""
    return any(c.dep_ == "auxpass" for c in verb.children)


def starts_clause(token) -> bool:
    """Whether the token is the verb of a clause of its own inside its sentence (``CLAUSE_DEPS``)."""
    return token.dep_ in CLAUSE_DEPS and is_verb(token)


def is_speaker(token) -> bool:
    """"I" or "we": the speaker, as a subject."""
    return token.lower_ in SPEAKER_WORDS


def owned_by_speaker(noun) -> bool:
    """A noun the speaker owns: "my" / "our" as its possessive ("my dog", "our kids")."""
    return any(c.dep_ == "poss" and c.lower_ in SPEAKER_OWNERS for c in noun.children)


def about_speaker(subject) -> bool:
    """A subject that speaks of the speaker: "I", "we", or "my X" / "our X" ("My job is ...")."""
    return is_speaker(subject) or owned_by_speaker(subject)


def speaker_subject(verb) -> bool:
    """Whether "I" or "we" is a subject of the verb ("*I* live in Paris"; not "My dog lives ...")."""
    return any(is_speaker(s) for s in subjects(verb))


def speakers_own_subject(verb):
    """The verb's subject when it is the speaker's "my X" ("*My name* is Sarah"), else None."""
    return next((s for s in subjects(verb) if owned_by_speaker(s)), None)


def speakers_clause(verb) -> bool:
    """Whether the clause of ``verb`` is the speaker's own: its first subject is about the speaker (``about_speaker``);
    a clause without a subject of its own (a coordinated, adverbial or complement clause, or an open complement:
    "I live in Paris *and work as a nurse*", "I used *to live* in Rome") has its head's."""
    found = subjects(verb)
    if found:
        return about_speaker(found[0])
    if (verb.dep_ in CLAUSE_DEPS or verb.dep_ == "xcomp") and verb.head.i != verb.i:
        return speakers_clause(verb.head)
    return False


def governing_verb(token):
    """The nearest verb at or above the token in its parse (the sentence's root when there is none)."""
    while not is_verb(token) and token.head.i != token.i:
        token = token.head
    return token


def main_verbs(sent) -> list:
    """A sentence's main verbs: its root and the verbs coordinated with a verb ("I *live* in Paris and *work* ...")."""
    return [t for t in sent if is_verb(t) and (t.dep_ == "ROOT" or (t.dep_ == "conj" and is_verb(t.head)))]


def phrase_text(token, skip: Iterable[str] = ("det",), cut: Iterable[str] = ()) -> str:
    """A token's phrase as it was written (hyphens, apostrophes and inner spacing kept), without leading words whose
    dependency is in ``skip`` (determiners: "the red car" -> "red car") and without the children after it whose
    dependency is in ``cut`` (an apposition, a clause, a list: "Sophie, a chatbot" -> "Sophie").

    The text is a slice of the sentence, never a re-join of tokens: re-joining without the punctuation tokens turned
    "Sophie, a no-nonsense AI" into "Sophiea nononsense AI"."""
    skip, cut = frozenset(skip), frozenset(cut)
    dropped = {t.i for c in token.children if c.dep_ in cut and c.i > token.i for t in c.subtree}
    kept = [t for t in token.subtree if t.i not in dropped]
    start = token.i
    while start > kept[0].i and start - 1 not in dropped and token.doc[start - 1] in kept:
        start -= 1
    end = token.i
    while end + 1 <= kept[-1].i and end + 1 not in dropped:
        end += 1
    span = token.doc[start:end + 1]
    while len(span) > 1 and (span[0].dep_ in skip and span[0].i < token.i or span[0].is_punct):
        span = span[1:]
    while len(span) > 1 and span[-1].is_punct:
        span = span[:-1]
    return span.text.strip()


# ------------------------------------------------------------------------------------------------ affirm / negate
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
    question (``guard.language.exchange.denial_support``), because a model trained on negation-heavy contradictions reads
    almost any denial against any statement as a clash."""
    if not _DENIAL_WORD.search(sentence):
        return None
    rest = after_particle(sentence)
    return _AFFIRMED.get_or_make(rest, lambda: _affirmed(rest))


#: "I haven't played it in a long time" says when, not whether: it has been done, so it denies nothing to affirm
_SINCE_WHEN = re.compile(r"\b(?:in (?:a (?:long )?(?:while|time)|ages|years|months|weeks|forever|decades)|for (?:a (?:long )?"
                         r"(?:while|time)|ages|years|months|weeks)|lately|recently|since|"
                         r"as much|as often|so much)\b", re.IGNORECASE)


def _affirmed(sentence: str) -> str | None:
    if _SINCE_WHEN.search(sentence):
        return None
    doc = parse(sentence)
    sents = list(doc.sents)
    if len(sents) != 1:
        return None
    root = sents[0].root
    found = subjects(root)
    if len(found) != 1 or not about_speaker(found[0]):
        return None
    subject = found[0]
    if any(starts_clause(t) for t in doc):
        return None  # one clause only: "I've never been there, but I'd love to go" affirms no single statement
    negated = negations(root)
    determiners = [t for t in doc if t.lower_ == "no" and t.dep_ == "det" and t.head.head.i == root.i]
    if len(negated) + len(determiners) != 1 or any(t.dep_ == "intj" for t in root.children):
        return None
    dropped = {t.i for t in negated}
    # "I don't have any pets" affirms "I have pets": the do-support of a first-person present and "any" go too
    dropped |= {t.i for t in root.children if t.dep_ == "aux" and t.lower_ == "do" and negated and is_speaker(subject)}
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
        text = NT_STEMS.get(token.lower_, token.text) if joined else token.text
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
    aux = auxiliaries(root)
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
#: the English number words and their values, the one table: read by ``number_value`` (and the answer reading's
#: "does this value hold a number"), written by ``number_word`` (training templates, swapped counts)
NUMBER_WORDS: dict[str, int] = {
    **{w: i for i, w in enumerate(("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                                   "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen",
                                   "seventeen", "eighteen", "nineteen"))},
    **{w: 10 * i for i, w in enumerate(("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"),
                                       start=2)},
    "hundred": 100}
_ONES = {w: n for w, n in NUMBER_WORDS.items() if n < 20}
_TENS = {w: n for w, n in NUMBER_WORDS.items() if 20 <= n < 100}
_WORD_OF = {n: w for w, n in NUMBER_WORDS.items()}
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


def number_word(value: int) -> str | None:
    """The one English word for ``value`` (0-19, the tens, 100: 7 -> "seven", 40 -> "forty"), else None."""
    return _WORD_OF.get(value)


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


def sense_names(word: str) -> frozenset[str]:
    """``word``'s WordNet noun senses by name ("dog" -> {"dog.n.01", ...})."""
    return frozenset(s.name() for s in synsets(word))


def same_sense(a: str, b: str) -> bool:
    """Whether two nouns share a WordNet sense: names of one thing ("kid" / "child"), not one a kind of the other."""
    return a.lower() == b.lower() or bool(sense_names(a) & sense_names(b))


def kind_of(specific: str, general: str) -> bool:
    """Whether a sense of ``general`` is a sense of ``specific`` or above it ("poodle" is a kind of "dog")."""
    return bool(sense_names(general) & above(specific))


def _mainly_above(word: str) -> set[str]:
    """``word``'s most frequent sense and what WordNet puts it under by hypernyms alone (not the places it is part of,
    as ``above`` climbs to); empty when WordNet knows no sense of it."""
    with wordnet_turn():
        senses = _senses(word)
        if not senses:
            return set()
        first = senses[0]
        return {first.name()} | {s.name() for s in first.closure(lambda s: s.hypernyms() + s.instance_hypernyms())}


#: what a country is in WordNet ("USA", "the UK", "France"; not "Oregon" or "Georgia", whose first sense is a state)
COUNTRY_ROOT = "country.n.02"


def is_country(word: str) -> bool:
    """Whether ``word`` in its most frequent sense is a country (``COUNTRY_ROOT``; by ``above`` every city would be
    one, being part of a country)."""
    return COUNTRY_ROOT in _mainly_above(word)


def mainly_kind_of(specific: str, general: str) -> bool:
    """Whether ``specific`` in its most frequent sense is a sense of ``general`` or under it: "physician" is a
    "doctor"; a "ferry captain" (first a person in command) is no "pilot", though WordNet files one sense of captain,
    an airship's, under pilot. For a denial, where any sense would deny too much."""
    return bool(sense_names(general) & _mainly_above(specific))


def same_kind(a: str, b: str) -> bool:
    """Whether two nouns name the same thing or one a kind of the other ("physician" / "orthopedic surgeon",
    "vegan" / "vegetarian"): a sense of one is a sense of the other or above it. Words WordNet does not know are
    the same kind only when they are the same word."""
    return a.lower() == b.lower() or kind_of(a, b) or kind_of(b, a)


# ------------------------------------------------------------------------------------------------ values a reply gives
# What the answer check (``guard.language.answers.answer_check``) and the fact sheet (``guard.language.fact_sheet``)
# both read in a sentence: a person's name, an age, a place, an occupation, a food. Stated here once, below both.

#: people words WordNet files under these are occupations ("I'm a nurse"); "I work as ..." takes any person noun
JOB_ROOTS = ("worker.n.01", "professional.n.01", "skilled_worker.n.01", "creator.n.02", "performer.n.01",
             "entertainer.n.01", "scientist.n.01", "serviceman.n.01", "businessperson.n.01", "communicator.n.01",
             "engineer.n.01", "defender.n.01", "programmer.n.01", "operator.n.02", "educator.n.01",
             "employee.n.01", "health_professional.n.01", "specialist.n.01", "expert.n.01")
PERSON_ROOT = "person.n.01"
#: where things are (cities, countries, regions, the words for them: "Paris", "a small town")
PLACE_ROOTS = ("location.n.01",)
#: what is eaten or drunk: a dish, a foodstuff ("lasagna", "steak", "hummus")
FOOD_ROOTS = ("food.n.01", "food.n.02")
#: the words that name a meal or food in general, which name no food ("my favourite dish", "a big dinner")
_GENERAL_FOOD = frozenset({"food.n.01", "food.n.02", "dish.n.02", "meal.n.01", "nutriment.n.01", "foodstuff.n.02",
                           "course.n.07", "cuisine.n.01", "fare.n.04", "dainty.n.01", "delicacy.n.02", "dish.n.01"})

#: how a speaker gives their age: "I'm 34", "I'm 34 years old", "my age is 32", "I just turned 40", "I'm a
#: 22-year-old", "I am a 59 years old" (the number in words or digits, ``number_value``); "I'm 13 years older than
#: you" compares, and gives no age
AGE = re.compile(r"\b(?:i'm|i am|i just turned|i turned|i've just turned|i have just turned|i'll be turning|"
                 r"i'm turning|my age is|i'm only|i am only)\s+(?:only\s+|just\s+|now\s+|actually\s+|really\s+|"
                 r"still\s+|already\s+|a\s+(?=\S+(?:-years?-old|\s+years?\s+old)\b))?"
                 r"(?P<n>\d{1,3}|[a-z]+(?:-[a-z]+)?)(?P<rest>-years?-old|\s+years?\s+old\b|\s+y/?o\b|\s*(?:[.,!;]|$|"
                 r"\s+(?:and|but|which|so|now|this|last|next|in|years(?!\s+(?:older|younger))|though|myself)\b))",
                 re.IGNORECASE)
#: an age by decade: "I'm in my forties"
DECADE = re.compile(r"\bi(?:'m| am)\s+(?:(?:still|only|just|actually|now|already|probably|well)\s+)?in my\s+"
                    r"(?:(?:early|mid|late)[- ])?(?P<decade>twenties|thirties|forties|fifties|sixties|seventies|eighties|"
                    r"nineties)\b", re.IGNORECASE)
DECADES = {"twenties": 20, "thirties": 30, "forties": 40, "fifties": 50, "sixties": 60, "seventies": 70,
           "eighties": 80, "nineties": 90}
#: a name said to the one the speaker talks to: "You're talking to Dominic"
NAME_TALKED_TO = re.compile(r"\b(?i:you(?:'re| are) (?:talking|speaking|chatting) (?:to|with))\s+(?P<name>[A-Z][a-z]+)\b")
#: a name said outright: "my name is Sophie", "call me Max", "the name's Bond"
NAME_SAID = re.compile(r"\b(?i:my name(?:'s| is)|call me|called me|i go by|the name's|the name is|name's)\s+"
                       r"(?P<name>[A-Z][a-z]+)\b")
#: a name given with "I'm": "I'm Anna", "It's Margaret" (``names_someone`` decides whether the word is a name)
NAME_GIVEN = re.compile(r"\b(?:I'm|I am|it's|It's|it is)\s+(?P<name>[A-Z][a-z]+)\b")


#: count words: a family member counted by its own word; "kid" and "child" are one thing
FAMILY = {"kid": "child", "child": "child", "baby": "child", "son": "son", "daughter": "daughter",
          "brother": "brother", "sister": "sister", "sibling": "sibling"}
#: the general things that cover others: "no pets" denies every animal, "no kids" every son and daughter, and "how
#: many siblings?" is answered by brothers and sisters (WordNet puts a brother under kinsman, not sibling)
COVERS = {"pet": ("animal.n.01",), "animal": ("animal.n.01",), "child": ("son", "daughter"),
          "sibling": ("brother", "sister")}


def covers(general: str, specific: str) -> bool:
    """Whether ``general`` things include ``specific`` ones ("pet" covers "dog", "sibling" covers "brother"), each
    word read as ``FAMILY`` names it ("kids" are children)."""
    general, specific = FAMILY.get(general, general), FAMILY.get(specific, specific)
    if general == specific:
        return True
    covered = COVERS.get(general, ())
    if specific in covered:
        return True
    roots = [c for c in covered if "." in c]
    return bool(roots) and is_kind_of(specific, roots)


#: "my X is a nurse" says the speaker's occupation for these X only ("my husband is a chef" does not)
WORK_NOUNS = frozenset({"job", "work", "occupation", "profession", "career", "role", "position", "title"})
ANIMAL_ROOT = "animal.n.01"


def _counted(sense, word: str) -> int:
    return sum(lemma.count() for lemma in sense.lemmas() if lemma.name().lower() == word.lower())


def is_animal(word: str) -> bool:
    """Whether a noun names an animal one could keep ("dog", "chickens", "turtle"): a sense under ``animal.n.01``,
    unless WordNet's most frequent sense is something else and the animal sense is never seen in its tagged corpus
    (a "hobby" is also a falcon, "hobbies" are no pets)."""
    if not is_kind_of(word, (ANIMAL_ROOT,)):
        return False
    with wordnet_turn():
        senses = _senses(word)
        if not senses:
            return False
        animal = [s for s in senses if ANIMAL_ROOT in {k.name() for k in s.closure(lambda x: x.hypernyms())}]
        first = senses[0]
        return first in animal or _counted(first, word) == 0 or any(_counted(s, word) > 0 for s in animal)


def _first_noun_sense(word: str):
    senses = synsets(word)
    return senses[0] if senses else None


def names_someone(token) -> bool:
    """Whether a capitalised word after "I'm" is a person's name ("I'm *Anna*", "I'm *Max*") rather than what the
    speaker is ("I'm *Canadian*", "I'm *Captain* ..."): no "'s" follows it ("I'm Sophie's sister"), and either spaCy
    tags it a proper noun and WordNet's most frequent sense of the word is no kind of person (a demonym, a rank) and no
    adjective alone, or WordNet knows no sense of it at all. A name WordNet files as one person ("Sarah") is an
    instance, not a kind, and stays a name."""
    if not token.text[:1].isupper():
        return False
    after = token.doc[token.i + 1] if token.i + 1 < len(token.doc) else None
    if after is not None and after.tag_ == "POS":
        return False
    if token.tag_ not in ("NNP", "NNPS"):  # the small model tags many names otherwise ("I'm Emily, a nurse": RB)
        return not any(synsets(token.text, pos) for pos in ("n", "a", "v", "r"))
    first = _first_noun_sense(token.text)
    if first is None:
        return not synsets(token.text, pos="a")
    with wordnet_turn():
        kinds = {s.name() for s in first.closure(lambda s: s.hypernyms())}
    return PERSON_ROOT not in kinds


def is_job(word: str) -> bool:
    """Whether a noun names an occupation: some sense under ``JOB_ROOTS`` ("nurse", "nanny", "pilot"), unless its most
    frequent sense is a person of no occupation ("man", "sister": WordNet also files a man as a worker and a sister as
    a nun). Kinds only: one named person ("Burger", a chief justice) makes no word an occupation."""
    roots = set(JOB_ROOTS)
    with wordnet_turn():
        kinds = [{s.name()} | {k.name() for k in s.closure(lambda x: x.hypernyms())} for s in _senses(word)]
    if not any(k & roots for k in kinds):  # class senses only: "burger" is also Warren Burger, a jurist
        return False
    return bool(kinds[0] & roots) or PERSON_ROOT not in kinds[0]


#: words whose first sense is a person of no occupation but which, with a noun before them, name one: "a radio
#: host", "a talk show host" (WordNet's host is first who invites guests; its emcee sense is an entertainer). Kept to
#: the words a persona used: "a bird watcher" and "a book reader" are not jobs, and a wrong job clashes with the real one
JOB_WHEN_COMPOUNDED = frozenset({"host"})


def is_compounded_job(token) -> bool:
    """Whether a noun token is a ``JOB_WHEN_COMPOUNDED`` word with a noun before it ("radio host")."""
    return token.lemma_.lower() in JOB_WHEN_COMPOUNDED and any(c.dep_ == "compound" for c in token.children)


def is_job_noun(token) -> bool:
    """Whether a noun token names an occupation: ``is_job`` of its lemma, or ``is_compounded_job``."""
    return is_job(token.lemma_.lower()) or is_compounded_job(token)


def is_place(word: str) -> bool:
    """Whether WordNet files a word under ``PLACE_ROOTS`` ("Paris", "Winnipeg", "a village")."""
    return is_kind_of(word, PLACE_ROOTS)


#: nouns a place is named after ("a city called Paris", "the town of Ely")
PLACE_NOUNS = frozenset({"city", "town", "village", "place", "country", "state", "island", "suburb", "neighborhood",
                         "neighbourhood", "area", "capital", "region", "province", "county"})


def _common_tagged_place(token) -> bool:
    """Whether a word spaCy tags as a common noun is a place's name all the same: capitalised, not its sentence's
    first word, and a named place by WordNet, its first sense an instance of a kind of place ("I live in Bruges.":
    NNS, lemma "bruge", 2026-11-29-sheet-first.md), not a common noun written with a capital ("a small Village")."""
    if token.tag_ not in ("NN", "NNS") or not token.text[:1].isupper() or token.is_sent_start:
        return False
    senses = synsets(token.text)
    return bool(senses and senses[0].instance_hypernyms()) and is_place(token.text)


def place_name(token) -> str | None:
    """The place name a proper noun starts ("Berlin", "New York", "Addis Ababa"), or the name a place noun is given
    ("a beautiful city called Paris", "the French city of BnB"); None for any other word."""
    if token.tag_ not in ("NNP", "NNPS"):
        if _common_tagged_place(token):
            return token.text
        if token.lemma_.lower() not in PLACE_NOUNS:
            return None
        for child in token.children:  # "the city of Berlin", "a town called / named Ely"
            named = [child] if child.dep_ == "prep" and child.lower_ == "of" else \
                [child] if child.dep_ == "acl" and child.lemma_.lower() in ("call", "name") else []
            for link in named:
                for name in link.children:
                    if name.dep_ in ("pobj", "oprd", "dobj", "attr", "xcomp"):
                        found = place_name(name) if name.tag_ in ("NNP", "NNPS") else (
                            name.text.rstrip(".") if name.text[:1].isupper() and name.pos_ in ("NOUN", "PROPN")
                            else None)
                        if found:
                            return found
        return None
    parts = [t for t in token.subtree if t.tag_ in ("NNP", "NNPS") or (t.dep_ == "compound" and t.pos_ == "PROPN")]
    if not parts:
        return None
    return " ".join(t.text for t in parts)


def is_food(word: str) -> bool:
    """Whether a noun names a food or a dish ("lasagna", "steaks", "hummus"), not a meal or food in general
    ("dinner", "dish", "food")."""
    if not is_kind_of(word, FOOD_ROOTS):
        return False
    with wordnet_turn():
        for sense in _senses(word):
            kinds = {sense.name()} | {s.name() for s in sense.closure(lambda s: s.hypernyms())}
            if kinds & set(FOOD_ROOTS) and not kinds & {"meal.n.01"} and sense.name() not in _GENERAL_FOOD:
                return True
    return False


#: where a WordNet gloss stops saying what a dish is made of: "..., often with other ingredients", "(with raw fish)"
_GLOSS_MAIN = re.compile(r"[,;(]|\b(?:usually|often|sometimes|typically|especially|e\.g\.|i\.e\.|may)\b")
_MADE_OF: BoundedCache = BoundedCache(PARSE_CACHE_LIMIT)


def _food_glosses(word: str) -> list[str]:
    """The main part of the gloss of each food sense of ``word`` and of the dishes it is a kind of, up to the general
    food words ("cheeseburger": 'a hamburger with melted cheese on it', then hamburger's 'a sandwich consisting of a
    fried cake of minced beef served on a bun')."""
    out = []
    with wordnet_turn():
        for sense in _senses(word):
            chain, seen = [sense], set()
            while chain:
                current = chain.pop()
                # food senses only ("lemon" the colour, its taste, the tree say nothing of what is eaten)
                if current.name() in seen or current.name() in _GENERAL_FOOD or not _is_food_sense(current):
                    continue
                seen.add(current.name())
                out.append(_GLOSS_MAIN.split(current.definition(), maxsplit=1)[0])
                chain += current.hypernyms()
                if len(seen) > 4:  # a dish is a few steps below the general food words
                    break
    return out


def _is_food_sense(sense) -> bool:
    """Whether a WordNet sense is a food (under ``FOOD_ROOTS``)."""
    return any(h.name() in FOOD_ROOTS for path in sense.hypernym_paths() for h in path)


def made_of(word: str, roots: Sequence[str]) -> bool:
    """Whether WordNet's gloss says a dish is made of something under ``roots`` ("hamburger": 'a sandwich
    consisting of a fried cake of minced beef' - beef is meat; a cheeseburger is a hamburger), reading only the
    gloss's main part (before a comma, a bracket, "usually", "e.g.") and not a meat offered as a choice
    ("lasagna": '... and meat or vegetables' is no meat dish). For foods whose own place in WordNet (a sandwich, a pasta) says
    nothing of what is in them."""
    if not is_kind_of(word, FOOD_ROOTS):
        return False

    def read() -> bool:
        for gloss in _food_glosses(word):
            doc = parse(gloss)
            words = [t.lower_ for t in doc]
            for i, token in enumerate(doc):
                # a noun of the gloss ("round flat seed": "round" describes the seed, it is no cut of beef)
                w = token.lemma_.lower()
                if token.pos_ not in ("NOUN", "PROPN") or w == word.lower() or len(w) < 3 \
                        or not is_kind_of(w, roots):
                    continue
                # "meat or vegetables" offers a choice: this meat is not what the dish is made of
                other = [words[j] for j, k in ((i + 2, i + 1), (i - 2, i - 1)) if 0 <= j < len(words) and words[k] == "or"]
                if not any(not is_kind_of(o, roots) for o in other):
                    return True
        return False

    return _MADE_OF.get_or_make((word.lower(), tuple(roots)), read)


_FOOD_WORDS: list[str] = []


def food_word(word: str) -> str:
    """A food word WordNet does not know, read as the WordNet food it is closest to in spelling ("Cheeseburgs" ->
    "cheeseburger": a chat's typos and made-up plurals); any other word as it is."""
    if synsets(word):
        return word
    return _SPELT.get_or_make(word.lower(), lambda: _closest_food(word))


_SPELT: BoundedCache = BoundedCache(PARSE_CACHE_LIMIT)


def _closest_food(word: str) -> str:
    import difflib

    with wordnet_turn():
        if not _FOOD_WORDS:
            wn = _wordnet()
            found = set()
            for root in FOOD_ROOTS:
                for sense in wn.synset(root).closure(lambda s: s.hyponyms()):
                    found |= {n.lower() for n in sense.lemma_names() if n.isalpha()}
            _FOOD_WORDS.extend(sorted(found))
    close = difflib.get_close_matches(word.lower(), _FOOD_WORDS, n=1, cutoff=0.85)
    return close[0] if close else word
