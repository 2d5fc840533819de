"""The detector's training labels and the one labelled-pair record every data builder returns."""

from __future__ import annotations

from dataclasses import dataclass

#: the detector's three-way head, in this order (a checkpoint's own order is read from its config by name)
THREE_WAY: tuple[str, ...] = ("contradiction", "entailment", "neutral")
#: every label a training pair may carry; ``not_contradiction`` is DECODE's two-way "rest" (it may be entailment)
TRAIN_LABELS: tuple[str, ...] = (*THREE_WAY, "not_contradiction")
LABEL2ID: dict[str, int] = {name: i for i, name in enumerate(THREE_WAY)}
ID2LABEL: dict[int, str] = {i: name for name, i in LABEL2ID.items()}


@dataclass(frozen=True)
class LabelledPair:
    """One (premise, hypothesis) training or evaluation pair; ``source`` names the corpus or builder (for counts)."""

    premise: str
    hypothesis: str
    label: str
    source: str
    #: how much the pair counts in the loss: below 1 for pairs labelled by a rule nobody checked (noisy)
    weight: float = 1.0
    #: a teacher detector's probabilities over ``THREE_WAY`` (distillation), or None
    teacher: tuple[float, float, float] | None = None

    def __post_init__(self) -> None:
        if self.label not in TRAIN_LABELS:
            raise ValueError(f"label must be one of {TRAIN_LABELS}, got {self.label!r}")
        if not 0.0 < self.weight <= 1.0:
            raise ValueError(f"weight must lie in (0, 1], got {self.weight}")
        if self.teacher is not None:
            object.__setattr__(self, "teacher", tuple(float(x) for x in self.teacher))
            if len(self.teacher) != len(THREE_WAY) or abs(sum(self.teacher) - 1.0) > 1e-3:
                raise ValueError(f"teacher must be {len(THREE_WAY)} probabilities summing to 1, got {self.teacher}")

    @property
    def is_contradiction(self) -> bool:
        return self.label == "contradiction"
