"""The second live-stream dev set: BlenderBot-era human-bot conversations from DECODE, the last bot turn verified.

``../shared/data/bots/decode_human_bot_dev.jsonl`` is the half of DECODE's human-bot set we may read (Nie et al. 2021;
the other half is held out and measures the product). Each conversation ends in a bot turn that three annotators
verified (contradiction or consistent); the bot turns before it carry no label. So, judged as a stream:

* recall, false alarms and AUC come from the verified **last** turns (``label`` set on those only);
* badges per 100 bot turns count every bot turn.

The conversations fall in two halves by their collection **group** (the id's part before ``_``), so one group's
conversations stay together: ``calibration`` (where an operating point may be set) and ``evaluation`` (only
measured). ``split_of_group`` fixes the halves from the group's name alone; it was written and committed before any
detector scored a turn of this set (docs/experiments/2026-11-27-conversation-reading.md). Training never reads it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from guard.eval.stream import BOT, SPLITS, BotTurnLabel, StreamTurn, stream_turns
from guard.records import Dialogue
from guard.vocabulary import Category

#: the file inside the shared data folder
DECODE_STREAM_RELATIVE = Path("bots") / "decode_human_bot_dev.jsonl"
#: salt of the split hash: a new salt would be a new split, so it never changes
_SPLIT_SALT = "consistency-guard decode-stream split:"


def decode_stream_path() -> Path | None:
    """``<shared data>/bots/decode_human_bot_dev.jsonl``, or None where the shared data folder lacks it."""
    from embedded import shared_data_dir

    base = shared_data_dir()
    path = base / DECODE_STREAM_RELATIVE if base else None
    return path if path is not None and path.is_file() else None


def group_of(dialogue: Dialogue) -> str:
    """The conversation's collection group: ``meta.group``, else the record id's part before ``_``."""
    group = dialogue.meta.get("group") if dialogue.meta else None
    if group:
        return str(group)
    return dialogue.record_id.rpartition(":")[2].split("_")[0]


def split_of_group(group: str) -> str:
    """Calibration or evaluation, from a hash of the collection group's name (fixed before any score was seen)."""
    return SPLITS[hashlib.sha256(f"{_SPLIT_SALT}{group}".encode()).digest()[0] % 2]


def split_of(dialogue: Dialogue) -> str:
    return split_of_group(group_of(dialogue))


def read_conversations(path: Path | None = None, split: str | None = None) -> list[Dialogue]:
    """The conversations (every turn; ``label`` is the verified last bot turn's), optionally one half only."""
    from guard.eval.datasets import read_decode

    path = path or decode_stream_path()
    if path is None:
        raise FileNotFoundError("the shared data folder has no bots/decode_human_bot_dev.jsonl: set "
                                "GUARD_SHARED_DATA or place the data at ../shared/data beside the checkout")
    if split is not None and split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    dialogues = read_decode(Path(path))
    for d in dialogues:
        if not d.turns or d.turns[-1].agent_id != BOT or d.label is None:
            raise ValueError(f"{path}: {d.record_id} must end in a verified bot turn (is_contradiction)")
    return [d for d in dialogues if split is None or split_of(d) == split]


def verified_labels(dialogues: Sequence[Dialogue]) -> list[BotTurnLabel]:
    """The verified last bot turn of each conversation as a label (the earlier bot turns have none)."""
    return [BotTurnLabel(d.record_id, d.turns[-1].turn_id, bool(d.label),
                         Category.HISTORY if d.label else Category.NONE) for d in dialogues]


def decode_stream_turns(dialogues: Sequence[Dialogue]) -> list[StreamTurn]:
    """Every bot turn of the conversations, in order, as a live guard judged it; only the last of each conversation
    carries a label (``StreamTurn.label``; None for the unverified ones)."""
    labels = {(x.record_id, x.turn_id): x for x in verified_labels(dialogues)}
    out = []
    for st in stream_turns(dialogues):
        record_id, _, turn_id = st.dialogue.record_id.rpartition("#")
        label = labels.get((record_id, int(turn_id)))
        st.label = label
        st.dialogue.label = None if label is None else label.contradiction
        out.append(st)
    return out
