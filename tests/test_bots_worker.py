"""The line in front of a bot's model (bots.worker): first come first served, each waiting caller told how many are
ahead, a full line or a long wait refused with a message, jobs that can share a batch sharing it (a seeded one never),
and on the tiny Llama: several conversations in one CTranslate2 batch each get their own candidates and stream."""

from __future__ import annotations

import threading
import time

import pytest
from tiny_models import HISTORY

from bots import ct2
from bots.base import DecodingConfig, ServerBusy
from bots.embedded import ChatTemplateBot
from bots.worker import GenerationWorker, Job
from guard.records import Turn

pytestmark = pytest.mark.usefixtures("module_cache_dir")


class SlowRunner:
    """A runner that takes ``seconds`` a batch and records each batch's jobs."""

    def __init__(self, seconds: float = 0.15):
        self.seconds, self.batches = seconds, []
        self.release = threading.Event()
        self.release.set()

    def __call__(self, jobs: list[Job]) -> None:
        self.release.wait(10)
        time.sleep(self.seconds)
        self.batches.append([job.payload for job in jobs])
        for job in jobs:
            job.result = f"reply to {job.payload}"


def _start(worker: GenerationWorker, payload, key=None, told=None, results=None, size=0) -> threading.Thread:
    def go():
        try:
            results[payload] = worker.run(Job(payload, key, size=size), told.append if told is not None else None)
        except Exception as exc:  # noqa: BLE001 - the test reads it
            results[payload] = exc

    thread = threading.Thread(target=go)
    thread.start()
    return thread


def _wait_for(worker: GenerationWorker, count: int) -> None:
    deadline = time.monotonic() + 5
    while worker.waiting() < count and time.monotonic() < deadline:
        time.sleep(0.005)


def test_a_lone_job_runs_at_once_and_hears_nothing():
    runner = SlowRunner(0.0)
    worker = GenerationWorker(runner)
    told: list[int] = []
    assert worker.run(Job("a"), told.append) == "reply to a"
    assert told == [] and runner.batches == [["a"]]


def test_waiting_callers_are_told_how_many_are_ahead_and_served_in_order():
    runner = SlowRunner()
    runner.release.clear()  # the first job holds the model until every other one is in line
    worker = GenerationWorker(runner)
    results: dict = {}
    told = {k: [] for k in "bcd"}
    threads = [_start(worker, "a", results=results)]
    _wait_for(worker, 1)
    for k in "bcd":
        threads.append(_start(worker, k, told=told[k], results=results))
        _wait_for(worker, len(threads))
    runner.release.set()
    for thread in threads:
        thread.join(10)
    assert runner.batches == [["a"], ["b"], ["c"], ["d"]]
    assert results == {k: f"reply to {k}" for k in "abcd"}
    assert told["d"][0] == 3 and told["d"][-1] == 0  # three ahead at first, then its turn
    assert told["d"] == sorted(told["d"], reverse=True)
    assert told["b"] == [1, 0]


def test_a_full_line_refuses_with_a_message_and_a_long_wait_gives_up():
    runner = SlowRunner(0.0)
    runner.release.clear()
    worker = GenerationWorker(runner, max_waiting=1, max_wait_s=0.3)
    results: dict = {}
    first = _start(worker, "a", results=results)
    _wait_for(worker, 1)
    second = _start(worker, "b", results=results)
    _wait_for(worker, 2)
    with pytest.raises(ServerBusy, match="send your message again"):
        worker.run(Job("c"))
    second.join(5)
    assert isinstance(results["b"], ServerBusy) and "waited" in str(results["b"])
    runner.release.set()
    first.join(5)
    assert results["a"] == "reply to a" and worker.waiting() == 0


def test_a_caller_that_stops_leaves_the_line():
    runner = SlowRunner()
    runner.release.clear()
    worker = GenerationWorker(runner)
    results: dict = {}
    first = _start(worker, "a", results=results)
    _wait_for(worker, 1)

    def stop(ahead: int) -> None:
        raise RuntimeError("the page stopped")

    with pytest.raises(RuntimeError, match="page stopped"):
        worker.run(Job("b"), stop)
    runner.release.set()
    first.join(5)
    assert runner.batches == [["a"]]


def test_jobs_waiting_together_share_a_batch_up_to_its_limit_and_keyless_ones_run_alone():
    runner = SlowRunner()
    runner.release.clear()
    worker = GenerationWorker(runner, batch_limit=2, max_spread=10)
    results: dict = {}
    threads = [_start(worker, "first", key="k", results=results)]
    _wait_for(worker, 1)
    for payload, key, size in (("b", "k", 100), ("long", "k", 300), ("seeded", None, 100), ("c", "k", 105),
                               ("d", "k", 95), ("other", "x", 100)):
        threads.append(_start(worker, payload, key=key, results=results, size=size))
        _wait_for(worker, len(threads))
    runner.release.set()
    for thread in threads:
        thread.join(10)
    assert runner.batches[0] == ["first"]
    # b and c share (same options, prompts 5 tokens apart); a prompt 200 tokens longer never shares
    assert runner.batches[1:] == [["b", "c"], ["long"], ["seeded"], ["d"], ["other"]]
    assert all(results[p] == f"reply to {p}" for p in ("b", "c", "d", "long", "seeded", "other"))


# ------------------------------------------------------------------------------------------------ on the tiny Llama
def _held_batches(engine, sizes: list[int] | None = None) -> threading.Lock:
    """Every batch of ``engine`` runs only while the returned lock is free (a test holds it to let generations
    queue up behind the one running); ``sizes`` gets each batch's number of generations."""
    hold = threading.Lock()
    real = engine._run_jobs

    def held(jobs):
        with hold:
            if sizes is not None:
                sizes.append(len(jobs))
            real(jobs)

    engine.worker.runner = held
    return hold


SAMPLED = DecodingConfig(method="top_k", top_k=50, temperature=1.5, max_new_tokens=8)
OTHER = [Turn(0, "user", "where do you live and what do you do all day long at your work?")]


def test_each_job_knows_how_many_needed_the_model_when_its_batch_started():
    """``Job.crowd``: the batch's jobs and those left in the line behind it (1: the model to itself)."""
    crowds: list[list[tuple[str, int]]] = []
    release = threading.Event()

    def runner(jobs: list[Job]) -> None:
        release.wait(10)
        crowds.append([(job.payload, job.crowd) for job in jobs])
        for job in jobs:
            job.result = job.payload

    worker = GenerationWorker(runner, batch_limit=2)
    results: dict = {}
    threads = [_start(worker, "first", key="k", results=results)]
    _wait_for(worker, 1)
    for payload, key in (("b", "k"), ("c", "k"), ("other", "x")):
        threads.append(_start(worker, payload, key=key, results=results))
        _wait_for(worker, len(threads))
    release.set()
    for thread in threads:
        thread.join(10)
    assert crowds == [[("first", 1)], [("b", 3), ("c", 3)], [("other", 1)]]


def test_a_crowded_batch_draws_fewer_candidates_and_says_so_a_lone_or_seeded_one_all(llama_dir, monkeypatch):
    """While other students' generations need the model, each sampled generation of a batch draws
    ``BUSY_CANDIDATES`` (its stream shows that many); alone, or seeded, it draws what it asked for."""
    monkeypatch.setattr(ct2, "STREAM_INTERVAL_S", 0.0)
    monkeypatch.setattr(ct2, "BUSY_CANDIDATES", 2)
    bot = ChatTemplateBot.from_pretrained(llama_dir)
    engine = bot.engine
    engine.worker.batch_limit, engine.worker.gather_s = 4, 0.0  # batches of those already waiting
    assert len(bot.generate(HISTORY, 4, SAMPLED)) == 4 and bot.crowded is None  # alone: all four
    hold = _held_batches(engine)
    results, crowded, streamed = {}, {}, {"a": [], "b": []}

    def generate(key, history, decoding):
        results[key] = bot.generate(history, 4, decoding, on_text=streamed[key].append if key in streamed else None)
        crowded[key] = bot.crowded

    hold.acquire()
    blocker = threading.Thread(target=generate, args=("x", HISTORY, SAMPLED))
    blocker.start()
    _wait_for(engine.worker, 1)
    threads = [threading.Thread(target=generate, args=args)
               for args in (("a", HISTORY, SAMPLED), ("b", OTHER, SAMPLED), ("seeded", OTHER, SAMPLED.replace(seed=3)))]
    for thread in threads:
        thread.start()
        _wait_for(engine.worker, 2 + threads.index(thread))
    hold.release()
    for thread in [blocker, *threads]:
        thread.join(60)
    # the first started alone (all four); a and b then shared a batch with the seeded one still waiting behind them
    assert crowded["x"] is None and len(results["x"]) >= 3
    assert crowded["a"] == crowded["b"] == (2, 3)
    assert all(1 <= len(results[k]) <= 2 for k in "ab")
    assert all(streamed[k] and all(len(texts) == 2 for texts in streamed[k]) for k in "ab")
    assert crowded["seeded"] is None and len(results["seeded"]) >= 3  # a seeded replay draws what it drew alone
    monkeypatch.setattr(ct2, "BUSY_CANDIDATES", 0)  # 0: never fewer
    assert len(bot.generate(HISTORY, 4, SAMPLED)) == 4 and bot.crowded is None


def test_conversations_batched_together_each_get_their_own_candidates_and_stream(llama_dir, monkeypatch):
    """Two conversations of different lengths in one CTranslate2 batch: each caller gets its own candidates, its
    stream hands on only its own hypotheses' texts, and the batch ran once (every candidate asked for: the crowd's
    fewer are the test above's)."""
    monkeypatch.setattr(ct2, "STREAM_INTERVAL_S", 0.0)
    monkeypatch.setattr(ct2, "BUSY_CANDIDATES", 0)
    bot = ChatTemplateBot.from_pretrained(llama_dir)
    engine = bot.engine
    engine.worker.batch_limit = 4
    sizes: list[int] = []
    hold = _held_batches(engine, sizes)  # the first batch waits until both generations are in line
    streamed = {"a": [], "b": []}
    results = {}
    hold.acquire()
    blocker = threading.Thread(target=lambda: results.setdefault("x", bot.generate(HISTORY, 2, SAMPLED)))
    blocker.start()
    _wait_for(engine.worker, 1)
    threads = [threading.Thread(target=lambda k=k, h=h, n=n: results.setdefault(k, bot.generate(
        h, n, SAMPLED, on_text=streamed[k].append))) for k, h, n in (("a", HISTORY, 3), ("b", OTHER, 3))]
    for thread in threads:
        thread.start()
    _wait_for(engine.worker, 3)
    hold.release()
    for thread in [blocker, *threads]:
        thread.join(60)
    assert sizes == [1, 2]  # the first alone, then the two waiting ones together
    assert 1 <= len(results["a"]) <= 3 and 1 <= len(results["b"]) <= 3
    for k in "ab":  # each stream has its own three hypotheses, and its texts are those of its own candidates
        assert streamed[k] and all(len(texts) == 3 for texts in streamed[k])
        # compared with their whitespace made plain: the candidates' text is (a random tiny model writes form feeds).
        # The stream stops with the batch and hands texts on at most every interval, so what it streamed may stop
        # anywhere short of the last words, even at the first (the page then shows the candidates whole): every text
        # a stream handed on is one of its own conversation's candidates so far, never the other's
        said = [" ".join(c.text.removesuffix("…").split()) for c in results[k]]
        texts = {" ".join(t.replace("\ufffd", "").split()) for texts in streamed[k] for t in texts}
        assert any(texts) and all(any(c.startswith(t) or t.startswith(c) for c in said) for t in texts), \
            (texts, results[k])


def test_a_seeded_generation_reproduces_while_others_share_batches(llama_dir):
    bot = ChatTemplateBot.from_pretrained(llama_dir)
    bot.engine.worker.batch_limit = 4
    alone = [c.text for c in bot.generate(HISTORY, 4, SAMPLED.replace(seed=5))]
    others = [threading.Thread(target=bot.generate, args=(OTHER, 2, SAMPLED)) for _ in range(3)]
    for thread in others:
        thread.start()
    again = [c.text for c in bot.generate(HISTORY, 4, SAMPLED.replace(seed=5))]
    for thread in others:
        thread.join(60)
    assert again == alone


def test_the_head_waits_a_moment_for_company_only_while_a_class_is_at_work():
    """A lone student's generation starts at once; one that arrives while others keep arriving waits up to the
    gather time, so a burst of messages a few milliseconds apart shares one batch."""
    runner = SlowRunner(0.0)
    worker = GenerationWorker(runner, batch_limit=4, gather_s=0.4)
    started = time.perf_counter()
    worker.run(Job("alone", "k"))
    assert time.perf_counter() - started < 0.2
    results: dict = {}
    first = _start(worker, "b", key="k", results=results)  # another job arrived a moment ago ("alone")
    time.sleep(0.1)
    second = _start(worker, "c", key="k", results=results)
    first.join(5)
    second.join(5)
    assert runner.batches == [["alone"], ["b", "c"]]


def test_a_guarded_turn_that_waits_for_the_bot_says_how_many_are_ahead(llama_dir):
    """The chat page's live box hears "waiting" with the replies ahead of this one while another conversation's
    generation holds the model, then 0 once its turn comes, then the candidates; the turn's timings say how long it
    waited (queued_s, part of generate_s)."""
    from conversation.guarding import guarded_reply
    from conversation.records import ChatSettings, Conversation

    bot = ChatTemplateBot.from_pretrained(llama_dir)
    engine = bot.engine
    engine.worker.batch_limit = 1  # one at a time: the second turn waits the first's whole generation
    hold = _held_batches(engine)
    hold.acquire()
    other = threading.Thread(target=bot.generate, args=(OTHER, 2, SAMPLED))
    other.start()
    _wait_for(engine.worker, 1)
    conversation = Conversation()
    conversation.add("user", "hi, do you have any pets?")
    steps = []
    settings = ChatSettings(guard_mode="off", num_candidates=2, decoding=SAMPLED)
    turn_thread = threading.Thread(target=lambda: steps.append(guarded_reply(
        conversation, bot, None, settings, on_step=steps.append, classroom=None)))
    turn_thread.start()
    deadline = time.monotonic() + 10
    while not any(getattr(s, "kind", "") == "waiting" for s in steps) and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.3)
    hold.release()
    other.join(30)
    turn_thread.join(30)
    waits = [s.ahead for s in steps[:-1] if s.kind == "waiting"]
    assert waits == [1, 0]
    kinds = [s.kind for s in steps[:-1]]
    assert kinds.index("waiting") < kinds.index("candidates")
    timings = steps[-1].report.timings
    assert timings["queued_s"] >= 0.3 and timings["generate_s"] >= timings["queued_s"]
