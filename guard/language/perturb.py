"""Text perturbations over spaCy parses, in the manner of CheckList's ``Perturb`` (Ribeiro et al. 2020).

``Perturb``'s functions take a parsed spaCy ``Doc`` and return the changed text, or None when the
perturbation does not apply (a question, no finite main clause, no word with an antonym...). The
module-level functions (``negate``, ``antonym``, ``synonym``, ...) take plain strings and parse them
with the embedded spaCy model, for callers that hold no parse.

They serve the probes (``guard.eval.probes``), the detector's training pairs (``guard.training``) and
anything else that needs variants of a message:

* CDConv's perturbations (Zheng et al. 2022, §4.1): negating the main clause or swapping a word for
  its antonym makes a statement contradict the original; swapping a noun for a synonym keeps it
  consistent.
* Meaning-keeping rewrites: dropping an adjective / adverb modifier (where that keeps the sentence
  entailed), and expanding or contracting contractions ("I'm" <-> "I am").

Negation, antonym and synonym work on the first declarative sentence of the text: not a question,
a verb or auxiliary at its root, with a subject. spaCy finds the clause; WordNet supplies antonyms
and synonyms.
"""

from __future__ import annotations

import random
import re

from guard.language import grammar
from guard.language.forms import NEGATED_CONTRACTIONS, POSITIVE_OF, indefinite_article

#: Negation words the negation perturbation knows how to remove; "never" becomes "always".
_NEGATION_WORDS = frozenset({"not", "n't", "nt", "never"})
#: Auxiliary clitics whose negation reads better written out ("I'll" -> "I will not", not "I'll not");
#: "'d" is "had" before a participle and "would" otherwise (``_before_participle``). Chat drops the apostrophe.
_CLITIC_WORDS = {"'ll": "will", "ll": "will", "'ve": "have", "ve": "have", "'d": "would"}
#: Auxiliaries "not" can follow (by lemma); not "get" of a passive ("gets blasted") or "to".
_AUXILIARY_LEMMAS = frozenset({"be", "have", "do", "will", "would", "can", "could", "shall", "should", "may",
                               "might", "must"})
#: Tags of a finite copula: "is", "am", "was" negate; "been", "being", "be" are not the clause's tense.
_FINITE_TAGS = frozenset({"VBZ", "VBP", "VBD", "MD"})
#: Pronoun + auxiliary contractions: the auxiliary, its clitic, and the pronouns it attaches to.
_SUBJECT_CLITICS: dict[str, tuple[str, frozenset[str]]] = {
    "am": ("'m", frozenset({"i"})),
    "are": ("'re", frozenset({"you", "we", "they"})),
    "is": ("'s", frozenset({"he", "she", "it", "that", "there", "what", "who", "where", "here"})),
    "has": ("'s", frozenset({"he", "she", "it", "that", "there", "who"})),
    "have": ("'ve", frozenset({"i", "you", "we", "they"})),
    "will": ("'ll", frozenset({"i", "you", "he", "she", "it", "we", "they", "that", "there"})),
    "would": ("'d", frozenset({"i", "you", "he", "she", "it", "we", "they", "that", "there"})),
}
#: Words whose antonym WordNet lacks or gets wrong for chat (verbs, adverbs, quantifiers);
#: other adjectives and verbs get theirs from WordNet.
HAND_ANTONYMS: dict[str, str] = {
    "love": "hate", "hate": "love", "like": "dislike", "dislike": "like", "loved": "hated", "hated": "loved",
    "liked": "disliked", "enjoy": "hate", "enjoyed": "hated", "agree": "disagree", "disagree": "agree",
    "always": "never", "never": "always", "remember": "forget", "forgot": "remembered",
    "remembered": "forgot", "win": "lose", "won": "lost", "lost": "won", "accept": "refuse",
    "everyone": "nobody", "everything": "nothing", "nothing": "everything", "more": "less", "less": "more",
    "best": "worst", "worst": "best", "yes": "no", "true": "false", "false": "true", "can": "cannot",
}
_HAND_ANTONYM_POS = frozenset({"VERB", "ADV", "ADJ", "PRON", "INTJ", "AUX"})
#: Words whose WordNet antonym says something else in chat ("I know what you mean" -> "I ignore ...").
_NO_ANTONYM = frozenset({"know"})

# Words that make dropping a modifier unsafe (downward-monotone or non-subsective contexts).
_NOT_UPWARD = {"no", "not", "never", "nobody", "nothing", "none", "nor", "without", "if", "few", "only", "hardly",
               "barely", "unless", "less", "neither", "n't", "cannot", "dont", "doesnt", "didnt", "cant", "wont"}
_NON_SUBSECTIVE = {"former", "fake", "alleged", "false", "fictional", "imaginary", "pretend", "artificial", "mock",
                   "toy", "ex", "counterfeit", "virtual", "fewer", "more", "most", "less", "least", "other", "same",
                   "many", "much", "several", "all", "every", "each", "any", "some", "enough", "first", "last"}
_DROPPABLE_ADVERBS = {"very", "really", "pretty", "so", "too", "also", "just", "actually", "probably", "always",
                      "still", "quite", "super", "totally", "definitely", "even", "already", "often", "usually"}


def statement(doc):
    """The first declarative sentence of ``doc`` (a spaCy ``Span``), or None.

    Declarative: not a question, a verb or auxiliary at its root, and a subject, so that negating or
    swapping a word in it states the opposite of what the speaker said.
    """
    for sent in doc.sents:
        root = sent.root
        if grammar.is_verb(root) and not sent.text.strip().endswith("?") \
                and any(child.dep_ in grammar.SUBJECT_DEPS for child in root.children):
            return sent
    return None


def _plain(token) -> str:
    """The token's lower-case text with a typographic apostrophe made plain."""
    return token.lower_.replace("\u2019", "'")


def _rebuild(doc, replacements: dict[int, str]) -> str:
    """``doc``'s text with token i replaced by ``replacements[i]`` (which carries its own trailing space)."""
    text = "".join(replacements.get(t.i, t.text_with_ws) for t in doc).strip()
    return re.sub(r" {2,}", " ", text)


def _match_case(word: str, template: str) -> str:
    """``word`` in the case of ``template``: all capitals, capitalised, or as given."""
    if len(template) > 2 and template.isupper():  # shouted text; "TV" is an acronym, not shouting
        return word.upper()
    return word[:1].upper() + word[1:] if template[:1].isupper() else word


def _space_after(token) -> str:
    """The space a token needs once a word is added after it (none before punctuation or at the end)."""
    if token.whitespace_:
        return token.whitespace_
    following = token.doc[token.i + 1] if token.i + 1 < len(token.doc) else None
    return "" if following is None or following.is_punct else " "


def _clause_negations(root) -> list:
    """The negation tokens of the main clause: "not" / "n't" / "never" on its root verb or on the root's
    auxiliaries, and an auxiliary spaCy left unsplit with its "n't" ("DON'T")."""
    heads = [root, *grammar.auxiliaries(root)]
    found = [c for h in heads for c in grammar.negations(h)] + [h for h in heads if _plain(h) in POSITIVE_OF]
    return sorted(set(found), key=lambda t: t.i)


def _before_participle(aux) -> bool:
    """Whether a "'s" / "'d" auxiliary makes a perfect tense ("he's been" = has, "she'd gone" = had).

    spaCy reads both as "be" / "would"; the verb they attach to tells: a past participle, not in the passive
    ("it's done"), though spaCy files "he's been" and "he's got" as passives.
    """
    return aux.head.tag_ == "VBN" and (aux.dep_ == "aux" or aux.head.lemma_ in ("be", "get"))


def _negated_auxiliary(aux) -> str:
    """The replacement text for ``aux`` followed by "not" ("can" -> "cannot", "'ll" -> " will not")."""
    word = _plain(aux)
    after = _space_after(aux)
    if word == "can":
        return _match_case("cannot", aux.text) + after
    if word in _CLITIC_WORDS:
        full = "had" if word == "'d" and _before_participle(aux) else _CLITIC_WORDS[word]
        before = "" if aux.i == 0 or aux.doc[aux.i - 1].whitespace_ else " "
        return f"{before}{full} not{after}"
    return f"{aux.text} not{after}"


def _swap(doc, index: int, word: str) -> dict[int, str]:
    """Replace token ``index`` by ``word``, fixing a preceding "a"/"an" to agree with it."""
    replacements = {index: _match_case(word, doc[index].text) + doc[index].whitespace_}
    if index > 0 and doc[index - 1].lower_ in ("a", "an"):
        article = indefinite_article(word)
        replacements[index - 1] = _match_case(article, doc[index - 1].text) + doc[index - 1].whitespace_
    return replacements


def _wordnet_antonym(token, wn) -> str | None:
    """The WordNet antonym of an adjective (tag JJ) or a base-form, non-phrasal verb, from its most
    frequent sense only (fewer wrong-sense swaps such as "short" -> "long" for a person)."""
    if token.tag_ == "JJ":
        if any(c.dep_ == "npadvmod" for c in token.children) or token.head.dep_ == "npadvmod":
            return None  # a measure or a time ("twenty years old", "last year"), not a property
        pos = "a"
    elif token.pos_ == "VERB" and token.tag_ in ("VB", "VBP") and not any(c.dep_ == "prt" for c in token.children):
        pos = "v"  # not phrasal verbs: "wake up" -> "sleep up"
    else:
        return None
    lemma = token.lemma_.lower()
    if lemma in _NO_ANTONYM:
        return None
    names = [a.name() for synset in wn.synsets(lemma, pos=pos)[:1] for entry in synset.lemmas()
             if entry.name().lower() == lemma for a in entry.antonyms()]
    return names[0].replace("_", " ") if names else None


def _wordnet_synonym(token, wn) -> str | None:
    """The most used other lemma (WordNet sense counts, non-zero) of a singular common noun's first sense."""
    if token.tag_ != "NN" or token.pos_ != "NOUN" or token.dep_ in ("compound", "npadvmod"):
        return None  # a noun modifying another ("city hospital") changes sense when swapped
    word = token.lemma_.lower()
    synsets = wn.synsets(word, pos="n")
    if not synsets:
        return None
    others = [lemma for lemma in synsets[0].lemmas()  # "poodle" -> "poodle dog" is no swap
              if lemma.name().islower() and word not in lemma.name().lower().split("_")
              and "-" not in lemma.name() and lemma.count() > 0]  # attested in use, not a rarity
    if not others:
        return None
    return max(others, key=lambda lemma: lemma.count()).name().replace("_", " ")


class Perturb:
    """Perturbations of a parsed text: a spaCy ``Doc`` in, the changed text (or None) out."""

    @staticmethod
    def negation(doc, contract_do: bool = False) -> str | None:
        """Flip the polarity of the main clause of the first declarative sentence (CDConv's "Negative").

        A negated clause loses its negation ("I don't eat meat" -> "I do eat meat", "She is never late"
        -> "She is always late"); otherwise "not" follows the first auxiliary or the copula ("I am not a
        nurse", "I cannot swim"), else do-support by the verb's tense ("She does not like cats";
        ``contract_do`` writes it "doesn't", as people do in chat).
        """
        sent = statement(doc)
        if sent is None:
            return None
        if _clause_negations(sent.root):
            return Perturb.remove_negation(doc)
        return Perturb.add_negation(doc, contract_do=contract_do)

    @staticmethod
    def remove_negation(doc) -> str | None:
        """The first declarative sentence with its main-clause negation removed; None when it has none."""
        sent = statement(doc)
        negations = _clause_negations(sent.root) if sent is not None else []
        if not negations or any(_plain(n) not in _NEGATION_WORDS and _plain(n) not in POSITIVE_OF
                                for n in negations):
            return None
        replacements: dict[int, str] = {}
        for n in negations:
            word = _plain(n)
            before = doc[n.i - 1] if n.i > 0 else None
            if word in POSITIVE_OF:  # "DON'T" -> "DO"
                replacements[n.i] = _match_case(POSITIVE_OF[word], n.text) + n.whitespace_
                continue
            if word == "never":
                replacements[n.i] = _match_case("always", n.text) + n.whitespace_
                continue
            replacements[n.i] = ""
            if word in ("n't", "nt") and before is not None:  # "don't" -> "do", "can't" -> "can"
                if before.lower_ == "ai":
                    return None  # "ain't" stands for am / is / are / has / have: no single positive
                stem = grammar.NT_STEMS.get(before.lower_)
                replacements[before.i] = (_match_case(stem, before.text) if stem else before.text) + n.whitespace_
            elif before is not None and not before.whitespace_:  # "cannot" -> "can" + the following space
                replacements[before.i] = before.text + n.whitespace_
        return _rebuild(doc, replacements) or None

    @staticmethod
    def add_negation(doc, contract_do: bool = False) -> str | None:
        """The first declarative sentence with its main clause negated; None when it is negated already
        or has no auxiliary, copula or tensed verb to negate."""
        sent = statement(doc)
        if sent is None or _clause_negations(sent.root):
            return None
        root = sent.root
        auxiliaries = [c for c in grammar.auxiliaries(root) if c.i < root.i]
        if auxiliaries:  # "I have been to Paris" -> "I have not been to Paris"
            aux = min(auxiliaries, key=lambda t: t.i)
            if aux.lemma_.lower() not in _AUXILIARY_LEMMAS:
                return None
            return _rebuild(doc, {aux.i: _negated_auxiliary(aux)})
        if root.pos_ == "AUX" or root.lemma_.lower() == "be":  # copula: "I am a nurse"
            if root.tag_ not in _FINITE_TAGS:
                return None
            return _rebuild(doc, {root.i: _negated_auxiliary(root)})
        do = grammar.DO_SUPPORT.get(root.tag_)  # "She likes cats" -> "She does not like cats"
        attached = root.i > 0 and not doc[root.i - 1].whitespace_  # "thats" = "that" + "s": no verb to negate
        if do is None or root.pos_ != "VERB" or not root.text.isalpha() or attached:
            return None
        negated = NEGATED_CONTRACTIONS[do] if contract_do else f"{do} not"
        lemma = root.lemma_.lower() if root.text[:1].islower() else root.lemma_
        return _rebuild(doc, {root.i: f"{negated} {lemma}{root.whitespace_}"})

    @staticmethod
    def antonym(doc, rng: random.Random | None = None, wordnet=None) -> str | None:
        """Swap one word of the first declarative sentence for its antonym (CDConv's "Antonym").

        Candidates are the words of ``HAND_ANTONYMS`` and the adjectives / base-form verbs that have
        a WordNet antonym in their most frequent sense; one is picked at random (as CDConv does).
        A preceding "a"/"an" is fixed to agree. None when no word has an antonym.
        """
        sent = statement(doc)
        if sent is None:
            return None
        if wordnet is None:
            from embedded import wordnet as load_wordnet

            wordnet = load_wordnet()
        options: list[tuple[int, str]] = []
        for token in sent:
            word = token.lower_
            found = HAND_ANTONYMS[word] if word in HAND_ANTONYMS and token.pos_ in _HAND_ANTONYM_POS \
                else _wordnet_antonym(token, wordnet)
            if found:
                options.append((token.i, found))
        if not options:
            return None
        index, word = (rng or random.Random(0)).choice(options)
        return _rebuild(doc, _swap(doc, index, word))

    @staticmethod
    def synonym(doc, rng: random.Random | None = None, wordnet=None) -> str | None:
        """Swap one singular common noun of the first declarative sentence for a WordNet synonym.

        The synonym is the most used other lemma of the noun's most frequent sense; nouns whose first
        sense has none, and nouns modifying another noun, are left alone. None when no noun qualifies.
        """
        sent = statement(doc)
        if sent is None:
            return None
        if wordnet is None:
            from embedded import wordnet as load_wordnet

            wordnet = load_wordnet()
        options = [(token.i, found) for token in sent if (found := _wordnet_synonym(token, wordnet))]
        if not options:
            return None
        index, word = (rng or random.Random(0)).choice(options)
        return _rebuild(doc, _swap(doc, index, word))

    @staticmethod
    def drop_modifier(doc, rng: random.Random) -> str | None:
        """The text with one adjective or adverb modifier removed, when that keeps it entailed.

        "I have a big old dog" entails "I have a big dog"; skipped where a negation, quantifier or
        conditional could reverse that ("I don't have a big dog" does not entail "I don't have a dog").
        """
        if any(t.lower_ in _NOT_UPWARD or t.dep_ == "neg" for t in doc) or doc.text.strip().endswith("?"):
            return None
        options = [t for t in doc if t.text.isalpha() and t.lower_ not in _NON_SUBSECTIVE and not list(t.children)
                   and t.i > 0 and (
                       (t.dep_ == "amod" and t.pos_ == "ADJ" and t.head.pos_ == "NOUN" and t.i < t.head.i)
                       or (t.dep_ == "advmod" and t.pos_ == "ADV" and t.head.pos_ in ("VERB", "ADJ")
                           and (t.lower_.endswith("ly") or t.lower_ in _DROPPABLE_ADVERBS)))]
        if not options:
            return None
        dropped = rng.choice(options)
        replacements = {dropped.i: ""}
        before = doc[dropped.i - 1]
        if before.lower_ in ("a", "an") and dropped.i + 1 < len(doc):  # "an old dog" -> "a dog"
            article = indefinite_article(doc[dropped.i + 1].text)
            replacements[before.i] = _match_case(article, before.text) + before.whitespace_
        out = re.sub(r"\s+", " ", "".join(replacements.get(t.i, t.text_with_ws) for t in doc)).strip()
        return out if out and out.lower() != doc.text.strip().lower() else None

    @staticmethod
    def expand_contractions(doc) -> str | None:
        """Contractions written out ("I'm" -> "I am", "don't" -> "do not", "can't" -> "cannot");
        "'s" and "'d" by the verb spaCy reads ("he's been" -> "he has been"). None when there are none."""
        replacements: dict[int, str] = {}
        for token in doc:
            word = _plain(token)
            before = doc[token.i - 1] if token.i > 0 else None
            negation = word == "n't" or (word == "nt" and token.dep_ == "neg")
            if negation and before is not None and before.lower_ != "ai":
                stem = grammar.NT_STEMS.get(before.lower_, before.lower_)
                if stem == "can":
                    replacements[before.i] = _match_case("cannot", before.text) + token.whitespace_
                    replacements[token.i] = ""
                else:
                    replacements[before.i] = _match_case(stem, before.text) + " "
                    replacements[token.i] = _match_case("not", token.text) + token.whitespace_
                continue
            if before is None or before.whitespace_ or not word.startswith("'"):
                continue
            if word in ("'m", "'re", "'ve", "'ll"):
                full = {"'m": "am", "'re": "are", "'ve": "have", "'ll": "will"}[word]
            elif word == "'s" and token.tag_ == "VBZ":
                full = "has" if token.lemma_ == "have" or _before_participle(token) else "is"
            elif word == "'d" and token.pos_ == "AUX":
                full = "had" if _before_participle(token) else "would"
            else:
                continue  # a possessive "'s" or "let's"
            replacements[token.i] = " " + _match_case(full, token.text.lstrip("'\u2019")) + token.whitespace_
        return _rebuild(doc, replacements) if replacements else None

    @staticmethod
    def contract(doc) -> str | None:
        """Common contractions made ("I am" -> "I'm", "do not" -> "don't", "cannot" -> "can't");
        "have" only as an auxiliary ("I have been" -> "I've been", never "I've a dog"). None when none apply."""
        replacements: dict[int, str] = {}
        tokens = list(doc)
        for token in tokens:
            word = token.lower_
            after = tokens[token.i + 1] if token.i + 1 < len(tokens) else None
            if word == "not" and token.i > 0:
                aux = tokens[token.i - 1]
                if aux.lower_ in NEGATED_CONTRACTIONS and aux.pos_ == "AUX" and aux.whitespace_ in (" ", ""):
                    replacements[aux.i] = _match_case(NEGATED_CONTRACTIONS[aux.lower_], aux.text) + token.whitespace_
                    replacements[token.i] = ""
                continue
            if word not in _SUBJECT_CLITICS or token.pos_ != "AUX" or token.i == 0:
                continue
            if word in ("have", "has") and token.dep_ not in grammar.AUXILIARY_DEPS:
                continue  # "I have a dog" keeps its verb
            if after is not None and after.lower_ == "not" and word in NEGATED_CONTRACTIONS:
                continue  # the negation contracts instead ("I would not" -> "I wouldn't"; but "I'm not")
            clitic, subjects = _SUBJECT_CLITICS[word]
            subject = tokens[token.i - 1]
            if subject.lower_ in subjects and subject.whitespace_ == " " and subject.dep_ in grammar.SUBJECT_DEPS:
                replacements[subject.i] = subject.text
                replacements[token.i] = _match_case(clitic, token.text) + token.whitespace_
        return _rebuild(doc, replacements) if replacements else None


# ---------------------------------------------------------------------------- plain-string API

def parse(text: str):
    """``text`` parsed by the embedded spaCy model (en_core_web_sm), once (``guard.language.grammar.parse``)."""
    return grammar.parse(text)


def first_statement(text: str) -> str | None:
    """The first declarative sentence of ``text`` (see ``statement``), or None."""
    sent = statement(parse(text))
    return sent.text.strip() if sent is not None else None


def negate(text: str, contract_do: bool = False) -> str | None:
    """``text`` with its first declarative sentence negated or its negation removed (``Perturb.negation``).

    "I am a nurse" -> "I am not a nurse"; "I like dogs" -> "I do not like dogs"; "I don't eat meat"
    -> "I do eat meat". None when no such clause exists (a question, a fragment).
    """
    return Perturb.negation(parse(text), contract_do=contract_do)


def antonym(text: str, rng: random.Random | None = None) -> str | None:
    """``text`` with one word of its first declarative sentence swapped for an antonym (``Perturb.antonym``)."""
    return Perturb.antonym(parse(text), rng)


def synonym(text: str, rng: random.Random | None = None) -> str | None:
    """``text`` with one noun of its first declarative sentence swapped for a synonym (``Perturb.synonym``)."""
    return Perturb.synonym(parse(text), rng)


def drop_modifier(text: str, rng: random.Random | None = None) -> str | None:
    """``text`` with one droppable adjective / adverb removed (``Perturb.drop_modifier``)."""
    return Perturb.drop_modifier(parse(text), rng or random.Random(0))


def expand_contractions(text: str) -> str | None:
    """``text`` with its contractions written out ("I'm" -> "I am"), or None when it has none."""
    return Perturb.expand_contractions(parse(text))


def contract(text: str) -> str | None:
    """``text`` with common contractions made ("I am" -> "I'm"), or None when none apply."""
    return Perturb.contract(parse(text))
