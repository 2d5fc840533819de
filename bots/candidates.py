"""Candidates from generated tokens, one rule for both engines (no torch, no transformers: the CTranslate2 engine
imports this without them).

A reply ends at the first end-of-turn token (kept in its score: its probability says "the turn is over") or
just before the first stop string; its score is the mean log-probability (temperature 1) of the tokens it
keeps; a reply that ran into the token limit is trimmed to its last complete sentence
(``bots.base.complete_sentences``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from bots.base import Candidate, complete_sentences


def _kept_token_count(tokenizer, token_ids: list[int], stop_strings: Sequence[str], end_ids: set[int]) -> tuple[int, str]:
    """How many generated tokens belong to the reply, and its text.

    The reply ends at the first end-of-turn token (kept: its probability says "the turn is over")
    or just before the first stop string (e.g. the next "Person 1:" tag; not kept).
    """
    count = len(token_ids)
    for index, token in enumerate(token_ids):
        if token in end_ids:
            count = index + 1
            break
    text_ids = [t for t in token_ids[:count] if t not in end_ids]
    text = tokenizer.decode(text_ids, skip_special_tokens=True)
    start = len(text) - len(text.lstrip())  # leading whitespace/newlines do not end a reply
    cut = min((text.find(s, start) for s in stop_strings if s and s in text[start:]), default=-1)
    if cut < 0:
        return count, text
    text = text[:cut]
    kept = 0
    for k in range(1, len(text_ids) + 1):  # longest token prefix that still lies inside the cut text
        if len(tokenizer.decode(text_ids[:k], skip_special_tokens=True)) > len(text):
            break
        kept = k
    return max(kept, 1), text


def make_candidate(tokenizer, token_ids: Sequence[int], log_probs: Sequence[float] | None, stop_strings: Sequence[str],
                   end_ids: set[int], clean: Callable[[str], str] = str.strip, mean: float | None = None) -> Candidate:
    """A scored candidate from generated tokens and their log-probabilities (temperature 1): one rule for
    both engines.

    The reply ends at the first end-of-turn token (kept in the score) or before the first stop string;
    one that ran into the token limit is trimmed to its last complete sentence. ``mean``: the mean log-probability of
    all ``token_ids`` as the engine reported it (CTranslate2's own score), instead of ``log_probs``; only where no
    stop string can cut the reply inside its tokens.
    """
    token_ids = list(token_ids)
    kept, text = _kept_token_count(tokenizer, token_ids, stop_strings, end_ids)
    # the reply ran into max_new_tokens unless it stopped at an end-of-turn token or a stop string
    cut = kept == len(token_ids) and bool(token_ids) and token_ids[-1] not in end_ids
    if mean is not None and kept == len(token_ids):
        score = float(mean) if token_ids else float("-inf")
    else:
        finite = [float(x) for x in list(log_probs or ())[:kept] if math.isfinite(x)]
        score = sum(finite) / len(finite) if finite else float("-inf")
    return Candidate(text=complete_sentences(clean(text), cut=cut), score=score)


def _distinct(candidates: list[Candidate]) -> list[Candidate]:
    """Keep the best-scored copy of each reply text (samples repeat; ranking duplicates is wasted work)."""
    best: dict[str, Candidate] = {}
    for candidate in candidates:
        key = " ".join(candidate.text.lower().split())
        if key not in best or candidate.score > best[key].score:
            best[key] = candidate
    return list(best.values())


def common_prefix_length(a: Sequence[int], b: Sequence[int]) -> int:
    """How many leading tokens two sequences share."""
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n
