"""Read a bare yes/no answer as the statement it makes: "Do you have kids?" + "No." -> "I do not have kids."

Chatbots answer yes/no questions with a particle ("No, I only have a daughter.", "Nope.") and an NLI model cannot
see what "No" denies without the question, so a contradiction between the particle and the rest of the reply
(CDConv's intra-sentence example) or a later reply ("Nope." ... "My dog barks all night.") goes unseen. This module
turns a particle that answers the other speaker's yes/no question into a first-person statement, which the detector
pairs like any other sentence of that turn. Only questions addressed to "you" with an auxiliary up front are
resolved (do, are, have, can, will, ... you); anything else returns None and the detector pairs the text as it is.
"""

from __future__ import annotations

import re

#: answer particles by polarity; a reply must start with one (case-insensitive), followed by punctuation, a space
#: or the end. First-person openers ("I have ...") are statements already, not particles.
_YES = ("yes", "yeah", "yep", "yup", "yea", "sure", "of course", "definitely", "absolutely", "certainly")
_NO = ("no", "nope", "nah", "not really", "not at all", "no way", "of course not", "definitely not",
       "absolutely not", "certainly not")
#: openers that start with a particle word but answer nothing ("No problem!", "Sure thing")
_NOT_ANSWERS = re.compile(r"^\s*(?:no\s+(?:problem|worries|doubt|idea|clue|kidding|offense|offence)|sure\s+thing)\b",
                          re.IGNORECASE)
_PARTICLE = re.compile(
    r"^\s*(?:(?:oh|well|haha|lol|um|hmm|ah)[,!.]?\s+)?(?P<particle>" + "|".join(
        sorted((re.escape(p) for p in _YES + _NO), key=len, reverse=True))
    # then punctuation, the end, or a word that starts a new clause ("No I don't"); "No pets for me" is a determiner
    + r")(?=[,.!?;:]|\s*$|\s+(?:i|i'm|i've|it|it's|that|we|my|not|but|thanks|thank|sorry|haha|lol|never|"
      r"definitely|absolutely|of course)\b)[,.!?;:]*",
    re.IGNORECASE)
#: auxiliary that opens a yes/no question -> (first-person affirmative, first-person negative)
_AUXILIARIES = {
    "do": ("", "do not"), "did": ("did", "did not"), "are": ("am", "am not"), "were": ("was", "was not"),
    "have": ("have", "have not"), "had": ("had", "had not"), "can": ("can", "cannot"),
    "could": ("could", "could not"), "will": ("will", "will not"), "would": ("would", "would not"),
    "should": ("should", "should not"), "would've": ("would have", "would not have"),
}
_QUESTION = re.compile(r"(?:^|[.!?]\s+)(?:(?:so|and|but|well|ok|okay|oh|hey|then|also)[,]?\s+)?"
                       r"(?P<aux>[A-Za-z']+)\s+you\s+(?P<rest>[^.!?]*?)\s*\?\s*$", re.IGNORECASE)
_PRONOUNS = {"your": "my", "yours": "mine", "yourself": "myself", "you": "me", "u": "me", "ur": "my"}


#: an elliptical answer that echoes the question's auxiliary ("I do.", "i am not .", "I haven't!", "Not anymore.",
#: "Never."), standing alone before punctuation or the end - "I do not have time" is a statement, not an echo
_ECHO = re.compile(
    r"^\s*(?:(?:oh|well|haha|lol|um|hmm|ah)[,!.]?\s+)?(?P<particle>i\s*(?:do|am|'m|have|'ve|can|did|will|would|was|could)"
    r"(?:\s*not|n't)?|i\s+(?:don't|dont|can't|cant|won't|wont|didn't|didnt|haven't|havent|wasn't|wasnt|couldn't|"
    r"wouldn't)|not\s+(?:anymore|any more|yet)|never)\s*(?=[,.!?;:]|$)[,.!?;:]*",
    re.IGNORECASE)
_NEGATIVE_ECHO = re.compile(r"not|n't|\bdont\b|\bcant\b|\bwont\b|didnt|havent|wasnt|never", re.IGNORECASE)


def _opening(reply: str):
    """The regex match of the reply's opening particle or echo answer, or None."""
    if _NOT_ANSWERS.match(reply):
        return None
    return _PARTICLE.match(reply) or _ECHO.match(reply)


def particle(reply: str) -> tuple[str, bool] | None:
    """The reply's opening answer particle (or echo answer, "I do.", "Not anymore.") and its polarity (True = yes),
    or None."""
    match = _opening(reply)
    if not match:
        return None
    word = " ".join(match.group("particle").lower().split())
    if match.re is _ECHO:
        return word, not _NEGATIVE_ECHO.search(word)
    return word, word in _YES


def after_particle(reply: str) -> str:
    """The reply with its opening answer particle taken off ("No, I only have a daughter." -> "I only have a
    daughter."); the reply itself when it opens with none."""
    match = _opening(reply)
    rest = reply[match.end():].strip() if match else reply.strip()
    return rest[:1].upper() + rest[1:] if rest else rest


def question_statement(question: str, affirmative: bool) -> str | None:
    """The first-person statement that answers ``question`` ("Do you have kids?") yes or no, or None."""
    match = _QUESTION.search(question.strip())
    if not match:
        return None
    aux = match.group("aux").lower()
    if aux not in _AUXILIARIES:
        return None
    rest = match.group("rest").strip(" ,")
    if not rest:
        return None
    words = [_PRONOUNS.get(w.lower(), w) for w in rest.split()]
    if affirmative:  # "any" reads as "some" in an affirmative answer ("Do you have any kids?" -> "I have kids")
        words = [w for w in words if w.lower() != "any"]
    positive, negative = _AUXILIARIES[aux]
    verb = positive if affirmative else negative
    return " ".join(["I", *([verb] if verb else []), *words]) + "."


def resolve(question: str | None, reply: str) -> str | None:
    """What ``reply``'s opening particle states about the speaker, given the other speaker's ``question``.

    >>> resolve("Do you have any children?", "No, I only have a daughter.")
    'I do not have any children.'
    >>> resolve("Are you a student?", "Yep!")
    'I am a student.'
    """
    if not question or "?" not in question:
        return None
    opened = particle(reply)
    if opened is None:
        return None
    return question_statement(question, opened[1])
