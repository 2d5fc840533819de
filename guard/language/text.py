"""Sentence and clause splitting with spaCy, cached per text.

Bot replies are long and a contradiction usually sits in one clause, so the detector compares
sentences (history contradiction) and clauses (intra-sentence contradiction) rather than whole
turns. Splitting reads spaCy's parse (``guard.language.grammar``: each text parsed once, kept across turns);
a conversation repeats the same texts every turn, so every split is cached by its text too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from embedded.once import BoundedCache
from guard.language import grammar

# Words that only join clauses; stripped from the edges of a clause so "but I hate dogs"
# is compared as "I hate dogs".
_JOINERS = frozenset({"but", "and", "or", "so", "yet", "because", "although", "though", "while", "however", "that"})
_CACHE_LIMIT = 50_000

_sentence_cache: BoundedCache = BoundedCache(_CACHE_LIMIT)
_clause_cache: BoundedCache = BoundedCache(_CACHE_LIMIT)


def _clean(span_text: str) -> str:
    words = re.sub(r"\s+([.,!?;:])", r"\1", span_text).strip().strip(",;:-").split()
    while words and words[0].lower().strip(",") in _JOINERS:
        words = words[1:]
    while words and words[-1].lower().strip(",.") in _JOINERS:
        words = words[:-1]
    return " ".join(words).strip(" ,;:-")


def _clauses_of_sentence(sent) -> list[str]:
    """Cut a parsed sentence at clause heads (``grammar.starts_clause``: conj/advcl/ccomp verbs) and at "but".

    Each clause head takes its own subtree minus the subtrees of clause heads below it; what
    is left belongs to the main clause.
    """
    heads = [tok for tok in sent if grammar.starts_clause(tok) and tok.i != sent.root.i]
    owner: dict[int, int] = {}  # token index -> clause-head index (root = main clause)
    for tok in sent:
        node = tok
        while node.i != sent.root.i and node not in heads:
            node = node.head
        owner[tok.i] = node.i
    groups: dict[int, list] = {}
    for tok in sent:
        groups.setdefault(owner[tok.i], []).append(tok)
    pieces = []
    for tokens in groups.values():
        # A clause may be discontinuous; keep its tokens in order, split again at "but".
        current: list[str] = []
        for tok in sorted(tokens, key=lambda t: t.i):
            if tok.lower_ == "but" and tok.dep_ == "cc" and current:
                pieces.append("".join(current))
                current = []
                continue
            current.append(tok.text_with_ws)
        if current:
            pieces.append("".join(current))
    clauses = [_clean(p) for p in pieces]
    return [c for c in clauses if len(c.split()) >= 2 or (c and c[0].isalpha() and len(sent) <= 3)]


def _parse(texts: list[str]) -> None:
    """Parse the uncached texts in one spaCy batch and cache sentences and clauses."""
    todo = [t for t in dict.fromkeys(texts) if t not in _sentence_cache or t not in _clause_cache]
    if not todo:
        return
    for text, doc in zip(todo, grammar.parse_many(todo)):
        sentences = tuple(s.text.strip() for s in doc.sents if s.text.strip()) or (text.strip(),)
        clauses: list[str] = []
        for sent in doc.sents:
            clauses.extend(_clauses_of_sentence(sent))
        _sentence_cache.put(text, sentences)
        _clause_cache.put(text, tuple(dict.fromkeys(clauses)) or sentences)


def prepare(texts: Iterable[str]) -> None:
    """Split many texts in one spaCy batch (faster than one call per text)."""
    _parse([t for t in texts if t])


def sentences(text: str) -> tuple[str, ...]:
    """The text's sentences (spaCy parser boundaries); the whole text when it has one."""
    if not text.strip():
        return ()
    if text not in _sentence_cache:
        _parse([text])
    return _sentence_cache.get(text) or (text.strip(),)


def clauses(text: str) -> tuple[str, ...]:
    """The text's clauses: sentences cut at coordinated/adverbial/complement clauses and "but"."""
    if not text.strip():
        return ()
    if text not in _clause_cache:
        _parse([text])
    return _clause_cache.get(text) or sentences(text)


def clear_caches() -> None:
    _sentence_cache.clear()
    _clause_cache.clear()
    grammar.clear_parses()


#: sentences that assert nothing about their speaker: greetings, thanks, backchannels and laughter, whole
_SMALL_TALK = re.compile(
    r"^(?:(?:hi|hello|hey|hiya|howdy|yo|greetings|good (?:morning|afternoon|evening|night)|bye|goodbye|see you|"
    r"thanks|thank you|thank you so much|thanks a lot|you're welcome|no problem|ok|okay|k|cool|nice|great|wow|"
    r"awesome|lol|haha|hahaha|hehe|hmm|oh|ah|yeah|yes|yep|no|nope|sure|right|true|really|i see|me too|same here|"
    r"that's cool|that is cool|that's nice|that is nice|that's great|that is great|sounds good|sounds fun|"
    r"sounds great|that sounds fun|that sounds great|nice to meet you|good to know|interesting)"
    r"(?:[\s,]+(?:there|then|man|friend|buddy|dude|too|so much|a lot))*)[\s.!,~:)(😀-🙏]*$",
    re.IGNORECASE)
#: how a question that asks the other speaker something opens (it asserts nothing about the one who asks)
_ASKS = re.compile(
    r"^(?:(?:so|and|but|well|oh|hey|ok|okay|wait|really|sorry|hmm)[,!]?\s+)?(?:what|what's|whats|how|how's|where|"
    r"where's|when|why|who|which|whose|do|does|did|are|is|was|were|have|has|had|can|could|will|would|should|shall|"
    r"may|might|don't|doesn't|didn't|aren't|isn't|wasn't|weren't|haven't|hasn't|can't|couldn't|won't|wouldn't|"
    r"tell me|you|your|any|anything)\b", re.IGNORECASE)


def asserts_nothing(sentence: str) -> bool:
    """A sentence that states nothing about its speaker: a greeting, thanks or backchannel ("Cool!", "Thank you."),
    or a question put to the other speaker ("What do you do for fun?"). The guard pairs such a sentence with nothing:
    it cannot contradict, nor be contradicted by, anything the speaker claims. A statement with a question tacked
    on ("I have two dogs, do you?") opens with the statement and is kept.
    """
    text = sentence.strip()
    if not text:
        return True
    if _SMALL_TALK.match(text):
        return True
    return text.endswith("?") and bool(_ASKS.match(text))
