"""The guard server's wire format in-process (no server, no model): how a request becomes the guard's conversation
and settings, and how the upstream is addressed. The server processes themselves: tests/test_serve.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import asdict

import pytest

from bots.base import PRESETS, BotError
from conversation.records import ChatSettings
from guard.records import Turn
from guard.vocabulary import GuardMode
from serve.generators import upstream_base_url
from serve.protocol import RequestError, parse_chat_request, parse_json

FAST = PRESETS["fast"]
#: the server's settings: the settings record, as ``python -m serve`` builds it from its command line
SERVER = ChatSettings(bot="scripted", preset="fast", decoding=FAST, detector="embedded", threshold=0.9)


def _parse(messages, **fields):
    return parse_chat_request({"model": "m", "messages": messages, **fields}, SERVER)


def test_system_lines_are_the_persona_and_turns_keep_their_message_indices():
    request = _parse([{"role": "system", "content": "I am Sam.\n\n  I have two dogs.  "},
                      {"role": "user", "content": "Hi"},
                      {"role": "developer", "content": "I live in Ohio."},
                      {"role": "assistant", "content": "Hello!"},
                      {"role": "user", "content": [{"type": "text", "text": "Any"}, {"type": "text", "text": "pets?"}]}])
    assert request.persona == ["I am Sam.", "I have two dogs.", "I live in Ohio."]
    assert request.persona_messages == [0, 0, 2]
    assert request.turns == [Turn(0, "user", "Hi"), Turn(1, "bot", "Hello!"), Turn(2, "user", "Any\npets?")]
    assert request.turn_messages == [1, 3, 4]
    assert request.settings.mode == GuardMode.RERANK and request.settings.threshold == 0.9
    assert request.decoding == FAST and request.stream is False
    # the one settings record, as guarded_reply takes it: the decoding and persona are part of it
    assert isinstance(request.settings, ChatSettings) and request.settings.persona == request.persona
    assert request.settings.decoding == asdict(FAST)


def test_guard_field_and_sampling_fields_adjust_the_defaults():
    request = _parse([{"role": "user", "content": "Hi"}], stream=True, max_tokens=20, temperature=0.5, seed=7,
                     guard={"guard_mode": "repair", "repair_fallback": "block", "threshold": 0.8, "num_candidates": 6,
                            "fallback": "Let's change the subject."})
    settings = request.settings
    assert (settings.mode, settings.repair_fallback, settings.threshold, settings.num_candidates, settings.fallback) \
        == (GuardMode.REPAIR, GuardMode.BLOCK, 0.8, 6, "Let's change the subject.")
    assert request.decoding == FAST.replace(max_new_tokens=20, temperature=0.5, seed=7) and request.stream
    assert (settings.bot, settings.detector, settings.preset) == ("scripted", "embedded", "fast")  # the server's
    assert _parse([{"role": "user", "content": "Hi"}], temperature=0).decoding.method == "greedy"
    nucleus = _parse([{"role": "user", "content": "Hi"}], top_p=0.9).decoding  # instead of the preset's top-k 40
    assert (nucleus.method, nucleus.filters) == ("top_p", (0, 0.9))
    both = _parse([{"role": "user", "content": "Hi"}], top_p=0.9, top_k=40).decoding  # vLLM's two filters together
    assert (both.method, both.filters) == ("top_p", (40, 0.9))
    assert _parse([{"role": "user", "content": "Hi"}], top_k=-1).decoding.filters == (0, 0.9)  # vLLM's "no filter"
    assert _parse([{"role": "user", "content": "Hi"}], top_k=10, temperature=0).decoding.method == "greedy"
    assert _parse([{"role": "user", "content": "Hi"}], max_completion_tokens=9).decoding.max_new_tokens == 9
    assert _parse([{"role": "user", "content": "Hi"}], repetition_penalty=1.2).decoding \
        == FAST.replace(repetition_penalty=1.2)  # vLLM's field: the preset's method stays


def test_the_servers_own_decoding_options_are_resolved_once_and_checked_as_a_requests_are(tmp_path):
    """``python -m serve --temperature/--top-p/--repetition-penalty``: the defaults every request starts from (the
    generation-settings sweep runs servers this way); a bad value stops the start with the option's name."""
    from serve.__main__ import build_parser, build_service

    script = tmp_path / "script.json"
    script.write_text(json.dumps({"replies": [[{"text": "Hello.", "score": -0.1}]]}))
    argv = ["--bot", "scripted", "--script", str(script), "--detector", "none", "--mode", "off"]
    service = build_service(build_parser().parse_args(
        argv + ["--temperature", "0.6", "--top-p", "0.9", "--repetition-penalty", "1.2"]))
    assert service.defaults.decoding_config == FAST.replace(temperature=0.6, method="top_p", top_p=0.9, top_k=0,
                                                            repetition_penalty=1.2)
    both = build_service(build_parser().parse_args(argv + ["--top-k", "40", "--top-p", "0.9"]))
    assert both.defaults.decoding_config == FAST.replace(method="top_p", top_p=0.9)  # top-k 40 kept beside top-p
    assert both.defaults.decoding_config.filters == (40, 0.9)
    assert build_service(build_parser().parse_args(argv)).defaults.decoding_config == FAST
    with pytest.raises(ValueError, match="--repetition-penalty: 'repetition_penalty' must be a number above 0"):
        build_service(build_parser().parse_args(argv + ["--repetition-penalty", "0"]))
    with pytest.raises(ValueError, match="--top-k: 'top_k' must be a whole number from 0 to 1000"):
        build_service(build_parser().parse_args(argv + ["--top-k", "-5"]))


@pytest.mark.parametrize("body, status, wanted", [
    (b"", 400, "the request body is empty"),
    (b"\xff\xfe{", 400, "not UTF-8"),
    (b'{"messages": ', 400, "not valid JSON (line 1, column 14"),
    (b'"hi"', 400, "a JSON string, not an object"),
])
def test_bodies_that_are_not_a_json_object(body, status, wanted):
    with pytest.raises(RequestError) as caught:
        parse_json(body)
    assert caught.value.status == status and wanted in caught.value.message


@pytest.mark.parametrize("fields, wanted", [
    ({"messages": None}, "the request has no 'messages'"),
    ({"messages": "hi"}, "'messages' must be a non-empty list of messages, got a string"),
    ({"messages": ["hi"]}, "messages[0] must be an object with 'role' and 'content'"),
    ({"messages": [{"role": "user", "content": None}]}, "messages[0].content must be a string, got null"),
    ({"messages": [{"role": "user", "content": "hi"}], "stream": "yes"}, "'stream' must be true or false"),
    ({"messages": [{"role": "user", "content": "hi"}], "tools": [{"type": "function"}]}, "tool calls are not supported"),
    ({"messages": [{"role": "user", "content": "hi"}], "guard": "rerank"}, "'guard' must be an object"),
    ({"messages": [{"role": "user", "content": "hi"}], "guard": {"threshold": 1.5}}, "guard.threshold must be"),
    ({"messages": [{"role": "user", "content": "hi"}], "guard": {"repair_fallback": "flag"}},
     "guard.repair_fallback must be one of rerank, penalty, block"),
    ({"messages": [{"role": "user", "content": "hi"}], "guard": {"candidates": 2}},
     "guard.candidates is now guard.num_candidates (the guard settings take the names of the chat settings record)"),
    ({"messages": [{"role": "user", "content": "hi"}], "temperature": 3}, "'temperature' must be a number from 0"),
    ({"messages": [{"role": "user", "content": "hi"}], "seed": 1.5}, "'seed' must be a whole number"),
    ({"messages": [{"role": "user", "content": "hi"}], "top_k": 4.5},
     "'top_k' must be a whole number from 0 to 1000 (0 or -1: no top-k filter), got 4.5"),
    ({"messages": [{"role": "user", "content": "hi"}], "repetition_penalty": "high"},
     "'repetition_penalty' must be a number above 0 and at most 2 (1 = off), got 'high'"),
])
def test_every_refusal_names_the_field_and_what_to_send(fields, wanted):
    with pytest.raises(RequestError) as caught:
        parse_chat_request(fields, SERVER)
    assert caught.value.status == 400 and wanted in caught.value.message
    assert caught.value.body()["error"]["type"] == "invalid_request_error"


def test_the_error_for_n_names_a_field_the_server_accepts():
    """Issue 38: the error for n=2 told the client to use guard.candidates, a field the server refuses with a 400."""
    import re

    with pytest.raises(RequestError) as refused:
        _parse([{"role": "user", "content": "hi"}], n=2)
    named = re.search(r"guard\.(\w+)", str(refused.value))
    assert named, str(refused.value)
    # the field it names sets how many candidates are judged, and is taken
    request = _parse([{"role": "user", "content": "hi"}], guard={named.group(1): 3})
    assert request.settings.num_candidates == 3


def test_the_upstream_url_names_the_openai_base():
    assert upstream_base_url("http://127.0.0.1:8080") == "http://127.0.0.1:8080/v1"
    assert upstream_base_url("http://gpu-box:8000/v1/") == "http://gpu-box:8000/v1"
    assert upstream_base_url("https://host/api/v1") == "https://host/api/v1"
    with pytest.raises(BotError, match="--upstream must be an http"):
        upstream_base_url("127.0.0.1:8000")


def test_importing_the_server_loads_no_model_runtime_nor_the_ui():
    script = "import json, sys\nimport serve.app, serve.service\nprint(json.dumps(sorted(sys.modules)))\n"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert done.returncode == 0, done.stderr
    loaded = {name.split(".")[0] for name in json.loads(done.stdout.strip().splitlines()[-1])}
    assert not loaded & {"torch", "transformers", "streamlit", "ui", "studio"}
