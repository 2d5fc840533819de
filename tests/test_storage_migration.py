"""Studio databases written by older code (tests/data/README.md) open with today's code, are migrated to the current
schema and read back what that code read: one from before issue 18 (commit 3ad3833, schema 2: sessions, turns, guard
reports (typed), annotations, suggestions, self-play judgements and the DECODE export) and one from just before issue 24
(commit 4f3e49d, schema 4: a session's settings in columns of their own, each bot turn's own settings)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from dataclasses import asdict, replace
from pathlib import Path

import pytest

from conversation.records import ChatSettings
from guard.judge.jsonform import from_jsonable, jsonable
from guard.judge.report import BotTurnReport
from guard.judge.verdicts import PairScore, RoleCheck, VerdictDetails
from guard.vocabulary import Category, GuardMode, PremiseSource
from studio.export import decode_records
from studio.storage import SCHEMA_VERSION, Annotation, Store, TurnJudgement

DATA = Path(__file__).resolve().parent / "data"
OLD_DB = DATA / "studio_main_3ad3833.db"
READ_BY_OLD_CODE = json.loads((DATA / "studio_main_3ad3833.json").read_text())


def _store_on_a_copy(db: Path, tmp_path: Path):
    """The Store opened on a copy of the fixture database ``db`` (opening it upgrades the copy)."""
    path = tmp_path / "studio.db"
    shutil.copy(db, path)
    store = Store(f"sqlite:///{path}")
    yield store
    store.dispose()


@pytest.fixture()
def store(tmp_path):
    yield from _store_on_a_copy(OLD_DB, tmp_path)


#: report fields added since that code (issue 19: what a re-judge would now send; issue 25: why the repair mode did
#: not repair, and the policy that decided instead; issue 32: what the bot did not read of a long message), at their
#: defaults in old reports
NEW_REPORT_FIELDS = {"would_send": None, "would_fallback": False, "repair_declined": "", "decided_by": None,
                     "prompt_note": "", "reminder": None, "badge": None, "prefilter": None, "sent": "",
                     "prefilter_recorded": False, "sheet": None, "memory": [],
                     "crowd_note": ""}  # issue 55: fewer candidates for a crowded class
#: fields added to a verdict's details since (issue 23: the own-question role check; issue 35: the checks that ran,
#: the answer's reading, whether it says nothing, the evidence set aside for the persona), at their defaults
NEW_DETAIL_FIELDS = {"own_question_turn": None, "own_question_score": None, "checks": [], "answer_reading": "",
                     "answer_kind": "", "says_nothing": False, "persona_sides": [],
                     # issue 43: the checks' own thresholds and the prefilter's k the verdict was judged with
                     "intra_threshold": None, "own_question_threshold": None, "prefilter_k": None,
                     # issue 41: the fact sheet's clashes and the score a clash gives
                     "fact_clashes": [], "fact_confidence": None,
                     # issue 51: what the persona supports
                     "persona_entailment": None, "persona_supported": [], "restated": [], "answer": None}
#: fields added to a candidate's report since (issue 25: the repair mode's removed sentence; issue 35: who wrote it)
NEW_CANDIDATE_FIELDS = {"repair": None, "origin": "bot", "withheld": None}  # withheld: the classroom filter (issue 45)
#: fields added to a scored pair since (issue 35: the reading compared beside the turn's own words)
NEW_PAIR_FIELDS = {"premise_reading": "", "hypothesis_reading": ""}


def _old_pair(pair: dict | None) -> dict | None:
    """A scored pair as that code wrote it (no readings: it compared the words themselves)."""
    if pair is None:
        return None
    assert {k: pair[k] for k in NEW_PAIR_FIELDS} == NEW_PAIR_FIELDS
    return {k: v for k, v in pair.items() if k not in NEW_PAIR_FIELDS}


def _turn_json(turn) -> dict:
    """A turn's jsonable form with its report in the report's one JSON form (``BotTurnReport.to_json``: the settings
    it was judged with, and its mode, τ and prefilter beside them)."""
    return {**jsonable(turn), "report": None if turn.report is None else turn.report.to_json()}


def _old_form(turn: dict) -> dict:
    """A turn's JSON form (``_turn_json``) as that code wrote it: its speaker under ``speaker`` (today's ``agent_id``:
    one turn type, issue 24), no settings of its own, each candidate's verdict copied into the candidate field by field
    (today it embeds the verdict), the report's mode and τ without the settings record they are part of today (issue
    43), and no fields added since (which old reports hold at their defaults)."""
    turn = {("speaker" if k == "agent_id" else k): v for k, v in turn.items() if k != "settings"}
    if turn.get("report"):
        turn["report"] = dict(turn["report"])
        settings = turn["report"].pop("settings")
        assert (settings["mode"], settings["threshold"]) == (turn["report"]["mode"], turn["report"]["threshold"])
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
                if details.get("intra"):
                    details["intra"] = {**details["intra"], "pairs": [_old_pair(p) for p in details["intra"]["pairs"]]}
                if details.get("role"):
                    details["role"] = {**details["role"], "user_pair": _old_pair(details["role"]["user_pair"])}
            candidate.update({
                "contradiction_score": None if verdict is None else verdict["score"],
                "contradicts": bool(verdict and verdict["contradiction"]),
                "category": "none" if verdict is None else verdict["category"],
                "evidence": [] if verdict is None else [_old_pair(p) for p in verdict["evidence"]],
                "details": details})
            candidates.append(candidate)
        if "candidates" in turn["report"]:
            turn["report"]["candidates"] = candidates
    return turn


#: where a session's settings were kept before schema 6 folded them into one record
LEGACY_SETTING_FIELDS = ("bot", "preset", "guard_mode", "detector", "threshold", "num_candidates", "persona",
                         "penalty_lambda", "prefilter")


def _info(session) -> dict:
    """A session's info in the flat shape that code read (its settings fields beside id, player, source...); schema 7's
    owner is not in it: a session stored before belongs to no browser (checked here)."""
    info = jsonable({**asdict(session.info), "created_at": None, "updated_at": None})
    assert info.pop("owner") is None
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
        assert [{"turn": _old_form(_turn_json(t.turn)), "method": t.method, "suggestion_id": t.suggestion_id}
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


# ---------------------------------------------------------------- a schema-4 database (commit 4f3e49d)
# Written by the code of commit 4f3e49d (tests/data/make_studio_schema4_4f3e49d.py), the last schema before issue 24
# folded a session's settings into one record (schema 6): its sessions kept their settings in columns of their own,
# its bot turns their own settings (ReplySettings) and their reports each candidate's verdict copied field by field.

SCHEMA4_DB = DATA / "studio_schema4_4f3e49d.db"
READ_AT_SCHEMA4 = json.loads((DATA / "studio_schema4_4f3e49d.json").read_text())
#: what a schema-4 bot turn kept of the settings that produced it (today's ChatSettings adds persona and fallback)
SCHEMA4_TURN_SETTINGS = ("bot", "preset", "decoding", "guard_mode", "detector", "threshold", "num_candidates",
                         "penalty_lambda", "prefilter", "from_session")


@pytest.fixture()
def store4(tmp_path):
    yield from _store_on_a_copy(SCHEMA4_DB, tmp_path)


def test_a_schema_4_database_is_upgraded_to_today(store4):
    assert READ_AT_SCHEMA4["schema_version"] == 4 and SCHEMA4_DB.stat().st_size < 200_000
    assert store4.schema_version == SCHEMA_VERSION == 7
    path = store4.url.removeprefix("sqlite:///")
    with sqlite3.connect(path) as conn:
        versions = [v for (v,) in conn.execute("SELECT version FROM schema_version ORDER BY version")]
        columns = {row[1] for row in conn.execute("PRAGMA table_info(sessions)")}
    assert versions == [1, 2, 3, 4, 5, 6, 7]
    assert "settings" in columns and not set(LEGACY_SETTING_FIELDS) & columns  # folded into one record
    assert store4.counts() == READ_AT_SCHEMA4["counts"]


def test_schema_4_sessions_keep_their_settings_in_the_one_record(store4):
    assert {s.id for s in store4.list_sessions()} == set(READ_AT_SCHEMA4["sessions"])
    for session_id, old in READ_AT_SCHEMA4["sessions"].items():
        info = store4.load_session(session_id).info
        assert {k: getattr(info.settings, k) for k in LEGACY_SETTING_FIELDS} == \
            {k: old["info"][k] for k in LEGACY_SETTING_FIELDS}
        assert (info.settings.fallback, info.settings.from_session) == (None, False)
        assert (info.player, info.source, info.meta) == (old["info"]["player"], old["info"]["source"],
                                                         old["info"]["meta"])
    chat = store4.load_session("chat-schema4-0001").info.settings  # the sidebar's last state, spelled out
    assert (chat.bot, chat.guard_mode, chat.detector, chat.threshold, chat.penalty_lambda, chat.prefilter) == (
        "scripted", GuardMode.BLOCK, "scripted-nli", 0.7, 2.5, False)
    assert chat.persona == ["I live in Ohio.", "I love hiking."]


def test_schema_4_turns_read_back_with_their_reports_and_own_settings(store4):
    for session_id, old in READ_AT_SCHEMA4["sessions"].items():
        session = store4.load_session(session_id)
        assert len(session.turns) == len(old["turns"])
        for stored, was in zip(session.turns, old["turns"]):
            turn, old_turn = stored.turn, was["turn"]
            assert (turn.turn_id, turn.agent_id, turn.text) == (old_turn["turn_id"], old_turn["speaker"],
                                                                old_turn["text"])
            assert (stored.method, stored.suggestion_id) == (was["method"], was["suggestion_id"])
            if old_turn["settings"] is None:
                assert turn.settings is None and turn.report is None
                continue
            # the bot, decoding and guard settings this turn was made with: its own, not its session's
            assert {k: jsonable(getattr(turn.settings, k)) for k in SCHEMA4_TURN_SETTINGS} == \
                {k: old_turn["settings"][k] for k in SCHEMA4_TURN_SETTINGS}
            assert session.reply_settings(turn.turn_id) == turn.settings
            # the report: today's shape (each candidate embeds its verdict), the same values
            # (_old_form drops the re-judge fields, which schema-4 reports already had: compared on their own)
            assert _old_form({"report": turn.report.to_json()})["report"] == \
                {k: v for k, v in old_turn["report"].items() if k not in NEW_REPORT_FIELDS}
            assert (turn.report.would_send, turn.report.would_fallback) == (old_turn["report"]["would_send"],
                                                                           old_turn["report"]["would_fallback"])
            report = turn.report
            sent = report.chosen.text if report.chosen is not None else None
            assert turn.text == sent or report.used_fallback
    chat = store4.load_session("chat-schema4-0001")
    penalty = chat.turns[3].turn
    assert penalty.text == "Max loves long walks in the park."
    assert (penalty.report.mode, penalty.report.detector, penalty.report.threshold) == (GuardMode.PENALTY,
                                                                                       "scripted-nli", 0.7)
    assert (penalty.settings.preset, penalty.settings.penalty_lambda) == ("greedy", 2.5)  # not the session's "fast"
    rejected = penalty.report.candidates[0]
    assert (rejected.text, rejected.contradicts, rejected.chosen, rejected.category) == (
        "I have never had a dog.", True, False, Category.HISTORY)
    assert rejected.contradiction_score == pytest.approx(0.95)
    assert [(e.source, e.turn_id) for e in rejected.evidence] == [(PremiseSource.HISTORY, 1)]
    blocked = chat.turns[5].turn.report
    assert blocked.mode is GuardMode.BLOCK and blocked.used_fallback and blocked.status == "guarded"
    assert [c.category for c in blocked.candidates] == [Category.HISTORY, Category.INTRA]
    assert [(e.source, e.turn_id) for e in blocked.candidates[0].evidence] == [(PremiseSource.PERSONA, 0)]
    assert blocked.persona == ("I live in Ohio.", "I love hiking.")
    flagged = store4.load_session("chat-schema4-0002").turns[3].turn
    assert flagged.text == "I have never had a dog." and flagged.report.mode is GuardMode.FLAG
    assert flagged.report.chosen.contradicts and flagged.report.status == "flagged"


def test_schema_4_annotations_suggestions_and_export_read_back(store4):
    # schema 5: an annotation may cite persona lines; these cite none
    assert [{k: v for k, v in a.items() if k != "contradicted_persona"} for a in jsonable(store4.annotations())] \
        == READ_AT_SCHEMA4["annotations"]
    assert all(a.contradicted_persona == [] for a in store4.annotations())
    [intra] = [a for a in store4.annotations() if a.annotator == "bob"]
    assert (intra.turn_index, intra.contradiction, intra.category, intra.guard_right) == (5, True, Category.INTRA,
                                                                                         False)
    assert [{k: v for k, v in s.items() if k != "created_at"} for s in store4.suggestions()] == \
        READ_AT_SCHEMA4["suggestions"]
    exported = list(decode_records(store4))
    for record in exported:
        for annotation in record.get("annotations", []):
            assert annotation.pop("contradicted_persona") == []
    assert exported == READ_AT_SCHEMA4["export"]
