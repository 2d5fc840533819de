"""The CTranslate2 engine at run time, on the tiny Llama built by the tests: a seed repeats its draws within one
process, the thread count follows how busy other processes keep the cores (``GUARD_BOT_THREADS`` overrides), and
candidates are handed on while they are written."""

from __future__ import annotations

import pytest
from tiny_models import HISTORY

from bots import ct2
from bots.base import DecodingConfig
from bots.embedded import ChatTemplateBot
from embedded import threads

pytestmark = pytest.mark.usefixtures("module_cache_dir")

SAMPLED = DecodingConfig(method="top_k", top_k=50, temperature=1.5, max_new_tokens=8)


def _texts(bot, seed: int | None) -> list[str]:
    return [c.text for c in bot.generate(HISTORY, 4, SAMPLED.replace(seed=seed))]


def test_the_same_seed_gives_the_same_candidates_twice_in_one_process(llama_dir):
    """CTranslate2 seeds a worker thread's random generator once, when it first samples; a seed asked for later used
    to change nothing, so a seeded goading script gave other candidates on its second run in the same process."""
    bot = ChatTemplateBot.from_pretrained(llama_dir)
    first = _texts(bot, seed=5)
    _texts(bot, seed=None)  # draws in between, unseeded
    assert _texts(bot, seed=5) == first
    assert _texts(bot, seed=6) != first  # a temperature of 1.5 over the tiny vocabulary: four samples all alike is
    # as good as impossible
    fresh = ChatTemplateBot.from_pretrained(llama_dir)  # a new engine's first draw: what a new process gets
    assert _texts(fresh, seed=5) == first


def test_unseeded_draws_after_a_reload_do_not_replay_the_last_seed(llama_dir):
    bot = ChatTemplateBot.from_pretrained(llama_dir)
    seeded = _texts(bot, seed=9)
    bot.engine.reload()  # a new worker thread, as a change of thread count makes
    assert _texts(bot, seed=None) != seeded


def test_a_generation_that_ran_hands_on_nothing_of_the_caller(llama_dir):
    """The callback CTranslate2 keeps in its worker thread holds none of the caller's functions after the call: were it
    the last holder of the bot, the model would be freed in that thread, which aborted the process."""
    bot = ChatTemplateBot.from_pretrained(llama_dir)
    streamed: list[list[str]] = []
    bot.generate(HISTORY, 2, SAMPLED.replace(seed=1), on_text=streamed.append)
    request = ct2._Hypotheses(bot.tokenizer, (), set(), 2, streamed.append, bot.clean_reply)
    request.let_go()
    assert request.on_text is None and request.clean is str.strip


def test_candidates_are_handed_on_while_they_are_written(llama_dir, monkeypatch):
    monkeypatch.setattr(ct2, "STREAM_INTERVAL_S", 0.0)  # every step (the app's interval keeps the page's pace)
    bot = ChatTemplateBot.from_pretrained(llama_dir)
    assert bot.streams_text
    streamed: list[list[str]] = []
    greedy = DecodingConfig(method="greedy", max_new_tokens=8)
    (final,) = bot.generate(HISTORY, 1, greedy, on_text=streamed.append)
    assert len(streamed) >= 2 and all(len(texts) == 1 for texts in streamed)
    growing = [texts[0] for texts in streamed]
    assert all(later.startswith(earlier) for earlier, later in zip(growing, growing[1:]))
    # the last text handed on is the reply before it is trimmed to whole sentences and whole characters (the tiny
    # model writes bytes that decode to U+FFFD; bots.base.complete_sentences)
    assert growing[-1].replace("\ufffd", "").startswith(final.text.removesuffix("…").strip())
    sampled = bot.generate(HISTORY, 3, SAMPLED.replace(seed=2), on_text=streamed.append)
    assert sampled and all(len(texts) == 3 for texts in streamed[len(growing):])


def test_the_transformers_engine_takes_no_text_stream(llama_dir):
    bot = ChatTemplateBot.from_pretrained(llama_dir, engine="transformers")
    assert not bot.streams_text
    streamed: list = []
    assert bot.generate(HISTORY, 1, DecodingConfig(method="greedy", max_new_tokens=4), on_text=streamed.append)
    assert streamed == []


def test_threads_are_the_cores_others_leave_free(monkeypatch):
    """Other processes' CPU time since the last reading takes cores away; this process's own never does."""
    ticks_per_s = threads.os.sysconf("SC_CLK_TCK")
    clock = {"now": 100.0, "busy": 0, "mine": 0}
    monkeypatch.setattr(threads, "_cpu_ticks", lambda: (clock["busy"], clock["mine"]))
    monkeypatch.setattr(threads.time, "monotonic", lambda: clock["now"])
    monkeypatch.delenv(threads.THREADS_ENV, raising=False)
    fit = threads.ThreadFit(cores=2)

    def window(seconds: float, others_cores: float, own_cores: float) -> int:
        clock["now"] += seconds
        clock["busy"] += round((others_cores + own_cores) * seconds * ticks_per_s)
        clock["mine"] += round(own_cores * seconds * ticks_per_s)
        return fit.threads()

    assert window(2.0, others_cores=0.0, own_cores=2.0) == 2  # the bot itself on both cores
    assert window(2.0, others_cores=1.0, own_cores=1.0) == 2  # one CPU-bound process beside it: a moment's, maybe
    assert window(2.0, others_cores=1.0, own_cores=1.0) == 1  # still there: one thread
    assert window(2.0, others_cores=0.3, own_cores=1.7) == 1  # a browser drawing the page: not a core, but
    assert window(2.0, others_cores=0.3, own_cores=1.7) == 2  # it takes two windows to change back
    assert window(0.1, others_cores=2.0, own_cores=0.0) == 2  # too short a window: the last answer stands
    window(2.0, others_cores=2.0, own_cores=0.0)
    assert window(2.0, others_cores=2.0, own_cores=0.0) == 1  # never fewer than one
    monkeypatch.setenv(threads.THREADS_ENV, "3")
    assert fit.threads() == 3


def test_the_engine_reloads_at_the_fitted_thread_count(llama_dir, monkeypatch):
    bot = ChatTemplateBot.from_pretrained(llama_dir)
    monkeypatch.setenv(threads.THREADS_ENV, str(bot.engine.intra_threads + 1))
    before = bot.engine.generator
    bot.generate(HISTORY, 1, DecodingConfig(method="greedy", max_new_tokens=2))
    assert bot.engine.intra_threads == int(threads.os.environ[threads.THREADS_ENV])
    assert bot.engine.generator is not before  # CTranslate2 sets the count per loaded model
    fixed = ChatTemplateBot.from_pretrained(llama_dir)
    fixed.engine.set_threads(2)  # a fixed count is kept whatever the load
    kept = fixed.engine.generator
    monkeypatch.setenv(threads.THREADS_ENV, "1")
    fixed.generate(HISTORY, 1, DecodingConfig(method="greedy", max_new_tokens=2))
    assert fixed.engine.intra_threads == 2 and fixed.engine.generator is kept
