"""Where the detector's training data come from, all installed with the project (nothing downloaded).

* SNLI (``embedded.snli_dir()``) teaches generic 3-way NLI.
* Real chit-chat conversations (the ``chitchat_dataset`` package, Chit Chat Challenge) give the
  dialogue-domain utterances; they are split by conversation so held-out ones never reach training.
* Entity lists per category (hand lists, extended with WordNet hyponyms) fill the persona facts.

Nothing here reads the shared data's ``rgm/`` folder: that set is validation only.
Labels use the checkpoint's own names: ``contradiction``, ``entailment``, ``neutral``.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from pathlib import Path

from guard.eval.chitchat import ChitchatConversation, load_chitchat  # noqa: F401  (one reader; re-exported for the builders)
from guard.training.labels import LABEL2ID, LabelledPair

# --------------------------------------------------------------------------------------------
# SNLI
# --------------------------------------------------------------------------------------------

def load_snli(path: Path | str, limit: int | None = None, seed: int = 0) -> list[LabelledPair]:
    """SNLI pairs with a gold label (the ``-`` no-consensus rows are dropped), optionally a random subset."""
    pairs = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            if row.get("gold_label") not in LABEL2ID:
                continue
            pairs.append(LabelledPair(row["sentence1"], row["sentence2"], row["gold_label"], "snli"))
    if limit is not None and limit < len(pairs):
        pairs = random.Random(seed).sample(pairs, limit)
    return pairs


# --------------------------------------------------------------------------------------------
# Persona entities: hand lists plus WordNet hyponyms
# --------------------------------------------------------------------------------------------

# Entities per category. Hand lists keep the sentences natural; ``wordnet_entities`` adds more.
ENTITIES: dict[str, list[str]] = {
    "pet": ["dog", "cat", "hamster", "parrot", "rabbit", "goldfish", "turtle", "snake", "horse", "lizard"],
    "sibling": ["brother", "sister"],
    "child": ["son", "daughter"],
    "vehicle": ["car", "truck", "motorcycle", "bike", "minivan", "boat"],
    "food": ["pizza", "sushi", "pasta", "tacos", "burgers", "salad", "steak", "curry", "ice cream",
             "chocolate", "pancakes", "seafood", "spicy food", "vegetables", "cheese", "bacon"],
    "drink": ["coffee", "tea", "beer", "wine", "soda", "orange juice", "milk", "lemonade", "whiskey"],
    "sport": ["football", "basketball", "soccer", "tennis", "baseball", "golf", "hockey", "swimming",
              "volleyball", "boxing", "running", "skiing", "surfing", "cycling"],
    "activity": ["hiking", "reading", "cooking", "painting", "gardening", "dancing", "fishing", "camping",
                 "knitting", "singing", "video games", "yoga", "photography", "traveling", "shopping",
                 "baking", "writing poetry", "watching movies", "playing chess"],
    "music": ["rock music", "jazz", "country music", "hip hop", "classical music", "pop music",
              "heavy metal", "reggae", "the blues", "opera", "rap"],
    "genre": ["horror movies", "comedies", "romance novels", "science fiction", "documentaries",
              "cartoons", "reality shows", "action movies", "mystery novels", "anime"],
    "instrument": ["guitar", "piano", "violin", "drums", "flute", "saxophone", "cello", "trumpet"],
    "color": ["blue", "red", "green", "yellow", "purple", "black", "white", "pink", "orange"],
    "season": ["summer", "winter", "spring", "fall"],
    "city": ["Chicago", "New York", "Los Angeles", "Boston", "Seattle", "Miami", "Denver", "Austin",
             "Toronto", "London", "Paris", "Berlin", "Tokyo", "Sydney", "Dallas", "Atlanta"],
    "country": ["Canada", "Mexico", "France", "Germany", "Japan", "Brazil", "Italy", "Spain", "India",
                "Australia", "Ireland", "China", "Russia", "Egypt", "Kenya"],
    "nationality": ["American", "Canadian", "Mexican", "French", "German", "Japanese", "Brazilian",
                    "Italian", "Spanish", "Indian", "Australian", "Irish", "Chinese"],
    "profession": ["teacher", "nurse", "doctor", "lawyer", "engineer", "chef", "accountant", "pilot",
                   "firefighter", "police officer", "mechanic", "dentist", "farmer", "librarian",
                   "plumber", "architect", "cashier", "electrician", "waitress", "programmer"],
    "company": ["Google", "Walmart", "Amazon", "Microsoft", "a bank", "a hospital", "a bakery",
                "a law firm", "a car dealership", "a grocery store"],
    "marital": ["married", "single", "divorced", "engaged", "widowed"],
    "school": ["high school", "college", "law school", "medical school", "grad school"],
    "experience": ["skiing", "camping", "surfing", "fishing", "skydiving", "hiking", "sailing", "snowboarding",
                   "scuba diving", "bowling", "ice skating", "horseback riding", "rock climbing", "kayaking"],
    "food_diet": ["vegan", "vegetarian"],
    "meat_diet": ["meat lover", "carnivore"],
}


def wordnet_entities(wn, base: dict[str, list[str]] | None = None, per_category: int = 40) -> dict[str, list[str]]:
    """Extend a few entity categories with WordNet hyponyms (single common words only)."""
    roots = {"pet": ["domestic_animal.n.01"], "food": ["dish.n.02"], "drink": ["beverage.n.01"],
             "sport": ["sport.n.01"], "instrument": ["musical_instrument.n.01"],
             "profession": ["professional.n.01", "worker.n.01"]}
    out = {k: list(v) for k, v in (base or ENTITIES).items()}
    for cat, names in roots.items():
        found: list[str] = []
        for root in names:
            for syn in wn.synset(root).closure(lambda s: s.hyponyms(), depth=2):
                lemma = syn.lemmas()[0]
                word = lemma.name()
                if "_" in word or not word.isalpha() or not word.islower() or len(word) > 12:
                    continue
                if lemma.count() < 5:  # SemCor frequency: keeps words people actually say
                    continue
                found.append(word)
        for word in sorted(set(found))[:per_category]:
            if word not in out[cat]:
                out[cat].append(word)
    return out


# --------------------------------------------------------------------------------------------
# Chit-chat conversations (chitchat_dataset)
# --------------------------------------------------------------------------------------------

_ASCII_TEXT = re.compile(r"^[\x20-\x7e]+$")


def usable_utterance(text: str, min_words: int = 4, max_words: int = 45) -> bool:
    """Plain-English statements of a useful length (no URLs, emoji, or non-ASCII)."""
    words = text.split()
    return (min_words <= len(words) <= max_words and bool(_ASCII_TEXT.match(text))
            and "http" not in text and sum(c.isalpha() for c in text) > 0.6 * len(text.replace(" ", "")))


def usable_pool(convs: Sequence[ChitchatConversation]) -> list[str]:
    """Every usable utterance (``usable_utterance``) of the conversations, in order."""
    return [u for c in convs for u in c.utterances if usable_utterance(u)]


def split_conversations(convs: Sequence[ChitchatConversation], heldout_fraction: float, seed: int = 0
                        ) -> tuple[list[ChitchatConversation], list[ChitchatConversation]]:
    """Train / held-out split by conversation, so no utterance leaks into calibration."""
    order = list(convs)
    random.Random(seed).shuffle(order)
    k = int(len(order) * heldout_fraction)
    return order[k:], order[:k]
