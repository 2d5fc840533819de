"""One guarded turn, three carriers, one report JSON: the guard server's ``guard`` field, the studio's stored report
and the chat page's transcript download all hold ``BotTurnReport.to_json()`` of the same turn, byte for byte once
parsed, and each reads back into the same report.

The turn is made once, by the server's own service (``serve.service.GuardService``, in-process: the scripted demo
bot and a tiny detector that flags every candidate), then stored by the studio and downloaded as the chat page
does. The server's HTTP round trip of the same field is tested in tests/test_serve.py.
"""

from __future__ import annotations

import json
import sqlite3

import pytest
from demo_messages import DEMO
from reports import as_stored

from bots.base import PRESETS
from conversation.records import ChatSettings, Conversation
from guard.judge.report import BotTurnReport
from guard.vocabulary import GuardMode
from serve.protocol import completion_body, parse_chat_request
from serve.service import GuardService


@pytest.fixture(scope="module")
def guarded(flagging_detector):
    """The server's answer to DEMO (rerank, 3 candidates) and the request it answered."""
    from bots.registry import make_bot
    from guard.judge.pipeline import load_guard

    guard = load_guard(str(flagging_detector), prefilter=False)
    defaults = ChatSettings(bot="scripted", preset="fast", decoding=PRESETS["fast"], guard_mode=GuardMode.RERANK,
                            detector=guard.name, threshold=guard.threshold, num_candidates=3, prefilter=False)
    service = GuardService(generator=make_bot("scripted"), generator_label="scripted", guard=guard,
                           defaults=defaults)
    request = parse_chat_request({"model": "m", "messages": DEMO}, defaults)
    return request, service.answer(request)


def _parsed(value) -> dict:
    """What a client holds after the JSON went over the wire or into a file."""
    return json.loads(json.dumps(value, ensure_ascii=False))


def test_the_server_field_the_studio_and_the_download_carry_the_same_report_json(guarded, tmp_path):
    from studio.storage import SessionInfo, open_store

    request, turn = guarded
    report = turn.report
    # a turn with verdicts and evidence to carry, and a reminder (the tiny detector flags all: the scripted bot is
    # asked again with the fact restated, the guard's composed reply goes last)
    assert report.any_contradiction and len(report.candidates) == 4 and report.reminder is not None
    one_form = _parsed(report.to_json())

    server = _parsed(completion_body(request, turn, "consistency-guard"))["guard"]["report"]

    conversation = Conversation(persona=list(request.persona), record_id="demo")
    for message in request.turns:
        conversation.add(message.agent_id, message.text)
    conversation.turns.append(turn)
    url = f"sqlite:///{tmp_path / 'studio.db'}"
    store = open_store(url)
    store.save_session(SessionInfo(id="demo", settings=turn.settings))
    store.save_turns("demo", conversation.turns)
    with sqlite3.connect(tmp_path / "studio.db") as db:
        (stored,) = db.execute("SELECT guard FROM turns WHERE session_id = 'demo' AND turn_index = ?",
                               (turn.turn_id,)).fetchone()
    studio = json.loads(stored)

    download = _parsed(conversation.to_decode_record())["turns"][turn.turn_id]["guard"]

    assert server == one_form
    assert studio == one_form
    assert download == one_form
    # and back: each carrier's JSON is the same report again, as stored (each verdict without its scored pairs)
    for carried in (server, studio, download):
        assert BotTurnReport.from_json(carried) == as_stored(report)
    loaded = store.load_session("demo")
    assert loaded.conversation().turns[turn.turn_id].report == as_stored(report)


def test_the_report_json_holds_the_verdicts_and_the_decision(guarded):
    _, turn = guarded
    data = turn.report.to_json()
    assert set(data) >= {"mode", "threshold", "detector", "chosen_index", "used_fallback", "candidates", "timings",
                         "persona", "repair_declined", "decided_by"}
    assert data["mode"] == "rerank" and data["candidates"][data["chosen_index"]]["chosen"]
    for candidate in data["candidates"]:
        verdict = candidate["verdict"]
        assert verdict["contradiction"] and verdict["evidence"] and verdict["details"]["threshold"] == data["threshold"]
        assert verdict["pair_scores"] == []  # a report keeps the evidence, not every pair scored
