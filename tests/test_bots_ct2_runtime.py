"""The CTranslate2 engine at run time, on the tiny Llama built by the tests: a seed repeats its draws within one
process, the thread count follows how busy other processes keep the cores (``GUARD_BOT_THREADS`` overrides), and
candidates are handed on while they are written."""

from __future__ import annotations

import threading
import time

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
    """Neither the callback CTranslate2 keeps in its worker thread nor the thread that streamed the texts holds any of
    the caller's functions after the call: were one the last holder of the bot, the model would be freed in that
    thread, which aborted the process."""
    bot = ChatTemplateBot.from_pretrained(llama_dir)
    streamed: list[list[str]] = []
    bot.generate(HISTORY, 2, SAMPLED.replace(seed=1), on_text=streamed.append)
    request = ct2._Hypotheses(bot.tokenizer, (), set(), 2, write=True, clean=bot.clean_reply)
    request.let_go()
    assert request.clean is str.strip
    with ct2._Streamer(request, streamed.append, 0.0) as streamer:
        pass
    assert streamer.on_text is None and not streamer.thread.is_alive()


@pytest.fixture
def slow_steps(monkeypatch):
    """Every decoding step of the tiny model takes 20 ms, as a real model's do (the tiny one writes its 8 tokens in a
    millisecond, before a thread that hands the texts on gets a turn); counts the steps."""
    steps = {"n": 0, "threads": set()}
    real = ct2._Hypotheses.__call__

    def slow(self, step):
        steps["n"] += 1
        steps["threads"].add(threading.get_ident())
        time.sleep(0.02)  # releases the interpreter lock, as CTranslate2's own work between two steps does
        return real(self, step)

    monkeypatch.setattr(ct2._Hypotheses, "__call__", slow)
    return steps


def test_candidates_are_handed_on_while_they_are_written(llama_dir, monkeypatch, slow_steps):
    monkeypatch.setattr(ct2, "STREAM_INTERVAL_S", 0.0)  # whenever a text changed (the app's interval keeps the pace)
    bot = ChatTemplateBot.from_pretrained(llama_dir)
    assert bot.streams_text
    streamed: list[list[str]] = []
    greedy = DecodingConfig(method="greedy", max_new_tokens=8)
    (final,) = bot.generate(HISTORY, 1, greedy, on_text=streamed.append)
    assert len(streamed) >= 2 and all(len(texts) == 1 for texts in streamed)
    growing = [texts[0] for texts in streamed]
    assert all(later.startswith(earlier) for earlier, later in zip(growing, growing[1:]))
    assert len(set(growing)) == len(growing)  # handed on when a text changed, not at every step
    # the last text handed on is the reply before it is trimmed to whole sentences and whole characters (the tiny
    # model writes random bytes, which decode to U+FFFD; bots.base.complete_sentences)
    assert growing[-1].replace("\ufffd", "").startswith(final.text.removesuffix("…").strip())
    sampled = bot.generate(HISTORY, 3, SAMPLED.replace(seed=2), on_text=streamed.append)
    assert sampled and all(len(texts) == 3 for texts in streamed[len(growing):])


def test_the_texts_are_handed_on_off_the_generation_thread(llama_dir, monkeypatch, slow_steps):
    """The receiver runs in neither the caller's thread nor CTranslate2's decoding thread: a receiver that takes its
    time (a page drawing) holds up neither the decoding steps nor the caller."""
    monkeypatch.setattr(ct2, "STREAM_INTERVAL_S", 0.0)
    bot = ChatTemplateBot.from_pretrained(llama_dir)
    receivers: set[int] = set()

    def receiver(texts):
        receivers.add(threading.get_ident())
        time.sleep(0.05)

    bot.generate(HISTORY, 2, SAMPLED.replace(seed=4, max_new_tokens=12), on_text=receiver)
    assert receivers and slow_steps["threads"]
    assert not receivers & (slow_steps["threads"] | {threading.get_ident()})


def test_the_texts_are_handed_on_at_most_every_interval(llama_dir, monkeypatch, slow_steps):
    """A human rate, not every step: the first words go at once, then at most one hand-on per interval (20 steps of
    at least 20 ms, a 0.25 s interval: 2 or 3 hand-ons on an idle machine, not 20)."""
    monkeypatch.setattr(ct2, "STREAM_INTERVAL_S", 0.25)
    bot = ChatTemplateBot.from_pretrained(llama_dir)
    streamed: list[list[str]] = []
    forced = DecodingConfig(method="greedy", min_new_tokens=20, max_new_tokens=20)
    started = time.perf_counter()
    bot.generate(HISTORY, 1, forced, on_text=streamed.append)
    seconds = time.perf_counter() - started
    assert slow_steps["n"] == 20
    assert 1 <= len(streamed) <= 1 + seconds / 0.25


class Stopped(Exception):
    pass


def test_what_the_receiver_raises_stops_the_generation_and_is_raised(llama_dir, monkeypatch, slow_steps):
    """The chat page's receiver raises once the page's run stopped (ui.live_turn): the generation stops at its next
    step instead of writing on, and generate raises what the receiver raised, as when the callback itself raised."""
    monkeypatch.setattr(ct2, "STREAM_INTERVAL_S", 0.0)
    bot = ChatTemplateBot.from_pretrained(llama_dir)

    def receiver(texts):
        raise Stopped("the page's run stopped")

    long = DecodingConfig(method="greedy", min_new_tokens=64, max_new_tokens=64)
    with pytest.raises(Stopped):
        bot.generate(HISTORY, 1, long, on_text=receiver)
    assert slow_steps["n"] < 64


def test_written_text_decodes_only_the_new_token_and_equals_the_whole_decode(tokenizer):
    """Each token decoded alone and appended gives the text decoding them all would (byte-level BPE: an emoji is
    several tokens, and no half of it is ever shown)."""
    text = "hi, do you have any pets? i have two dogs 🐶 and a cat named Zoë."
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    written = ct2._Written(tokenizer)
    seen = []
    for token in ids:
        written.add(token)
        seen.append(written.text)
    assert written.text == tokenizer.decode(ids, skip_special_tokens=True) == text
    assert all("\ufffd" not in t for t in seen)
    assert len(ids) > len(text.split())  # the emoji and ë take several tokens each


def test_ctranslate2_scores_are_the_mean_of_its_step_log_probs(llama_dir):
    """Without a step callback the candidates' scores are CTranslate2's own: each hypothesis's mean log-probability
    (end token included). That is the mean of what the step callback reports per token, which the scores were
    before (and still are with stop strings); were it ever not, the scores would change meaning between the two."""
    bot = ChatTemplateBot.from_pretrained(llama_dir)
    engine = bot.engine
    steps: dict[int, list] = {}

    def record(step):
        steps.setdefault(step.hypothesis_id, []).append((step.token_id, step.log_prob))
        return False

    import ctranslate2

    ctranslate2.set_random_seed(3)
    prompt = engine._tokens(bot.prompt_ids(HISTORY, ()))
    (result,) = engine.generator.generate_batch(
        [prompt], max_length=12, sampling_topk=20, sampling_temperature=1.5, num_hypotheses=4,
        include_prompt_in_result=False, return_scores=True, return_end_token=True, end_token=bot.end_ids(),
        callback=record)
    by_tokens = {tuple(t for t, _ in rows): [lp for _, lp in rows] for rows in steps.values()}
    for ids, score in zip(result.sequences_ids, result.scores):
        log_probs = by_tokens[tuple(ids)]
        assert score == pytest.approx(sum(log_probs) / len(log_probs), abs=1e-4)
    greedy = DecodingConfig(method="greedy", max_new_tokens=8)
    (plain,) = bot.generate(HISTORY, 1, greedy)
    (streamed,) = bot.generate(HISTORY, 1, greedy, on_text=lambda texts: None)
    assert (plain.text, plain.score) == (streamed.text, streamed.score)


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
