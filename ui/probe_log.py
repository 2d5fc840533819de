"""The playground's probe log as plain data: what each A2T or RCT probe did to the dialogue, in the dialogue's own turn
numbers, and the log's rows headed in words (the detection methods by what they do). No Streamlit import."""

from __future__ import annotations

from collections.abc import Sequence

from guard.vocabulary import METHODS, Method

#: the two ways of checking, as the Learn page names them (the papers' names in brackets on the playground)
METHOD_WORDS = {Method.STRUCTURED: "one turn at a time", Method.UNSTRUCTURED: "all at once"}


def inserted_turns_note(variant, seed: int) -> str:
    """Which real exchange an A2T variant (guard.eval.probes.A2T's output) inserted and where, for the probe log, in the
    dialogue's own numbering (the editor's, 0..n-1 in order): 'seed 3: added as turns 2-3: "…" / "…" (from chit-chat
    conversation a07edb12)'. Where the pair sat in its source conversation is not said: those numbers read as the
    dialogue's."""
    at = variant.meta.get("inserted_at")
    source = (variant.meta.get("inserted_from") or [None])[0]
    if at is None or at + 1 >= len(variant.turns):
        return f"seed {seed}"
    texts = " / ".join(f'"{t.text}"' for t in variant.turns[at:at + 2])
    origin = str(source)
    if origin.startswith("chitchat:"):
        origin = f"chit-chat conversation {origin.split(':')[1][:8]}"
    return f"seed {seed}: added as turns {at}-{at + 1}: {texts} (from {origin})"


def removed_turns_note(before, variant) -> str:
    """Which turns an RCT variant (guard.eval.probes.RCT's output) removed, in the numbering of the dialogue it was made
    from (the editor's before the probe): 'removed turns 0-1: "…" / "…"'."""
    removed = [int(i) for i in variant.meta.get("removed_turn_ids") or []]
    if not removed:
        return ""
    by_id = {t.turn_id: t.text for t in before.turns}
    numbers = (f"{removed[0]}-{removed[-1]}" if removed == list(range(removed[0], removed[-1] + 1)) and len(removed) > 1
               else ", ".join(str(i) for i in removed))
    return f"removed turn{'s' if len(removed) > 1 else ''} {numbers}: " + " / ".join(
        f'"{by_id[i]}"' for i in removed if i in by_id)


def log_rows(entries: Sequence[dict]) -> list[dict]:
    """The probe log's rows: the probe, what should happen, each method's score before and after and whether its
    verdict held, and what the probe changed."""
    rows = []
    for entry in entries:
        rows.append({
            "probe": entry["probe"], "should": entry["expectation"],
            **{f"{METHOD_WORDS[m]}: before → after": f"{entry['before'][m]:.2f} → {entry['after'][m]:.2f}"
               for m in METHODS},
            **{f"{METHOD_WORDS[m]}: held?": "✔ held" if entry["held"][m] else "✘ broke" for m in METHODS},
            "what it changed": entry.get("changed", ""),
        })
    return rows
