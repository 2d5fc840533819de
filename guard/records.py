"""The records every data set, probe, detector and policy speaks: dialogue turns and candidate replies.

``Candidate`` lives here rather than in ``bots`` because the guard's policies choose among candidates
and the guard never imports the generators; ``bots.base`` takes it from here.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace


@dataclass(frozen=True)
class Turn:
    """One utterance. ``turn_id`` is its position in the original dialogue (kept through probes)."""

    turn_id: int
    agent_id: str
    text: str


@dataclass
class Dialogue:
    """A dialogue whose last turn is the one judged against the rest (DECODE's task).

    ``evidence`` holds the turn_ids of the earlier turns the last turn contradicts, when known.
    """

    record_id: str
    turns: list[Turn]
    label: bool | None = None
    evidence: list[int] | None = None
    persona: list[str] = field(default_factory=list)
    category: str | None = None
    meta: dict = field(default_factory=dict)

    @property
    def last(self) -> Turn:
        return self.turns[-1]

    @property
    def history(self) -> list[Turn]:
        return self.turns[:-1]

    def renumbered(self) -> Dialogue:
        """The same dialogue with its turns numbered 0..n-1 in order (the evidence follows its turns), as a person
        reads it and as the playground's editor writes it back: a probe's variant keeps the original's ids for its
        evidence and gives inserted turns fresh ones (A2T: 0, 1, 2, 4, 5, 3)."""
        new_id = {t.turn_id: i for i, t in enumerate(self.turns)}
        return replace(self, turns=[replace(t, turn_id=i) for i, t in enumerate(self.turns)],
                       evidence=None if self.evidence is None else [new_id[e] for e in self.evidence if e in new_id])


@dataclass(frozen=True)
class Candidate:
    """A proposed reply and the generator's own score: mean token log-probability (higher = more likely)."""

    text: str
    score: float
