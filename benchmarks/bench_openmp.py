"""Embedded-bot generation time by prompt length, for comparing OpenMP wait settings (docs/app.md).

libgomp reads its settings once, when torch loads, so each setting is its own process:

    OMP_WAIT_POLICY=PASSIVE HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.bench_openmp
    GOMP_SPINCOUNT=10000    HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.bench_openmp   # the default
    GOMP_SPINCOUNT=10000    HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.bench_openmp --busy 1

Prints, per prompt length, the p50 of ``--repeats`` calls of 4 candidates forced to 32 new tokens
(after one warm-up call). ``--busy N`` keeps N other processes spinning meanwhile (a shared machine).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import time

FILLER = [("user", "I just got back from a long trip to the mountains with my sister and her kids."),
          ("bot", "That sounds lovely! I like hiking too, mostly on weekends with my dog.")]


def _spin() -> None:
    while True:
        pass


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--exchanges", default="0,10", help="filler exchanges before the question (prompt length)")
    parser.add_argument("--candidates", type=int, default=4)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=4)
    parser.add_argument("--busy", type=int, default=0, help="other processes kept spinning meanwhile")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from embedded import configure_openmp

    configure_openmp()  # a no-op where the caller set OMP_WAIT_POLICY or GOMP_SPINCOUNT
    import torch

    from bots.base import PRESETS
    from bots.registry import make_bot
    from guard.records import Turn

    bot = make_bot("embedded")
    torch.set_num_threads(args.threads)
    busy = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(args.busy)]
    for proc in busy:
        proc.start()
    decoding = PRESETS["fast"].replace(min_new_tokens=32)
    setting = {k: os.environ.get(k) for k in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    try:
        for n in (int(x) for x in args.exchanges.split(",")):
            history = [Turn(0, s, t) for _ in range(n) for s, t in FILLER] + [Turn(0, "user", "Do you have any pets?")]
            tokens = len(bot.prompt_ids(history, []))
            bot.generate(history, args.candidates, decoding.replace(seed=1000))
            times = []
            for r in range(args.repeats):
                start = time.perf_counter()
                bot.generate(history, args.candidates, decoding.replace(seed=r))
                times.append(time.perf_counter() - start)
            print(f"{setting} busy={args.busy} threads={args.threads} prompt {tokens} tokens, "
                  f"{args.candidates} x 32 tokens: p50 {statistics.median(times):.2f} s", flush=True)
    finally:
        for proc in busy:
            proc.terminate()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
