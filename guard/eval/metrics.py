"""The papers' metrics, computed with scikit-learn wherever it has them.

* DECODE (Nie et al. 2021): accuracy, strict accuracy (label and evidence both exact), supporting
  evidence precision / recall / F1, ROC AUC, fire rate.
* DNLI (Welleck et al. 2019): Hits@k, Contradict@k, Entail@k over ranked candidate lists.
* MuTual (Cui et al. 2020): R@1, R@2 (recall at position k among 4 candidates) and MRR.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np
from sklearn.metrics import (
    accuracy_score,
    label_ranking_average_precision_score,
    precision_recall_fscore_support,
    roc_auc_score,
    top_k_accuracy_score,
)
from sklearn.preprocessing import MultiLabelBinarizer


def accuracy(y_true: Sequence, y_pred: Sequence) -> float:
    return float(accuracy_score(list(y_true), list(y_pred)))


def strict_accuracy(
    y_true: Sequence[bool], y_pred: Sequence[bool],
    gold_evidence: Sequence[Iterable[int] | None], pred_evidence: Sequence[Iterable[int]],
) -> float:
    """DECODE's Test-Strict: a dialogue counts only when the label and the evidence set both match.

    A non-contradiction has empty evidence on both sides, so it counts when the label matches.
    """
    if not len(y_true):
        return float("nan")
    hits = [
        bool(t) == bool(p) and set(g or ()) == set(e or ())
        for t, p, g, e in zip(y_true, y_pred, gold_evidence, pred_evidence, strict=True)
    ]
    return float(np.mean(hits))


def evidence_prf(
    gold_evidence: Sequence[Iterable[int]], pred_evidence: Sequence[Iterable[int]]
) -> dict[str, float]:
    """Supporting-evidence precision, recall and F1, micro-averaged over (dialogue, turn) decisions.

    Pass the contradiction dialogues (those with gold evidence), as DECODE does; each evidence
    turn predicted or annotated is one binary decision.
    """
    gold = [sorted(set(g)) for g in gold_evidence]
    pred = [sorted(set(p)) for p in pred_evidence]
    if not gold:
        return {"precision": float("nan"), "recall": float("nan"), "f1": float("nan"), "n": 0}
    binarizer = MultiLabelBinarizer()
    binarizer.fit(gold + pred + [[]])
    if len(binarizer.classes_) == 0:
        return {"precision": float("nan"), "recall": float("nan"), "f1": float("nan"), "n": len(gold)}
    p, r, f, _ = precision_recall_fscore_support(
        binarizer.transform(gold), binarizer.transform(pred), average="micro", zero_division=0
    )
    return {"precision": float(p), "recall": float(r), "f1": float(f), "n": len(gold)}


def roc_auc(y_true: Sequence[bool], scores: Sequence[float]) -> float:
    """Threshold-free ROC AUC; NaN when only one class is present (it is undefined then)."""
    y = np.asarray(y_true, dtype=bool)
    if y.all() or not y.any():
        return float("nan")
    return float(roc_auc_score(y, np.asarray(scores, dtype=float)))


def fire_rate(y_pred: Sequence[bool]) -> float:
    """Share of utterances the detector flags (DECODE Fig. 4)."""
    return float(np.mean(np.asarray(y_pred, dtype=bool))) if len(y_pred) else float("nan")


def binary_report(
    y_true: Sequence[bool], y_pred: Sequence[bool], scores: Sequence[float]
) -> dict[str, float]:
    """Accuracy, contradiction-class precision / recall / F1, AUC and fire rate in one dict."""
    p, r, f, _ = precision_recall_fscore_support(
        np.asarray(y_true, bool), np.asarray(y_pred, bool), average="binary", zero_division=0
    )
    return {
        "n": len(y_true),
        "accuracy": accuracy(y_true, y_pred),
        "precision": float(p), "recall": float(r), "f1": float(f),
        "auc": roc_auc(y_true, scores),
        "fire_rate": fire_rate(y_pred),
    }


# ---------------------------------------------------------------------------- ranking (DNLI)
def _at_k(ranked_labels: Sequence[Sequence[str]], k: int, wanted: str) -> float:
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if not ranked_labels:
        return float("nan")
    return float(np.mean([
        sum(1 for label in ranked[:k] if label == wanted) / min(k, len(ranked))
        for ranked in ranked_labels if len(ranked)
    ]))


def contradict_at_k(ranked_labels: Sequence[Sequence[str]], k: int = 1) -> float:
    """Share of the top-k candidates that contradict the persona, averaged over examples (lower is better).

    ``ranked_labels[i]`` lists example i's candidate labels ("contradiction", "entailment", ...)
    in the model's ranked order, best first.
    """
    return _at_k(ranked_labels, k, "contradiction")


def entail_at_k(ranked_labels: Sequence[Sequence[str]], k: int = 1) -> float:
    """Share of the top-k candidates that entail the persona, averaged over examples (higher is better)."""
    return _at_k(ranked_labels, k, "entailment")


def hits_at_k(ranked_is_gold: Sequence[Sequence[bool]], k: int = 1) -> float:
    """Share of examples whose gold candidate is in the top k."""
    if not ranked_is_gold:
        return float("nan")
    return float(np.mean([any(r[:k]) for r in ranked_is_gold]))


# ---------------------------------------------------------------------------- response selection (MuTual)
def response_selection(answers: Sequence[int], option_scores: Sequence[Sequence[float]]) -> dict[str, float]:
    """R@1, R@2 and MRR for picking the right option (index ``answers[i]``) by score, higher better.

    R@k is scikit-learn's top-k accuracy; with one right option per example, label ranking
    average precision equals the mean reciprocal rank.
    """
    scores = np.asarray(option_scores, dtype=float)
    y = np.asarray(answers, dtype=int)
    if scores.ndim != 2 or len(scores) != len(y) or len(y) == 0:
        raise ValueError("option_scores must be (examples, options) and match answers")
    labels = np.arange(scores.shape[1])
    relevant = np.zeros_like(scores, dtype=int)
    relevant[np.arange(len(y)), y] = 1
    return {
        "n": int(len(y)),
        "R@1": float(top_k_accuracy_score(y, scores, k=1, labels=labels)),
        "R@2": float(top_k_accuracy_score(y, scores, k=2, labels=labels)),
        "MRR": float(label_ranking_average_precision_score(relevant, scores)),
    }


def fmt(value: float) -> str:
    """A metric for a table: 3 decimals, "n/a" for NaN."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return str(value)
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.3f}"
