"""Hard negatives: consistent pairs that look like contradictions, so the detector stops crying wolf.

The round-2 detector read negation and shared words as contradiction: on DECODE's Remove-Contradicting-Turns set
(the evidence taken out, so nothing contradicts) it fired on half the dialogues, and "No, my two dogs are plenty
for me." scored 0.83 against "I have two dogs". Everything here is built from the human-labelled training data
(``../shared/data/nli``, train splits only) and from the training split of the chit-chat conversations, so no
held-out set leaks in:

* **DECODE sentence negatives** (RCT-style). The guard pairs each *sentence* of a reply with each earlier utterance
  of the same speaker, but DECODE labels whole utterances. A reply that does not contradict an earlier turn does not
  contradict it sentence by sentence either, so every sentence of a non-contradicting DECODE reply becomes its own
  ``not_contradiction`` pair: exactly the pairs a consistent dialogue shows the product detector.
* **Answer-particle restatements**: a consistent reply opened with a negative answer particle ("No, my two dogs keep
  me busy.") - the "No" answers the partner's question, not the speaker's earlier statement. Built from Dialogue
  NLI entailments (persona fact -> an utterance that entails it, opened with a particle) and from DECODE's
  non-contradicting pairs.
* **Negated and numeric entailments** again: DNLI and MNLI entailment pairs whose hypothesis carries a negation or a
  number ("i do not like to eat meat" after "i am a vegetarian") are repeated, so they weigh as much as the far more
  common negated contradictions.
* **Clause negatives**: two clauses of one real chat message (people rarely contradict themselves inside a message),
  paired the way the intra-sentence check pairs them.

Topic-sharing neutrals (same speaker, shared content words) come from ``pairs.overlap_neutral_pairs``.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from guard.language.grammar import NUMBER_WORDS
from guard.training.real_data import LabelledPair
from guard.training.sources import ChitchatConversation, usable_utterance

#: negative answer particles that open a reply without negating what the speaker said before
NEGATIVE_OPENERS: tuple[str, ...] = (
    "No,", "Nope,", "No, no,", "Not really,", "No, not at all,", "Oh no,", "No way,", "Nah,", "No, but",
    "Not yet, but", "No, actually", "Haha no,", "No, sorry,", "Not at all,")
_NEGATION = re.compile(r"\b(?:not|no|never|none|nothing|nobody|neither|nor|cannot|without)\b|n't\b", re.I)
#: a number (digits or one of ``grammar.NUMBER_WORDS``) or a word that gives a quantity without one
_NUMBER = re.compile(r"\b(?:\d+|" + "|".join(NUMBER_WORDS) + r"|dozen|twice|both|single|only)\b", re.I)


def detokenize(text: str) -> str:
    """Dialogue NLI's lower-cased, space-tokenised text as a person would type it ("i do n't ." -> "I don't.")."""
    text = re.sub(r"\s+([.,!?;:'%])", r"\1", text.strip())
    text = re.sub(r"\s+n't\b", "n't", text)
    text = re.sub(r"\bi\b", "I", text)
    return text[:1].upper() + text[1:]


def with_opener(opener: str, reply: str) -> str:
    """``opener`` + the reply, its first letter lowered unless it is "I" or a proper-looking word."""
    first, _, rest = reply.partition(" ")
    if first not in ("I", "I'm", "I've", "I'd", "I'll") and not (first[:1].isupper() and first[1:2].isupper()):
        first = first[:1].lower() + first[1:]
    return f"{opener} {first} {rest}".strip()


def decode_sentence_negatives(decode_pairs: Sequence[LabelledPair], limit: int, seed: int = 0,
                              min_words: int = 3) -> list[LabelledPair]:
    """Each sentence of a non-contradicting DECODE reply against the same earlier turn: ``not_contradiction``."""
    from guard.language import text as textsplit

    rest = [p for p in decode_pairs if p.label == "not_contradiction"]
    textsplit.prepare([p.hypothesis for p in rest])
    made = []
    for pair in rest:
        parts = [s for s in textsplit.sentences(pair.hypothesis) if len(s.split()) >= min_words]
        if len(parts) < 2:
            continue
        made += [LabelledPair(pair.premise, s, "not_contradiction", "decode-sentence-negative") for s in parts]
    random.Random(seed).shuffle(made)
    return made[:limit]


def opener_restatements(dnli_pairs: Sequence[LabelledPair], decode_pairs: Sequence[LabelledPair], limit: int,
                        seed: int = 0) -> list[LabelledPair]:
    """Consistent replies opened with a negative particle, half from DNLI entailments, half from DECODE."""
    rng = random.Random(seed)
    from_dnli = []
    for pair in dnli_pairs:
        if pair.label == "entailment":  # premise: an utterance; hypothesis: the persona fact it entails
            fact, reply = detokenize(pair.hypothesis), detokenize(pair.premise)
            from_dnli.append(LabelledPair(fact, with_opener(rng.choice(NEGATIVE_OPENERS), reply),
                                          "not_contradiction", "dnli-opener-restatement"))
    from_decode = [LabelledPair(p.premise, with_opener(rng.choice(NEGATIVE_OPENERS), p.hypothesis),
                                "not_contradiction", "decode-opener-restatement")
                   for p in decode_pairs if p.label == "not_contradiction" and not _NEGATION.match(p.hypothesis)]
    rng.shuffle(from_dnli)
    rng.shuffle(from_decode)
    half = limit // 2
    return from_dnli[:half] + from_decode[: limit - half]


def negated_entailment_repeats(pairs: Sequence[LabelledPair], limit: int, seed: int = 0) -> list[LabelledPair]:
    """Entailments whose hypothesis has a negation or a number, repeated (source marked) to weigh more."""
    chosen = [LabelledPair(p.premise, p.hypothesis, p.label, f"{p.source}-negated-entailment-repeat")
              for p in pairs if p.label == "entailment" and (_NEGATION.search(p.hypothesis)
                                                             or _NUMBER.search(p.hypothesis))]
    random.Random(seed).shuffle(chosen)
    return chosen[:limit]


def clause_negatives(convs: Sequence[ChitchatConversation], limit: int, seed: int = 0) -> list[LabelledPair]:
    """Two clauses of one real chat message, as the intra-sentence check pairs them: ``not_contradiction``."""
    from guard.language import text as textsplit

    rng = random.Random(seed)
    messages = [u for c in convs for u in c.utterances if usable_utterance(u, min_words=8)]
    rng.shuffle(messages)
    messages = messages[: limit * 2]
    textsplit.prepare(messages)
    made = []
    for message in messages:
        parts = [c for c in textsplit.clauses(message) if len(c.split()) >= 3]
        if len(parts) < 2:
            continue
        i, j = sorted(rng.sample(range(len(parts)), 2))
        made.append(LabelledPair(parts[i], parts[j], "not_contradiction", "chitchat-clause-negative"))
        if len(made) >= limit:
            break
    return made
