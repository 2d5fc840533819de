"""Training pairs that look like bot turns, built from real human-bot conversations (ConvAI2's wild evaluation).

The detector learnt contradiction from people's dialogues (DECODE), NLI corpora and persona templates; on a stream
of real bot turns it fires twice as often as on people's chat. Bots repeat themselves, answer elliptically ("yes ,
i do .", "Not anymore."), hedge and ask questions back, and their persona lines are terse ("i have two dogs.").
Everything here comes from the **unlabelled** conversations of ``../shared/data/bots/convai2_wild.jsonl``: the
60 conversations of the live-stream dev set (``guard.eval.stream``) are left out.

* **Contradictions by a swap** (Dialogue NLI's recipe, Welleck et al. 2019, appendix A): a persona line or an
  earlier first-person bot statement, against the same sentence with its claim negated (``guard.language.perturb``), a
  number changed ("two dogs" -> "22 dogs", "i'm 24" -> "i'm 52"), or a single-valued slot refilled with another
  bot's value ("my favorite color is red" -> "... is blue", "i live in alabama" -> "i live in canada"), dressed as
  a bot turn (an opener, a real bot question after it).
* **The same bot's other statements**, mostly consistent: a persona line or an earlier bot statement against a later
  statement of the same conversation. Bots do contradict themselves now and then, so these pairs carry a lower
  weight (``CONSISTENT_WEIGHT``) for their noise.
* **Restatements that look like contradictions**: a fact restated after a negative answer particle ("no , i have two
  dogs .") or with the same number written another way ("2 dogs" / "two dogs"): not contradictions.
* **Quantities inside one turn**: clause pairs with two different counts of the same thing ("i have 22 dogs" /
  "i own 24 of them") are contradictions; with the same count, or a count and a word that agrees ("both of them"),
  they are not (the intra-sentence check pairs clauses exactly like this).

Short answers are read against the question they answer before pairing (``guard.language.answers``), as the guard reads
them at run time: "do you have pets ?" + "no ." is the statement "I do not have pets.".
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

from guard.language.grammar import NUMBER_WORDS, number_word
from guard.records import Dialogue
from guard.training.hard_negatives import NEGATIVE_OPENERS, detokenize, with_opener
from guard.training.labels import LabelledPair

#: weight of a same-bot pair labelled consistent without anyone reading it (bots contradict themselves now and then)
CONSISTENT_WEIGHT = 0.5
BOT = "bot"

# ----------------------------------------------------------------------------------------- quantities
#: a count: digits, or a number word followed by a word (so "the one who" and "one of" are left alone)
_COUNT = re.compile(r"\b(?P<n>\d{1,4}|" + "|".join(sorted(NUMBER_WORDS, key=len, reverse=True))
                    + r")\b(?=\s+(?!of\b|who\b|that\b|and\b|or\b|is\b|was\b)[a-z])", re.IGNORECASE)
_AGE = re.compile(r"\b(?:i'm|i am|im)\s+(?P<n>\d{1,3})\b(?!\s*(?:%|percent))", re.IGNORECASE)


def _value(token: str) -> int | None:
    """A count's value: digits (up to four: a year is told apart by its value), or a number word."""
    return int(token) if token.isdigit() else NUMBER_WORDS.get(token.lower())


def _spell(value: int, like: str, rng: random.Random) -> str:
    """``value`` as digits or a word, mostly in the form ``like`` used (a word only where one exists)."""
    as_word = (not like.isdigit()) if rng.random() < 0.7 else rng.random() < 0.5
    word = number_word(value)
    return word if as_word and word is not None else str(value)


def _other_count(value: int, rng: random.Random, is_age: bool) -> int:
    """A different count: near and far ones, never the same value."""
    if is_age or value >= 15:
        choices = [v for v in range(max(1, value - 40), value + 41) if abs(v - value) >= 3]
        return rng.choice(choices)
    if rng.random() < 0.3:
        return rng.choice([v for v in (12, 15, 20, 22, 24, 30, 50, 100, 3000) if v != value])
    return rng.choice([v for v in range(1, 11) if v != value])


def quantity_swap(sentence: str, rng: random.Random) -> str | None:
    """``sentence`` with one count (or an age) changed to a different one, or None when it has none."""
    spans = [(m, True) for m in _AGE.finditer(sentence)] + [(m, False) for m in _COUNT.finditer(sentence)]
    spans = [(m, age) for m, age in spans if _value(m.group("n")) is not None]
    if not spans:
        return None
    match, is_age = rng.choice(spans)
    token = match.group("n")
    value = _value(token)
    if value is None or (not is_age and 1900 <= value <= 2100):  # a year is not a count of things
        return None
    new = _spell(_other_count(value, rng, is_age or "year" in sentence[match.end():match.end() + 12]), token, rng)
    return sentence[:match.start("n")] + new + sentence[match.end("n"):]


def quantity_restatement(sentence: str, rng: random.Random) -> str | None:
    """``sentence`` with a count written the other way (digits <-> word), or None: the same claim."""
    for match in _COUNT.finditer(sentence):
        value = _value(match.group("n"))
        word = number_word(value) if value is not None else None
        if word is None:
            continue
        token = match.group("n")
        other = word if token.isdigit() else str(value)
        return sentence[:match.start("n")] + other + sentence[match.end("n"):]
    return None


# ----------------------------------------------------------------------------------------- slots
#: single-valued facts: another value in the slot contradicts (a person has one favourite, one home, one name)
SLOTS: dict[str, re.Pattern] = {
    "favourite": re.compile(r"^(?P<head>.*\bmy favou?rite (?P<kind>[a-z]+(?: [a-z]+)?) is )(?P<value>[^.,!?]+)"
                            r"(?P<tail>.*)$", re.IGNORECASE),
    "home": re.compile(r"^(?P<head>.*\bi (?:live|grew up) in )(?P<value>(?!a\b|an\b|the\b)[a-z][a-z ]{2,25}?)"
                       r"(?P<tail>[.,!?].*|)$", re.IGNORECASE),
    "origin": re.compile(r"^(?P<head>.*\bi(?: am|'m| m) from )(?P<value>(?!a\b|an\b|the\b)[a-z][a-z ]{2,25}?)"
                         r"(?P<tail>[.,!?].*|)$", re.IGNORECASE),
    "name": re.compile(r"^(?P<head>.*\bmy name is )(?P<value>[a-z]+)(?P<tail>.*)$", re.IGNORECASE),
    "job": re.compile(r"^(?P<head>.*\bi work as an? )(?P<value>[a-z]+(?: [a-z]+)?)(?P<tail>[.,!?].*|)$",
                      re.IGNORECASE),
}


def slot_values(sentences: Sequence[str]) -> dict[str, list[str]]:
    """Every value each slot takes in ``sentences`` (the pools a swap draws from), favourites kept by kind."""
    pools: dict[str, set[str]] = {}
    for sentence in sentences:
        for slot, pattern in SLOTS.items():
            match = pattern.match(sentence)
            if match:
                key = f"favourite:{match.group('kind').lower()}" if slot == "favourite" else slot
                pools.setdefault(key, set()).add(match.group("value").strip().lower())
    return {k: sorted(v) for k, v in pools.items() if len(v) >= 2}


def slot_swap(sentence: str, pools: dict[str, list[str]], rng: random.Random) -> str | None:
    """``sentence`` with its single-valued slot refilled with another value of the same slot, or None."""
    for slot, pattern in SLOTS.items():
        match = pattern.match(sentence)
        if not match:
            continue
        key = f"favourite:{match.group('kind').lower()}" if slot == "favourite" else slot
        current = match.group("value").strip().lower()
        others = [v for v in pools.get(key, ()) if v != current and current not in v and v not in current]
        if others:
            return match.group("head") + rng.choice(others) + match.group("tail")
    return None


# ----------------------------------------------------------------------------------------- bot turns
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|im|i've|i'd|i'll|my|me|mine)\b", re.IGNORECASE)
_FILLER = re.compile(r"^(?:hi|hello|hey|thanks|thank you|ok|okay|cool|nice|great|lol|haha|yes|no|yeah|sure|bye)"
                     r"\b[\s,.!]*$", re.IGNORECASE)


def is_statement(sentence: str) -> bool:
    """A first-person claim worth pairing: not a question, a greeting or a filler, at least three words."""
    text = sentence.strip()
    return (len(text.split()) >= 3 and "?" not in text and not _FILLER.match(text)
            and bool(_FIRST_PERSON.search(text)))


@dataclass(frozen=True)
class BotStatement:
    """A first-person statement a bot made, where it was made and whether it is a persona line."""

    record_id: str
    turn_id: int  # -1 for a persona line
    text: str

    @property
    def is_persona(self) -> bool:
        return self.turn_id < 0


def bot_statements(dialogue: Dialogue) -> list[BotStatement]:
    """The persona lines, then each bot turn's statements in order, short answers read against the question first."""
    from guard.language import text as textsplit
    from guard.language.answers import resolve
    from guard.language.grammar import after_particle

    out = [BotStatement(dialogue.record_id, -1, p.strip()) for p in dialogue.persona if p.strip()]
    previous = None
    for turn in dialogue.turns:
        if turn.agent_id == BOT:
            answer = resolve(previous.text, turn.text) if previous is not None and previous.agent_id != BOT else None
            sentences = list(textsplit.sentences(after_particle(turn.text) if answer else turn.text))
            if answer:
                sentences.insert(0, answer)
            out += [BotStatement(dialogue.record_id, turn.turn_id, s) for s in sentences if is_statement(s)]
        previous = turn
    return out


def unlabelled_conversations(dialogues: Sequence[Dialogue] | None = None) -> list[Dialogue]:
    """ConvAI2's conversations minus the live-stream dev set's (``guard.eval.stream.labelled_record_ids``)."""
    from guard.eval import stream

    dialogues = list(dialogues) if dialogues is not None else stream.read_conversations()
    held = stream.labelled_record_ids()
    return [d for d in dialogues if d.record_id not in held]


def _bot_questions(dialogues: Sequence[Dialogue]) -> list[str]:
    from guard.language import text as textsplit

    asked = [s for d in dialogues for t in d.turns if t.agent_id == BOT for s in textsplit.sentences(t.text)
             if s.strip().endswith("?") and 2 <= len(s.split()) <= 10]
    return sorted(set(asked))


_BOT_OPENERS = ("", "", "", "well , ", "oh , ", "haha ", "yes , ", "lol ", "i see . ", "that is cool . ", "hmm . ")


def dress_as_bot(sentence: str, rng: random.Random, questions: Sequence[str], opener: bool = True) -> str:
    """A statement as a bot turn says it: maybe an opener, maybe a real bot question after it, maybe cased."""
    text = sentence.strip()
    if opener and rng.random() < 0.35:
        text = rng.choice(_BOT_OPENERS) + text
    if questions and rng.random() < 0.35:
        text = f"{text} {rng.choice(questions)}"
    return detokenize(text) if rng.random() < 0.5 else text


#: opposite attitudes and states a bot states about itself (WordNet's antonyms read oddly: "work" -> "idle")
ATTITUDES = {"love": ("hate", "dislike"), "loves": ("hates",), "like": ("hate", "dislike"), "likes": ("hates",),
             "enjoy": ("hate", "dislike"), "hate": ("love", "like"), "hates": ("loves", "likes"),
             "dislike": ("love", "like"), "always": ("never",), "never": ("always",), "married": ("single",),
             "single": ("married",), "happy": ("unhappy", "sad"), "sad": ("happy",), "rich": ("poor",),
             "poor": ("rich",), "old": ("young",), "young": ("old",), "tall": ("short",), "short": ("tall",),
             "love to": ("hate to",), "favorite": ("least favorite",), "best": ("worst",), "alone": ("with my family",),
             "vegan": ("meat lover",), "vegetarian": ("meat eater",), "introvert": ("extrovert",),
             "extrovert": ("introvert",), "retired": ("still working",), "unemployed": ("employed",)}
_ATTITUDE = re.compile(r"\b(" + "|".join(sorted(map(re.escape, ATTITUDES), key=len, reverse=True)) + r")\b",
                       re.IGNORECASE)


def attitude_swap(sentence: str, rng: random.Random) -> str | None:
    """``sentence`` with one attitude or state word turned to its opposite ("i love the beach" -> "i hate ..")."""
    matches = list(_ATTITUDE.finditer(sentence))
    if not matches:
        return None
    match = rng.choice(matches)
    word = match.group(1)
    new = rng.choice(ATTITUDES[word.lower()])
    new = new[:1].upper() + new[1:] if word[:1].isupper() else new
    return sentence[:match.start(1)] + new + sentence[match.end(1):]


def _swap(sentence: str, pools: dict[str, list[str]], rng: random.Random) -> tuple[str, str] | None:
    """One contradicting rewrite of ``sentence`` and its kind: a count or a single-valued slot where the sentence has
    one (rare, so always taken), else an antonym (a third of the time) or the claim's polarity."""
    from guard.language.perturb import negate

    for kind, rewrite in (("quantity", lambda: quantity_swap(sentence, rng)),
                          ("slot", lambda: slot_swap(sentence, pools, rng)),
                          ("antonym", lambda: attitude_swap(sentence, rng) if rng.random() < 0.5 else None),
                          ("negation", lambda: negate(sentence))):
        changed = rewrite()
        if changed and changed.strip().lower() != sentence.strip().lower():
            return changed, kind
    return None


def contradiction_pairs(dialogues: Sequence[Dialogue], limit: int, seed: int = 0) -> list[LabelledPair]:
    """A bot's persona line or earlier statement against a swapped rewrite of it, dressed as a bot turn."""
    from guard.language import text as textsplit

    rng = random.Random(seed)
    statements = [s for d in dialogues for s in bot_statements(d)]
    textsplit.prepare([s.text for s in statements])
    pools = slot_values([s.text for s in statements])
    questions = _bot_questions(dialogues)
    rng.shuffle(statements)
    made, seen = [], set()
    # persona lines first in each round: they are the facts a live guard checks most
    ordered = [s for s in statements if s.is_persona] + [s for s in statements if not s.is_persona]
    for statement in ordered:
        if len(made) >= limit:
            break
        key = statement.text.lower()
        if key in seen:
            continue
        seen.add(key)
        swapped = _swap(statement.text, pools, rng)
        if swapped is None:
            continue
        changed, kind = swapped
        source = f"convai2-{'persona' if statement.is_persona else 'bot'}-{kind}-swap"
        made.append(LabelledPair(statement.text, dress_as_bot(changed, rng, questions), "contradiction", source))
    return made


def consistent_pairs(dialogues: Sequence[Dialogue], limit: int, seed: int = 0,
                     weight: float = CONSISTENT_WEIGHT) -> list[LabelledPair]:
    """A persona line or earlier bot statement against a later statement of the same bot: mostly consistent.

    Half the pairs share a content word (the ones a detector confuses with contradictions), half are drawn at
    random from the conversation.
    """
    from guard.training.pairs import _content_words

    rng = random.Random(seed)
    overlapping, other = [], []
    for dialogue in dialogues:
        statements = bot_statements(dialogue)
        for j, later in enumerate(statements):
            if later.is_persona:
                continue
            for earlier in statements[:j]:
                if earlier.turn_id >= later.turn_id and not earlier.is_persona:
                    continue
                if earlier.text.strip().lower() == later.text.strip().lower():
                    continue
                shared = _content_words(earlier.text) & _content_words(later.text)
                (overlapping if shared else other).append((earlier.text, later.text))
    rng.shuffle(overlapping)
    rng.shuffle(other)
    half = limit // 2
    chosen = [(p, h, "convai2-same-bot-overlap") for p, h in overlapping[:half]]
    chosen += [(p, h, "convai2-same-bot") for p, h in other[: limit - len(chosen)]]
    return [LabelledPair(p, h, "not_contradiction", source, weight) for p, h, source in chosen]


def restatement_pairs(dialogues: Sequence[Dialogue], limit: int, seed: int = 0) -> list[LabelledPair]:
    """Facts restated in ways that look like contradictions: after a negative particle, or a count spelled anew."""
    rng = random.Random(seed)
    statements = [s for d in dialogues for s in bot_statements(d) if s.is_persona or rng.random() < 0.3]
    rng.shuffle(statements)
    questions = _bot_questions(dialogues)
    made = []
    for statement in statements:
        if len(made) >= limit:
            break
        respelled = quantity_restatement(statement.text, rng)
        if respelled and rng.random() < 0.7:
            made.append(LabelledPair(statement.text, dress_as_bot(respelled, rng, questions, opener=False),
                                     "not_contradiction", "convai2-quantity-respelled"))
        elif not statement.text.lower().startswith(("i do not", "i don't", "i am not", "i'm not", "no ")):
            reply = with_opener(rng.choice(NEGATIVE_OPENERS), detokenize(statement.text))
            made.append(LabelledPair(statement.text, dress_as_bot(reply, rng, questions, opener=False),
                                     "not_contradiction", "convai2-particle-restatement"))
    return made


#: what "them" can stand for after a count ("i have 22 dogs . i own 24 of them ."), and agreeing follow-ups
_INTRA_TEMPLATES = ("i own {n} of them", "i have {n} of them", "there are {n} of them", "all {n} of them are mine",
                    "i have {n} {noun}", "i only have {n} {noun}", "my {n} {noun} are great")
_AGREEING = {1: ("it is my favorite thing", "just the one"), 2: ("both of them are great", "i love them both"),
             3: ("all three of them are great",)}


#: things people count about themselves, for quantity sentences beside the real ones (which rarely have a count)
COUNTED = ("dogs", "cats", "kids", "children", "sons", "daughters", "brothers", "sisters", "siblings", "horses",
           "cars", "guitars", "birds", "fish", "tattoos", "jobs", "roommates", "grandkids", "houses", "bikes")


def quantity_sentences(count: int, rng: random.Random) -> list[str]:
    """First-person sentences with a count of a plural noun ("I have 3 dogs."), in bot-like casing."""
    made = []
    for _ in range(count):
        n = rng.choice([2, 2, 3, 3, 4, 5, 6, 7, 8, 10, 12, 22])
        head = rng.choice(("i have", "i have", "i own", "I do have", "I've got", "i have got"))
        text = f"{head} {_spell(n, 'two' if rng.random() < 0.6 else '2', rng)} {rng.choice(COUNTED)}"
        made.append(detokenize(text) if rng.random() < 0.5 else text)
    return made


def intra_quantity_pairs(statements: Sequence[str], limit: int, seed: int = 0) -> list[LabelledPair]:
    """Clause pairs inside one turn: two different counts of the same thing (contradiction) or the same count /
    an agreeing word (not a contradiction), from real statements with a count of a plural noun and, as those are
    few, from ``quantity_sentences``."""
    rng = random.Random(seed)
    made = []
    pool = list(statements) + quantity_sentences(limit, rng)
    rng.shuffle(pool)
    for sentence in pool:
        if len(made) >= limit:
            break
        match = re.search(r"\bi(?:'ve|\s+do|\s+have)?\s+(?:have|own|had|got)\s+(?P<n>\d{1,3}|" + "|".join(NUMBER_WORDS)
                          + r")\s+(?P<noun>[a-z]+s)\b", sentence, re.IGNORECASE)
        if not match:
            continue
        value = _value(match.group("n"))
        if value is None or value > 100:
            continue
        noun = match.group("noun").lower()
        first = sentence.strip().rstrip(".!")
        template = rng.choice(_INTRA_TEMPLATES)
        if rng.random() < 0.5:
            other = _spell(_other_count(value, rng, False), match.group("n"), rng)
            made.append(LabelledPair(first, template.format(n=other, noun=noun), "contradiction",
                                     "convai2-intra-quantity"))
        else:
            same = _spell(value, match.group("n"), rng)
            second = (rng.choice(_AGREEING[value]) if value in _AGREEING and rng.random() < 0.5
                      else template.format(n=same, noun=noun))
            made.append(LabelledPair(first, second, "not_contradiction", "convai2-intra-quantity-agrees"))
    return made


def corpus_quantity_pairs(pairs: Sequence[LabelledPair], limit: int, seed: int = 0) -> list[LabelledPair]:
    """DNLI's numeric swaps over any NLI corpus: a sentence with a count against the count changed (contradiction)
    or respelled (entailment). Premises of the given (training) pairs only."""
    rng = random.Random(seed)
    sentences = sorted({p.premise for p in pairs} | {p.hypothesis for p in pairs})
    rng.shuffle(sentences)
    made = []
    for sentence in sentences:
        if len(made) >= limit:
            break
        if len(sentence.split()) > 30:
            continue
        if rng.random() < 0.75:
            changed = quantity_swap(sentence, rng)
            if changed:
                made.append(LabelledPair(sentence, changed, "contradiction", "nli-quantity-swap"))
        else:
            respelled = quantity_restatement(sentence, rng)
            if respelled:
                made.append(LabelledPair(sentence, respelled, "entailment", "nli-quantity-respelled"))
    return made


def bot_turn_pairs(contradictions: int, consistent: int, restatements: int, intra: int, seed: int = 0,
                   dialogues: Sequence[Dialogue] | None = None) -> list[LabelledPair]:
    """The whole bot-turn mix (counts per builder) from the unlabelled conversations."""
    convs = unlabelled_conversations(dialogues)
    made: list[LabelledPair] = []
    if contradictions:
        made += contradiction_pairs(convs, contradictions, seed=seed)
    if consistent:
        made += consistent_pairs(convs, consistent, seed=seed + 1)
    if restatements:
        made += restatement_pairs(convs, restatements, seed=seed + 2)
    if intra:
        statements = [s.text for d in convs for s in bot_statements(d)]
        made += intra_quantity_pairs(statements, intra, seed=seed + 3)
    return made
