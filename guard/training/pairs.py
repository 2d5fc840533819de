"""Dialogue-domain training pairs built from real chit-chat utterances (``chitchat_dataset``).

Real utterances teach that *unrelated* or merely *same-topic* utterances are not contradictions
(SNLI alone teaches the opposite), that repeating oneself is entailment, and, through CDConv's
negation / antonym perturbations (``guard.language.perturb``), what a contradiction inside one clause of a
long casual reply looks like. The counter-shortcut builders (negated neutral / entailment pairs,
restatements, same-speaker overlap) keep the model from learning "negation word" or "near copy"
as a contradiction cue.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Sequence

from guard.language.perturb import Perturb, synonym
from guard.training.labels import LabelledPair
from guard.training.sources import ChitchatConversation, usable_pool, usable_utterance


def negate_chat(doc) -> str | None:
    """``Perturb.negation`` with do-support contracted as chat writes it ("I like pizza" -> "I don't like pizza")."""
    return Perturb.negation(doc, contract_do=True)


def replace_sentence(doc, sent, changed: str) -> str:
    """The utterance ``doc`` with its sentence ``sent`` replaced by ``changed``."""
    return (doc.text[:sent.start_char] + changed + doc.text[sent.end_char:]).strip()


def statement_sentences(doc) -> list:
    """The sentences of ``doc`` that are no question and have at least three tokens."""
    return [s for s in doc.sents if not s.text.strip().endswith("?") and len(s) >= 3]


def _statement_docs(pool: Sequence[str], count: int, nlp, rng: random.Random):
    """Up to ``count`` utterances sampled from ``pool``, parsed, each with its statement sentences."""
    for doc in nlp.pipe(rng.sample(pool, min(len(pool), count)), batch_size=256):
        sents = statement_sentences(doc)
        if sents:
            yield doc, sents


def negated_neutral_pairs(convs: Sequence[ChitchatConversation], n: int, nlp, seed: int = 0) -> list[LabelledPair]:
    """Neutral pairs whose hypothesis carries a negation: an utterance vs an *unrelated* statement negated.

    Counters the shortcut "negation word => contradiction" that the negation perturbations alone teach.
    """
    rng = random.Random(seed)
    pool = usable_pool(convs)
    if not pool:
        return []
    pairs: list[LabelledPair] = []
    for doc, sents in _statement_docs(pool, 4 * n, nlp, rng):
        if len(pairs) >= n:
            break
        changed = negate_chat(rng.choice(sents).as_doc())
        if not changed:
            continue
        premise = rng.choice(pool)
        if premise == doc.text:
            continue
        pairs.append(LabelledPair(premise, changed, "neutral", "chitchat-negated-unrelated"))
    return pairs


def negated_entailment_pairs(convs: Sequence[ChitchatConversation], n: int, nlp, seed: int = 0) -> list[LabelledPair]:
    """Entailment pairs whose hypothesis carries a negation the premise already states.

    The premise is a real utterance with one statement negated; the hypothesis is that negated
    sentence. Paired with ``negated_neutral_pairs`` it teaches that a negation agreeing with the
    premise is no contradiction (the neutral pairs alone made the model fire on consistent restatements).
    """
    rng = random.Random(seed)
    pool = usable_pool(convs)
    if not pool:
        return []
    pairs: list[LabelledPair] = []
    for doc, sents in _statement_docs(pool, 4 * n, nlp, rng):
        if len(pairs) >= n:
            break
        target = rng.choice(sents)
        changed = negate_chat(target.as_doc())
        if not changed:
            continue
        premise = replace_sentence(doc, target, changed)
        pairs.append(LabelledPair(premise, changed, "entailment", "chitchat-negated-restated"))
    return pairs


def restatement_pairs(convs: Sequence[ChitchatConversation], n: int, nlp, seed: int = 0) -> list[LabelledPair]:
    """Entailment pairs that look like the perturbations but keep the meaning.

    Every synthetic contradiction is a near copy of its premise, which teaches "near copy with one word
    changed => contradiction" (seen on the probe suite: restatements flagged at 0.99). These pairs are
    near copies that stay true: one noun swapped for a WordNet synonym (``guard.language.perturb.synonym``) or one
    adjective / adverb modifier dropped; the hypothesis is the changed sentence alone or the whole
    utterance with that sentence changed.
    """
    rng = random.Random(seed)
    pool = usable_pool(convs)
    if not pool:
        return []
    pairs: list[LabelledPair] = []
    for doc, sents in _statement_docs(pool, 6 * n, nlp, rng):
        if len(pairs) >= n:
            break
        sent = rng.choice(sents)
        if rng.random() < 0.5:
            changed, kind = Perturb.drop_modifier(sent.as_doc(), rng), "modifier-dropped"
        else:
            changed, kind = synonym(sent.text.strip(), rng), "synonym"
        if not changed or changed.lower() == sent.text.strip().lower():
            continue
        whole = replace_sentence(doc, sent, changed)
        premise, hypothesis = doc.text, changed if rng.random() < 0.5 else whole
        if kind == "synonym" and hypothesis == whole and rng.random() < 0.5:  # same content: entails both ways
            premise, hypothesis = hypothesis, premise
        pairs.append(LabelledPair(premise, hypothesis, "entailment", f"chitchat-restated-{kind}"))
    return pairs


# Chat filler words scikit-learn's stop list lacks; sharing them says nothing about a shared topic.
_CHAT_STOP_WORDS = {"like", "really", "know", "think", "pretty", "cool", "yeah", "haha", "good", "just", "thing",
                    "things", "kind", "kinda", "much", "going", "want", "maybe", "actually", "sure", "time", "right",
                    "okay", "love", "great", "nice", "stuff", "lots", "doing", "said", "sounds", "probably",
                    "definitely", "guess", "mean", "gonna", "tell", "talk", "people", "hahaha", "make", "does"}


def _content_words(text: str) -> set[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return {w for w in re.findall(r"[a-z]+", text.lower())
            if len(w) >= 4 and w not in ENGLISH_STOP_WORDS and w not in _CHAT_STOP_WORDS}


def overlap_neutral_pairs(convs: Sequence[ChitchatConversation], n: int, seed: int = 0,
                          min_shared: int = 2) -> list[LabelledPair]:
    """Neutral pairs of two real utterances by the *same speaker* in one conversation that share content words.

    Against the shortcut "many shared words => contradiction": people rarely contradict themselves in a
    ten-minute chat, yet they keep coming back to the same words ("I teach math" ... "in the summer I
    get a break from teaching math"). Labelled neutral (most are consistent elaborations, not entailments).
    """
    rng = random.Random(seed)
    candidates: list[tuple[str, str]] = []
    for conv in convs:
        by_speaker: dict[str, list[str]] = {}
        for speaker, text in zip(conv.speakers, conv.utterances):
            if usable_utterance(text):
                by_speaker.setdefault(speaker, []).append(text)
        for texts in by_speaker.values():
            words = [_content_words(t) for t in texts]
            for i in range(len(texts)):
                for j in range(i + 1, len(texts)):
                    if len(words[i] & words[j]) >= min_shared and texts[i].lower() != texts[j].lower():
                        candidates.append((texts[i], texts[j]))
    rng.shuffle(candidates)
    pairs = []
    for a, b in candidates[:n]:
        if rng.random() < 0.5:
            a, b = b, a
        pairs.append(LabelledPair(a, b, "neutral", "chitchat-same-speaker-overlap"))
    return pairs


def chitchat_pairs(convs: Sequence[ChitchatConversation], n: int, nlp, wn, seed: int = 0) -> list[LabelledPair]:
    """Dialogue-domain pairs from real utterances.

    neutral: an utterance vs one from another conversation (unrelated) or from the same one
    (same topic); entailment: a multi-sentence utterance vs one of its own sentences (repetition);
    contradiction: an utterance vs itself with one sentence negated or antonym-swapped.
    Mix: 25% unrelated, 25% same-topic, 10% repetition, 40% perturbation.
    """
    rng = random.Random(seed)
    pool = [(ci, u) for ci, c in enumerate(convs) for u in c.utterances if usable_utterance(u)]
    if not pool:
        return []
    n_unrelated, n_topic, n_repeat = int(0.25 * n), int(0.25 * n), int(0.10 * n)
    n_perturb = n - n_unrelated - n_topic - n_repeat
    pairs: list[LabelledPair] = []
    for _ in range(n_unrelated):
        (ca, a), (cb, b) = rng.choice(pool), rng.choice(pool)
        if ca != cb:
            pairs.append(LabelledPair(a, b, "neutral", "chitchat-unrelated"))
    by_conv: dict[int, list[str]] = {}
    for ci, u in pool:
        by_conv.setdefault(ci, []).append(u)
    multi = [ci for ci, us in by_conv.items() if len(us) >= 2]
    for _ in range(n_topic):
        us = by_conv[rng.choice(multi)]
        a, b = rng.sample(us, 2)
        if a.lower() != b.lower():
            pairs.append(LabelledPair(a, b, "neutral", "chitchat-same-topic"))
    # parse a sample once for repetition and perturbations
    sample = [u for _, u in rng.sample(pool, min(len(pool), 3 * (n_repeat + n_perturb)))]
    made_repeat = made_perturb = 0
    for doc in nlp.pipe(sample, batch_size=256):
        if made_repeat >= n_repeat and made_perturb >= n_perturb:
            break
        sents = statement_sentences(doc)
        if not sents:
            continue
        if made_repeat < n_repeat and len(list(doc.sents)) >= 2 and rng.random() < 0.3:
            pairs.append(LabelledPair(doc.text, rng.choice(sents).text.strip(), "entailment", "chitchat-repeat"))
            made_repeat += 1
            continue
        if made_perturb >= n_perturb:
            continue
        sent = rng.choice(sents)
        use_negation = rng.random() < 0.6
        changed = negate_chat(sent.as_doc()) if use_negation else Perturb.antonym(sent.as_doc(), rng, wn)
        kind = "negation" if use_negation else "antonym"
        if changed is None:
            changed = Perturb.antonym(sent.as_doc(), rng, wn) if use_negation else negate_chat(sent.as_doc())
            kind = "antonym" if use_negation else "negation"
        if not changed or changed.lower() == sent.text.strip().lower():
            continue
        # hypothesis: the changed sentence alone, or the whole utterance with that clause changed
        if rng.random() < 0.5:
            hypothesis = changed
        else:
            hypothesis = replace_sentence(doc, sent, changed)
        premise = doc.text
        if rng.random() < 0.5:  # either order: the contradiction is symmetric
            premise, hypothesis = hypothesis, premise
        pairs.append(LabelledPair(premise, hypothesis, "contradiction", f"chitchat-{kind}"))
        made_perturb += 1
    rng.shuffle(pairs)
    return pairs


def add_context_noise(pairs: Iterable[LabelledPair], fillers: Sequence[str], prob: float, seed: int = 0) -> list[LabelledPair]:
    """Append an unrelated real chit-chat sentence to the premise of some pairs.

    Bot replies are multi-sentence; a contradiction in one clause must survive unrelated company.
    Only the premise grows, so entailment and contradiction labels stay true.
    """
    rng = random.Random(seed)
    out = []
    for p in pairs:
        if fillers and rng.random() < prob:
            extra = rng.choice(fillers)
            premise = f"{p.premise} {extra}" if rng.random() < 0.5 else f"{extra} {p.premise}"
            out.append(LabelledPair(premise, p.hypothesis, p.label, p.source + "+ctx"))
        else:
            out.append(p)
    return out
