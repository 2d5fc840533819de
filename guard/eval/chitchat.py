"""Real human chit-chat: the ``chitchat-dataset`` package (the Chit Chat Challenge data, BYU PCC lab), read once.

The guard's benchmarks, the probe suite, the playground's A2T probe and the detector's training all take
real two-person conversations from this package; they read it through ``load_chitchat`` so that a
"turn" means the same everywhere: one speaker's run of consecutive messages, joined by spaces, white
space folded, empty runs dropped. What each caller does with the turns (keep short ASCII ones, play
the second speaker as the bot...) stays with the caller.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from guard.records import Dialogue, Turn

#: Conversations shorter than this (in turns) are left out: too short to build a history from.
MIN_TURNS = 4


@dataclass
class ChitchatConversation:
    """One conversation: ``utterances[i]`` was said by ``speakers[i]`` (the package's sender ids)."""

    conv_id: str
    speakers: list[str]
    utterances: list[str]

    def turns(self) -> list[Turn]:
        return [Turn(i, speaker, text) for i, (speaker, text) in enumerate(zip(self.speakers, self.utterances))]


def dataset_path() -> Path:
    """The package's dataset.json (raises ModuleNotFoundError when the package is not installed)."""
    import chitchat_dataset

    return Path(chitchat_dataset.__file__).with_name("dataset.json")


def iter_chitchat(path: Path | str | None = None, keep_empty: bool = False) -> Iterator[ChitchatConversation]:
    """Conversations in the file's order, each of at least ``MIN_TURNS`` turns (see the module docstring).

    ``keep_empty`` keeps the few runs without text (12 in the package) as empty turns: the committed probe
    suite was sampled from conversations screened with them in place, and must stay reproducible.
    """
    data = json.loads(Path(path or dataset_path()).read_text(encoding="utf-8"))
    for conv_id, conv in data.items():
        speakers, utterances = [], []
        for run in conv["messages"]:
            text = re.sub(r"\s+", " ", " ".join(m.get("text", "") for m in run)).strip()
            if not text and not keep_empty:
                continue
            speakers.append(str(run[0]["sender"]) if run else "")
            utterances.append(text)
        if len(utterances) >= MIN_TURNS:
            yield ChitchatConversation(conv_id, speakers, utterances)


def load_chitchat(path: Path | str | None = None) -> list[ChitchatConversation]:
    """Every conversation of the package (or of the file ``path`` in its format)."""
    return list(iter_chitchat(path))


def a2t_pool(limit: int = 200, max_words: int = 30) -> list[Dialogue]:
    """Real exchanges for A2T (DECODE §3.3) to insert: one two-speaker pair of turns per conversation.

    The first pair past the greetings (turns 2-3 onwards) whose turns are short plain ASCII, so the
    inserted turns read naturally; variety over volume. ``record_id`` is ``chitchat:<conversation>:<turn>``.
    Returns [] when the package is not installed (the playground then samples its built-in examples).
    """
    try:
        path = dataset_path()
    except ModuleNotFoundError:
        return []

    def usable(turn: Turn) -> bool:
        return turn.text.isascii() and 3 <= len(turn.text.split()) <= max_words and "http" not in turn.text

    pool = []
    for conv in iter_chitchat(path):
        turns = conv.turns()
        for a, b in zip(turns[2:], turns[3:]):
            if a.agent_id != b.agent_id and usable(a) and usable(b):
                pool.append(Dialogue(record_id=f"chitchat:{conv.conv_id}:{a.turn_id}", turns=[a, b]))
                break
        if len(pool) >= limit:
            break
    return pool
