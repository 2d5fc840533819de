"""NLI cross-encoder over any sequence-classification checkpoint.

Loading is kept apart from scoring (as in sentence-transformers' ``CrossEncoder``) and
label ids are always looked up by *name* in ``config.id2label`` (as in transformers'
zero-shot pipeline): checkpoints disagree on the order of their labels, and guessing
silently inverts a detector.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from transformers import AutoModelForSequenceClassification, AutoTokenizer

# Names (lower-cased, non-letters removed) that mean each NLI class.
_CONTRADICTION_NAMES = {"contradiction", "contradict", "contradictory", "contradicting", "contra"}
_ENTAILMENT_NAMES = {"entailment", "entail", "entailed", "entails"}
_NEUTRAL_NAMES = {"neutral"}
# 2-way detectors name the other class in many ways.
_NON_CONTRADICTION_NAMES = {
    "noncontradiction", "notcontradiction", "nocontradiction", "noncontradictory",
    "notcontradictory", "consistent", "noncontradicting",
}


class LabelLayoutError(ValueError):
    """The checkpoint's labels cannot be mapped to contradiction / non-contradiction."""


def _norm(name: str) -> str:
    return re.sub(r"[^a-z]", "", str(name).lower())


@dataclass(frozen=True)
class LabelLayout:
    """Where each NLI class sits in a checkpoint's logits."""

    contradiction: int
    num_labels: int
    entailment: int | None = None
    neutral: int | None = None

    @classmethod
    def from_id2label(
        cls, id2label: dict, contradiction_label: str | int | None = None
    ) -> LabelLayout:
        """Map a checkpoint's ``id2label`` by name.

        ``contradiction_label`` (a label name or id) overrides the lookup for checkpoints
        whose config only says ``LABEL_0``/``LABEL_1``; without it such a checkpoint is refused.
        """
        labels = {int(i): str(name) for i, name in id2label.items()}
        n = len(labels)
        if n not in (2, 3):
            raise LabelLayoutError(
                f"an NLI checkpoint needs 2 or 3 labels, this one has {n}: {sorted(labels.values())}"
            )
        if contradiction_label is not None:
            if isinstance(contradiction_label, int) or str(contradiction_label).isdigit():
                contra = int(contradiction_label)
                if contra not in labels:
                    raise LabelLayoutError(f"contradiction label id {contra} is not in {labels}")
            else:
                matches = [i for i, name in labels.items() if name == contradiction_label]
                if not matches:
                    raise LabelLayoutError(
                        f"contradiction label {contradiction_label!r} is not one of {sorted(labels.values())}"
                    )
                contra = matches[0]
            found = {"contradiction": contra}
        else:
            found = {}
        for i, name in labels.items():
            key = _norm(name)
            if key in _CONTRADICTION_NAMES and "contradiction" not in found:
                found["contradiction"] = i
            elif key in _ENTAILMENT_NAMES:
                found["entailment"] = i
            elif key in _NEUTRAL_NAMES:
                found["neutral"] = i
            elif key in _NON_CONTRADICTION_NAMES:
                found["non_contradiction"] = i
        if "contradiction" not in found:
            raise LabelLayoutError(
                "cannot find a contradiction label by name in config.id2label "
                f"{labels}; pass contradiction_label=<name or id> if you know which one it is"
            )
        if n == 3 and not ("entailment" in found and "neutral" in found):
            raise LabelLayoutError(
                f"a 3-way NLI checkpoint needs entailment, neutral and contradiction labels; got {labels}"
            )
        return cls(
            contradiction=found["contradiction"],
            num_labels=n,
            entailment=found.get("entailment"),
            neutral=found.get("neutral"),
        )


class _ClassProbabilities:
    """P(contradiction) / P(entailment) views over ``predict_proba``, for every scorer shape."""

    layout: LabelLayout

    def predict_proba(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        raise NotImplementedError

    def contradiction_proba(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """P(contradiction) for each pair, whatever the label layout."""
        return self.predict_proba(pairs)[:, self.layout.contradiction]

    def entailment_proba(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray | None:
        """P(entailment) for each pair, or None for 2-way detectors that have no such class."""
        if self.layout.entailment is None:
            return None
        return self.predict_proba(pairs)[:, self.layout.entailment]


class NLIScorer(_ClassProbabilities):
    """Scores (premise, hypothesis) pairs with an NLI cross-encoder, in batches."""

    def __init__(self, model, tokenizer, layout: LabelLayout, max_length: int = 128,
                 batch_size: int = 64, name: str = "") -> None:
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.layout = layout
        self.max_length = max_length
        self.batch_size = batch_size
        self.name = name

    @classmethod
    def from_pretrained(
        cls,
        name_or_path: str | Path,
        contradiction_label: str | int | None = None,
        max_length: int = 128,
        batch_size: int = 64,
        device: str | None = None,
        dtype: str = "float32",
    ) -> NLIScorer:
        """Load a hub name or a local folder; hub names need a network the embedded default does not.

        ``dtype`` is "float32", "bfloat16" or "auto" (bfloat16 where the CPU has it natively:
        ``embedded.cpu_dtype()``); probabilities are always returned as float32.
        """
        name = str(name_or_path)
        if dtype == "auto":
            from embedded import cpu_dtype

            dtype = cpu_dtype()
        if dtype not in ("float32", "bfloat16"):
            raise ValueError(f"dtype must be 'float32', 'bfloat16' or 'auto', not {dtype!r}")
        tokenizer = AutoTokenizer.from_pretrained(name)
        model = AutoModelForSequenceClassification.from_pretrained(name, dtype=getattr(torch, dtype))
        layout = LabelLayout.from_id2label(model.config.id2label, contradiction_label)
        if device:
            model = model.to(device)
        return cls(model, tokenizer, layout, max_length=max_length, batch_size=batch_size, name=name)

    @torch.inference_mode()
    def predict_proba(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """Softmax over the checkpoint's own labels, shape (len(pairs), num_labels)."""
        if len(pairs) == 0:
            return np.zeros((0, self.layout.num_labels), dtype=np.float32)
        out = []
        device = next(self.model.parameters()).device
        for start in range(0, len(pairs), self.batch_size):
            chunk = pairs[start:start + self.batch_size]
            enc = self.tokenizer(
                [p for p, _ in chunk], [h for _, h in chunk], padding=True, truncation=True,
                max_length=self.max_length, return_tensors="pt",
            ).to(device)
            logits = self.model(**enc).logits.float()
            out.append(torch.softmax(logits, dim=-1).cpu().numpy())
        return np.concatenate(out, axis=0)



class CascadeScorer(_ClassProbabilities):
    """A fast scorer judges every pair; a strong one re-judges the pairs that matter.

    The pairs that matter are those the fast scorer gives at least ``escalate_at`` probability of
    contradiction, at most ``max_escalated`` of them per call (the highest first), so the strong model's
    cost per guard turn stays bounded however long the history. Probabilities come back in the fast
    scorer's label layout; both scorers must be three-way (or both two-way) so the columns mean the same.
    The detector, its evidence and its categories work on a cascade exactly as on one scorer.
    """

    def __init__(self, fast: NLIScorer, strong: NLIScorer, escalate_at: float = 0.1,
                 max_escalated: int = 24, name: str = "") -> None:
        if fast.layout.num_labels != strong.layout.num_labels:
            raise LabelLayoutError(
                f"a cascade needs two scorers with the same classes; fast has {fast.layout.num_labels}, "
                f"strong has {strong.layout.num_labels}")
        if not 0.0 <= escalate_at < 1.0:
            raise ValueError(f"escalate_at must lie in [0, 1), got {escalate_at}")
        if max_escalated < 1:
            raise ValueError(f"max_escalated must be at least 1, got {max_escalated}")
        self.fast, self.strong = fast, strong
        self.escalate_at, self.max_escalated = escalate_at, max_escalated
        self.name = name
        # strong column feeding each fast column, matched by class
        fl, sl = fast.layout, strong.layout
        self._columns = np.arange(fl.num_labels)
        for role in ("contradiction", "entailment", "neutral", "non_contradiction"):
            f_idx, s_idx = getattr(fl, role, None), getattr(sl, role, None)
            if f_idx is not None and s_idx is not None:
                self._columns[f_idx] = s_idx
        if fl.num_labels == 2:  # the other class of a two-way detector, whatever its name
            self._columns[1 - fl.contradiction] = 1 - sl.contradiction
        self.last_escalated = 0  # pairs the strong model judged in the latest call (for benchmarks)

    # the detector reads these from its scorer
    @property
    def layout(self) -> LabelLayout:
        return self.fast.layout

    @property
    def tokenizer(self):
        return self.fast.tokenizer

    @property
    def max_length(self) -> int:
        return self.fast.max_length

    @property
    def model(self):
        return self.fast.model

    def predict_proba(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        probs = self.fast.predict_proba(pairs)
        if len(pairs) == 0:
            self.last_escalated = 0
            return probs
        contra = probs[:, self.fast.layout.contradiction]
        candidates = np.flatnonzero(contra >= self.escalate_at)
        chosen = candidates[np.argsort(-contra[candidates], kind="stable")][: self.max_escalated]
        self.last_escalated = len(chosen)
        if len(chosen):
            strong = self.strong.predict_proba([pairs[i] for i in chosen])
            probs[chosen] = strong[:, self._columns]
        return probs
