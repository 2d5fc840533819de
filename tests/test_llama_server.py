"""The remote bot in front of llama.cpp's own server (parallel slots) serving the embedded bot's GGUF: a real
``llama-server`` process on 127.0.0.1, compiled from the llama-cpp-python sdist (``make llama``). Skipped, saying how
to build it, where it is not installed."""

from __future__ import annotations

import threading

import pytest

import embedded
from bots.base import PRESETS
from bots.remote import RemoteChatBot
from guard.records import Turn
from harness.llama import BUILD_HINT, llama_server, llama_server_path

pytestmark = pytest.mark.skipif(llama_server_path() is None,
                                reason=f"llama.cpp's server is not installed; build it with: {BUILD_HINT}")

HISTORY = [Turn(0, "user", "Hi! Do you have any pets?")]
OTHER = [Turn(0, "user", "What do you do for a living?")]


@pytest.fixture(scope="module")
def llama_url(tmp_path_factory):
    log = tmp_path_factory.mktemp("llama") / "llama-server.log"
    with llama_server(embedded.smollm2_gguf_path(), parallel=4, context=4096, log_path=log) as url:
        yield url


def test_the_remote_bot_gets_its_candidates_from_llama_cpps_slots(llama_url):
    bot = RemoteChatBot(base_url=llama_url, timeout=120)
    candidates = bot.generate(HISTORY, 4, PRESETS["fast"], persona=["I have a dog named Max."])
    assert len(candidates) == 4
    assert all(c.text.strip() for c in candidates)
    assert all(c.score < 0 for c in candidates)  # llama.cpp sends each token's log-probability
    assert len({c.text for c in candidates}) >= 2  # four samples at temperature 0.8, not one answer four times


def test_two_conversations_at_once_each_get_their_own_answers(llama_url):
    """Two students' turns at the same moment, each its own request set to the same server: each comes back whole
    (four candidates), answered from its own conversation."""
    bot = RemoteChatBot(base_url=llama_url, timeout=120)
    results: dict = {}
    threads = [threading.Thread(target=lambda k=k, h=h: results.setdefault(k, bot.generate(
        h, 4, PRESETS["fast"].replace(seed=7), persona=["I work as a nurse."]))) for k, h in (("a", HISTORY),
                                                                                                ("b", OTHER))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    assert len(results["a"]) == 4 and len(results["b"]) == 4
    alone = bot.generate(HISTORY, 4, PRESETS["fast"].replace(seed=7), persona=["I work as a nurse."])
    assert {c.text for c in alone} & {c.text for c in results["a"]}  # a seeded request draws what it drew before
