"""Can the prefilter predict which pairs the detector fires on? (an experiment behind docs/guard.md)

The prefilter keeps, for each candidate sentence, the k earlier sentences most similar to it (cosine of
all-MiniLM-L6-v2 embeddings). Its evidence recall against exhaustive pairing is low because most turns the
exhaustive detector cites are not similar to the candidate. This script asks whether *any* ranker over the
same embeddings could find them: it scores random stitched chit-chat histories exhaustively with the detector,
fits a logistic regression on [u*v, |u-v|, u, v] to predict "pair scores >= tau" on histories from the
detector's training conversations, and reports, on histories from its held-out conversations, ROC AUC and the
share of cited turns each ranking keeps at k.

    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.bench_prefilter_ranker --out runs/ranker.json
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections import defaultdict

import numpy as np

KS = (3, 8, 16, 32)


def stitched(convs, n_dialogues: int, history: int, seed: int) -> list[tuple[list[str], str]]:
    """(history messages, candidate message) from random real utterances, as bench_guard stitches them."""
    rng = random.Random(seed)
    messages = [u for c in convs for u in c.utterances]
    return [([rng.choice(messages) for _ in range(history)], rng.choice(messages)) for _ in range(n_dialogues)]


def sentence_pairs(dialogues) -> list[tuple[int, int, str, str]]:
    """(dialogue, history turn, premise sentence, candidate sentence) for every exhaustive pair."""
    from guard.language import text as textsplit

    textsplit.prepare([m for h, c in dialogues for m in h + [c]])
    rows = []
    for d, (history, candidate) in enumerate(dialogues):
        cand_units = textsplit.sentences(candidate) or (candidate,)
        for t, message in enumerate(history):
            for premise in textsplit.sentences(message) or (message,):
                rows.extend((d, t, premise, cu) for cu in cand_units)
    return rows


def recall_at_k(rows, fired: np.ndarray, rank_score: np.ndarray) -> dict[int, float]:
    """Share of cited (dialogue, turn) that a top-k-per-candidate-sentence ranking by ``rank_score`` keeps."""
    groups = defaultdict(list)
    for i, (d, _t, _p, cu) in enumerate(rows):
        groups[(d, cu)].append(i)
    needed: dict[tuple[int, int], int] = {}
    for idx in groups.values():
        for rank, i in enumerate(sorted(idx, key=lambda i: -rank_score[i]), 1):
            if fired[i]:
                key = rows[i][:2]
                needed[key] = min(needed.get(key, rank), rank)
    v = np.array(list(needed.values()))
    return {k: round(float((v <= k).mean()), 4) for k in KS} | {"cited_turns": len(v)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="embedded")
    parser.add_argument("--train-dialogues", type=int, default=400)
    parser.add_argument("--test-dialogues", type=int, default=150)
    parser.add_argument("--history", type=int, default=30, help="messages per stitched history")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()

    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score

    from guard.judge.pipeline import load_guard
    from guard.training.calibration import HELDOUT_FRACTION
    from guard.training.sources import load_chitchat, split_conversations

    guard = load_guard(args.model)  # its scorer, the prefilter's embedder and τ
    scorer, embedder, tau = guard.scorer, guard.embedder, guard.config.threshold
    # the training run's split (default --split-seed 13): the test histories come from held-out conversations
    train_convs, held_convs = split_conversations(load_chitchat(), HELDOUT_FRACTION, seed=13)
    train = sentence_pairs(stitched(train_convs, args.train_dialogues, args.history, seed=1))
    test = sentence_pairs(stitched(held_convs, args.test_dialogues, args.history, seed=2))
    start = time.perf_counter()
    contra = scorer.layout.contradiction
    y_train = scorer.predict_proba([(p, c) for _, _, p, c in train])[:, contra] >= tau
    y_test = scorer.predict_proba([(p, c) for _, _, p, c in test])[:, contra] >= tau
    texts = list(dict.fromkeys([r[2] for r in train + test] + [r[3] for r in train + test]))
    vectors = dict(zip(texts, embedder.encode(texts, batch_size=64, normalize_embeddings=True,
                                               convert_to_numpy=True, show_progress_bar=False)))

    def features(rows):
        u = np.stack([vectors[r[2]] for r in rows])
        v = np.stack([vectors[r[3]] for r in rows])
        return np.hstack([u * v, np.abs(u - v), u, v]), (u * v).sum(axis=1)

    x_train, _ = features(train)
    x_test, cosine = features(test)
    head = LogisticRegression(C=1.0, max_iter=2000, class_weight="balanced").fit(x_train, y_train)
    learned = head.decision_function(x_test)
    result = {
        "model": args.model, "tau": tau, "pairs": {"train": len(train), "test": len(test)},
        "fire_rate": {"train": round(float(y_train.mean()), 5), "test": round(float(y_test.mean()), 5)},
        "roc_auc_predicting_fire": {"cosine": round(float(roc_auc_score(y_test, cosine)), 4),
                                    "learned_head": round(float(roc_auc_score(y_test, learned)), 4)},
        "cited_turns_kept_at_k": {"cosine": recall_at_k(test, y_test, cosine),
                                  "learned_head": recall_at_k(test, y_test, learned)},
        "seconds": round(time.perf_counter() - start, 1),
    }
    print(json.dumps(result, indent=2))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as handle:
            json.dump(result, handle, indent=2)


if __name__ == "__main__":
    main()
