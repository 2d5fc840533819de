"""The papers' metrics on small cases worked out by hand."""

from __future__ import annotations

import math

import pytest

from guard.eval import metrics


def test_accuracy_and_fire_rate():
    assert metrics.accuracy([True, False, True, False], [True, True, True, False]) == 0.75
    assert metrics.fire_rate([True, True, True, False]) == 0.75


def test_strict_accuracy_needs_label_and_exact_evidence():
    y = [True, True, False, True]
    pred = [True, True, False, False]
    gold = [[1], [1, 3], [], [2]]
    got = [[1], [1], [], []]
    # 1st: exact; 2nd: evidence misses turn 3; 3rd: right non-contradiction; 4th: wrong label
    assert metrics.strict_accuracy(y, pred, gold, got) == 0.5


def test_evidence_precision_recall_f1_micro():
    gold = [[1], [1, 3], [2]]
    pred = [[1], [1, 5], []]
    # true positives: turn 1 twice; predicted items 3 (1, 1, 5); gold items 4 (1, 1, 3, 2)
    out = metrics.evidence_prf(gold, pred)
    assert out["precision"] == pytest.approx(2 / 3)
    assert out["recall"] == pytest.approx(2 / 4)
    assert out["f1"] == pytest.approx(2 * (2 / 3) * 0.5 / (2 / 3 + 0.5))


def test_roc_auc_and_undefined_case():
    assert metrics.roc_auc([False, False, True, True], [0.1, 0.4, 0.35, 0.8]) == 0.75
    assert math.isnan(metrics.roc_auc([True, True], [0.2, 0.9]))


def test_binary_report_fields():
    rep = metrics.binary_report([True, False, True, False], [True, True, False, False], [0.9, 0.6, 0.4, 0.1])
    assert rep["accuracy"] == 0.5 and rep["precision"] == 0.5 and rep["recall"] == 0.5
    assert rep["fire_rate"] == 0.5 and rep["auc"] == 0.75 and rep["n"] == 4


def test_contradict_and_entail_at_k():
    ranked = [["contradiction", "entailment", "neutral"], ["entailment", "contradiction", "contradiction"]]
    assert metrics.contradict_at_k(ranked, 1) == 0.5
    assert metrics.entail_at_k(ranked, 1) == 0.5
    assert metrics.contradict_at_k(ranked, 2) == pytest.approx((1 / 2 + 1 / 2) / 2)
    assert metrics.contradict_at_k(ranked, 3) == pytest.approx((1 / 3 + 2 / 3) / 2)
    assert metrics.hits_at_k([[False, True], [True, False]], 1) == 0.5
    with pytest.raises(ValueError):
        metrics.contradict_at_k(ranked, 0)


def test_response_selection_recall_and_mrr():
    answers = [0, 1, 2]
    scores = [[0.9, 0.1, 0.0, 0.0],   # gold ranked 1st
              [0.8, 0.5, 0.1, 0.0],   # gold ranked 2nd
              [0.8, 0.5, 0.3, 0.0]]   # gold ranked 3rd
    out = metrics.response_selection(answers, scores)
    assert out["R@1"] == pytest.approx(1 / 3)
    assert out["R@2"] == pytest.approx(2 / 3)
    assert out["MRR"] == pytest.approx((1 + 1 / 2 + 1 / 3) / 3)
    with pytest.raises(ValueError):
        metrics.response_selection([0], [[0.1, 0.2], [0.3, 0.4]])


def test_fmt():
    assert metrics.fmt(float("nan")) == "n/a" and metrics.fmt(0.12345) == "0.123" and metrics.fmt(7) == "7"
