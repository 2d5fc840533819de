"""A conversation's exchanges: who asked whom, what a short answer and a denial stand for, what a turn is
paired as. No model here: the detector's planning (``guard.judge.planning``) reads turns through these.

CDConv's triggers (Zheng et al. 2022) are read off the conversation: a bot that asked the user back ("I'm 25. And
you?") and got only a short reply may answer its own question as the user would. A short answer is paired as the
statement it makes with its question (``guard.language.answers``), and a denial is capped by what it denies
(``denial_support``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from guard.language.grammar import affirmative
from guard.records import Turn

_YOU = re.compile(r"\b(?:you|your|yours|yourself|u)\b", re.IGNORECASE)


def asks_back(text: str) -> bool:
    """Whether a turn ends by asking the other speaker about themselves ("I'm 25. And you?", "Do you?")."""
    last = text.strip()
    if not last.endswith("?"):
        return False
    tail = last[max(last.rfind(".", 0, len(last) - 1), last.rfind("!", 0, len(last) - 1)) + 1:]
    return bool(_YOU.search(tail))


def is_short_reply(text: str, max_words: int = 4) -> bool:
    """A short, content-poor turn ("Hmm.", "ok", "lol") - CDConv's short-utterance trigger."""
    return len(text.split()) <= max_words and "?" not in text


def asked_back_turn(history: Sequence[Turn], speaker: str) -> int | None:
    """The id of ``speaker``'s latest turn when it asked the other speaker back ("I'm 25. And you?") and only short
    replies followed it - the situation where a bot answers its own question as the user would (CDConv)."""
    own = [t for t in history if t.agent_id == speaker and t.text.strip()]
    if not own:
        return None
    asked = own[-1]
    since = [t for t in history if t.turn_id > asked.turn_id]
    if asks_back(asked.text) and since and all(is_short_reply(t.text) for t in since):
        return asked.turn_id
    return None


def question_before(history: Sequence[Turn], speaker: str) -> str | None:
    """The other speaker's turn right before ``speaker``'s next one (what a reply answers), or None."""
    return history[-1].text if history and history[-1].agent_id != speaker else None


@dataclass(frozen=True)
class Unit:
    """A piece of a turn as it is paired: ``text`` is what the model reads, ``said`` the turn's own words it stands
    for (the same text, or the answer whose reading ``text`` is)."""

    text: str
    said: str

    @property
    def reading(self) -> str:
        return self.text if self.text != self.said else ""


def denial_support(premise: str, hypothesis: str) -> tuple[str, str] | None:
    """The pair with the denial replaced by what it denies, or None when neither or both sides deny.

    "I'm not a teacher." contradicts "I work as a nurse." only if the statement agrees with "I'm a teacher."; a
    statement that clashes with the denial *and* with what it denies just talks of something else. An NLI model
    trained on DECODE's negation-heavy contradictions scores nearly any denial against any statement as a clash
    (v4: "I work as a nurse." / "I am not a teacher." 0.99), so a denial's contradiction score is capped by how much
    the other side agrees with the affirmation: 1 - P(contradiction) of this pair (``ContradictionDetector``)."""
    denied_h, denied_p = affirmative(hypothesis), affirmative(premise)
    if denied_h and not denied_p:
        return premise, denied_h
    if denied_p and not denied_h:
        return denied_p, hypothesis
    return None


def both_denied(premise: str, hypothesis: str) -> tuple[str, str] | None:
    """When both sides deny, the pair of what each denies ("I have been on a plane.", "I am a pilot." for "I have
    never been on a plane." and "I'm not a pilot."); None otherwise.

    Two denials contradict only where what they deny cannot both be false ("I'm not married." / "I'm not single."),
    which is when the two affirmations contradict each other; the detector caps a pair of denials by that pair's
    P(contradiction). The model reads nearly any two denials as a clash (v4: 0.95 for the pilot pair above)."""
    denied_h, denied_p = affirmative(hypothesis), affirmative(premise)
    return (denied_p, denied_h) if denied_h and denied_p else None
