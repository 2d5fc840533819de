"""The guard server as its clients see it: real ``python -m serve`` processes on local ports, driven by the official
``openai`` package (streaming and not), one of them the upstream of another, and every bad input refused with its
4xx/502 and a message that says what to fix.

Plumbing only: the scripted demo bot and a tiny random detector whose τ = 0.1 flags every candidate
(harness/tiny_nli.py); what the shipped detector decides is tested in tests/test_repair.py.
"""

from __future__ import annotations

import json
import threading
import time

import openai
import pytest
import requests
from demo_messages import DEMO

from harness.server import free_port, start_guard_server, stop, wait_for_health
from harness.tiny_nli import build_flagging_detector

KEY, UPSTREAM_KEY = "sk-test-key", "sk-upstream-key"
LIMIT = 20_000  # the guarded server's --max-request-bytes
#: The upstream's script: it echoes the user, so a reply shows which conversation it answers.
ECHO = {"replies": [[{"text": "You said: {user}", "score": -0.2}]]}


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    """Three servers started together: ``guarded`` (scripted demo + tiny detector, rerank, no reminders unless a
    request asks, an API key, a 20 kB limit), ``upstream`` (scripted echo, no detector, its own key) and ``front`` (the upstream's candidates, the
    tiny detector, flag mode)."""
    folder = tmp_path_factory.mktemp("serve")
    detector = str(build_flagging_detector(folder / "tiny_nli"))
    script = folder / "echo.json"
    script.write_text(json.dumps(ECHO))
    env = {"GUARD_RUNTIME": "torch", "GUARD_CACHE_DIR": str(folder / "cache"), "GUARD_SERVE_API_KEY": ""}
    ports = {name: free_port() for name in ("guarded", "upstream", "front")}
    arguments = {
        "guarded": ["--bot", "scripted", "--detector", detector, "--no-prefilter", "--candidates", "3",
                    "--api-key", KEY, "--max-request-bytes", str(LIMIT), "--no-remind"],
        "upstream": ["--bot", "scripted", "--script", str(script), "--detector", "none", "--mode", "off",
                     "--api-key", UPSTREAM_KEY, "--log-level", "warning"],
        "front": ["--upstream", f"http://127.0.0.1:{ports['upstream']}/v1", "--upstream-api-key", UPSTREAM_KEY,
                  "--upstream-timeout", "5", "--detector", detector, "--no-prefilter", "--mode", "flag",
                  "--candidates", "2"],
    }
    logs = {name: open(folder / f"{name}.log", "w") for name in ports}
    procs = {name: start_guard_server(arguments[name], ports[name], env, logs[name]) for name in ports}
    running = {"procs": procs, "ports": ports, "arguments": arguments, "env": env, "logs": logs}
    try:
        for name, proc in procs.items():
            wait_for_health(proc, f"http://127.0.0.1:{ports[name]}", _deadline(), logs[name].name)
        yield running
    finally:
        for proc in running["procs"].values():
            stop(proc)
        for log in logs.values():
            log.close()


def _deadline() -> float:
    return time.monotonic() + 180


def _url(servers, name: str) -> str:
    return f"http://127.0.0.1:{servers['ports'][name]}"


def _client(servers, name: str = "guarded", key: str = KEY) -> openai.OpenAI:
    return openai.OpenAI(base_url=_url(servers, name) + "/v1", api_key=key, max_retries=0, timeout=60)


def _guard(response) -> dict:
    """The guard field's report (the one JSON form of ``guard.judge.report.BotTurnReport``)."""
    return response.model_extra["guard"]["report"]


def test_health_is_open_and_models_lists_the_served_name(servers):
    health = requests.get(_url(servers, "guarded") + "/health", timeout=10)
    assert health.status_code == 200 and health.json()["status"] == "ok"
    assert [m.id for m in _client(servers).models.list()] == ["consistency-guard"]


def test_a_guarded_reply_with_every_candidate_judged_and_the_evidence_as_message_indices(servers):
    response = _client(servers).chat.completions.create(model="consistency-guard", messages=DEMO)
    field = response.model_extra["guard"]
    report = field["report"]
    assert response.choices[0].message.role == "assistant" and response.choices[0].finish_reason == "stop"
    # the tiny detector flags every candidate, so re-rank keeps the generator's best, flagged
    assert response.choices[0].message.content == "I don't have any pets."
    assert report["mode"] == "rerank" and field["status"] == "flagged" and field["summary"].startswith("flagged")
    assert report["chosen_index"] == 0 and report["candidates"][0]["repair"] is None
    assert [c["text"] for c in report["candidates"]] == [
        "I don't have any pets.", "No, my two dogs are plenty for me.", "Maybe a cat one day, if Max and Bella agree!"]
    assert field["message_indices"] == {"turns": [1, 2, 3, 4, 5], "persona": [0, 0]}
    for cand, indices in zip(report["candidates"], field["evidence_message_indices"], strict=True):
        verdict = cand["verdict"]
        assert verdict["contradiction"] and 0.1 <= verdict["score"] <= 1
        assert verdict["category"] in ("history", "intra", "role") and "probability" in cand["reason"]
        assert indices and set(indices) <= {0, 2, 4}
        for pair in verdict["evidence"]:
            if pair["source"] in ("history", "persona"):  # the premise is a sentence of the message it names
                index = field["message_indices"]["turns" if pair["source"] == "history" else "persona"][pair["turn_id"]]
                assert pair["premise"] in DEMO[index]["content"] and index in indices
                assert DEMO[index]["role"] == ("system" if pair["source"] == "persona" else "assistant")


def test_guard_settings_per_request_and_nothing_kept_between_requests(servers):
    client = _client(servers)
    blocked = client.chat.completions.create(model="m", messages=DEMO, extra_body={
        "guard": {"guard_mode": "block", "fallback": "Let's talk about something else.", "num_candidates": 2}})
    assert blocked.choices[0].message.content == "Let's talk about something else."
    assert _guard(blocked)["used_fallback"] and len(_guard(blocked)["candidates"]) == 2
    off = client.chat.completions.create(model="m", messages=DEMO, extra_body={"guard": {"guard_mode": "off"}})
    assert all(c["verdict"] is None for c in _guard(off)["candidates"])
    # the next request without settings gets the server's defaults again, and the first turn of another
    # conversation gets the first scripted reply: nothing was kept
    fresh = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "Hello"}])
    assert _guard(fresh)["mode"] == "rerank" and len(_guard(fresh)["candidates"]) == 1
    assert fresh.choices[0].message.content == "Hi! I'm Sam. I have two dogs, Max and Bella."


def test_a_request_may_ask_for_the_reminder_and_its_report_says_what_came_of_it(servers):
    """The tiny detector flags everything: reminded (the scripted bot cannot continue an opening, so the fact is
    restated in its persona), nothing the bot writes is consistent, and neither is the guard's composed reply."""
    client = _client(servers)
    reminded = client.chat.completions.create(model="m", messages=DEMO, extra_body={"guard": {"remind": True}})
    report = _guard(reminded)
    assert report["reminder"]["method"] == "restated" and report["reminder"]["outcome"] == "none"
    assert report["reminder"]["restated"][0].startswith("Remember, you said: ")
    # the scripted bot repeats itself when asked again: only the composed reply is new
    assert [c["origin"] for c in report["candidates"]] == ["bot"] * 3 + ["composed"]
    assert reminded.model_extra["guard"]["summary"].startswith("reminded the bot of ")
    with pytest.raises(openai.BadRequestError, match="guard.remind must be true or false"):
        client.chat.completions.create(model="m", messages=DEMO, extra_body={"guard": {"remind": "yes"}})


def test_streaming_sends_the_chosen_reply_as_server_sent_events_and_the_report_last(servers):
    client = _client(servers)
    whole = client.chat.completions.create(model="m", messages=DEMO[:4])
    chunks = list(client.chat.completions.create(model="m", messages=DEMO[:4], stream=True))
    assert chunks[0].choices[0].delta.role == "assistant"
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == whole.choices[0].message.content
    assert len(chunks) > 3  # word by word
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert [c["text"] for c in chunks[-1].model_extra["guard"]["report"]["candidates"]] == \
        [c["text"] for c in _guard(whole)["candidates"]]


@pytest.mark.parametrize("messages, extra, wanted", [
    ([{"role": "robot", "content": "hi"}], {}, "messages[0].role is 'robot': use one of system, developer, user"),
    ([{"role": "tool", "content": "42"}, {"role": "user", "content": "hi"}], {}, "tool results are not supported"),
    ([{"role": "system", "content": "I am Sam."}], {}, "the messages hold no user message"),
    ([{"role": "user", "content": "   "}], {}, "messages[0].content is empty"),
    ([{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}], {}, "only text parts"),
    ([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}], {},
     "the last message (messages[1]) is the assistant's: end with the user's message"),
    ([], {}, "'messages' must be a non-empty list"),
    ([{"role": "user", "content": "hi"}], {"n": 2}, "'n' must be 1"),
    ([{"role": "user", "content": "hi"}], {"guard": {"guard_mode": "veto"}}, "guard.guard_mode must be one of off"),
    ([{"role": "user", "content": "hi"}], {"guard": {"tau": 0.5}}, "unknown guard setting 'tau'"),
    ([{"role": "user", "content": "hi"}], {"guard": {"num_candidates": 99}}, "over this server's limit of 16"),
    ([{"role": "user", "content": "hi"}], {"guard": {"mode": "flag"}}, "guard.mode is now guard.guard_mode"),
    ([{"role": "user", "content": "hi"}], {"guard": {"safe_reply": "ok"}}, "guard.safe_reply is now guard.fallback"),
    ([{"role": "user", "content": "hi"}], {"max_tokens": 0}, "'max_tokens' must be a whole number from 1"),
])
def test_bad_requests_get_400_with_what_to_fix(servers, messages, extra, wanted):
    with pytest.raises(openai.BadRequestError) as caught:
        _client(servers).chat.completions.create(model="m", messages=messages, extra_body=extra)
    assert caught.value.status_code == 400
    assert wanted in caught.value.message
    assert caught.value.body["type"] == "invalid_request_error"


def test_malformed_json_and_a_body_that_is_not_an_object_get_400(servers):
    url = _url(servers, "guarded") + "/v1/chat/completions"
    headers = {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"}
    broken = requests.post(url, data=b'{"messages": [{"role": "user", "content": "hi"', headers=headers, timeout=10)
    assert broken.status_code == 400
    assert broken.json()["error"]["message"].startswith("the request body is not valid JSON (line 1, column")
    listed = requests.post(url, data=b"[1, 2]", headers=headers, timeout=10)
    assert listed.status_code == 400 and "a JSON list, not an object" in listed.json()["error"]["message"]


def test_a_request_over_the_size_limit_gets_413(servers):
    with pytest.raises(openai.APIStatusError) as caught:
        _client(servers).chat.completions.create(model="m", messages=[{"role": "user", "content": "x" * LIMIT}])
    assert caught.value.status_code == 413
    assert f"over this server's limit of {LIMIT} bytes (--max-request-bytes)" in caught.value.message


def test_a_missing_or_wrong_key_gets_401_and_health_needs_none(servers):
    with pytest.raises(openai.AuthenticationError) as wrong:
        _client(servers, key="sk-wrong").chat.completions.create(model="m", messages=DEMO[1:2])
    assert wrong.value.status_code == 401 and "wrong API key" in wrong.value.message
    missing = requests.post(_url(servers, "guarded") + "/v1/chat/completions", json={"messages": DEMO[1:2]},
                            timeout=10)
    assert missing.status_code == 401 and missing.headers["WWW-Authenticate"] == "Bearer"
    assert "missing API key: send the header 'Authorization: Bearer <key>'" in missing.json()["error"]["message"]
    assert requests.get(_url(servers, "guarded") + "/v1/models", timeout=10).status_code == 401


def test_a_guard_server_as_the_upstream_of_another(servers):
    client = _client(servers, "front", key="unused")  # the front server has no key of its own
    messages = [{"role": "system", "content": "I am Sam."}, {"role": "user", "content": "Do you like tea?"}]
    response = client.chat.completions.create(model="m", messages=messages)
    guard = _guard(response)
    assert response.choices[0].message.content == "You said: Do you like tea?"
    # the upstream answers one reply a request (it refuses n > 1), so the front asked once per candidate
    assert [c["text"] for c in guard["candidates"]] == ["You said: Do you like tea?"] * 2
    assert guard["mode"] == "flag" and all(c["verdict"] is not None for c in guard["candidates"])
    streamed = list(client.chat.completions.create(model="m", messages=messages, stream=True))
    assert "".join(c.choices[0].delta.content or "" for c in streamed) == "You said: Do you like tea?"


def test_concurrent_conversations_are_not_mixed(servers):
    client, answers, errors = _client(servers, "front", key="unused"), {}, []

    def ask(k: int) -> None:
        try:
            reply = client.chat.completions.create(model="m", messages=[{"role": "user", "content": f"token-{k}"}])
            answers[k] = reply.choices[0].message.content
        except Exception as exc:  # collected: the test says which request failed
            errors.append(f"{k}: {exc}")

    threads = [threading.Thread(target=ask, args=(k,)) for k in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors
    assert answers == {k: f"You said: token-{k}" for k in range(8)}


def test_an_unreachable_upstream_gets_502_and_the_same_request_works_once_it_is_back(servers):
    client = _client(servers, "front", key="unused")
    messages = [{"role": "user", "content": "Are you there?"}]
    stop(servers["procs"]["upstream"])
    with pytest.raises(openai.APIStatusError) as caught:
        client.chat.completions.create(model="m", messages=messages)
    assert caught.value.status_code == 502 and caught.value.body["type"] == "upstream_error"
    assert "the upstream chat server could not answer: cannot reach a chat server at" in caught.value.message
    assert "(nothing was stored here: send the same request again once the upstream is back)" in caught.value.message
    port = servers["ports"]["upstream"]
    restarted = start_guard_server(servers["arguments"]["upstream"], port, servers["env"], servers["logs"]["upstream"])
    servers["procs"]["upstream"] = restarted
    wait_for_health(restarted, f"http://127.0.0.1:{port}", _deadline())
    assert client.chat.completions.create(model="m", messages=messages).choices[0].message.content == \
        "You said: Are you there?"
