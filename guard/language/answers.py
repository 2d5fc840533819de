"""A short answer read with the question it answers: "Aren't you a teacher?" + "Yes, I am." -> "I am a teacher."

Chatbots answer with a particle ("No.", "Yep!"), an echo ("I do.", "I'm not.") or a bare value ("Just one.",
"Madrid."), and an NLI model cannot see what such an answer claims without the question. A bot turn means what it
says in the conversation, so this module turns the answer into the first-person statement it makes, which the
detector pairs like any other sentence of the turn (and shows beside the turn's own words, marked as the reading).

Questions read (the last question of the other speaker's turn):

* yes/no with an auxiliary up front, including negative ones: "Do you have kids?", "Aren't you a teacher?",
  "Is your dog a labrador?", "Didn't you say you had a dog?" (the clause said is what is confirmed or denied);
* tag questions: "You smoke, don't you?", "You're from Canada, right?";
* declarative questions: "So you live in Paris?", "I thought you had a cat?", "You said you like jazz, right?";
* wh-questions answered with a bare value: how many, how old, where (from), name, favourite, colour / kind of,
  what do you do / teach / play, how long: "How many dogs do you have?" + "Just one." -> "I have just one dogs.".

Whether a reply answers at all (``expected_answer``, ``answer_check``, ``degenerate``: below the reading) is the
other half of this module: a question expects a kind of answer (how many -> a count, where -> a place, yes/no -> a
particle or the fact ...), and a reply without it, or one that loops on its words, is evasive.

Yes / no / echo answers: to a negative question "yes" affirms ("Aren't you a teacher?" "Yes." -> "I am a
teacher."), as in English usage; to a negative *declarative* question ("So you don't eat meat?") a bare yes or no is
ambiguous and left unread, while an echo ("I do.") or a confirmation ("Right.") is read. Anything else returns None
and the detector pairs the text as it is. Rules over spaCy's tags (the embedded en_core_web_sm), cached per text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from guard.language import grammar
from guard.language.forms import POSITIVE_OF, with_article
from guard.language.grammar import SWAP_PERSON, after_particle, particle


class QuestionKind(StrEnum):
    """How the question that an answer was read with is built."""

    YES_NO = "yes-no"  # an auxiliary up front: "Do you have kids?"
    NEGATIVE = "negative"  # a negative auxiliary up front: "Aren't you a teacher?"
    TAG = "tag"  # a statement with a tag: "You smoke, don't you?"
    DECLARATIVE = "declarative"  # a statement asked: "So you live in Paris?", "I thought you had a cat?"
    WH = "wh"  # a wh-question answered with a bare value: "How many dogs do you have?" "Two."


@dataclass(frozen=True)
class Reading:
    """What a short answer states once read with its question: the first-person ``statement`` the detector pairs,
    the reply's words that carry it (``answer``: its first sentence), the ``question`` and how it is built."""

    statement: str
    answer: str
    question: str
    kind: QuestionKind


# ------------------------------------------------------------------------------------------ the answer's opening
# ------------------------------------------------------------------------------------------------ the question
_LEAD = re.compile(r"^(?:(?:so|and|but|well|ok|okay|oh|hey|then|also|wait|hmm|really|sorry|um|haha|lol|hold on|"
                   r"ah|yes|yeah|no|cool|nice|wow|interesting)[,!.]?\s+)+", re.IGNORECASE)
_AUX = r"do|does|did|are|is|am|was|were|have|has|had|can|could|will|would|should|shall|must"
_AUX_FIRST = re.compile(rf"^(?P<aux>{_AUX})(?P<neg>n't|\s+not)?\s+(?P<subj>you|u|your\s+[a-z'-]+(?:\s+[a-z'-]+)?)"
                        rf"\s+(?P<neg2>not\s+)?(?P<rest>.*)$", re.IGNORECASE)
_AUX_NEG_CONTRACTED = re.compile(r"^(?P<aux>don't|doesn't|didn't|aren't|isn't|wasn't|weren't|haven't|hasn't|hadn't|"
                                 r"can't|couldn't|won't|wouldn't|shouldn't)\s+(?P<subj>you|u|your\s+[a-z'-]+)"
                                 r"\s+(?P<rest>.*)$", re.IGNORECASE)
_SAID = re.compile(r"^(?:say|said|tell me|told me|mention|mentioned|write|wrote)\s+(?:that\s+)?(?P<clause>.+)$",
                   re.IGNORECASE)
_TAG = re.compile(rf",?\s+(?:(?:{_AUX})(?:n't|\s+not)?\s+(?:you|u|it|i)|(?:don't|doesn't|didn't|aren't|isn't|"
                  r"wasn't|weren't|haven't|hasn't|can't|couldn't|won't|wouldn't)\s+(?:you|u|it)|right|correct|"
                  r"yeah|yes|no|huh|eh|ok|okay|true|is that right|is that true|am i right)\s*$", re.IGNORECASE)
_REPORTED = re.compile(r"^(?:i\s+thought|i\s+heard|i\s+think|i\s+remember|i\s+read|i\s+was\s+told|you\s+said|"
                       r"you\s+told\s+me|you\s+mentioned|didn't\s+you\s+say|did\s+you\s+say|did\s+you\s+not\s+say|"
                       r"so\s+you're\s+saying|you're\s+saying|you\s+say|"
                       # a guess or a bet about the listener: "I would have guessed you were 25.", "I bet you have a
                       # dog too, right?" claim what "I thought you were 25." does
                       r"i(?:\s+would|'d)\s+have\s+(?:guessed|thought|said|assumed)|i(?:\s+would|'d)\s+(?:guess|say)|"
                       r"i\s+bet|i\s+guess|i\s+assume[d]?|i\s+figured?|i\s+suppose[d]?|i\s+imagine[d]?|"
                       r"i'm\s+guessing|i\s+am\s+guessing|i\s+take\s+it)\s+(?:that\s+)?(?P<clause>.+)$",
                       re.IGNORECASE)
#: a name does not change within a chat: "And your name was Elena, right?" checks what the bot said its name is, as
#: "you said your name is Elena" does (read in the present)
_RECALLED_NAME = re.compile(r"^your\s+(?:first\s+|full\s+|real\s+)?name\s+was\b", re.IGNORECASE)
_YOU_CLAUSE = re.compile(r"^(?:you|u|you're|youre|you've|you'd|you'll|your)\b", re.IGNORECASE)
#: a second question run into the first ("You teach do you have dementia?"): not one clause
_INNER_QUESTION = re.compile(rf"\b(?:{_AUX})\s+(?:you|u)\b", re.IGNORECASE)
_WH = re.compile(r"^(?:what|what's|whats|where|where's|when|why|who|who's|which|whose|how|how's)\b", re.IGNORECASE)
#: auxiliary that opens a yes/no question about "you" -> (first-person affirmative, first-person negative)
_FIRST_PERSON_AUX = {
    "do": ("", "do not"), "did": ("did", "did not"), "are": ("am", "am not"), "were": ("was", "was not"),
    "have": ("have", "have not"), "had": ("had", "had not"), "can": ("can", "cannot"),
    "could": ("could", "could not"), "will": ("will", "will not"), "would": ("would", "would not"),
    "should": ("should", "should not"), "shall": ("shall", "shall not"), "must": ("must", "must not"),
    "am": ("am", "am not"), "is": ("am", "am not"), "was": ("was", "was not"), "does": ("", "do not"),
    "has": ("have", "have not"),
}
#: the same for "your X" subjects (third person)
_THIRD_PERSON_AUX = {"does": ("does", "does not"), "do": ("do", "do not"), "is": ("is", "is not"),
                     "are": ("are", "are not"), "was": ("was", "was not"), "were": ("were", "were not"),
                     "has": ("has", "has not"), "have": ("have", "have not"), "did": ("did", "did not"),
                     "can": ("can", "cannot"), "could": ("could", "could not"), "will": ("will", "will not"),
                     "would": ("would", "would not")}
#: the question's words as the answerer says them: "you" is the answerer, "me" the one who asked
_PRONOUNS = {**SWAP_PERSON, "please": ""}  # a question to the bot in its own mouth
#: words an affirmative answer drops ("Do you have any kids?" "Yes." -> "I have kids")
_AFFIRMATIVE_DROPS = frozenset({"any", "ever", "yet"})
#: idioms that look like declarative questions and ask nothing ("You know what?")
_IDIOMS = re.compile(r"^(?:you know(?: what)?|you see|you think so|you sure|you okay|you ok|you there|you too|"
                     r"you know what i mean|you mean|your turn|you what)$|^you mean\b", re.IGNORECASE)
#: what a clause read as one statement may not hold: a second question run in ("... what's the oldest ..."), or a
#: choice put ("in California or Massachusetts?"), whose yes answers neither
_NOT_ONE_CLAUSE = re.compile(r"\b(?:what's|whats|what|how|where|why|when|who)\b|\bor\b", re.IGNORECASE)
#: longest yes/no clause read (longer ones are run-on messages)
_MAX_CLAUSE_WORDS = 14
_SUBJECT_YOU = (("you're", "I am"), ("youre", "I am"), ("you've", "I have"), ("you'd", "I would"),
                ("you'll", "I will"), ("you are", "I am"), ("you were", "I was"), ("you aren't", "I am not"),
                ("you weren't", "I was not"), ("you", "I"), ("u", "I"))


#: where a chat message's sentence ends, read off its punctuation (a short answer needs no parse to find its first)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def _first_sentence(reply: str) -> str:
    """The reply's first sentence ("Yes, I am. Are you?" -> "Yes, I am.")."""
    return _SENTENCE_END.split(reply.strip(), maxsplit=1)[0].strip()


def _words_swapped(text: str) -> str:
    """"you"/"your" turned round to "me"/"my" and back (the question's words as the answerer says them)."""
    return " ".join(filter(None, (_PRONOUNS.get(w.lower(), w) for w in text.split())))


def _last_question(turn: str) -> str | None:
    """The last question sentence of the other speaker's turn, without its leading interjections; a challenge
    that reports what the speaker said ("Oh, I thought you were allergic to cats though!") or guesses ("I bet you
    have a dog.") asks too."""
    pieces = [p.strip() for p in _SENTENCE_END.split(turn.strip()) if p.strip()]
    questions = [p for p in pieces[-2:] if p.endswith("?")]
    # a reported claim said last is what the reply answers, also after a question ("Really? I would have guessed
    # you were 25.")
    if pieces and not pieces[-1].endswith("?") and _REPORTED.match(_LEAD.sub("", pieces[-1].rstrip(".!?"))):
        questions = [pieces[-1]]
    if not questions:
        return None
    text = _LEAD.sub("", questions[-1].rstrip("?.!").strip()).strip(" ,")
    text = re.sub(r",?\s+(?:though|then|too)$", "", text, flags=re.IGNORECASE)
    return text or None


@dataclass(frozen=True)
class _Clause:
    """A yes/no question as a first-person clause: its affirmative and negative statements."""

    affirmative: str
    negative: str
    kind: QuestionKind
    #: the question put the clause negatively ("So you don't eat meat?"): a bare "yes" / "no" cannot be read, an
    #: echo ("I do.") can, and a confirmation ("Right.") confirms the negative
    put_negatively: bool = False


def _sentence(words: str) -> str:
    text = " ".join(words.split()).strip(" ,")
    return text[:1].upper() + text[1:] + "." if text else ""


def _aux_first(question: str) -> _Clause | None:
    match = _AUX_FIRST.match(question)
    negative = False
    if match:
        aux, subj, rest = match.group("aux").lower(), match.group("subj"), match.group("rest")
        negative = bool(match.group("neg") or match.group("neg2"))
    else:
        match = _AUX_NEG_CONTRACTED.match(question)
        if not match:
            return None
        aux, subj, rest = POSITIVE_OF[match.group("aux").lower()], match.group("subj"), match.group("rest")
        negative = True
    kind = QuestionKind.NEGATIVE if negative else QuestionKind.YES_NO
    said = _SAID.match(rest.strip())
    if said and subj.lower() in ("you", "u"):  # "Didn't you say you had a dog?": the clause said is at stake
        clause = _first_person_clause(said.group("clause"), reported=True)
        return None if clause is None else _Clause(clause.affirmative, clause.negative, kind)
    rest = rest.strip(" ,")
    if not rest or _NOT_ONE_CLAUSE.search(rest) or len(rest.split()) > _MAX_CLAUSE_WORDS:
        return None
    if subj.lower() in ("you", "u"):
        positive, negative_verb = _FIRST_PERSON_AUX.get(aux, (None, None))
        head = "I"
    else:
        positive, negative_verb = _THIRD_PERSON_AUX.get(aux, (None, None))
        head = "My " + subj.split(None, 1)[1]
    if positive is None:
        return None
    words = _words_swapped(rest)
    # "any kids?" yes -> "I have kids"; "ever been to Texas?" yes -> "I have been to Texas"
    affirmative_words = " ".join(w for w in words.split() if w.lower() not in _AFFIRMATIVE_DROPS)
    if not affirmative_words:
        return None
    return _Clause(_sentence(" ".join(filter(None, [head, positive, affirmative_words]))),
                   _sentence(" ".join([head, negative_verb, words])), kind)


def _parse(text: str):
    return grammar.parse(text)


def _first_person_clause(clause: str, reported: bool = False) -> _Clause | None:
    """"you had a labrador" -> affirmative "I have a labrador." (a reported clause is read in the present) and its
    negative "I do not have a labrador."; None when the clause is not about "you" / "your X"."""
    clause = clause.strip(" ,")
    if not _YOU_CLAUSE.match(clause) or _IDIOMS.match(clause) or _INNER_QUESTION.search(clause) \
            or _NOT_ONE_CLAUSE.search(clause) or len(clause.split()) > _MAX_CLAUSE_WORDS:
        return None
    lowered = clause.lower()
    for you, me in _SUBJECT_YOU:
        if lowered == you or lowered.startswith(you + " "):
            clause = me + clause[len(you):]
            break
    else:  # "your X ..."
        clause = "My" + clause[len("your"):]
    head, _, rest = clause.partition(" ")
    clause = head + " " + _words_swapped(rest) if rest else head
    return _polarities(clause, reported)


def _polarities(clause: str, reported: bool) -> _Clause | None:
    """The clause's affirmative and negative forms, found from its first verb (spaCy's tags)."""
    doc = _parse(clause)
    tokens = list(doc)
    verb_index = next((i for i, t in enumerate(tokens) if grammar.is_verb(t) and i > 0), None)
    if verb_index is None:
        return None
    words = [t.text for t in tokens]
    negated = [i for i, t in enumerate(tokens) if t.dep_ == "neg" and t.lower_ in ("not", "n't", "never")]
    third = tokens[0].lower_ != "i"
    if negated:  # "I don't eat meat" -> affirmative "I eat meat"; the question put a negative: a bare yes is unclear
        for i in reversed(negated):
            del words[i]
        if words[verb_index].lower() in ("do", "does", "did") and verb_index + 1 < len(words):
            del words[verb_index]
        affirmative = _spaced(words)
        negative_clause = _polarities(affirmative, reported)
        return None if negative_clause is None else _Clause(negative_clause.affirmative, negative_clause.negative,
                                                            QuestionKind.DECLARATIVE, put_negatively=True)
    verb = tokens[verb_index]
    if verb.tag_ in ("VBG", "VBN") and verb_index == 1:  # "you having any family?": no finite verb to answer
        return None
    if reported and verb.tag_ == "VBD":  # "I thought you had a dog" asks whether "I have a dog" holds now
        words[verb_index] = _present(verb, third)
        verb = _parse(_spaced(words))[verb_index]
    affirmative = _spaced(words)
    if verb.pos_ == "AUX" and verb.lower_ not in ("do", "does", "did") or verb.lower_ in ("am", "is", "are", "was",
                                                                                       "were", "'m", "'re"):
        negative = words[:verb_index + 1] + ["not"] + words[verb_index + 1:]
    else:
        # the verb's do-support; a first-person subject takes "do" whatever the tag ("I likes" is still "I do not")
        support = "do" if verb.tag_ == "VBZ" and not third else grammar.DO_SUPPORT.get(verb.tag_, "do")
        negative = words[:verb_index] + [support, "not", verb.lemma_] + words[verb_index + 1:]
    return _Clause(_sentence(affirmative), _sentence(_spaced(negative)), QuestionKind.DECLARATIVE)


def _present(verb, third: bool) -> str:
    """A past verb in the present, first person ("had" -> "have", "were" -> "am")."""
    if verb.lemma_ == "be":
        return "is" if third else "am"
    if verb.lemma_ == "have":
        return "has" if third else "have"
    return verb.lemma_ + ("s" if third else "")


def _spaced(words: list[str]) -> str:
    return re.sub(r"\s+(n't|'s|'m|'re|'ve|'d|'ll)\b", r"\1", " ".join(words))


def _statement_clause(question: str) -> _Clause | None:
    """A tag or declarative question as a clause ("You smoke, don't you?", "I thought you had a cat?")."""
    if _WH.match(question) or _AUX_FIRST.match(question) or _AUX_NEG_CONTRACTED.match(question):
        return None
    tagged = _TAG.search(question)
    body = question[:tagged.start()].strip(" ,") if tagged and tagged.start() > 0 else question
    kind = QuestionKind.TAG if tagged and tagged.start() > 0 else QuestionKind.DECLARATIVE
    body = _LEAD.sub("", body).strip(" ,")
    reported = False
    while match := _REPORTED.match(body):  # "I thought you said you like ..." reports twice
        body, reported = match.group("clause"), True
    reported = reported or bool(_RECALLED_NAME.match(body))
    clause = _first_person_clause(body, reported=reported)
    if clause is None:
        return None
    return _Clause(clause.affirmative, clause.negative, kind, clause.put_negatively)


# ---------------------------------------------------------------------------------------- wh-questions, values
_VALUE_LEAD = re.compile(r"^(?:(?:oh|well|um|umm|hmm|ah|uh|haha|lol)[,!.]?\s+)*(?:it's|it is|its)?\s*", re.IGNORECASE)
#: what a value may open with, by what the template needs: "I have three.", "I'm a nurse.", "I'm Tom."
_VALUE_SUBJECT = {"number": re.compile(r"^(?:i have|i've got|i got|i own|we have|i am|i'm|about|around|roughly)\s+",
                                       re.IGNORECASE),
                  "role": re.compile(r"^(?:i am|i'm|i work as)\s+(?:actually|really|just|currently|now|still)?\s*",
                                     re.IGNORECASE),
                  "name": re.compile(r"^(?:my name is|i'm|i am|call me)\s+", re.IGNORECASE)}
_DODGE = re.compile(r"\b(?:know|sure|idea|remember|say|guess|depends|maybe|perhaps|secret|rather|wish|why|"
                    r"what|nothing|none of your)\b", re.IGNORECASE)
#: words that give an amount without a number word ("a few", "none")
_AMOUNT_WORDS = ("a couple", "a few", "several", "many", "no", "none")
#: a value that gives a number: digits, a number word (``grammar.NUMBER_WORDS``) or an amount word
_HAS_NUMBER = re.compile(r"\b(?:\d+|" + "|".join((*grammar.NUMBER_WORDS, *_AMOUNT_WORDS)) + r")\b", re.IGNORECASE)
_PREPOSITION = re.compile(r"^(?:in|at|on|near|by|from|outside|inside|downtown|around|close to|next to)\b",
                          re.IGNORECASE)

#: (question pattern, statement template, what the value must be): {v} the value, other names the pattern's groups
_WH_TEMPLATES: tuple[tuple[re.Pattern, str, str], ...] = tuple((re.compile(p, re.IGNORECASE), t, need) for p, t, need in (
    (r"^how many (?P<n>[\w' -]+?) do (?:you|u) (?P<verb>have|own|speak|play|know|want)(?P<rest>.*)$",
     "I {verb} {v} {n}{rest}", "number"),
    (r"^how many (?P<n>[\w' -]+?) have (?:you|u) got(?P<rest>.*)$", "I have {v} {n}{rest}", "number"),
    (r"^how old are (?:you|u)(?: now)?$", "I am {v} years old", "number"),
    (r"^how old is your (?P<x>[\w' -]+)$", "My {x} is {v} years old", "number"),
    (r"^where (?:are|r) (?:you|u)(?: originally)? from$", "I am from {place}", "any"),
    (r"^where do (?:you|u) come from$", "I come from {place}", "any"),
    (r"^where (?:were|was) (?:you|u) born$", "I was born {at}", "any"),
    (r"^where do (?:you|u) (?P<verb>live|work|stay|study|teach|go to school)(?P<rest>(?: now| again| these days)?)$",
     "I {verb} {at}", "any"),
    (r"^where did (?:you|u) (?P<verb>grow up|go to school|study|go to college)$", "I did {verb} {at}", "any"),
    (r"^(?:what(?:'s| is)|whats) your (?:first |full )?name(?: again)?$", "My name is {v}", "name"),
    (r"^(?:what are you called|who are you)$", "My name is {v}", "name"),
    (r"^(?:what(?:'s| is)|whats) your fav(?:ou?)?rite (?P<x>[\w' -]+)$", "My favorite {x} is {v}", "any"),
    (r"^what are your fav(?:ou?)?rite (?P<x>[\w' -]+)$", "My favorite {x} are {v}", "any"),
    (r"^what (?:colou?r|kind|type|sort|breed|make|model|brand|size)(?: of [\w' -]+?)? (?:is|was) your (?P<x>[\w' -]+)$",
     "My {x} is {v}", "any"),
    (r"^what (?:kind|type|sort|breed) of (?P<x>[\w' -]+?) do (?:you|u) (?P<verb>have|own|drive|play|like|teach|"
     r"study|make|cook|read|watch)(?P<rest>.*)$", "I {verb} {v}{rest}", "any"),
    (r"^what do (?:you|u) do(?: for (?:a living|work|your job))?(?: again)?$", "I work as {role}", "role"),
    (r"^what(?:'s| is) your (?:job|occupation|profession|line of work)(?: again)?$", "I work as {role}", "role"),
    (r"^what (?P<x>[\w'-]+) do (?:you|u) (?P<verb>teach|study|play|speak|drive|like|love|have|read|watch|eat|drink|"
     r"listen to|work in|work for|live in)(?P<rest>.*)$", "I {verb} {v}{rest}", "any"),
    (r"^what do (?:you|u) (?P<verb>study|teach|drive|play|eat|drink|sell|make|collect|grow)(?P<rest>.*)$",
     "I {verb} {v}{rest}", "any"),
    (r"^how long have (?:you|u) (?P<verb>been|lived|worked|had|known|played|studied|taught|owned)(?P<rest>.*)$",
     "I have {verb}{rest} for {v}", "any"),
    (r"^which (?P<x>[\w' -]+?) do (?:you|u) (?P<verb>\w+)(?P<rest>.*)$", "I {verb} {v}{rest}", "any"),
    (r"^(?:who(?:'s| is)|whos) your (?P<x>[\w' -]+)$", "My {x} is {v}", "name"),
    (r"^(?:what(?:'s| is)|whats) your (?P<x>[\w' -]+)$", "My {x} is {v}", "any"),
))


def _bare_value(reply: str, need: str = "any") -> str | None:
    """The value a reply's first sentence gives, when it is a bare phrase ("Just one.", "At a school.", "Madrid.",
    "It's red.", "I have three."): at most six words, no verb of its own once "it's" / "I have" is taken off, no
    question and no dodge ("I don't know"). None otherwise."""
    first = _first_sentence(reply)
    if not first or first.endswith("?") or _DODGE.search(first) or grammar.answer_opening(first) is not None:
        return None
    value = _VALUE_LEAD.sub("", first.rstrip(".!,;~ ")).strip(" ,")
    if need in _VALUE_SUBJECT:
        value = _VALUE_SUBJECT[need].sub("", value)
    if not value or len(value.split()) > 6 or value.lower() in ("yes", "no", "ok", "okay"):
        return None
    # a one-word value is a value whatever the tagger says of it alone ("Lisbon" tags as a verb)
    if len(value.split()) > 1 and any(t.pos_ in ("VERB", "AUX", "PRON") and t.lower_ not in ("one", "none")
                                      for t in _parse(value)):
        return None
    return value


def _wh_statement(question: str, reply: str) -> str | None:
    for pattern, template, need in _WH_TEMPLATES:
        match = pattern.match(question.strip())
        if not match:
            continue
        value = _bare_value(reply, need)
        if value is None:
            return None
        if need == "number" and not _HAS_NUMBER.search(value):
            return None
        if need == "name" and not value[:1].isupper():
            return None
        groups = {k: _words_swapped(v).strip() for k, v in match.groupdict().items() if v is not None}
        if need != "name" and _parse(value)[0].pos_ in ("NOUN", "ADJ", "NUM", "DET", "ADV", "ADP"):  # "Just one." -> "just one"; "Madrid." stays
            value = value[:1].lower() + value[1:]
        if "n" in groups and (value.lower().endswith(groups["n"].lower()) or groups["n"].lower().startswith("of ")):
            groups["n"] = ""  # "I have two tanks." + "tanks"; "How many of them?" names no noun
        if "n" in groups and groups["n"] and re.search(r"\b(?:one|1|a single)$", value, re.IGNORECASE):
            groups["n"] = " ".join([*groups["n"].split()[:-1], _parse(groups["n"])[-1].lemma_])  # "one dog"
        value = re.sub(r"\s+years?\s+old$", "", value, flags=re.IGNORECASE) if "years old" in template else value
        place = re.sub(r"^from\s+", "", value, flags=re.IGNORECASE)
        at = value if _PREPOSITION.match(value) else f"in {value}"
        role = value if re.match(r"^(?:a|an|the)\s", value, re.IGNORECASE) or value[:1].isupper() and " " in value \
            else with_article(value)
        role = re.sub(r"^(?:A|An|The)\b", lambda m: m.group(0).lower(), role)
        rest = groups.pop("rest", "")
        text = template.format(v=value, place=place, at=at, role=role, rest=f" {rest}" if rest else "",
                               **{k: v for k, v in groups.items()})
        return _sentence(text)
    return None


# ------------------------------------------------------------------------------------------------- the reading
def read_answer(question_turn: str | None, reply: str) -> Reading | None:
    """What ``reply`` states about its speaker once read with the other speaker's turn ``question_turn`` (its last
    question), or None when the reply is no short answer to a question read here.

    >>> read_answer("Wait, aren't you a teacher?", "Yes, I am.").statement
    'I am a teacher.'
    >>> read_answer("How many dogs do you have?", "Just one.").statement
    'I have just one dogs.'
    """
    if not question_turn or not reply.strip():
        return None
    question = _last_question(question_turn)
    if question is None:
        return None
    answer = _first_sentence(reply)
    opened = particle(reply)
    if opened is not None:
        clause = _aux_first(question) or _statement_clause(question)
        if clause is None:
            return None
        word, yes = opened
        if clause.put_negatively and grammar.ECHO_ANSWER.match(reply) is None and grammar.ECHO_ANSWER.match(after_particle(reply)) is None:
            if word not in grammar.CONFIRMATIONS:
                return None  # "So you don't eat meat?" "Yes." could mean either
            yes = False  # "Right.": the negative as it was put
        statement = clause.affirmative if yes else clause.negative
        return Reading(statement, answer, question, clause.kind)
    statement = _wh_statement(question, reply) if _WH.match(question) else None
    return Reading(statement, answer, question, QuestionKind.WH) if statement else None


def resolve(question: str | None, reply: str) -> str | None:
    """The statement ``reply`` makes once read with ``question`` (``read_answer``), or None.

    >>> resolve("Do you have any children?", "No, I only have a daughter.")
    'I do not have any children.'
    """
    reading = read_answer(question, reply)
    return None if reading is None else reading.statement


#: a sentence that answers nothing about the speaker: a dodge, or an answer particle / echo read without a question
_SAYS_NOTHING = re.compile(
    r"^(?:(?:oh|well|um|hmm|haha|lol|ah)[,!.]?\s+)?(?:i\s+(?:don't|do not|dont)\s+know|i'm not sure|i am not sure|"
    r"not sure|i\s+(?:can't|cannot)\s+say|hard to say|who knows|maybe|perhaps|i\s+guess|no idea|i have no idea|"
    r"i\s+(?:don't|do not)\s+remember|i'd rather not say|it depends|i couldn't tell you|good question|"
    r"let me think|i'm not certain|not really sure)\b", re.IGNORECASE)


def says_nothing(reply: str, reading: Reading | None = None) -> bool:
    """Whether a reply, read with its question (``reading``), claims nothing about its speaker: every sentence is a
    dodge ("I don't know."), a greeting or backchannel, a question back, or an answer particle that no question
    gives a meaning ("Yes, I am." with nothing asked). The guard's policies prefer a consistent reply that answers
    over one that says nothing, so the guard does not teach the bot to dodge."""
    from guard.language.text import asserts_nothing, sentences

    if reading is not None:
        return False
    for sentence in sentences(reply):
        if asserts_nothing(sentence) or _SAYS_NOTHING.match(sentence):
            continue
        rest = after_particle(sentence)
        if grammar.answer_opening(sentence) is not None and (not rest or grammar.ECHO_ANSWER.fullmatch(rest) or _SAYS_NOTHING.match(rest)):
            continue  # "Yes.", "Yes, I am." with nothing asked, "No, I don't know."
        return False
    return True


# ------------------------------------------------------------------------------ what a question expects, and answers
class AnswerKind(StrEnum):
    """The kind of answer a message asks for (``expected_answer``)."""

    COUNT = "count"  # "How many dogs do you have?" -> "Two.", "I have 2 dogs", "a cat and a dog"
    AGE = "age"  # "How old are you?" -> "I'm 63."
    PLACE = "place"  # "Where do you live?" -> "In Paris.", "The famous Berlin, it's my home."
    NAME = "name"  # "What's your name?" -> "I'm Sophie."
    JOB = "job"  # "What do you do for work?" -> "I'm a nurse.", "I work as a nurse."
    FOOD = "food"  # "What's your favourite dish?" -> "Lasagna.", "I love spicy burgers."
    YES_NO = "yes-no"  # "Do you have pets?", "So you live in Paris?", "You smoke, don't you?"
    OPEN = "open"  # any other question or request about the speaker: "Tell me about yourself.", "How long ...?"


class AnswerWhy(StrEnum):
    """Why ``answer_check`` decided as it did (machine-readable; the judge words it)."""

    GIVEN = "given"  # the reply gives a value of the expected kind
    PARTICLE = "particle"  # a yes/no question answered with a particle or an echo ("Yes!", "I do.")
    RELATION = "relation"  # a yes/no question answered by a statement of what was asked ("I grew up in Toronto.")
    CLAIM = "claim"  # an open question answered by a statement about the speaker, or nothing asked
    MISSING = "missing"  # no answer of the expected kind
    SAYS_NOTHING = "says-nothing"  # a dodge, a backchannel, a question back (``says_nothing``)
    DEGENERATE = "degenerate"  # repeated words (``degenerate``)


@dataclass(frozen=True)
class AnswerCheck:
    """Whether a reply answers what the other speaker's message asked: the kind of answer it expected (None: it asked
    nothing), whether the reply gives it, whether the reply is degenerate (never an answer), and why."""

    expected: AnswerKind | None
    answered: bool
    degenerate: bool
    why: AnswerWhy


#: a request that asks as a question does: "Tell me about yourself.", "Describe your job."
_REQUEST = re.compile(r"^(?:(?:please|so|now|ok|okay)[,]?\s+)?(?:tell me|describe|talk about|say something|"
                      r"share something)\b", re.IGNORECASE)
#: "Tell me again, how many dogs?": a request that opens a question is read past
_TELL_ME = re.compile(r"^(?:tell me|remind me|say)(?:\s+(?:again|once more|honestly|please))?[,:]?\s+", re.IGNORECASE)
#: the words that say which kind of answer a question expects, in the order they decide (the first that matches)
_KIND_CUES: tuple[tuple[AnswerKind, re.Pattern], ...] = tuple((k, re.compile(p, re.IGNORECASE)) for k, p in (
    (AnswerKind.COUNT, r"\bhow many\b"),
    (AnswerKind.AGE, r"\bhow old\b|\b(?:your|ur) age\b|\bwhat age\b|\btwenties|thirties|forties|fifties|sixties|"
                     r"seventies|eighties\b|\byears old\b"),
    (AnswerKind.NAME, r"\b(?:your|ur) (?:first |full |last |real )?name\b|\bwho (?:are you|am i (?:talking|speaking|"
                      r"chatting) (?:to|with)|is this|'s this|is speaking)\b|\bwhat (?:are you|should i|can i|do i) "
                      r"call\b|\b(?:are|were) (?:you|u) called\b|\byou(?:'re| are) called\b"),
    (AnswerKind.PLACE, r"^where\b|\bwhere (?:do|did|are|were|was|is|have|abouts)\b|\b(?:what|which) (?:city|country|"
                       r"town|state|part of)\b|\b(?:live|(?<!for a )living|lived|grow up|grew up|born|raised|hometown|"
                       r"come from|are from|you from)\b"),
    (AnswerKind.FOOD, r"\b(?:eat|eats|ate|eating|dish|dishes|dinner|lunch|breakfast|brunch|food|foods|meal|meals|cook|"
                      r"cooking|snack|dessert|supper|meat|vegetarian|vegan)\b"),
    (AnswerKind.JOB, r"\b(?:job|jobs|occupation|profession|career|line of work|for a living|for work|work as)\b|"
                     r"\bwhat (?:do|did) (?:you|u) do\b(?!\s+(?:for fun|in your (?:free|spare) time|on weekends|"
                     r"to relax|today|yesterday|last))|\bwhat (?:kind|sort|type) of work\b")))
#: a yes/no question about the speaker's occupation names one: "You're a doctor, right?" (read off the noun)
_YOU_SUBJECT = frozenset({"you", "u", "yourself"})


def _asked(message: str) -> tuple[str, bool] | None:
    """What the message asks: its last question (``_last_question``: a reported challenge counts) with "Tell me
    again," read past, or a request ("Tell me about yourself."); and whether it is a request. None: it asks
    nothing."""
    question = _last_question(message)
    if question is not None:
        return _TELL_ME.sub("", question).strip() or question, False
    pieces = [p.strip() for p in _SENTENCE_END.split(message.strip()) if p.strip()]
    for piece in reversed(pieces[-2:]):
        text = _LEAD.sub("", piece).strip(" .!,")
        if _REQUEST.match(text):
            return text, True
    return None


def _cued(question: str) -> AnswerKind | None:
    return next((kind for kind, cue in _KIND_CUES if cue.search(question)), None)


def _is_yes_no(question: str) -> bool:
    """An auxiliary up front ("Do you have kids?", "Aren't you a teacher?"), a tag ("You smoke, don't you?") or a
    statement asked ("So you live in Paris?"); not a wh-question, and not a choice ("Paris or Rome?")."""
    if _WH.match(question) or re.search(r"\bor\b", question, re.IGNORECASE):
        return False
    if _AUX_FIRST.match(question) or _AUX_NEG_CONTRACTED.match(question):
        return True
    tagged = _TAG.search(question)
    body = question[:tagged.start()] if tagged and tagged.start() > 0 else question
    body = _LEAD.sub("", body).strip(" ,")
    while match := _REPORTED.match(body):
        body = match.group("clause")
    return bool(_YOU_CLAUSE.match(body)) and not _IDIOMS.match(body)


def expected_answer(question: str) -> AnswerKind | None:
    """The kind of answer a message expects from the one it is put to.

    Read off its last question (or a request): a yes/no question (an auxiliary up front, a tag, a statement asked:
    "So you live in Paris?") expects ``YES_NO``; any other question or request expects the kind its words name -
    how many (``COUNT``), how old / age (``AGE``), where / live / from (``PLACE``), name / who are you (``NAME``),
    job / work / do for a living (``JOB``), eat / dish / dinner / food / cook (``FOOD``) - or else ``OPEN`` ("Tell
    me about yourself.", "How long have you been working?", "What do you do for fun?"); a choice ("Cats or dogs?")
    is ``OPEN``. None when the message asks nothing (a statement, a greeting): no reply to it fails to answer.

    >>> expected_answer("Tell me again, how many dogs?")
    <AnswerKind.COUNT: 'count'>
    >>> expected_answer("So you live in Berlin?")
    <AnswerKind.YES_NO: 'yes-no'>
    """
    asked = _asked(question) if question and question.strip() else None
    if asked is None:
        return None
    text, request = asked
    if not request and _is_yes_no(text):
        return AnswerKind.YES_NO
    return _cued(text) or AnswerKind.OPEN


# ---------------------------------------------------------------------------------------------- degenerate replies
_WORD = re.compile(r"[a-z0-9']+")
#: the rule: a word said 4+ times in a row, a run of 2-4 words said 3+ times back to back, or a reply of 6+ words
#: whose distinct words are at most 40 % of them ("No, no, no, no, no, no. No, I'm not.", "No no please, no no please")
DEGENERATE_RUN, DEGENERATE_PHRASE_RUN, DEGENERATE_MIN_WORDS, DEGENERATE_DISTINCT = 4, 3, 6, 0.4


def degenerate(reply: str) -> bool:
    """Whether a reply is degenerate: the same word ``DEGENERATE_RUN`` (4) times or more in a row, the same run of 2 to
    4 words ``DEGENERATE_PHRASE_RUN`` (3) times or more back to back, or ``DEGENERATE_MIN_WORDS`` (6) words or more of
    which at most ``DEGENERATE_DISTINCT`` (40 %) are distinct. "No, no, no! I'm not a big meat-eater." is emphasis, not a
    loop (three, then other words); "No, no, no, no, no, no. No, I'm not." is a loop."""
    words = _WORD.findall(reply.lower())
    if not words:
        return False
    for size, times in ((1, DEGENERATE_RUN), *((n, DEGENERATE_PHRASE_RUN) for n in (2, 3, 4))):
        for start in range(len(words) - size * times + 1):
            phrase = words[start:start + size]
            if all(words[start + k * size:start + (k + 1) * size] == phrase for k in range(1, times)):
                return True
    return len(words) >= DEGENERATE_MIN_WORDS and len(set(words)) <= DEGENERATE_DISTINCT * len(words)


# ------------------------------------------------------------------------------------- the values a reply gives
#: "I really do.", "I sure am.": an echo with an adverb (``grammar.ECHO_ANSWER`` takes the bare echo)
_ECHO_WITH_ADVERB = re.compile(r"^\s*i(?:'m| am)?\s+(?:really|sure|certainly|definitely|totally|actually|still|just|"
                               r"absolutely|truly)\s+(?:(?:do|am|have|can|did|will|was|does|is)(?:n't|\s+not)?|not)"
                               r"\s*(?=[,.!?;:]|$)", re.IGNORECASE)
#: an amount said without a number ("a few", "lots"), beside the number words (``grammar.number_value``)
_AMOUNT = frozenset({"few", "couple", "several", "many", "lots", "lot", "none", "dozens", "hundreds", "bunch",
                     "plenty", "handful", "total"})
#: an age given by comparison, which answers a yes/no question about one ("No, I'm older than that.")
_AGE_COMPARED = re.compile(r"\b(?:i'm|i am)\s+(?:\w+\s+){0,3}?(?:older|younger|old|young)\b", re.IGNORECASE)
_JOB_SAID = re.compile(r"\b(?:i work(?:ed)? (?:as|at|in|for)\b|working as|for a living|"
                       r"my (?:" + "|".join(sorted(grammar.WORK_NOUNS)) + r")(?:'s| is| involves)\s+(?!(?:actually |just |really |a "
                       r"|pretty |very |quite )*(?:good|great|nice|fine|ok|okay|interesting|fun|hard|one)\b)|"
                       r"i'm retired|i am retired|i'm unemployed|i am unemployed|i don't work|i do not work|i'm a student"
                       r"|i am a student|i run (?:a|my)\b|i own (?:a|my)\b)", re.IGNORECASE)
#: the kinds two nouns must share to be about the same thing in a yes/no answer ("a pilot?" "I'm an engineer.")
_SORTS = (("animal.n.01",), ("relative.n.01",), grammar.FOOD_ROOTS, grammar.PLACE_ROOTS)


def _sentences_of(reply: str) -> list:
    return list(grammar.parse(reply).sents)


def _speaks_of_self(sent) -> bool:
    """A sentence with the speaker in it as a subject or an owner ("I ...", "we ...", "my X ...")."""
    return any((t.dep_ in grammar.NOMINAL_SUBJECT_DEPS and grammar.is_speaker(t)) or
               (t.lower_ in grammar.SPEAKER_OWNERS and t.dep_ == "poss") for t in sent)


def _owned_by_listener(question: str) -> set[str]:
    """The lemmas of what an open request asks about as the listener's ("Tell me about your pets" -> {"pet"})."""
    return {t.head.lemma_.lower() for t in grammar.parse(question)
            if t.lower_ in ("your", "ur") and t.dep_ == "poss" and t.head.pos_ == "NOUN"}


def _speaks_of(sent, things: set[str]) -> bool:
    """A statement whose subject is what was asked about or one the speaker names, not a place ("Tell me about your
    pets" "Max loves long walks.": the speaker tells of its pet by name; "Paris is lovely." tells nothing of it)."""
    return any(t.dep_ in grammar.NOMINAL_SUBJECT_DEPS and ((t.pos_ == "PROPN" and not grammar.is_place(t.text)) or t.lemma_.lower() in things)
               for t in sent) and any(grammar.is_verb(t) for t in sent)


#: the longest fragment read as a bare value ("In the city of Paris."; "The best thing about life, Sophie." is not one)
_BARE_WORDS = 5


def _bare(sent) -> bool:
    """A fragment: no verb, a few words ("Two.", "In Paris.", "Four!", "A nurse.")."""
    words = [t for t in sent if not t.is_punct and t.pos_ != "INTJ"]
    return 0 < len(words) <= _BARE_WORDS and not any(grammar.is_verb(t) for t in words)


def _number(token) -> bool:
    return grammar.number_value(token.text) is not None or token.lower_ in _AMOUNT or token.like_num


def _matches(noun: str, asked: str) -> bool:
    """Whether a noun of the reply is what the question counts or names: the same word, a kind of it (a surgeon is a
    doctor), or one the asked word covers (``grammar.covers``: "pets?" "a cat"; "siblings?" "a brother")."""
    if not asked:
        return True
    return grammar.covers(asked, noun) or grammar.same_kind(noun, asked)


def _gives_count(sents, counted: str) -> bool:
    for sent in sents:
        if _bare(sent) and any(_number(t) for t in sent):
            return True  # "Two.", "Just one!", "Four!"
        first = next((t for t in sent if not t.is_punct), None)
        if first is not None and first.i + 1 < len(sent.doc) and _number(first) and sent.doc[first.i + 1].is_punct:
            return True  # "One, I'm afraid of it."
        for token in sent:
            if token.pos_ not in ("NOUN", "PROPN") and not (token.dep_ == "dobj" and _number(token)):
                continue
            verb = grammar.governing_verb(token)
            if not (grammar.speakers_clause(verb) or grammar.owned_by_speaker(token)):
                continue
            if token.dep_ == "dobj" and _number(token) and verb.lemma_ in ("have", "get", "own"):
                return True  # "I have three.", "I've got a few..."
            if not _matches(token.lemma_.lower(), counted):
                continue
            modifiers = [c for c in token.children if c.dep_ in ("nummod", "det", "quantmod", "amod")]
            if any(_number(c) for c in modifiers) or any(_number(t) for t in token.subtree if t.i < token.i):
                return True  # "I have 2 dogs", "a total of 5 dogs", "no dogs"
            if verb.lemma_ in ("have", "own", "get") and any(c.lower_ in ("a", "an", "one", "no") for c in modifiers):
                return True  # "I have a dog named Stella", "a brother, a boy, and a sister"
            if grammar.negations(verb) and verb.lemma_ in ("have", "own"):
                return True  # "I don't have any dogs"
    return False


def _gives_age(sents, compared: bool) -> bool:
    for sent in sents:
        text = sent.text
        for match in grammar.AGE.finditer(text):
            value = grammar.number_value(match.group("n"))
            if value is not None and 1 <= value <= 120:
                return True
        if grammar.DECADE.search(text) or re.search(r"\b\d{1,3}\s+years?\s+old\b", text, re.IGNORECASE) and \
                _speaks_of_self(sent):
            return True
        if compared and _AGE_COMPARED.search(text):
            return True
        if _bare(sent) and any(_number(t) for t in sent):
            return True  # "63."
    return False


#: verbs that say where the speaker lives or comes from: a place named anywhere in their sentence is an answer
_HOME_VERBS = frozenset({"live", "stay", "reside", "grow", "bear", "raise", "base", "move", "settle"})
#: auxiliaries that put a clause out of the present facts ("I can come to Paris", "I'd go to Rome")
_NOT_NOW = frozenset({"can", "could", "would", "'d", "might", "will", "'ll", "may", "should"})


def _home_said(sent) -> bool:
    """A sentence that says where the speaker lives or is from: a speaker's clause with a verb of living, growing up
    or coming from ("I'm from", "I grew up"), or the speaker's home ("it's my home", "my hometown")."""
    for token in sent:
        lemma = token.lemma_.lower()
        if grammar.is_verb(token) and grammar.speakers_clause(token) and (
                lemma in _HOME_VERBS or (lemma in ("be", "come") and any(c.lower_ == "from" for c in token.children))):
            return True
        if lemma in ("home", "hometown") and (grammar.owned_by_speaker(token) or (
                token.dep_ == "compound" and grammar.owned_by_speaker(token.head))) and not any(
                t.lower_ == "away" for t in sent):
            return True  # "it's my home", "Berlin is my home city"; not "my home away from home"
    return False


def _gives_place(sents) -> bool:
    for sent in sents:
        home = _home_said(sent)
        if not (home or _speaks_of_self(sent) or _bare(sent)):
            continue
        for token in sent:
            name = grammar.place_name(token)
            verb = grammar.governing_verb(token)
            here_now = grammar.speakers_clause(verb) and not any(a.lower_ in _NOT_NOW for a in grammar.auxiliaries(verb))
            if name and (home or _bare(sent) or here_now and (grammar.is_place(name) or token.dep_ == "pobj")):
                return True  # "I live in Paris", "The famous Berlin, it's my home", "My last vacation was to Hawaii"
            if token.pos_ == "NOUN" and token.dep_ == "pobj" and token.head.lower_ in ("in", "from", "near") \
                    and grammar.is_place(token.lemma_) and home:
                return True  # "I live in a small town", "I grew up in a village"
    return False


def _gives_name(sents) -> bool:
    for sent in sents:
        text = sent.text
        if grammar.NAME_SAID.search(text):
            return True
        for match in grammar.NAME_GIVEN.finditer(text):
            token = next((t for t in sent if t.idx == sent.start_char + match.start("name")), None)
            if token is not None and grammar.names_someone(token):
                return True
        words = [t for t in sent if not t.is_punct and t.pos_ != "INTJ"]
        if _bare(sent) and all(t.tag_ in ("NNP", "NNPS") or t.pos_ == "ADV" for t in words) and any(
                t.text[:1].isupper() and t.tag_ in ("NNP", "NNPS") for t in words):
            return True  # "Sophie.", "Just Sophie."
    return False


def _gives_job(sents) -> bool:
    for sent in sents:
        if _JOB_SAID.search(sent.text):
            return True
        for token in sent:
            if token.pos_ != "NOUN":
                continue
            verb = grammar.governing_verb(token)
            attribute = token.dep_ in ("attr", "conj", "appos") and verb.lemma_ == "be"
            if attribute and grammar.speakers_clause(verb) and grammar.is_job_noun(token):
                return True  # "I'm a nurse", "I'm Anna, your nanny!", "I'm Emily, a nurse and ..."
        if _bare(sent) and any(t.pos_ == "NOUN" and grammar.is_job_noun(t) for t in sent):
            return True  # "A nurse."
    return False


def _gives_food(sents, asked: str) -> bool:
    """A food named in a sentence about the speaker, other than the question's own words ("What would you cook for a
    barbecue?" "... the barbecue" names the occasion, not a dish)."""
    said = {t.lemma_.lower() for t in grammar.parse(asked)} if asked else set()
    for sent in sents:
        if not (_speaks_of_self(sent) or _bare(sent)):
            continue
        if any(t.pos_ in ("NOUN", "PROPN") and t.lemma_.lower() not in said
               and grammar.is_food(grammar.food_word(t.lemma_.lower())) for t in sent):
            return True  # "I love spicy burgers", "My favorite dish is *Cheeseburgs!"
    return False


def _gives(kind: AnswerKind, sents, question: str, compared: bool = False) -> bool:
    if kind == AnswerKind.COUNT:
        return _gives_count(sents, _counted(question))
    if kind == AnswerKind.AGE:
        return _gives_age(sents, compared)
    if kind == AnswerKind.PLACE:
        return _gives_place(sents)
    if kind == AnswerKind.NAME:
        return _gives_name(sents)
    if kind == AnswerKind.JOB:
        return _gives_job(sents)
    if kind == AnswerKind.FOOD:
        return _gives_food(sents, question)
    return False


def _counted(question: str) -> str:
    """What "how many" counts ("How many dogs do you have?" -> "dog"); "" when it names nothing ("How many?")."""
    match = re.search(r"\bhow many\s+(?P<rest>[\w' -]+)", question, re.IGNORECASE)
    if not match:
        return ""
    nouns = [t for t in grammar.parse(match.group("rest")) if t.pos_ in ("NOUN", "PROPN")]
    return nouns[0].lemma_.lower() if nouns else ""


def _asked_clause(question: str):
    """The verb of the clause the yes/no question asks about the other speaker ("So you *live* in Berlin?", "Are you
    an only child?" -> *are*), and the nouns it asks about (its objects and attributes), or (None, [])."""
    doc = grammar.parse(question.rstrip("?.! ") + "?")  # asked as a question: "Do you like steak" parses wrong
    for token in doc:  # the head of "you": a verb, or what the small model takes for one ("Do you like/IN steak?")
        if any(s.lower_ in _YOU_SUBJECT or (s.dep_ in grammar.NOMINAL_SUBJECT_DEPS and any(
                c.dep_ == "poss" and c.lower_ in ("your", "ur") for c in s.children)) for s in grammar.subjects(token)):
            nouns = [t.lemma_.lower() for t in token.subtree if t.pos_ in ("NOUN", "PROPN")
                     and t.dep_ not in grammar.NOMINAL_SUBJECT_DEPS]
            return token, nouns
    return None, []


#: verbs that answer for one another in a yes/no answer ("Do you like steak?" "I love lamb.")
_SAME_RELATION = ({"have", "get", "own", "keep"}, {"like", "love", "enjoy", "adore", "hate", "prefer", "fancy",
                                                   "dislike"})


def _relation(lemma: str) -> frozenset[str]:
    return frozenset(next((group for group in _SAME_RELATION if lemma in group), {lemma}))


def _states_relation(sents, question: str) -> bool:
    """A yes/no question answered without a particle: a first-person clause with the question's own verb ("Have you
    ever flown?" "I've flown a few times."), or, for "be" and "have", with a noun of what was asked ("Are you an only
    child?" "I'm an only-child."; "Do you have any sisters?" "I have a brother.")."""
    verb, nouns = _asked_clause(question)
    if verb is None:
        return False
    lemma = verb.lemma_.lower()
    relation = _relation(lemma)
    ever = any(t.lower_ == "ever" for t in verb.children)
    for sent in sents:
        for token in sent:
            owned = grammar.owned_by_speaker(token) or (token.dep_ == "compound" and grammar.owned_by_speaker(
                token.head))
            if "have" in relation and (token.pos_ == "NOUN" or token.dep_ == "compound") and owned and any(
                    _matches(token.lemma_.lower(), n) for n in nouns):
                return True  # "Do you have any pets?" "My cat, Luna!", "my pet Pomerama"
            if not grammar.is_verb(token) or not grammar.speakers_clause(token):
                continue
            if ever and any(c.lower_ == "never" for c in token.children):
                return True  # "Have you ever flown anywhere?" "I have never been on a plane."
            if token.lemma_.lower() not in relation:
                continue
            if lemma not in ("be", "have", "do", "get"):
                return True
            said = [t.lemma_.lower() for t in token.subtree if t.pos_ in ("NOUN", "PROPN")
                    and t.dep_ not in grammar.NOMINAL_SUBJECT_DEPS and t.dep_ != "poss"]
            if any(_matches(s, n) or _same_sort(s, n) for s in said for n in nouns):
                return True
    return False


def _same_sort(a: str, b: str) -> bool:
    """Two nouns of one sort: both occupations, animals, relatives, foods or places ("pilot" / "engineer")."""
    if grammar.is_job(a) and grammar.is_job(b):
        return True
    return any(grammar.is_kind_of(a, sort) and grammar.is_kind_of(b, sort) for sort in _SORTS)


def _topic_of(question: str) -> AnswerKind | None:
    """What a yes/no question without a cue word asks about, read off what it names: an occupation ("You're a doctor,
    right?"), a food ("Do you like steak?") or a place ("Is it Winnipeg?")."""
    verb, nouns = _asked_clause(question)
    if verb is None:
        return None
    if verb.lemma_ == "be" and any(grammar.is_job(n) for n in nouns):
        return AnswerKind.JOB
    if any(grammar.is_food(n) for n in nouns):
        return AnswerKind.FOOD
    return None


def _answers_yes_no(reply: str, sents, question: str) -> AnswerWhy | None:
    for sent in sents:
        text = sent.text.strip()
        if grammar.answer_opening(text) is not None or _ECHO_WITH_ADVERB.match(text):
            return AnswerWhy.PARTICLE
    topic = _cued(question) or _topic_of(question)
    if topic is not None and _gives(topic, sents, question, compared=True):
        return AnswerWhy.GIVEN  # "So you live in Berlin?" "I live in Paris."; "You're a doctor?" "I'm a nurse."
    if _states_relation(sents, question):
        return AnswerWhy.RELATION
    return None


def answer_check(question: str | None, reply: str) -> AnswerCheck:
    """Whether ``reply`` answers what ``question`` (the other speaker's message) asked (``expected_answer``).

    * a degenerate reply (``degenerate``) never answers; nor does one that says nothing (``says_nothing``, read with
      the question: "I don't know.", "Cool!", a question back);
    * a typed question is answered when the reply gives a value of its kind, as its speaker's own: a count (digits,
      number words, "a few", "no dogs", "a cat and a dog" to "how many pets"), an age ("I'm 63", "in my forties"), a
      place (a place name in a sentence about the speaker: "The famous Berlin, it's my home."), a name ("my name is
      X", "I'm X", "call me X"), an occupation ("I work as ...", "I'm a nurse", a WordNet occupation), a food (a
      WordNet food in a sentence about the speaker: "I love spicy burgers"), or a bare value ("Two.", "Madrid.");
    * a yes/no question is answered by an answer particle or an echo opening any sentence ("Yes!", "No, ...", "I
      do.", "I really do."), by the value the question is about ("So you live in Berlin?" "I live in Paris."), or by
      a first-person statement of the asked relation ("Have you ever flown?" "I've flown twice.");
    * an open question is answered by any statement about the speaker; a message that asks nothing by any reply
      that says something.

    >>> answer_check("How many dogs do you have?", "I have a total of 5 dogs.").answered
    True
    >>> answer_check("How many dogs do you have?", "In Paris, we say, I'm a dog to one.").why
    <AnswerWhy.MISSING: 'missing'>
    """
    expected = expected_answer(question) if question else None
    if degenerate(reply):
        return AnswerCheck(expected, False, True, AnswerWhy.DEGENERATE)
    reading = read_answer(question, reply) if question else None
    if not reply.strip() or says_nothing(reply, reading):
        return AnswerCheck(expected, False, False, AnswerWhy.SAYS_NOTHING)
    if expected is None:
        return AnswerCheck(None, True, False, AnswerWhy.CLAIM)
    asked = _asked(question or "")
    text = asked[0] if asked else ""
    sents = _sentences_of(reply)
    if expected == AnswerKind.YES_NO:
        why = _answers_yes_no(reply, sents, text)
    elif expected == AnswerKind.OPEN:
        asked_of = _owned_by_listener(question or "")
        why = AnswerWhy.CLAIM if any(_speaks_of_self(s) or _speaks_of(s, asked_of) for s in sents) else None
    elif _gives(expected, sents, text):
        why = AnswerWhy.GIVEN
    else:
        why = None
    return AnswerCheck(expected, why is not None, False, why or AnswerWhy.MISSING)
