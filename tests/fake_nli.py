"""A scripted NLI scorer for exact-score tests of the detector's bookkeeping (not a model).

It answers from a table of (premise, hypothesis) -> (entailment, neutral, contradiction)
probabilities and counts how many batches it was asked to score.
"""

from __future__ import annotations

import numpy as np

from guard.models.nli import LabelLayout

NEUTRAL = (0.1, 0.85, 0.05)
CONTRA = (0.02, 0.03, 0.95)  # a clear contradiction


class _WhitespaceTokenizer:
    def tokenize(self, text: str) -> list[str]:
        return text.split()


class ScriptedScorer:
    def __init__(self, table: dict[tuple[str, str], tuple[float, float, float]], max_length: int = 128):
        self.table = table
        self.layout = LabelLayout(contradiction=2, num_labels=3, entailment=0, neutral=1)
        self.tokenizer = _WhitespaceTokenizer()
        self.max_length = max_length
        self.name = ""
        self.calls: list[list[tuple[str, str]]] = []

    def predict_proba(self, pairs):
        self.calls.append(list(pairs))
        return np.array([self.table.get(tuple(p), NEUTRAL) for p in pairs], dtype=np.float32).reshape(-1, 3)

    def contradiction_proba(self, pairs):
        return self.predict_proba(pairs)[:, 2]
