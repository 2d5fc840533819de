"""MuTual response selection (Cui et al. 2020, 004_*.txt) as a test of a coherence ranker.

Each item has a context ("m : ... f : ...") and four options; the ranker scores the options and
R@1, R@2 and MRR come from ``guard.eval.metrics.response_selection`` (scikit-learn). Items are parsed by
``guard.eval.datasets.parse_mutual_record``, the one MuTual parser, so malformed lines get its file/line/field errors.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

from guard.eval.datasets import iter_objects, parse_mutual_record, split_mutual_speakers
from guard.eval.metrics import response_selection
from guard.files import InputError


@dataclass
class MutualItem:
    item_id: str
    turns: list[str]      # context turns, speaker tags removed
    options: list[str]    # four responses, speaker tags removed
    answer: int           # index of the right option


def split_turns(article: str) -> list[str]:
    """Split "m : hi . f : hello ." into ["hi .", "hello ."]."""
    return [utterance for _, utterance in split_mutual_speakers(article)]


def read_mutual(path: str | Path, limit: int | None = None) -> list[MutualItem]:
    """The labelled items of a MuTual / MuTual-plus jsonl file (the test split has no answers: refused).

    Malformed or unlabelled items raise ``guard.files.InputError`` naming the file, line and field.
    """
    path = Path(path)
    items = []
    for line, obj in islice(iter_objects(path), limit):
        dialogue = parse_mutual_record(path, line, obj)
        answer = dialogue.meta["answer"]
        if answer is None:
            raise InputError(path, line, "answers", "missing; use a labelled split (train/dev)")
        items.append(MutualItem(dialogue.record_id, [t.text for t in dialogue.turns],
                                list(dialogue.meta["options"]), int(answer)))
    return items


@dataclass
class SelectionScores:
    r_at_1: float
    r_at_2: float
    mrr: float
    n: int


def selection_metrics(scores: Sequence[Sequence[float]], answers: Sequence[int]) -> SelectionScores:
    """R@1, R@2, MRR from per-option scores (rows = items)."""
    metrics = response_selection(answers, scores)
    return SelectionScores(metrics["R@1"], metrics["R@2"], metrics["MRR"], metrics["n"])


def evaluate_ranker(scorer, items: Iterable[MutualItem]) -> SelectionScores:
    """Score every item's options with ``scorer.score(context_turns, options)``."""
    items = list(items)
    scores = [scorer.score(item.turns, item.options) for item in items]
    return selection_metrics(scores, [item.answer for item in items])
