"""The scripted bot: registered like every other bot, a built-in demo that contradicts itself, custom scripts."""

from __future__ import annotations

import json
import time

import pytest
from judging import verdicts_of

from bots.base import BotError
from bots.registry import available_bots, describe_bot, make_bot
from bots.scripted import DEFAULT_SCRIPT, ScriptedBot, named_script, script_files
from embedded import DETECTOR_DIR
from guard.records import Turn

USER_MESSAGES = ["Hi! Tell me about yourself.", "What do you do in the mornings?", "Would you like another pet?"]


def _play(bot, num_candidates: int = 4) -> list[tuple[list[Turn], list]]:
    """Each turn's history and candidates; the bot's best candidate becomes its turn."""
    history: list[Turn] = []
    turns = []
    for text in USER_MESSAGES:
        history.append(Turn(0, "user", text))
        candidates = bot.generate(history, num_candidates)
        turns.append((list(history), candidates))
        history.append(Turn(0, "bot", candidates[0].text))
    return turns


def test_scripted_is_a_registered_bot_with_a_description():
    assert "scripted" in available_bots()
    assert describe_bot("scripted").startswith("scripted demo: replies from a script, for classes")
    assert isinstance(make_bot("scripted"), ScriptedBot)


def test_built_in_script_says_two_dogs_then_no_pets():
    turns = _play(make_bot("scripted"))
    assert "two dogs" in turns[0][1][0].text
    third = turns[2][1]
    assert third[0].text == "I don't have any pets."  # the generator's favourite contradicts turn 1
    assert len(third) == len(DEFAULT_SCRIPT["replies"][2]) > 1  # consistent alternatives to pick instead
    assert [c.score for c in third] == sorted((c.score for c in third), reverse=True)
    assert len(_play(make_bot("scripted"), num_candidates=1)[2][1]) == 1


def test_custom_script_from_a_file_or_a_dict(tmp_path):
    script = {"replies": [["You said: {user}"], [{"text": "b", "score": -2.0}, {"text": "c", "score": -1.0}]]}
    path = tmp_path / "script.json"
    path.write_text(json.dumps(script))
    for source in (path, str(path), script):
        bot = make_bot("scripted", script=source)
        assert [c.text for c in bot.generate([Turn(0, "user", "hi <b>")], 3)] == ["You said: hi <b>"]
        history = [Turn(0, "user", "x"), Turn(0, "bot", "y"), Turn(0, "user", "z"), Turn(0, "bot", "w"),
                   Turn(0, "user", "v")]
        assert [c.text for c in bot.generate(history, 3)] == ["c", "b"]  # past the end: the last list, best first


def test_a_script_delay_makes_every_reply_take_that_long():
    """A real generator takes seconds; a scripted reply with a delay too (the chat page's live guard view shows)."""
    bot = ScriptedBot({"delay": 0.3, "replies": [["a"]]})
    started = time.perf_counter()
    assert [c.text for c in bot.generate([Turn(0, "user", "hi")], 1)] == ["a"]
    assert time.perf_counter() - started >= 0.3
    assert ScriptedBot({"replies": [["a"]]}).delay == 0.0
    for bad in (-1, "2", True, 3600):
        with pytest.raises(BotError, match="'delay' must be a number of seconds"):
            ScriptedBot({"delay": bad, "replies": [["a"]]})


def test_bad_scripts_are_bot_errors(tmp_path):
    with pytest.raises(BotError, match="cannot read the bot script"):
        make_bot("scripted", script=tmp_path / "missing.json")
    with pytest.raises(BotError, match=r"replies\[0\]\[0\].score must be a number"):
        ScriptedBot({"replies": [[{"text": "a", "score": "high"}]]})
    with pytest.raises(BotError, match=r"replies\[1\] must be a non-empty list"):
        ScriptedBot({"replies": [["a"], []]})
    with pytest.raises(BotError, match="history"):
        ScriptedBot().generate([Turn(0, "someone", "hi")], 1)
    with pytest.raises(BotError, match="does not take that option"):
        make_bot("scripted", model="x")


def test_a_folder_offers_its_scripts_by_name_and_nothing_else(tmp_path):
    folder = tmp_path / "scripts"
    (folder / "nested").mkdir(parents=True)
    for name in ("pets", "job-2_b", "with space", "nested/inner"):
        (folder / f"{name}.json").write_text(json.dumps({"replies": [[name]]}))
    (folder / "notes.txt").write_text("not a script")
    (folder / "folder.json").mkdir()  # a folder, not a file
    (tmp_path / "outside.json").write_text(json.dumps({"replies": [["outside"]]}))
    assert list(script_files(folder)) == ["job-2_b", "pets"]  # sorted; only <name>.json files directly in it
    assert named_script(folder, "pets") == folder / "pets.json"
    assert [c.text for c in make_bot("scripted", script=named_script(folder, "pets")).generate(
        [Turn(0, "user", "hi")], 1)] == ["pets"]
    # a name is looked up among the folder's scripts, never made into a path
    for asked in ("../outside", "nested/inner", "with space", "notes", "folder", "pets.json", ""):
        with pytest.raises(BotError, match=r"no bot script named .*; the scripts are: job-2_b, pets$"):
            named_script(folder, asked)
    with pytest.raises(BotError, match="cannot read the folder of bot scripts"):
        script_files(tmp_path / "missing")


@pytest.mark.skipif(not (DETECTOR_DIR / "config.json").exists(), reason="the embedded detector is not there")
def test_embedded_detector_catches_the_built_in_contradiction_only():
    """At the shipped thresholds (τ and the intra check's, both set under the one false-alarm budget) the consistent
    'No, my two dogs are plenty for me.' is not flagged (0.83 against 'I have two dogs'; its clauses 0.735 against
    each other, under the intra check's 0.9434), while the planted 'I don't have any pets.' still is."""
    from guard.judge.pipeline import load_guard
    from guard.records import Turn

    guard = load_guard("embedded", prefilter=False)
    history, candidates = _play(make_bot("scripted"))[2]
    turns = [Turn(i, m.agent_id, m.text) for i, m in enumerate(history)]
    verdicts = verdicts_of(guard, guard.settings(mode="flag", prefilter=False), turns, [c.text for c in candidates])
    assert [v.contradiction for v in verdicts] == [True] + [False] * (len(candidates) - 1)
    assert verdicts[0].evidence_turn_ids == [1]


@pytest.mark.skipif(not (DETECTOR_DIR / "config.json").exists(), reason="the embedded detector is not there")
def test_embedded_detector_catches_the_built_in_contradiction():
    from guard.judge.pipeline import load_guard
    from guard.records import Turn

    guard = load_guard("embedded", prefilter=False)
    history, candidates = _play(make_bot("scripted"))[2]
    turns = [Turn(i, m.agent_id, m.text) for i, m in enumerate(history)]
    verdicts = verdicts_of(guard, guard.settings(mode="flag", prefilter=False), turns, [c.text for c in candidates])
    assert verdicts[0].contradiction and verdicts[0].evidence_turn_ids == [1]
    assert not verdicts[-1].contradiction  # "Maybe a cat one day, if Max and Bella agree!"
