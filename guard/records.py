"""The records every data set, probe, detector and policy speaks: dialogue turns and candidate replies.

``Candidate`` lives here rather than in ``bots`` because the guard's policies choose among candidates
and the guard never imports the generators; ``bots.base`` takes it from here.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
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


@dataclass
class Candidate:
    """A proposed reply and the generator's own score: mean token log-probability (higher = more likely)."""

    text: str
    score: float
