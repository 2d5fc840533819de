"""The remote bot against a real HTTP server process (tests/openai_server.py) on 127.0.0.1."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bots.base import PRESETS, BotError
from bots.remote import RemoteChatBot
from guard.records import Turn

SERVER = Path(__file__).with_name("openai_server.py")
HISTORY = [Turn(0, "user", "hi there"), Turn(0, "bot", "hello!"), Turn(0, "user", "do you like tea")]


@pytest.fixture
def start_server(tmp_path):
    processes = []

    def start(*flags: str) -> tuple[str, Path]:
        log = tmp_path / f"requests-{len(processes)}.jsonl"
        process = subprocess.Popen([sys.executable, str(SERVER), "--log", str(log), *flags],
                                   stdout=subprocess.PIPE, text=True)
        processes.append(process)
        line = process.stdout.readline()
        assert line.startswith("PORT "), line
        return f"http://127.0.0.1:{int(line.split()[1])}/v1", log

    yield start
    for process in processes:
        process.terminate()
        process.wait(timeout=10)


def _requests(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_n_candidates_in_one_request_scored_by_mean_logprob(start_server):
    url, log = start_server()
    bot = RemoteChatBot(base_url=url, model="tiny-test-model", timeout=10)
    candidates = bot.generate(HISTORY, 3, PRESETS["top_p"], persona=["I love tea."])
    assert [c.text for c in candidates] == [f"reply {i} to do you like tea" for i in range(3)]
    assert [c.score for c in candidates] == pytest.approx([-0.1, -0.2, -0.3])
    (request,) = _requests(log)
    assert request["n"] == 3 and request["logprobs"] is True
    assert request["top_p"] == 0.9 and request["temperature"] == PRESETS["top_p"].temperature
    assert "top_k" not in request  # the top_p preset has no top-k filter
    assert request["messages"][0]["role"] == "system" and "I love tea." in request["messages"][0]["content"]
    assert [m["role"] for m in request["messages"][1:]] == ["user", "assistant", "user"]


def test_a_reply_cut_at_max_tokens_ends_at_a_word_boundary(start_server):
    url, _ = start_server()
    bot = RemoteChatBot(base_url=url, model="m", timeout=10)
    # the server cuts "reply 0 to do you like tea" after 4 words and says finish_reason "length"
    candidates = bot.generate(HISTORY, 1, PRESETS["fast"].replace(max_new_tokens=4))
    assert [c.text for c in candidates] == ["reply 0 to…"]


def test_server_that_ignores_n_gets_the_missing_candidates_asked_for_at_once(start_server):
    """A server that answers one choice whatever n asks (llama.cpp's) gets the rest as concurrent one-choice requests:
    with 0.5 s a request, four candidates take about two requests' time, not four (its parallel slots decode them
    side by side)."""
    url, log = start_server("--ignore-n", "--delay", "0.5")
    bot = RemoteChatBot(base_url=url, model="m", timeout=10)
    started = time.perf_counter()
    candidates = bot.generate(HISTORY, 4, PRESETS["fast"])
    seconds = time.perf_counter() - started
    assert len(candidates) == 4
    assert [r["n"] for r in _requests(log)] == [4, 1, 1, 1]
    assert seconds < 1.6  # one request, then three at once: about 1.0 s; one after another it was 2.0 s
    again = bot.generate(HISTORY, 2, PRESETS["fast"])  # from then on one candidate a request, all at once
    assert len(again) == 2 and [r["n"] for r in _requests(log)][4:] == [1, 1]


def test_server_that_refuses_n_is_asked_one_candidate_a_request_from_then_on(start_server):
    url, log = start_server("--refuse-n")
    bot = RemoteChatBot(base_url=url, model="m", timeout=10)
    assert len(bot.generate(HISTORY, 3, PRESETS["fast"])) == 3
    assert [r["n"] for r in _requests(log)] == [3, 1, 1, 1]  # refused once, then one at a time
    assert len(bot.generate(HISTORY, 2, PRESETS["fast"])) == 2
    assert [r["n"] for r in _requests(log)][4:] == [1, 1]


def test_model_is_discovered_and_missing_logprobs_score_zero(start_server):
    url, log = start_server("--no-logprobs")
    bot = RemoteChatBot(base_url=url, timeout=10)
    candidates = bot.generate(HISTORY, 2, PRESETS["greedy"])
    assert len(candidates) == 1 and candidates[0].score == 0.0  # greedy: one answer
    (request,) = _requests(log)
    assert request["model"] == "tiny-test-model" and request["temperature"] == 0.0


def test_sample_rank_draws_samples_and_keeps_the_best(start_server):
    url, log = start_server()
    candidates = RemoteChatBot(base_url=url, model="m", timeout=10).generate(
        HISTORY, 2, PRESETS["decode_sample_rank"])
    assert [c.score for c in candidates] == pytest.approx([-0.1, -0.2])
    (request,) = _requests(log)
    assert request["n"] == 20 and request["top_k"] == 40


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_server_down_is_a_clear_error():
    bot = RemoteChatBot(base_url=f"http://127.0.0.1:{_free_port()}/v1", model="m", timeout=5)
    with pytest.raises(BotError, match="cannot reach a chat server"):
        bot.generate(HISTORY, 2)


def test_slow_server_times_out(start_server):
    url, _ = start_server("--delay", "3")
    with pytest.raises(BotError, match="did not answer within 0.5 s"):
        RemoteChatBot(base_url=url, model="m", timeout=0.5).generate(HISTORY, 1)


@pytest.mark.parametrize("mode, message", [("500", "HTTP 500"), ("json", "did not answer with JSON")])
def test_bad_answers_are_clear_errors(start_server, mode, message):
    url, _ = start_server("--fail", mode)
    with pytest.raises(BotError, match=message):
        RemoteChatBot(base_url=url, model="m", timeout=10).generate(HISTORY, 1)


def test_beam_search_is_refused(start_server):
    url, _ = start_server()
    with pytest.raises(BotError, match="no beam search"):
        RemoteChatBot(base_url=url, model="m").generate(HISTORY, 2, PRESETS["decode_beam"])


def test_the_servers_address_can_come_from_the_environment(start_server, monkeypatch):
    """The chat app builds its remote bot without options: GUARD_REMOTE_URL points every app replica at the school's
    one bot engine (docs/deploy.md)."""
    url, log = start_server()
    monkeypatch.setenv("GUARD_REMOTE_URL", url)
    bot = RemoteChatBot(model="m", timeout=10)
    assert bot.base_url == url.rstrip("/")
    assert len(bot.generate(HISTORY, 2, PRESETS["fast"])) == 2 and _requests(log)
