"""The classroom filter: what a small bot writes, checked for words a class of 16-year-olds should not be shown.

Every candidate reply is checked before the guard judges it (``conversation.guarding``): a flagged candidate is never
sent (the policy chooses among the others, else the safe reply goes out), and what it said is kept for the signed-in
teacher while every page, transcript and export a student sees shows it with the caught words masked. The app and the
served guard share it; it is on unless the server was started with it off (``GUARD_CLASS_FILTER=0``, or ``python -m
serve --class-filter off``).

The words are better-profanity's (PyPI ``better-profanity``: its own list of 900-odd words with their leetspeak
spellings, "f*ck", "sh1t"; measured against alt-profanity-check before it was chosen, docs/experiments/
2026-11-27-class-server.md), less ``ALLOWED``: the words of that list a class says without harm, kept so that a reply
about a sperm whale, a chess pawn or a gay uncle is not withheld. The list matches whole words only, and a 135M bot
makes words up ("petfuck"): ``word_in_word`` adds what the list has no entry for, a word that is not one of the
ordinary words in ``ORDINARY`` but holds one of the strong stems in ``STEMS`` ("petfuck", "catcunt", "kittyslut").
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass

from guard.judge.report import Withheld

#: the environment variable the server is started with: "0" (or off / false / no) turns the filter off
ENV = "GUARD_CLASS_FILTER"
OFF_WORDS = {"0", "off", "false", "no"}
#: what ``Withheld.by`` says of this filter
BY = "classroom filter"
#: how a caught word is shown to a student
MASK = "****"

#: better-profanity's words a class says without harm (not masked): who people are, the body and health, everyday
#: words with a rude second sense, history, drink and plants as topics, and mild words a teacher says
ALLOWED = frozenset({
    # who people are
    "gay", "gays", "lesbians", "queer", "queers", "transsexual",
    # the body, health and biology
    "breasts", "crotch", "ejaculate", "erect", "erection", "fart", "herpes", "hiv", "hymen", "labia", "loin", "loins",
    "menses", "menstruate", "menstruation", "nipple", "nipples", "organ", "ovary", "ovum", "ovums", "pee", "penis",
    "pms", "poop", "potty", "pube", "pubic", "pubis", "rectal", "rectum", "rectus", "scrotum", "semen", "sperm",
    "tampon", "teat", "testes", "testicle", "testis", "tinkle", "urinal", "urine", "uterus", "vagina", "vomit",
    "vulva", "womb", "sex", "sexual", "naked", "nude", "virgin",
    # everyday words with a rude second sense
    "balls", "dummy", "facial", "flange", "fondle", "hump", "humped", "humping", "knob", "lust", "lusting", "maxi",
    "nappy", "paddy", "pasty", "pastie", "pawn", "pot", "revue", "sandbar", "screw", "screwed", "screwing", "seaman",
    "seamen", "slope", "snatch", "steamy", "strip", "stroke", "thrust", "toots", "tramp", "undies", "unwed", "wad",
    "wang", "willies", "willy", "woody", "whiz", "racy", "len", "omg", "lmao", "hooter", "hooters", "pinko", "prude",
    "prig", "souse", "soused", "stiffy", "suck", "sucked", "sucking", "booty", "jerk", "jerked", "dopey", "doofus",
    "ninny", "nimrod", "weirdo", "ugly", "fat", "stupid", "dink", "dinks", "kill", "murder", "sniper", "uzi",
    "napalm", "inbred", "leper", "master-bate", "playboy", "trashy", "tawdry", "vulgar", "sleazy", "sleaze",
    "enlargement", "foobar", "fubar", "god", "hell", "damn", "drunk", "cowgirl", "cowgirls", "cow girl", "cow girls",
    # history
    "nazi", "nazism", "hitler", "reich", "kkk", "klan", "slave", "massa",
    # drink, plants and medicines as topics
    "rum", "vodka", "weed", "hemp", "hooch", "hootch", "hookah", "opium", "valium", "peyote", "opiate", "heroin",
    "ganja", "reefer", "toke", "stoned", "junkie", "junky", "meth", "pcp",
})
#: strong stems: a made-up word that holds one is caught (``word_in_word``) unless it is one of ``ORDINARY``
STEMS = ("fuck", "phuck", "cunt", "slut", "whore", "shit", "bitch", "jizz", "twat", "wank", "porn", "nigg", "dick",
         "cock", "pussy", "dildo", "cum")
#: ordinary words (and names) that hold a stem: never caught for it
ORDINARY = frozenset({
    "scunthorpe", "swank", "swanky", "swankier", "dickens", "dickensian", "dickinson", "dickson", "dickerson", "dickey",
    "cockpit", "cockpits", "peacock", "peacocks", "cockatoo", "cockatoos", "cockatiel", "cockatiels", "cockroach",
    "cockroaches", "cocktail", "cocktails", "cockerel", "cockerels", "cockney", "cockle", "cockles", "cocky", "cocker",
    "hancock", "hitchcock", "shuttlecock", "shuttlecocks", "woodcock", "gamecock", "weathercock", "petcock",
    "stopcock", "ballcock", "babcock", "cocksure", "pussycat", "pussycats", "pussyfoot", "pussyfooting", "niggle",
    "niggles", "niggling", "snigger", "sniggered", "sniggering", "sniggers",
    # "cum" inside ordinary words
    "cucumber", "cucumbers", "document", "documents", "documented", "documentary", "documentaries", "circumstance",
    "circumstances", "cumulative", "accumulate", "accumulated", "accumulating", "accumulation", "circumference",
    "incumbent", "succumb", "succumbed", "cumbersome", "scum", "vacuum", "vacuums", "vacuumed", "magna", "cumin",
    "curriculum", "curricula", "modicum", "cummings", "cumbria", "cumberland", "circumvent", "circumnavigate",
    "tecumseh", "encumber", "encumbered", "cumulus", "summa", "cum",
})
#: a word as the filter reads it: letters with the symbols of leetspeak ("f*ck", "sh!t", "f.u.c.k"), no trailing
#: punctuation
_WORD = re.compile(r"(?=[^\s]*[A-Za-z])[A-Za-z0-9@$*_+-]+(?:[.!][A-Za-z0-9@$*_+-]+)*")
_LETTERS = re.compile(r"[a-z]+")


@dataclass(frozen=True)
class Screened:
    """What the filter found in one text: the words it caught (as written) and the text with them masked."""

    words: tuple[str, ...] = ()
    masked: str = ""
    by: str = BY

    @property
    def flagged(self) -> bool:
        return bool(self.words)

    def withheld(self) -> Withheld:
        """The record a report keeps of a candidate this filter kept from being sent."""
        return Withheld(by=self.by, words=tuple(self.words), masked=self.masked)


@dataclass
class ClassroomFilter:
    """better-profanity's list less ``ALLOWED``, plus ``word_in_word``; ``check`` is the one call."""

    allowed: frozenset[str] = ALLOWED

    def __post_init__(self) -> None:
        from importlib import resources

        from better_profanity import Profanity

        self._profanity = Profanity()
        self._profanity.load_censor_words(whitelist_words=sorted(self.allowed))
        listed = resources.files("better_profanity").joinpath("profanity_wordlist.txt").read_text(encoding="utf-8")
        # the list's entries of several words ("blow job"): found in the text as a phrase, spaces or not
        phrases = sorted({w.strip().lower() for w in listed.splitlines() if " " in w.strip()} - self.allowed)
        self._phrases = re.compile(r"(?<![a-z])(?:" + "|".join(
            r"[\s_-]*".join(re.escape(part) for part in phrase.split()) for phrase in phrases) + r")(?![a-z])",
            re.IGNORECASE) if phrases else None
        self._words: dict[str, bool] = {}  # a word, lowercased -> whether the list has it (a chat repeats its words)

    def _listed(self, word: str) -> bool:
        key = word.lower()
        found = self._words.get(key)
        if found is None:  # better-profanity only reads its word set once loaded: threads check at once
            found = self._words[key] = bool(self._profanity.contains_profanity(word))
        return found

    def check(self, text: str) -> Screened:
        """The words of ``text`` the filter catches, and ``text`` with each masked (unchanged when none is): the
        list's words (whole words, in their leetspeak spellings too), its phrases, and made-up words holding a strong
        stem."""
        text = str(text or "")
        spans = [m.span() for m in _WORD.finditer(text) if self._listed(m.group()) or word_in_word(m.group())]
        if self._phrases is not None:
            spans += [m.span() for m in self._phrases.finditer(text)]
        if not spans:
            return Screened(masked=text)
        merged: list[list[int]] = []
        for start, end in sorted(spans):
            if merged and start <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        masked, at = [], 0
        for start, end in merged:
            masked += [text[at:start], MASK]
            at = end
        masked.append(text[at:])
        return Screened(words=tuple(text[start:end] for start, end in merged), masked="".join(masked))

    def mask(self, text: str) -> str:
        return self.check(text).masked


def for_students(report_json: dict) -> dict:
    """A report's JSON form (``BotTurnReport.to_json``) as a student may be given it: each withheld candidate's text
    masked and the words caught left out (the chat's transcript download, the served guard's ``guard`` field)."""
    candidates = []
    for cand in report_json.get("candidates") or []:
        withheld = cand.get("withheld") if isinstance(cand, dict) else None
        if withheld:
            cand = {**cand, "text": withheld.get("masked", MASK), "withheld": {**withheld, "words": []}}
        candidates.append(cand)
    return {**report_json, "candidates": candidates} if "candidates" in report_json else dict(report_json)


def word_in_word(word: str) -> bool:
    """A word no list has that holds a strong stem ("petfuck", "catcunt"): not an ordinary word or name holding it
    (``ORDINARY``: "cockpit", "Scunthorpe", "document")."""
    for part in _LETTERS.findall(word.lower()):
        if part in ORDINARY or part in STEMS:
            continue
        if any(stem in part for stem in STEMS if stem != "cum" or part.startswith("cum") or part.endswith("cum")):
            return True
    return False


def filter_on() -> bool:
    """Whether the server was started with the filter on (``GUARD_CLASS_FILTER`` unset, or anything but 0 / off)."""
    return os.environ.get(ENV, "").strip().lower() not in OFF_WORDS


@functools.cache
def _loaded() -> ClassroomFilter:
    return ClassroomFilter()


def server_filter() -> ClassroomFilter | None:
    """The process's filter (its word list loaded once), or None when the server was started with it off."""
    return _loaded() if filter_on() else None
