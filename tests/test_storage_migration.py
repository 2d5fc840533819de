"""A studio database written before issue 18 (commit 3ad3833's code; tests/data/README.md) opens with today's code,
is migrated to the current schema and reads back what that code read: sessions, turns, guard reports (typed),
annotations, suggestions, self-play judgements and the DECODE export."""

from __future__ import annotations

import json
import shutil
import sqlite3
from dataclasses import asdict, replace
from pathlib import Path

import pytest

from conversation.jsonform import from_jsonable, jsonable
from conversation.records import BotTurnReport, ChatSettings
from guard.verdicts import PairScore, RoleCheck, VerdictDetails
from guard.vocabulary import Category, GuardMode, PremiseSource
from studio.export import decode_records
from studio.storage import SCHEMA_VERSION, Annotation, Store, TurnJudgement

DATA = Path(__file__).resolve().parent / "data"
OLD_DB = DATA / "studio_main_3ad3833.db"
READ_BY_OLD_CODE = json.loads((DATA / "studio_main_3ad3833.json").read_text())


@pytest.fixture()
def store(tmp_path):
    path = tmp_path / "studio.db"
    shutil.copy(OLD_DB, path)
    store = Store(f"sqlite:///{path}")
    yield store
    store.dispose()


#: report fields added since that code (issue 19: what a re-judge would now send; issue 25: why the repair mode did
#: not repair, and the policy that decided instead), at their defaults in old reports
NEW_REPORT_FIELDS = {"would_send": None, "would_fallback": False, "repair_declined": "", "decided_by": None}
#: fields added to a verdict's details since (issue 23: the own-question role check), None in old reports
NEW_DETAIL_FIELDS = {"own_question_turn": None, "own_question_score": None}
#: fields added to a candidate's report since (issue 25: the repair mode's removed sentence), None in old reports
NEW_CANDIDATE_FIELDS = {"repair": None}


def _old_form(turn: dict) -> dict:
    """A turn's jsonable form as that code wrote it: its speaker under ``speaker`` (today's ``agent_id``: one turn
    type, issue 24), no settings of its own, each candidate's verdict copied into the candidate field by field (today
    it embeds the verdict), and no fields added since (which old reports hold at their defaults)."""
    turn = {("speaker" if k == "agent_id" else k): v for k, v in turn.items() if k != "settings"}
    if turn.get("report"):
        assert {k: turn["report"][k] for k in NEW_REPORT_FIELDS} == NEW_REPORT_FIELDS
        turn["report"] = {k: v for k, v in turn["report"].items() if k not in NEW_REPORT_FIELDS}
        candidates = []
        for candidate in turn["report"].get("candidates") or []:
            assert {k: candidate[k] for k in NEW_CANDIDATE_FIELDS} == NEW_CANDIDATE_FIELDS
            candidate = {k: v for k, v in candidate.items() if k not in NEW_CANDIDATE_FIELDS}
            verdict = candidate.pop("verdict", None)
            details = None if verdict is None else dict(verdict["details"])
            if details is not None:
                assert {k: details[k] for k in NEW_DETAIL_FIELDS} == NEW_DETAIL_FIELDS
                details = {k: v for k, v in details.items() if k not in NEW_DETAIL_FIELDS}
                assert verdict["pair_scores"] == []
            candidate.update({
                "contradiction_score": None if verdict is None else verdict["score"],
                "contradicts": bool(verdict and verdict["contradiction"]),
                "category": "none" if verdict is None else verdict["category"],
                "evidence": [] if verdict is None else verdict["evidence"], "details": details})
            candidates.append(candidate)
        if "candidates" in turn["report"]:
            turn["report"]["candidates"] = candidates
    return turn


#: where a session's settings were kept before schema 6 folded them into one record
LEGACY_SETTING_FIELDS = ("bot", "preset", "guard_mode", "detector", "threshold", "num_candidates", "persona",
                         "penalty_lambda", "prefilter")


def _info(session) -> dict:
    """A session's info in the flat shape that code read (its settings fields beside id, player, source...)."""
    info = jsonable({**asdict(session.info), "created_at": None, "updated_at": None})
    settings = info.pop("settings")
    return {**info, **{k: settings[k] for k in LEGACY_SETTING_FIELDS}}


def test_old_sessions_load_as_the_old_code_read_them(store):
    assert store.schema_version == SCHEMA_VERSION
    assert {s.id for s in store.list_sessions()} == set(READ_BY_OLD_CODE["sessions"])
    for session_id, old in READ_BY_OLD_CODE["sessions"].items():
        session = store.load_session(session_id)
        # the one representation change: a guard mode nobody recorded (an import) was "", now None;
        # schema 4 adds the guard's λ and prefilter, not known for old sessions
        assert _info(session) == {**old["info"], "guard_mode": old["info"]["guard_mode"] or None,
                                  "penalty_lambda": None, "prefilter": None}
        # schema 4: each turn keeps the settings that produced it (checked in test_old_bot_turns_get_...)
        assert [{"turn": _old_form(jsonable(t.turn)), "method": t.method, "suggestion_id": t.suggestion_id}
                for t in session.turns] == old["turns"]
    # schema 5: an annotation may cite persona lines; old ones cite none
    assert [{k: v for k, v in a.items() if k != "contradicted_persona"} for a in jsonable(store.annotations())] \
        == READ_BY_OLD_CODE["annotations"]
    assert all(a.contradicted_persona == [] for a in store.annotations())
    assert [{k: v for k, v in s.items() if k != "created_at"} for s in store.suggestions()] == \
        READ_BY_OLD_CODE["suggestions"]
    assert store.counts() == READ_BY_OLD_CODE["counts"]
    # the export names the guard mode that judged each reply (its report's), no longer the session's last one
    expected = []
    for record in READ_BY_OLD_CODE["export"]:
        session_id, turn = record["record_id"].rsplit(":", 1)
        report = READ_BY_OLD_CODE["sessions"][session_id]["turns"][int(turn)]["turn"]["report"]
        if report and not report["rejudge_note"]:  # a re-judged report holds the re-judge's settings
            record = {**record, "meta": {**record["meta"], "guard_mode": report["mode"],
                                         "detector": report["detector"]}}
        expected.append(record)
    exported = list(decode_records(store))
    for record in exported:  # schema 5: each annotation names the persona lines it cites (none in old ones)
        for annotation in record.get("annotations", []):
            assert annotation.pop("contradicted_persona") == []
    assert exported == expected
    assert expected != READ_BY_OLD_CODE["export"]  # the fixture's chat session changed mode between turns


def test_old_reports_come_back_typed(store):
    chat = store.load_session("chat-fixture0001").conversation()
    role = chat.turns[3].report.candidates[0]
    assert chat.turns[3].report.mode is GuardMode.RERANK and role.category is Category.ROLE
    assert isinstance(role.evidence[0], PairScore) and role.evidence[0].source is PremiseSource.HISTORY
    assert isinstance(role.details, VerdictDetails) and isinstance(role.details.role, RoleCheck)
    blocked = chat.turns[5].report
    assert blocked.used_fallback and blocked.status == "guarded" and "re-judged" in blocked.rejudge_note
    assert [c.category for c in blocked.candidates] == [Category.HISTORY, Category.INTRA]
    assert _old_form({"report": chat.to_decode_record()["turns"][5]["guard"]})["report"] == \
        READ_BY_OLD_CODE["sessions"]["chat-fixture0001"]["turns"][5]["turn"]["report"]
    again = from_jsonable(BotTurnReport, jsonable(blocked))
    assert again == blocked


def test_old_self_play_judgements_read_as_turn_judgements(store):
    run = READ_BY_OLD_CODE["redteam_run"]
    for k in range(2):
        session = store.load_session(f"redteam-{run}-{k:03d}")
        stored = session.info.meta["judgements"]
        assert set(stored) == {"1", "3"} and set(stored["3"]) == {"guard_judge", "guard_judge_score", "judge",
                                                                   "judge_score"}
        judgement = session.judgement(3)
        assert isinstance(judgement, TurnJudgement)
        assert (judgement.session_id, judgement.turn_index, judgement.method) == (session.info.id, 3,
                                                                                  session.methods[2])
        assert judgement.guard_flag is True and judgement.guard_judge is True and judgement.guard_judge_score == 0.95
        assert judgement.judge is False and session.judgement(2) is None  # a user turn has no judgement


def test_the_migration_drops_only_the_report_copy_and_the_store_writes_on(store, tmp_path):
    path = store.url.removeprefix("sqlite:///")
    with sqlite3.connect(path) as conn:
        versions = [v for (v,) in conn.execute("SELECT version FROM schema_version ORDER BY version")]
        columns = {row[1] for row in conn.execute("PRAGMA table_info(candidates)")}
    assert versions == list(range(1, SCHEMA_VERSION + 1))
    assert "verdict" not in columns and {"text", "contradiction_score", "category", "reason"} <= columns
    session = store.load_session("chat-fixture0001")
    conversation = session.conversation()
    conversation.add("user", "And your dog?")
    conversation.add("bot", "Max is a beagle.", session.turns[3].turn.report)
    assert store.save_turns(conversation.record_id, conversation.turns) == 2
    store.annotate(Annotation(conversation.record_id, 7, "dan", True, [1], "history"))
    assert store.load_session(conversation.record_id).turns[7].turn.report == session.turns[3].turn.report
    assert store.counts()["candidates"] == READ_BY_OLD_CODE["counts"]["candidates"] + 2


def test_old_bot_turns_get_the_settings_known_for_them(store):
    """Schema 4: bot turns stored before kept no settings of their own; the migration gives them their session's
    bot and preset and their own report's guard settings, marked as copied; user and imported turns get none."""
    for session_id, old in READ_BY_OLD_CODE["sessions"].items():
        session = store.load_session(session_id)
        for stored, old_turn in zip(session.turns, old["turns"]):
            turn, report = stored.turn, old_turn["turn"]["report"]
            if turn.agent_id != "bot":
                assert turn.settings is None
                continue
            made = turn.settings
            assert isinstance(made, ChatSettings) and made.from_session
            assert (made.bot, made.preset) == (old["info"]["bot"], old["info"]["preset"])
            if report is not None and not report["rejudge_note"]:
                assert (made.guard_mode, made.detector, made.threshold, made.num_candidates) == (
                    report["mode"], report["detector"], report["threshold"], len(report["candidates"]))
            elif report is not None:  # re-judged since: the report holds the re-judge's settings
                info = old["info"]
                assert (made.guard_mode, made.detector, made.threshold) == (
                    info["guard_mode"] or None, info["detector"], info["threshold"])
            assert session.reply_settings(turn.turn_id) == made


def test_new_turns_keep_their_own_bot_and_settings(store):
    """A turn written after the migration keeps the bot that wrote it, even when the session's sidebar (and so
    its session row) moved on to another bot: the scoreboard and the export count it for its own bot."""
    from studio.scores import outcome_frame

    session = store.load_session("chat-fixture0001")
    conversation = session.conversation()
    conversation.add("user", "And your dog?")
    made = ChatSettings(bot="scripted", preset="greedy", decoding={"method": "greedy"}, guard_mode="flag",
                        detector="embedded", threshold=0.42, num_candidates=1, penalty_lambda=1.0, prefilter=True)
    conversation.add("bot", "Max is a beagle.", session.turns[3].turn.report, made)
    store.save_turns(conversation.record_id, conversation.turns)
    store.save_session(replace(session.info, settings=replace(session.info.settings, bot="embedded",
                                                              penalty_lambda=2.5, prefilter=False)))
    again = store.load_session(conversation.record_id)
    assert again.turns[-1].turn.settings == made and again.reply_settings(7) == made
    assert (again.info.settings.penalty_lambda, again.info.settings.prefilter) == (2.5, False)
    frame = outcome_frame([again], [])
    assert frame.set_index("turn").loc[7, ["bot", "preset", "guard_mode"]].tolist() == ["scripted", "greedy", "flag"]
    record = [r for r in decode_records(store, session_ids=[again.info.id])][-1]
    assert (record["meta"]["bot"], record["meta"]["preset"], record["meta"]["detector"]) == ("scripted", "greedy",
                                                                                             "embedded")
