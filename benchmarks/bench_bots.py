"""Bot numbers for docs/bots.md: embedded-bot latency, cold start, first-ever load; MuTual ranker scores.

    HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.bench_bots latency [--dtype float32|bfloat16] [--threads N]
    HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.bench_bots cold      # fresh process, weights cached
    HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.bench_bots first     # fresh process, empty cache (converts GGUF)
    HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.bench_bots mutual [--limit N]

Each prints one JSON line. Latency depends on what else runs on the CPU: read it next to the load
average the script records.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from embedded import configure_openmp, shared_data_dir

configure_openmp()  # as the app and CLI do; before torch loads
REPO = Path(__file__).resolve().parent.parent
SHARED_DATA_HINT = "../shared/data beside the checkout, or GUARD_SHARED_DATA"
HISTORY = [
    ("user", "Hi! I just moved to Leeds and I'm looking for things to do."),
    ("bot", "Welcome! I love the parks here. Do you like walking?"),
    ("user", "Yes, and I have two dogs who need long walks. Do you have any pets?"),
]


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def latency(args: argparse.Namespace) -> dict:
    import torch

    from bots.base import PRESETS
    from bots.registry import make_bot
    from guard.records import Turn

    if args.threads:
        torch.set_num_threads(args.threads)
    bot = make_bot("embedded", dtype=args.dtype, engine=args.engine)
    if args.threads:
        torch.set_num_threads(args.threads)  # make_bot may set the default count
    history = [Turn(0, s, t) for s, t in HISTORY]
    results = {}
    for label, decoding in (("fast", PRESETS["fast"]), ("full32", PRESETS["fast"].replace(min_new_tokens=32))):
        for warm in range(2):
            bot.generate(history, 4, decoding.replace(seed=100 + warm))
        times, cpu_times = [], []
        for run in range(args.repeats):
            start, cpu_start = time.perf_counter(), time.process_time()
            bot.generate(history, 4, decoding.replace(seed=run))
            times.append(time.perf_counter() - start)
            cpu_times.append(time.process_time() - cpu_start)
        # CPU time (all threads) shows the work itself when other jobs keep the cores busy
        results[label] = {"p50_s": round(statistics.median(times), 3), "min_s": round(min(times), 3),
                          "max_s": round(max(times), 3), "cpu_p50_s": round(statistics.median(cpu_times), 3)}
    results["full32"]["aggregate_tok_per_s_p50"] = round(4 * 32 / results["full32"]["p50_s"], 1)
    return {"bench": "latency", "engine": bot.engine_label, "dtype": args.dtype, "threads": torch.get_num_threads(), "candidates": 4,
            "max_new_tokens": 32, "repeats": args.repeats, **results, "loadavg_1min": _load()}


_COLD = """
import time
start = time.perf_counter()
from bots.base import PRESETS
from bots.registry import make_bot
bot = make_bot("embedded", dtype={dtype!r})
loaded = time.perf_counter()
bot.generate([Turn(0, "user", "Hi! Do you have any pets?")], 4, PRESETS["fast"].replace(seed=0))
done = time.perf_counter()
print(round(loaded - start, 2), round(done - start, 2))
"""


def cold(args: argparse.Namespace, empty_cache: bool = False) -> dict:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO)}
    with tempfile.TemporaryDirectory() as cache:
        if empty_cache:
            env["GUARD_CACHE_DIR"] = cache
        start = time.perf_counter()
        cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        out = subprocess.run([sys.executable, "-c", _COLD.format(dtype=args.dtype)], env=env, cwd=REPO,
                             capture_output=True, text=True, check=True)
        wall = time.perf_counter() - start
        cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    child_cpu = (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime)
    load_s, first_reply_s = (float(x) for x in out.stdout.split())
    return {"bench": "first_load" if empty_cache else "cold_start", "dtype": args.dtype,
            "import_and_load_s": load_s, "load_and_first_reply_s": first_reply_s,
            "process_wall_s": round(wall, 2), "process_cpu_s": round(child_cpu, 2), "loadavg_1min": _load()}


def mutual(args: argparse.Namespace) -> dict:
    from bots.mutual import evaluate_ranker, read_mutual
    from bots.plato import EmbeddingCoherence, NLICoherence

    shared = shared_data_dir()
    mutual_dir = shared / "mutual" if shared else None
    if mutual_dir is None or not (mutual_dir / "mutual_dev.jsonl").exists():
        return {"bench": "mutual", "skipped": f"MuTual not found in the shared data ({SHARED_DATA_HINT})"}
    scorer = EmbeddingCoherence.embedded()
    # the context window is chosen on (a slice of) the train split, then dev is scored once
    train = read_mutual(mutual_dir / "mutual_train.jsonl", limit=args.limit)
    windows = [int(w) for w in args.windows.split(",")]
    if len(windows) == 1:
        train = []
    by_window = {w: evaluate_ranker(EmbeddingCoherence(scorer.embedder, w), train).r_at_1 if train else None
                 for w in windows}
    best = windows[0] if len(windows) == 1 else max(by_window, key=by_window.get)
    results = {"bench": "mutual", "ranker": "embedder (all-MiniLM-L6-v2 cosine)",
               "train_r_at_1_by_window": {str(k): v if v is None else round(v, 3) for k, v in by_window.items()},
               "window": best, "train_items": len(train)}
    for split in ("mutual_dev", "mutual_plus_dev"):
        metrics = evaluate_ranker(EmbeddingCoherence(scorer.embedder, best), read_mutual(mutual_dir / f"{split}.jsonl"))
        results[split] = {"r_at_1": round(metrics.r_at_1, 3), "r_at_2": round(metrics.r_at_2, 3),
                          "mrr": round(metrics.mrr, 3), "n": metrics.n}
    if args.no_nli:
        return results
    try:
        from guard.models.loading import load_scorer

        nli = NLICoherence(load_scorer(), best)
    except Exception as exc:  # no usable detector checkpoint: report why instead of failing the benchmark
        results["nli"] = f"skipped: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    else:
        for split in ("mutual_dev", "mutual_plus_dev"):
            metrics = evaluate_ranker(nli, read_mutual(mutual_dir / f"{split}.jsonl"))
            results[f"nli_{split}"] = {"r_at_1": round(metrics.r_at_1, 3), "r_at_2": round(metrics.r_at_2, 3),
                                       "mrr": round(metrics.mrr, 3), "n": metrics.n}
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=("latency", "cold", "first", "mutual"))
    parser.add_argument("--dtype", default="bfloat16", choices=("float32", "bfloat16"),
                        help="the transformers engine's weights")
    parser.add_argument("--engine", default="auto", choices=("auto", "ctranslate2", "transformers"),
                        help="latency: the bot's engine (auto = CTranslate2 int8)")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0 = the bot's default)")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--limit", type=int, default=1000, help="mutual: train items used to pick the window")
    parser.add_argument("--windows", default="1,2,3,0", help="mutual: context windows tried (0 = whole context); "
                        "one value skips the search on train")
    parser.add_argument("--no-nli", action="store_true", help="mutual: skip the NLI (models/detector) ranker")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.what == "latency":
        result = latency(args)
    elif args.what in ("cold", "first"):
        result = cold(args, empty_cache=args.what == "first")
    else:
        result = mutual(args)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
