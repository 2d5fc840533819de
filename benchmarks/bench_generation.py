"""The embedded bot's generation on this CPU, taken apart (issue 44): prefill against decode, threads, the batch of
candidates, CTranslate2's compute types, the prompt's length and its cached head, the n-gram ban, and what streaming
the candidates costs, beside the physical bound (every int8 weight read once per decoding step, over the memory
bandwidth measured here).

    HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.bench_generation --json benchmarks/results/generation.json
    HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.bench_generation --only decode stream --repeats 3

Sections (``--only``):
  bandwidth  memory read bandwidth (numpy, 1 and 2 threads) and the model's int8 bytes: the bound on steps per second
  prefill    the prompt alone (batch 1, one token generated) at 64 ... 1,024 tokens: tokens/s
  decode     exactly 32 tokens after a 256-token prompt, per compute type x threads x batch (1, 2, 4, 8): the step's
             milliseconds (the prefill subtracted) and tokens/s against the bound
  context    the decoding step at 128, 384 and 1,024 tokens of context (the prompt budget's cost in every step)
  static     a chat's prompt with its cached head / last 256-token checkpoint (``static_prompt``) against none
  ngrams     the cross-turn n-gram ban (``suppress_sequences``) as a 6- and a 30-turn chat makes it, against none
  calls      the whole ``bot.generate`` of the page at 6 and 30 turns, and its Python before the decoding
  stream     the engine without a step callback, with one, streaming every 0.25 s, and the old way (every
             candidate's whole text decoded every 0.1 s inside the callback), each alone and beside a Python thread
             that keeps the interpreter lock busy as the page's script thread does while the bot writes (at
             Python's 5 ms switch interval and at 0.5 ms: how long the decoding thread waits for the lock at each
             call of its step callback)

Every figure is the median of ``--repeats`` runs after one untimed run; sampling is seeded and the length forced
(``min_length`` = ``max_length``) so every run decodes the same number of steps. The record carries the CPU's model,
flags and load average (benchmarks.machine).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from pathlib import Path

from embedded import configure_openmp
from embedded.once import LoadedOnce

configure_openmp()  # as the app does

from benchmarks.bench_engines import chat  # noqa: E402
from benchmarks.machine import loadavg, machine_info, write_json  # noqa: E402

SECTIONS = ("bandwidth", "prefill", "decode", "context", "static", "ngrams", "calls", "stream")
NEW_TOKENS = 32
SAMPLING = dict(sampling_topk=40, sampling_temperature=0.8)  # the "fast" preset


def median_time(call, repeats: int) -> dict:
    call()
    walls = []
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        walls.append(time.perf_counter() - started)
    return {"p50_s": round(statistics.median(walls), 4), "min_s": round(min(walls), 4),
            "max_s": round(max(walls), 4)}


def bandwidth(model_dir: Path) -> dict:
    """Read bandwidth: a 512 MB array summed by 1 and by 2 threads (numpy releases the lock), GB/s."""
    import numpy as np

    data = np.ones(512 * 2**20 // 8, dtype=np.int64)  # sums of int64 are memory-bound on any x86
    halves = np.array_split(data, 2)

    def one():
        data.sum()

    def two():
        threads = [threading.Thread(target=h.sum) for h in halves]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    size = data.nbytes
    single, double = median_time(one, 5)["min_s"], median_time(two, 5)["min_s"]
    weights = (model_dir / "model.bin").stat().st_size
    best = max(size / single, size / double)
    return {"read_gb_s_1_thread": round(size / single / 1e9, 2), "read_gb_s_2_threads": round(size / double / 1e9, 2),
            "model_bin_mb": round(weights / 1e6, 1),
            "bound_step_ms": round(weights / best * 1000, 2),
            "bound_steps_per_s": round(best / weights, 1),
            "note": "each decoding step reads every weight once (the tied output projection included); at batch b "
                    "the bound on tokens/s is b x steps/s"}


class Model:
    """The embedded bot's converted model, loaded per (compute type, threads)."""

    def __init__(self, bot):
        self.bot = bot
        self.dir = bot.engine.model_dir
        self.tokens = bot.engine._tokens
        self.ends = bot.end_ids()
        self._loaded = LoadedOnce(limit=1)  # one model in memory at a time: the last one goes before the next loads

    def generator(self, compute_type: str = "int8", threads: int = 2):
        import ctranslate2

        return self._loaded.get(("CTranslate2 generator", compute_type, threads), lambda: ctranslate2.Generator(
            str(self.dir), device="cpu", compute_type=compute_type, intra_threads=threads))

    def prompt(self, length: int) -> list[str]:
        """A chat's prompt cut to ``length`` tokens (a long chat, unfitted)."""
        ids = self.bot.encode_prompt(chat(40), ())
        if len(ids) < length:
            raise ValueError(f"the chat has only {len(ids)} tokens")
        return self.tokens(ids[:length])


def run(generator, prompt: list[str], hypotheses: int, new_tokens: int, seed: int = 1, **options):
    import ctranslate2

    ctranslate2.set_random_seed(seed)
    return generator.generate_batch([prompt], num_hypotheses=hypotheses, max_length=new_tokens,
                                    min_length=new_tokens, include_prompt_in_result=False, return_scores=True,
                                    **SAMPLING, **options)


def prefill(model: Model, repeats: int) -> list[dict]:
    generator = model.generator()
    rows = []
    for length in (64, 128, 256, 384, 512, 1024):
        prompt = model.prompt(length)
        timing = median_time(lambda: run(generator, prompt, 1, 1), repeats)
        rows.append({"prompt_tokens": length, **timing, "tokens_per_s": round(length / timing["p50_s"])})
        print(json.dumps(rows[-1]), flush=True)
    return rows


def decode(model: Model, repeats: int, bound_steps_per_s: float | None) -> list[dict]:
    import ctranslate2

    supported = ctranslate2.get_supported_compute_types("cpu")
    prompt = model.prompt(256)
    rows = []
    for compute_type in ("int8", "int8_float32", "int16", "float32"):
        if compute_type not in supported:
            rows.append({"compute_type": compute_type, "supported": False,
                         "note": f"not supported by this CPU / CTranslate2 build (supported: {sorted(supported)})"})
            print(json.dumps(rows[-1]), flush=True)
            continue
        for threads in (1, 2):
            generator = model.generator(compute_type, threads)
            for batch in (1, 2, 4, 8):
                whole = median_time(lambda: run(generator, prompt, batch, NEW_TOKENS), repeats)
                first = median_time(lambda: run(generator, prompt, batch, 1), repeats)
                step = (whole["p50_s"] - first["p50_s"]) / (NEW_TOKENS - 1)
                row = {"compute_type": compute_type, "threads": threads, "batch": batch,
                       "whole_s": whole["p50_s"], "prefill_and_first_s": first["p50_s"],
                       "step_ms": round(step * 1000, 2), "decode_tokens_per_s": round(batch / step, 1)}
                if bound_steps_per_s:
                    row["bound_tokens_per_s"] = round(batch * bound_steps_per_s)
                    row["share_of_bound"] = round((batch / step) / (batch * bound_steps_per_s), 3)
                rows.append(row)
                print(json.dumps(row), flush=True)
    return rows


def context(model: Model, repeats: int) -> list[dict]:
    generator = model.generator()
    rows = []
    for length in (128, 384, 1024):
        prompt = model.prompt(length)
        whole = median_time(lambda: run(generator, prompt, 4, NEW_TOKENS), repeats)
        first = median_time(lambda: run(generator, prompt, 4, 1), repeats)
        rows.append({"context_tokens": length, "whole_4x32_s": whole["p50_s"], "prefill_s": first["p50_s"],
                     "step_ms": round((whole["p50_s"] - first["p50_s"]) / (NEW_TOKENS - 1) * 1000, 2)})
        print(json.dumps(rows[-1]), flush=True)
    return rows


def static(model: Model, repeats: int) -> list[dict]:
    """A chat's fitted prompt (the 384-token budget) at 3, 6 and 30 exchanges: nothing cached, the head (system
    prompt and persona) cached, the engine's choice (the last 256-token checkpoint or the head)."""
    bot = model.bot
    generator = model.generator()
    head = len(bot.head_ids(()))
    rows = []
    for exchanges in (3, 6, 30):
        ids = bot.prompt_ids(chat(exchanges), ())
        chosen = bot.engine.static_prefix(ids, head)
        row = {"exchanges": exchanges, "prompt_tokens": len(ids), "head_tokens": head, "engine_static": len(chosen)}
        for label, static_ids in (("none", []), ("head", ids[:head]), ("engine", chosen)):
            options = {"static_prompt": model.tokens(static_ids)} if static_ids else {}
            rest = model.tokens(ids[len(static_ids):])
            row[f"{label}_4x32_s"] = median_time(lambda: run(generator, rest, 4, NEW_TOKENS, **options),
                                                 repeats)["p50_s"]
            row[f"{label}_prefill_s"] = median_time(lambda: run(generator, rest, 1, 1, **options), repeats)["p50_s"]
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def ngrams(model: Model, repeats: int) -> list[dict]:
    bot = model.bot
    generator = model.generator()
    rows = []
    for exchanges in (6, 30):
        history = chat(exchanges)
        ids = bot.prompt_ids(history, ())
        static_ids = bot.engine.static_prefix(ids, len(bot.head_ids(())))
        options = {"static_prompt": model.tokens(static_ids)} if static_ids else {}
        rest = model.tokens(ids[len(static_ids):])
        started = time.perf_counter()
        banned = bot.history_ngrams(history, 4)
        python_s = time.perf_counter() - started
        suppress = [model.tokens(b) for b in banned]
        row = {"exchanges": exchanges, "banned_sequences": len(banned), "history_ngrams_python_s": round(python_s, 4),
               "without_s": median_time(lambda: run(generator, rest, 4, NEW_TOKENS, **options), repeats)["p50_s"],
               "with_s": median_time(lambda: run(generator, rest, 4, NEW_TOKENS, suppress_sequences=suppress,
                                                 **options), repeats)["p50_s"]}
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def calls(model: Model, repeats: int) -> list[dict]:
    """``bot.generate`` as the page calls it (the fast preset, 4 candidates, seeded), and the Python before it decodes
    (the prompt fitted, the n-gram ban built), at 6 and 30 exchanges."""
    from bots.base import PRESETS

    bot = model.bot
    rows = []
    for exchanges in (6, 30):
        history = chat(exchanges)
        fast = PRESETS["fast"].replace(seed=7)
        whole = median_time(lambda: bot.generate(history, 4, fast), repeats)

        def before_decoding():
            bot._last_fit = None  # a new turn: the fit is not cached yet
            bot.prompt_ids(history, ())
            bot.history_ngrams(history, fast.history_ngram_size)

        prep = median_time(before_decoding, repeats)
        rows.append({"exchanges": exchanges, "generate_s": whole["p50_s"], "min_s": whole["min_s"],
                     "python_before_decoding_s": prep["p50_s"]})
        print(json.dumps(rows[-1]), flush=True)
    return rows


def _busy_python(stop: threading.Event) -> None:
    """Pure Python work, as the page's script thread draws the transcript (it holds the interpreter lock)."""
    while not stop.is_set():
        sum(i * i for i in range(2000))


def stream(model: Model, repeats: int) -> list[dict]:
    """4 x 32 tokens after the page's prompt at 6 exchanges, by the engine: no step callback; the callback recording
    tokens; streaming (the texts handed on every 0.25 s from a thread of their own, each new token decoded alone); the
    old way (every hypothesis's whole text decoded inside the callback every 0.1 s and handed on from there). Each
    alone, then beside a busy Python thread."""
    from bots import ct2
    from bots.base import PRESETS

    bot = model.bot
    engine = bot.engine
    history = chat(6)
    prompt = bot.prompt_ids(history, ())
    head = len(bot.head_ids(()))
    forced = PRESETS["fast"].replace(min_new_tokens=NEW_TOKENS, max_new_tokens=NEW_TOKENS, history_ngram_size=0)
    received = []

    def plain():
        engine.generate(prompt, forced.replace(seed=3), 4, end_ids=model.ends, static_length=head)

    def recording():  # the callback is there (stop strings need it), nothing is streamed
        engine.generate(prompt, forced.replace(seed=3), 4, end_ids=model.ends, static_length=head,
                        stop_strings=["\x00never"])

    def streaming():
        engine.generate(prompt, forced.replace(seed=3), 4, end_ids=model.ends, static_length=head,
                        on_text=received.append)

    def old_way():
        import ctranslate2

        tokens: dict[int, list[int]] = {}
        last = [0.0]

        def callback(step):
            tokens.setdefault(step.hypothesis_id, []).append(step.token_id)
            if time.perf_counter() - last[0] >= 0.1:
                last[0] = time.perf_counter()
                received.append([bot.tokenizer.decode(t, skip_special_tokens=True).lstrip()
                                 for t in tokens.values()])
            return False

        static_ids = engine.static_prefix(prompt, head)
        ctranslate2.set_random_seed(3)
        engine.generator.generate_batch(
            [engine._tokens(prompt[len(static_ids):])], static_prompt=engine._tokens(static_ids), num_hypotheses=4,
            max_length=NEW_TOKENS, min_length=NEW_TOKENS, include_prompt_in_result=False, return_scores=True,
            callback=callback, **SAMPLING)

    rows = []
    default_interval = sys.getswitchinterval()
    for busy, switch in ((False, default_interval), (True, default_interval), (True, 0.0005)):
        stop = threading.Event()
        neighbour = threading.Thread(target=_busy_python, args=(stop,), daemon=True)
        sys.setswitchinterval(switch)
        if busy:
            neighbour.start()
        try:
            for label, call in (("no callback", plain), ("callback decoding as written, no stream", recording),
                                (f"stream every {ct2.STREAM_INTERVAL_S} s", streaming),
                                ("old: whole texts every 0.1 s in the callback", old_way)):
                received.clear()
                timing = median_time(call, repeats)
                rows.append({"way": label, "busy_python_thread": busy, "switch_interval_s": switch, **timing,
                             "hand_ons_last_run": len(received)})
                print(json.dumps(rows[-1]), flush=True)
        finally:
            stop.set()
            if busy:
                neighbour.join()
            sys.setswitchinterval(default_interval)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="+", choices=SECTIONS, default=list(SECTIONS))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    from bots.registry import make_bot

    results: dict = {"command": "HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.bench_generation "
                                + " ".join(argv if argv is not None else sys.argv[1:]),
                     "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "machine": machine_info()}
    print(json.dumps(results["machine"]), flush=True)
    bot = make_bot("embedded")
    bot.engine.set_threads(2)  # fixed: the thread fit must not change the count between runs
    model = Model(bot)
    bound = None
    if "bandwidth" in args.only:
        results["bandwidth"] = bandwidth(model.dir)
        bound = results["bandwidth"]["bound_steps_per_s"]
        print(json.dumps(results["bandwidth"]), flush=True)
    for name, section in (("prefill", prefill), ("context", context), ("static", static), ("ngrams", ngrams),
                          ("calls", calls), ("stream", stream)):
        if name in args.only:
            results[name] = section(model, args.repeats)
    if "decode" in args.only:
        results["decode"] = decode(model, args.repeats, bound)
    results["loadavg_at_end"] = loadavg()
    if args.json:
        write_json(args.json, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
