"""The dialogue people type: 'Speaker: text' lines, one turn a line (the playground, the Learn page's examples,
a transcript import), read into a ``guard.records.Dialogue`` and written back."""

from __future__ import annotations

import re

from guard.records import Dialogue, Turn

_SPEAKER_LINE = re.compile(r"^\s*([^:\n]{1,40}?)\s*:\s*(.*\S)\s*$")


class DialogueTextError(ValueError):
    """The pasted dialogue is not in 'Speaker: text' lines; the message says which line."""


def parse_dialogue_text(text: str, record_id: str = "playground") -> Dialogue:
    """Parse 'Speaker: text' lines (one turn a line, blank lines ignored) into a Dialogue.

    The last line is the turn the detector judges. Speaker names are kept as written; the last
    speaker needs no earlier turn (an intra-sentence contradiction needs no history).
    """
    turns: list[Turn] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        match = _SPEAKER_LINE.match(line)
        if not match:
            raise DialogueTextError(
                f"line {number}: start it with a speaker name and a colon, e.g. 'A: I like fish.'"
            )
        turns.append(Turn(turn_id=len(turns), agent_id=match.group(1).strip(), text=match.group(2).strip()))
    if len(turns) < 2:
        raise DialogueTextError("write at least two turns: earlier turns, then the turn to judge last")
    return Dialogue(record_id=record_id, turns=turns)


def dialogue_to_text(dialogue: Dialogue) -> str:
    """The inverse of parse_dialogue_text (for showing a probe's output in the editor)."""
    return "\n".join(f"{t.agent_id}: {t.text}" for t in dialogue.turns)
