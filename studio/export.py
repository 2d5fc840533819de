"""Goading sessions as DECODE-shaped records, one per bot turn.

Each record holds the conversation up to and including the bot turn (``turns`` with ``turn_id``,
``agent_id`` "user"/"bot", ``text``); when people annotated the turn, ``is_contradiction`` (majority),
``aggregated_contradiction_indices`` (the earlier turns they marked, plus the judged turn itself,
DECODE's convention), ``category`` and every annotator's own label under ``annotations``.
``meta.kind`` is the trigger method of the user message before the turn, so
``python -m guard evaluate --format decode`` breaks its report down by method.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence

from studio.scores import TYPED, by_turn, majority
from studio.storage import Annotation, Store, StoredSession


def _record(session: StoredSession, index: int, labels: Sequence[Annotation], method: str) -> dict:
    turns = session.turns[: index + 1]
    judged = turns[-1].turn
    record: dict = {
        "record_id": f"{session.info.id}:{judged.turn_id}",
        "turns": [{"turn_id": t.turn.turn_id, "agent_id": t.turn.speaker, "text": t.turn.text} for t in turns],
    }
    if session.info.persona:
        record["persona"] = list(session.info.persona)
    verdict = majority(labels)
    if verdict is not None:
        record["is_contradiction"] = verdict
        if verdict:
            yes = [a for a in labels if a.contradiction]
            present = {t.turn.turn_id for t in turns}
            earlier = sorted({i for a in yes for i in a.contradicted_turns if i in present and i != judged.turn_id})
            record["aggregated_contradiction_indices"] = earlier + [judged.turn_id]
            record["category"] = Counter(a.category for a in yes).most_common(1)[0][0]
        else:
            record["aggregated_contradiction_indices"] = []
            record["category"] = "none"
        record["annotations"] = [
            {"annotator": a.annotator, "is_contradiction": a.contradiction, "contradicted_turns": a.contradicted_turns,
             "category": a.category, "guard_right": a.guard_right, "note": a.note} for a in labels]
    report = judged.report
    chosen = report.chosen if report is not None else None
    record["meta"] = {
        "kind": method, "session_id": session.info.id, "bot": session.info.bot, "preset": session.info.preset,
        "guard_mode": session.info.guard_mode, "detector": session.info.detector, "player": session.info.player,
        "studio_source": session.info.source,
        "guard_flagged": bool(chosen is not None and chosen.contradicts),
        "guard_score": None if chosen is None or chosen.contradiction_score is None
        else round(float(chosen.contradiction_score), 4),
    }
    judged = (session.info.meta.get("judgements") or {}).get(str(judged.turn_id))
    if judged:  # self-play: what the guard's detector and the second judge said about the sent reply
        record["meta"]["self_play"] = {**judged, "guard_judge_name": session.info.meta.get("guard_judge"),
                                       "judge_name": session.info.meta.get("judge")}
    return record


def decode_records(store: Store, annotated_only: bool = False,
                   session_ids: Sequence[str] | None = None) -> Iterator[dict]:
    """DECODE-shaped records for the bot turns of the stored sessions (all, or ``session_ids``)."""
    grouped = by_turn(store.annotations())
    ids = list(session_ids) if session_ids is not None else [s.id for s in store.list_sessions()]
    for session_id in ids:
        session = store.load_session(session_id)
        if session is None:
            continue
        method = TYPED
        for index, stored in enumerate(session.turns):
            if stored.turn.speaker == "user":
                method = stored.method or TYPED
                continue
            labels = grouped.get((session_id, stored.turn.turn_id), [])
            if annotated_only and not labels:
                continue
            yield _record(session, index, labels, method)
