"""NLI cross-encoder over any sequence-classification checkpoint.

Loading is kept apart from scoring (as in sentence-transformers' ``CrossEncoder``) and
label ids are always looked up by *name* in ``config.id2label`` (as in transformers'
zero-shot pipeline): checkpoints disagree on the order of their labels, and guessing
silently inverts a detector.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

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
    ) -> "LabelLayout":
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


class NLIScorer:
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
    ) -> "NLIScorer":
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

    def contradiction_proba(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """P(contradiction) for each pair, whatever the label layout."""
        return self.predict_proba(pairs)[:, self.layout.contradiction]

    def entailment_proba(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray | None:
        """P(entailment) for each pair, or None for 2-way detectors that have no such class."""
        if self.layout.entailment is None:
            return None
        return self.predict_proba(pairs)[:, self.layout.entailment]
