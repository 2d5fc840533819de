"""MuTual response selection (Cui et al. 2020, 004_*.txt) as a test of a coherence ranker.

Each item has a context ("m : ... f : ...") and four options; the ranker scores the options and
R@1, R@2 and MRR are computed with scikit-learn (top-k accuracy and label-ranking average
precision, which equals MRR when exactly one option is right).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sklearn.metrics import label_ranking_average_precision_score, top_k_accuracy_score

_TAG = re.compile(r"(?:^|\s)([mf]) : ")


@dataclass
class MutualItem:
    item_id: str
    turns: list[str]      # context turns, speaker tags removed
    options: list[str]    # four responses, speaker tags removed
    answer: int           # index of the right option


def split_turns(article: str) -> list[str]:
    """Split "m : hi . f : hello ." into ["hi .", "hello ."]."""
    parts = _TAG.split(" " + article.strip())
    # parts = ["", "m", "hi .", "f", "hello ."]
    return [text.strip() for text in parts[2::2] if text.strip()]


def _strip_tag(option: str) -> str:
    turns = split_turns(option)
    return turns[0] if turns else option.strip()


def read_mutual(path: str | Path, limit: int | None = None) -> list[MutualItem]:
    items = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            record = json.loads(line)
            items.append(MutualItem(
                item_id=record["id"],
                turns=split_turns(record["article"]),
                options=[_strip_tag(o) for o in record["options"]],
                answer="ABCD".index(record["answers"].strip().upper()),
            ))
            if limit and len(items) >= limit:
                break
    return items


@dataclass
class SelectionScores:
    r_at_1: float
    r_at_2: float
    mrr: float
    n: int


def selection_metrics(scores: Sequence[Sequence[float]], answers: Sequence[int]) -> SelectionScores:
    """R@1, R@2, MRR from per-option scores (rows = items)."""
    matrix = np.asarray(scores, dtype=float)
    truth = np.asarray(answers, dtype=int)
    labels = np.arange(matrix.shape[1])
    onehot = np.zeros_like(matrix, dtype=int)
    onehot[np.arange(len(truth)), truth] = 1
    return SelectionScores(
        r_at_1=float(top_k_accuracy_score(truth, matrix, k=1, labels=labels)),
        r_at_2=float(top_k_accuracy_score(truth, matrix, k=2, labels=labels)),
        mrr=float(label_ranking_average_precision_score(onehot, matrix)),
        n=len(truth),
    )


def evaluate_ranker(scorer, items: Iterable[MutualItem]) -> SelectionScores:
    """Score every item's options with ``scorer.score(context_turns, options)``."""
    items = list(items)
    scores = [scorer.score(item.turns, item.options) for item in items]
    return selection_metrics(scores, [item.answer for item in items])
