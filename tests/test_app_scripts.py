"""A link's ``?script=<name>`` (ui.chat_session.follow_script_link), through Streamlit's AppTest: each browser session's
scripted bot plays the server's script of that name (``GUARD_APP_SCRIPTS``, a folder), and the session keeps it
(stored with the session and each reply, played again after a reload); a name the server does not offer plays no
other file and says which names there are. The browser tests share one server this way (conftest's app_server).

The detector is the tiny random one with τ = 0.1 (flag mode: every script's only candidate is sent).
"""

from __future__ import annotations

import json
import re

import pytest
from conftest import APP, say

from studio.storage import Store
from ui.ownership import TOKEN_KEY

streamlit_testing = pytest.importorskip("streamlit.testing.v1")
AppTest = streamlit_testing.AppTest

PETS = {"replies": [["I have a dog named Max."], ["Max is a beagle."]]}
JOB = {"replies": [["I work as a nurse."], ["I work nights at the hospital."]]}
OUTSIDE = {"replies": [["I was read from outside the folder."]]}


@pytest.fixture
def scripts(monkeypatch, tmp_path, flagging_detector):
    """A server started with a folder of two scripts, pets and job (and a script file beside the folder)."""
    folder = tmp_path / "scripts"
    folder.mkdir()
    (folder / "pets.json").write_text(json.dumps(PETS))
    (folder / "job.json").write_text(json.dumps(JOB))
    (tmp_path / "outside.json").write_text(json.dumps(OUTSIDE))
    monkeypatch.setenv("GUARD_APP_SCRIPTS", str(folder))
    for name in ("GUARD_APP_SCRIPT", "GUARD_APP_BOT", "GUARD_APP_PRESET"):
        monkeypatch.delenv(name, raising=False)
    for name, value in (("GUARD_APP_DETECTOR", str(flagging_detector)), ("GUARD_APP_MODE", "flag"),
                        ("GUARD_APP_CANDIDATES", "1"), ("GUARD_APP_REMIND", "0")):
        monkeypatch.setenv(name, value)
    return folder


def _opened(token: str | None = None, **link: str) -> AppTest:
    """A new browser session opened at the chat's address with the ``link``'s parameters; ``token``: of the browser
    whose tab it is (AppTest has no cookies: the token goes where ui.ownership keeps what the cookie said)."""
    at = AppTest.from_file(APP, default_timeout=120)
    if token is not None:
        at.session_state[TOKEN_KEY] = token
    for name, value in link.items():
        at.query_params[name] = value
    at.run()
    assert not at.exception, at.exception
    return at


def _plain(texts) -> str:
    """Shown texts as they read: the Markdown escapes the app put before the user's words undone."""
    return " ".join(re.sub(r"\\(.)", r"\1", t.value) for t in texts)


def _bot_said(at: AppTest) -> list[str]:
    return [t.text for t in at.session_state["chat::conversation"].turns if t.agent_id == "bot"]


def test_each_session_plays_the_script_its_link_names_and_keeps_it_after_a_reload(scripts, studio_database):
    pets, job = _opened(script="pets"), _opened(script="job")
    for at in (pets, job):
        assert "script" not in at.query_params  # the sidebar decides from here on
        assert at.selectbox(key="chat::bot").value == "scripted"
        say(at, "Tell me about yourself.")
        say(at, "And then?")
    assert _bot_said(pets) == ["I have a dog named Max.", "Max is a beagle."]
    assert _bot_said(job) == ["I work as a nurse.", "I work nights at the hospital."]
    assert "Bot: scripted, script pets (fast)" in _plain(pets.caption)
    # stored with the session and with each reply it made
    record_id = pets.session_state["chat::conversation"].record_id
    stored = Store(studio_database).load_session(record_id)
    assert stored.info.settings.script == "pets"
    assert [t.turn.settings.script for t in stored.turns if t.turn.agent_id == "bot"] == ["pets", "pets"]
    # a reload of the session's own address (no ?script= any more) plays the same script on
    again = _opened(pets.session_state[TOKEN_KEY], session=record_id)
    say(again, "One more?")
    assert _bot_said(again) == ["I have a dog named Max.", "Max is a beagle.", "Max is a beagle."]  # past its end


@pytest.mark.parametrize("asked", ["../outside", "nurse", "pets.json"])
def test_a_link_to_a_script_the_server_does_not_have_plays_no_other(scripts, asked):
    at = _opened(script=asked)
    warned = _plain(at.warning)
    assert "a bot script this server does not have" in warned and "the scripts are: job, pets" in warned, warned
    assert "script" not in at.query_params
    assert at.session_state["chat::script"] is None  # the server's own script: here the built-in demo
    say(at, "Hi! Tell me about yourself.")
    assert _bot_said(at) == ["Hi! I'm Sam. I have two dogs, Max and Bella."]


def test_a_server_without_a_folder_of_scripts_plays_none_by_name(scripts, monkeypatch):
    monkeypatch.delenv("GUARD_APP_SCRIPTS")
    monkeypatch.setenv("GUARD_APP_BOT", "scripted")
    at = _opened(script="pets")
    assert "this server offers no scripts by name" in _plain(at.warning), _plain(at.warning)
    say(at, "Hi! Tell me about yourself.")
    assert _bot_said(at) == ["Hi! I'm Sam. I have two dogs, Max and Bella."]


def test_a_session_whose_script_the_server_no_longer_has_says_so_and_keeps_the_chat(scripts):
    at = _opened(script="pets")
    say(at, "Tell me about yourself.")
    (scripts / "pets.json").rename(scripts.parent / "pets-retired.json")  # the server restarted without it
    say(at, "And then?")
    errors = _plain(at.error)
    assert "Could not load the bot 'scripted'" in errors and "no bot script named 'pets'" in errors, errors
    assert [t.text for t in at.session_state["chat::conversation"].turns] == [
        "Tell me about yourself.", "I have a dog named Max.", "And then?"]  # the message is kept for a Retry
