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

from conversation.records import USER
from guard.eval.datasets import dialogue_to_decode
from guard.records import Dialogue
from guard.vocabulary import Category
from studio.scores import TYPED, by_turn, majority
from studio.storage import Annotation, Store, StoredSession


def _record(session: StoredSession, index: int, labels: Sequence[Annotation], method: str) -> dict:
    stored = session.turns[: index + 1]
    judged = stored[-1].turn
    verdict = majority(labels)
    evidence, category = None, None
    if verdict is not None:
        yes = [a for a in labels if a.contradiction]
        present = {t.turn.turn_id for t in stored}
        evidence = sorted({i for a in yes for i in a.contradicted_turns if i in present and i != judged.turn_id})
        category = Counter(a.category for a in yes).most_common(1)[0][0] if verdict else Category.NONE
    report = judged.report
    chosen = report.chosen if report is not None else None
    made = session.reply_settings(judged.turn_id)  # the bot and settings that produced this reply
    meta = {
        "kind": method, "session_id": session.info.id, "bot": made.bot, "preset": made.preset,
        "guard_mode": made.guard_mode or "", "detector": made.detector, "player": session.info.player,
        "studio_source": session.info.source,
        # what was sent: a repaired reply is not flagged (its contradicting sentence was cut before sending)
        "guard_flagged": bool(report is not None and report.reply_flagged),
        # the sent text's score; a repaired reply's text was not scored whole (the candidate's score is the
        # sentence it lost), so none
        "guard_score": None if chosen is None or chosen.contradiction_score is None or chosen.repair is not None
        else round(float(chosen.contradiction_score), 4),
    }
    if chosen is not None and chosen.repair is not None:  # repair mode: the candidate and the sentence cut from it
        meta["guard_repair"] = {"candidate": chosen.text, "removed": chosen.repair.removed, "why": chosen.repair.why,
                                "candidate_score": round(float(chosen.contradiction_score or 0.0), 4)}
    judgement = session.judgement(judged.turn_id)
    if judgement is not None:  # self-play: what the guard's detector and the second judge said about the sent reply
        meta["self_play"] = {"guard_judge": judgement.guard_judge, "guard_judge_score": judgement.guard_judge_score,
                             "judge": judgement.judge, "judge_score": judgement.judge_score,
                             "guard_judge_name": session.info.meta.get("guard_judge"),
                             "judge_name": session.info.meta.get("judge")}
    dialogue = Dialogue(f"{session.info.id}:{judged.turn_id}", session.conversation().history(before=index + 1),
                        label=verdict, evidence=evidence, persona=list(session.info.persona), category=category,
                        meta=meta)
    record = dialogue_to_decode(dialogue)
    if verdict is not None:
        record["annotations"] = [
            {"annotator": a.annotator, "is_contradiction": a.contradiction, "contradicted_turns": a.contradicted_turns,
             "contradicted_persona": a.contradicted_persona, "category": a.category, "guard_right": a.guard_right,
             "note": a.note} for a in labels]
        persona_evidence = sorted({i for a in labels if a.contradiction for i in a.contradicted_persona})
        if persona_evidence:
            record["persona_evidence"] = persona_evidence
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
            if stored.turn.agent_id == USER:
                method = stored.method or TYPED
                continue
            labels = grouped.get((session_id, stored.turn.turn_id), [])
            if annotated_only and not labels:
                continue
            yield _record(session, index, labels, method)
