"""Human-labelled training data for the detector: DECODE, MNLI and Dialogue NLI from ``../shared/data/nli``.

The folder sits beside the checkout on development machines and in CI, never on a user's machine, and is
never copied into the repository. Every file holds one ``{"premise", "hypothesis", "label"}`` object a line.
DECODE is two-way: its "neutral" means *not a contradiction* (it may be entailment), so its pairs are loaded
with the label ``not_contradiction`` and trained with a contradiction-vs-rest loss.
"""

from __future__ import annotations

import gzip
import json
import random
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Literal

from guard.training.labels import THREE_WAY, TRAIN_LABELS, LabelledPair

__all__ = ["THREE_WAY", "TRAIN_LABELS", "LabelledPair", "load_corpus", "load_pairs", "save_pairs", "label_counts"]

#: every label a training pair may carry (``labels``); re-exported here for the corpora's readers
TrainLabel = Literal["contradiction", "entailment", "neutral", "not_contradiction"]

#: file names inside ``<shared data>/nli`` by corpus and split
NLI_FILES: dict[str, dict[str, str]] = {
    "decode": {"train": "decode_train.jsonl", "dev": "decode_dev.jsonl"},
    "mnli": {"train": "mnli_train.jsonl", "dev": "mnli_dev.jsonl", "dev_mismatched": "mnli_dev_mismatched.jsonl"},
    "dnli": {"train": "dnli_train.jsonl", "dev": "dnli_dev.jsonl"},
}
TWO_WAY_CORPORA = frozenset({"decode"})


def shared_nli_dir() -> Path | None:
    """``<shared data>/nli`` (``embedded.shared_data_dir()``: ``$GUARD_SHARED_DATA`` or ``../shared/data``), or None."""
    from embedded import shared_data_dir

    base = shared_data_dir()
    folder = base / "nli" if base else None
    return folder if folder is not None and folder.is_dir() else None


def read_nli_file(path: Path, source: str, two_way: bool) -> list[LabelledPair]:
    """Pairs of one JSON-lines file; with ``two_way`` every non-contradiction becomes ``not_contradiction``."""
    pairs = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            row = json.loads(line)
            label = row["label"]
            if label not in THREE_WAY:
                raise ValueError(f"{path} line {number}: label {label!r} is not one of {THREE_WAY}")
            if two_way and label != "contradiction":
                label = "not_contradiction"
            pairs.append(LabelledPair(row["premise"].strip(), row["hypothesis"].strip(), label, source))
    return pairs


def load_corpus(corpus: str, split: str, folder: Path | None = None, limit: int | None = None,
                seed: int = 0) -> list[LabelledPair]:
    """One corpus split (e.g. ``load_corpus("decode", "dev")``), optionally a seeded random subset."""
    folder = folder or shared_nli_dir()
    if folder is None:
        raise FileNotFoundError("the shared NLI data folder is absent: set GUARD_SHARED_DATA or place "
                                "the data at ../shared/data beside the checkout")
    name = NLI_FILES[corpus][split]
    pairs = read_nli_file(folder / name, f"{corpus}-{split}", two_way=corpus in TWO_WAY_CORPORA)
    if limit is not None and limit < len(pairs):
        pairs = random.Random(seed).sample(pairs, limit)
    return pairs


def save_pairs(pairs: Iterable[LabelledPair], path: Path) -> None:
    """Gzipped JSON lines: the exact training data of a run, kept beside its checkpoints for resuming."""
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        for pair in pairs:
            handle.write(json.dumps(asdict(pair), ensure_ascii=False) + "\n")


def load_pairs(path: Path) -> list[LabelledPair]:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return [LabelledPair(**json.loads(line)) for line in handle if line.strip()]


def label_counts(pairs: Sequence[LabelledPair]) -> dict[str, dict[str, int]]:
    """``{source: {label: count}}`` for the model card."""
    counts: dict[str, dict[str, int]] = {}
    for pair in pairs:
        by_label = counts.setdefault(pair.source, {})
        by_label[pair.label] = by_label.get(pair.label, 0) + 1
    return counts
