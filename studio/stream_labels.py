"""The live-stream dev set kept as studio annotations (``python -m studio stream-labels ...``).

The sampled real conversations (``guard.eval.stream``) are imported as sessions, each labelling pass is recorded as its own
annotator, agreement between the passes is measured with the studio's own kappa (``studio.scores.agreement``), every
disagreement is settled as the annotator ``settled``, and the settled labels are exported - ids, labels and evidence,
no text - to ``guard/data/bot_stream/labels.jsonl``, where benchmarks and calibration read them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from conversation.records import BOT, USER, ChatSettings, ChatTurn
from guard.eval.stream import BotTurnLabel
from guard.records import Dialogue
from guard.vocabulary import Category
from studio.storage import Annotation, SessionInfo, Store

SETTLED = "settled"
RECORD_KEY = "original_record_id"


def import_conversations(store: Store, dialogues: Sequence[Dialogue]) -> dict[str, str]:
    """Store each conversation as an imported session once; returns record id -> session id (existing ones reused)."""
    existing = {s.meta.get(RECORD_KEY): s.id for s in store.list_sessions(source="import") if s.meta.get(RECORD_KEY)}
    sessions = {}
    for dialogue in dialogues:
        if dialogue.record_id in existing:
            sessions[dialogue.record_id] = existing[dialogue.record_id]
            continue
        session_id = "stream-" + dialogue.record_id.replace(":", "-").replace(" ", "-")
        bot = str(dialogue.meta.get("bot") or "")
        settings = ChatSettings.unknown(bot=f"convai2: {bot}" if bot else "convai2", persona=list(dialogue.persona))
        store.save_session(SessionInfo(id=session_id, settings=settings, source="import",
                                       meta={RECORD_KEY: dialogue.record_id, "imported_from": "convai2_wild.jsonl",
                                             "purpose": "live-stream dev set (guard.eval.stream)"}))
        store.save_turns(session_id, [ChatTurn(t.turn_id, BOT if t.agent_id == BOT else USER, t.text)
                                      for t in dialogue.turns])
        sessions[dialogue.record_id] = session_id
    return sessions


class LabelFileError(ValueError):
    """A pass's label file does not fit the conversations; the message names the line."""


def read_pass_file(path: Path) -> list[BotTurnLabel]:
    """A pass's labels: one ``BotTurnLabel``-shaped JSON object a line (``record_id``, ``turn_id``, ...)."""
    labels = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            labels.append(BotTurnLabel(row["record_id"], int(row["turn_id"]), bool(row["contradiction"]),
                                       row.get("category") or "none", [int(i) for i in row.get("evidence_turns") or []],
                                       [int(i) for i in row.get("evidence_persona") or []], str(row.get("note") or "")))
        except (ValueError, KeyError, TypeError) as exc:
            raise LabelFileError(f"{path}:{number}: {exc}") from None
    return labels


def record_pass(store: Store, sessions: dict[str, str], labels: Iterable[BotTurnLabel], annotator: str) -> int:
    """Write one pass's labels as ``annotator``'s annotations (through the store's checks); returns how many."""
    count = 0
    for label in labels:
        if label.record_id not in sessions:
            raise LabelFileError(f"{label.record_id} is not an imported conversation of the dev set")
        store.annotate(Annotation(sessions[label.record_id], label.turn_id, annotator, label.contradiction,
                                  list(label.evidence_turns), label.category, note=label.note,
                                  contradicted_persona=list(label.evidence_persona)))
        count += 1
    return count


def labels_of(store: Store, sessions: dict[str, str], annotator: str) -> dict[tuple[str, int], BotTurnLabel]:
    """One annotator's labels by (record id, bot turn id)."""
    record_of = {session: record for record, session in sessions.items()}
    out = {}
    for a in store.annotations():
        if a.annotator == annotator and a.session_id in record_of:
            out[(record_of[a.session_id], a.turn_index)] = BotTurnLabel(
                record_of[a.session_id], a.turn_index, a.contradiction, a.category, list(a.contradicted_turns),
                list(a.contradicted_persona), a.note)
    return out


@dataclass
class Disagreement:
    record_id: str
    turn_id: int
    first: BotTurnLabel
    second: BotTurnLabel


def disagreements(store: Store, sessions: dict[str, str], first: str, second: str) -> list[Disagreement]:
    """Bot turns the two passes label differently (contradiction or not)."""
    a, b = labels_of(store, sessions, first), labels_of(store, sessions, second)
    return [Disagreement(k[0], k[1], a[k], b[k]) for k in sorted(a.keys() & b.keys())
            if a[k].contradiction != b[k].contradiction]


def settle(store: Store, sessions: dict[str, str], first: str, second: str,
           decisions: dict[tuple[str, int], BotTurnLabel]) -> int:
    """Write the ``settled`` annotation of every bot turn both passes labelled: where they agree, their label (the
    evidence both named, else the first's; the first's category when both say contradiction); where they disagree,
    the decision given (every disagreement must have one). Returns the number written."""
    a, b = labels_of(store, sessions, first), labels_of(store, sessions, second)
    missing = [k for k in sorted(a.keys() ^ b.keys())]
    if missing:
        raise LabelFileError(f"{len(missing)} bot turns are labelled by one pass only, e.g. {missing[:3]}")
    undecided = [k for k in sorted(a) if a[k].contradiction != b[k].contradiction and k not in decisions]
    if undecided:
        raise LabelFileError(f"{len(undecided)} disagreements have no decision, e.g. {undecided[:3]}")
    settled = []
    for key in sorted(a):
        x, y = a[key], b[key]
        if key in decisions:
            settled.append(decisions[key])
        elif x.contradiction:
            turns = sorted(set(x.evidence_turns) & set(y.evidence_turns)) or x.evidence_turns
            persona = sorted(set(x.evidence_persona) & set(y.evidence_persona)) or x.evidence_persona
            if x.category != Category.INTRA and not turns and not persona:
                turns, persona = x.evidence_turns, x.evidence_persona
            settled.append(BotTurnLabel(x.record_id, x.turn_id, True, x.category, turns, persona,
                                        f"both passes: {x.note}"))
        else:
            settled.append(BotTurnLabel(x.record_id, x.turn_id, False))
    return record_pass(store, sessions, settled, SETTLED)
