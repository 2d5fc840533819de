"""What the detector keeps across turns: scored pairs per scorer, sentence embeddings per embedder.

A conversation pairs the same persona lines and earlier sentences with every new candidate, and embeds the same
earlier sentences for the prefilter, so both are cached (``embedded.once.BoundedCache``) by text. The caches belong
to the model, not to a setting: every judgement over one scorer (any τ, any checks) shares its scored pairs, since a
pair's probabilities do not depend on how they are then read.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from embedded.once import BoundedCache, PerObject
from embedded.turns import cpu_turn

#: scored pairs kept per scorer: a conversation pairs the same persona lines and earlier sentences every turn
PAIR_CACHE_LIMIT = 20_000
#: sentence embeddings kept per embedder
EMBED_CACHE_LIMIT = 50_000

#: each model's own cache, let go with the model; a model that takes no weak reference gets a cache for the call only
#: (``PerObject``'s "per call": a cache kept by its id could reach a later model at the same address)
_BY_MODEL: PerObject[BoundedCache] = PerObject("per call")


def cache_of(model, limit: int) -> BoundedCache:
    """The cache kept for ``model`` (a scorer or an embedder): made on first use, gone with the model."""
    return _BY_MODEL.of(model, lambda: BoundedCache(limit))


def clear_pair_cache(scorer=None) -> None:
    """Forget scored pairs and embeddings (of one model, or of all): benchmarks time a turn as if its pairs were new."""
    for cache in _BY_MODEL.kept() if scorer is None else _BY_MODEL.kept(scorer):
        cache.clear()


def score_pairs(scorer, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
    """Full softmax for each pair: pairs scored before come from the scorer's cache, the rest are scored once each,
    similar lengths batched together."""
    width = scorer.layout.num_labels
    if not pairs:
        return np.zeros((0, width), dtype=np.float32)
    cache = cache_of(scorer, PAIR_CACHE_LIMIT)
    unique = list(dict.fromkeys(pairs))
    found = cache.found(unique)
    missing = [p for p in unique if p not in found]
    if missing:
        order = sorted(range(len(missing)), key=lambda i: len(missing[i][0]) + len(missing[i][1]))
        scored = scorer.predict_proba([missing[i] for i in order])
        for i, row in zip(order, scored):
            found[missing[i]] = np.asarray(row, dtype=np.float32)
            cache.put(missing[i], found[missing[i]])
    return np.stack([found[p] for p in pairs]).reshape(len(pairs), width)


def embed(embedder, texts: Sequence[str]) -> np.ndarray:
    """Unit-normalised embeddings, each text encoded once (cached by text per embedder)."""
    cache = cache_of(embedder, EMBED_CACHE_LIMIT)
    found = cache.found(dict.fromkeys(texts))
    missing = [t for t in dict.fromkeys(texts) if t not in found]
    if missing:
        with cpu_turn(embedder):  # sessions sharing the embedder take turns on the CPU (embedded.turns)
            vectors = embedder.encode(missing, batch_size=64, normalize_embeddings=True, convert_to_numpy=True,
                                      show_progress_bar=False)
        for text, vector in zip(missing, vectors):
            found[text] = vector
            cache.put(text, vector)
    return np.stack([found[t] for t in texts]) if texts else np.zeros((0, 1))
