"""How English writes a word's forms: a noun's plural, the article in front of a word, an auxiliary's negated
contraction ("do" <-> "don't").

The guard writes English as well as reading it: the answer reading's statements ("I work as an engineer."), the fact
sheet's table ("dogs 2"), the perturbations ("I don't like cats") and the training templates ("i have no pets.").
Each form is written here once, for all of them.

A module of its own beside ``grammar`` rather than a part of it: nothing here reads a parse, and ``grammar`` (the
bottom of the guard: the parse, the shared words, the rules over a parse, affirmation, time, numbers, kinds) needs
none of it, so it stays one a reader takes in. Like ``grammar``, this module imports nothing of the guard.
"""

from __future__ import annotations

#: plurals the rule below gets wrong, among the nouns the guard writes counts of
_IRREGULAR_PLURALS = {"child": "children"}


def plural(noun: str) -> str:
    """The noun's plural by the regular rule ("dog" -> "dogs", "fox" -> "foxes", "puppy" -> "puppies"), "child" ->
    "children"."""
    if noun in _IRREGULAR_PLURALS:
        return _IRREGULAR_PLURALS[noun]
    if noun.endswith(("s", "sh", "ch", "x")):
        return noun + "es"
    if noun.endswith("y") and noun[-2:-1] not in "aeiou":
        return noun[:-1] + "ies"
    return noun + "s"


def indefinite_article(word: str) -> str:
    """The indefinite article for ``word`` by its sound, in the common cases ("an hour", "a useful", "an unreal")."""
    lower = word.lower()
    if lower.startswith(("hour", "honest", "honor", "honour", "heir")):
        return "an"
    if lower.startswith(("uni", "use", "usu", "uti", "ura", "ure", "euro", "eu", "one", "once")):
        return "a"
    return "an" if lower[:1] in ("a", "e", "i", "o", "u") else "a"


def with_article(phrase: str) -> str:
    """The phrase after its indefinite article ("engineer" -> "an engineer", "university lecturer" -> "a university
    lecturer")."""
    return f"{indefinite_article(phrase)} {phrase}"


#: auxiliaries with a contracted negation, and that form ("do not" -> "don't")
NEGATED_CONTRACTIONS: dict[str, str] = {
    "do": "don't", "does": "doesn't", "did": "didn't", "is": "isn't", "are": "aren't", "was": "wasn't",
    "were": "weren't", "have": "haven't", "has": "hasn't", "had": "hadn't", "can": "can't", "will": "won't",
    "could": "couldn't", "would": "wouldn't", "should": "shouldn't", "must": "mustn't", "need": "needn't",
    "might": "mightn't",
}
#: a negated contraction's auxiliary ("don't" -> "do", "won't" -> "will")
POSITIVE_OF: dict[str, str] = {negated: aux for aux, negated in NEGATED_CONTRACTIONS.items()}
