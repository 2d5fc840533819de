"""A whole ``python -m bots generate`` process, start to exit, on each engine (issue 24: a command line on the default
engine with its model converted should take <= 5 s and be at least 3x faster than with ``--engine transformers``):

    HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.bench_bot_cli --runs 5 --phases \
        --engines auto,transformers,transformers-float32 --json benchmarks/results/bot-cli.json

Each run is ``python -m bots generate --num-candidates 4 --history H --seed 1 [--engine transformers [--dtype
float32]]`` on a three-turn history, as a fresh process, timed from spawn to exit (wall, and the child's CPU time); the engines
alternate run by run so a change of load hits both alike, after one unrecorded run each (the model files in the page
cache, as on any second use). ``--phases`` also runs one child per engine that times its steps in-process (import
of bots.embedded, making the bot, the generation) and lists whether torch / transformers were imported. The machine
record (CPU flags, class, load before and after) goes with the figures (benchmarks/machine.py).
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

from benchmarks.machine import loadavg, machine_info, write_json

REPO = Path(__file__).resolve().parent.parent
HISTORY = [{"speaker": "user", "text": "Hi! What do you do for a living?"},
           {"speaker": "bot", "text": "I'm a nurse at a children's hospital."},
           {"speaker": "user", "text": "Nice. Do you have any pets?"}]
#: The command lines compared: the default engine (CTranslate2 int8 once converted), transformers in the dtype the
#: CPU picks (bfloat16 where it computes it natively), and transformers in float32 (what a CPU without native
#: bfloat16, the AVX2 laptop of the issue, runs).
ENGINES = {"auto": [], "transformers": ["--engine", "transformers"],
           "transformers-float32": ["--engine", "transformers", "--dtype", "float32"]}
PHASES = """
import json, sys, time
started = time.perf_counter()
from embedded import configure_openmp
configure_openmp()
from bots.base import PRESETS
from bots.cli import read_history
from bots.registry import make_bot
import bots.embedded
imported = time.perf_counter()
options = dict(zip(sys.argv[2::2], sys.argv[3::2]))
bot = make_bot("embedded", **{key.removeprefix("--"): value for key, value in options.items()})
made = time.perf_counter()
candidates = bot.generate(read_history(sys.argv[1]), 4, PRESETS["fast"].replace(seed=1))
done = time.perf_counter()
print(json.dumps({"import_s": round(imported - started, 3), "make_s": round(made - imported, 3),
                  "generate_s": round(done - made, 3), "engine": bot.engine_label, "candidates": len(candidates),
                  "torch_imported": "torch" in sys.modules, "transformers_imported": "transformers" in sys.modules}))
"""


def _env() -> dict:
    env = {key: value for key, value in os.environ.items() if key != "GUARD_ENGINE"}
    env.setdefault("HF_HUB_OFFLINE", "1")
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def run_once(history: Path, extra: list[str]) -> dict:
    """One ``python -m bots generate`` process: wall seconds from spawn to exit, the child's CPU seconds."""
    command = [sys.executable, "-m", "bots", "generate", "--num-candidates", "4", "--history", str(history),
               "--seed", "1", *extra]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, env=_env(), timeout=600)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    reply = json.loads(done.stdout)
    return {"wall_s": round(wall, 3),
            "cpu_s": round(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, 3),
            "engine": reply.get("engine"), "candidates": len(reply["candidates"]), "loadavg_after": loadavg()}


def phases(history: Path, extra: list[str]) -> dict:
    """One child that times its steps in-process, with the command line's engine options ``extra``."""
    done = subprocess.run([sys.executable, "-c", PHASES, str(history), *extra], cwd=REPO, capture_output=True,
                          text=True, env=_env(), timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"phases ({' '.join(extra)}) failed: {done.stderr.strip()[-500:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5, help="recorded runs per engine (after one warm-up each)")
    parser.add_argument("--phases", action="store_true", help="also time import / make / generate in one child each")
    parser.add_argument("--engines", default="auto,transformers",
                        help=f"comma-separated, the first is the baseline of the speed-ups: {', '.join(ENGINES)}")
    parser.add_argument("--json", type=Path, help="write the record here")
    args = parser.parse_args(argv)
    engines = {name: ENGINES[name] for name in args.engines.split(",")}
    machine = machine_info()
    load_before = loadavg()
    with tempfile.TemporaryDirectory() as tmp:
        history = Path(tmp) / "history.json"
        history.write_text(json.dumps(HISTORY))
        for extra in engines.values():  # warm-up: model files in the page cache, conversions checked
            run_once(history, extra)
        runs: dict[str, list[dict]] = {name: [] for name in engines}
        for index in range(args.runs):
            for name, extra in engines.items():
                runs[name].append(run_once(history, extra))
                print(f"run {index + 1} {name:12s} {runs[name][-1]['wall_s']:6.2f} s wall, "
                      f"{runs[name][-1]['cpu_s']:6.2f} s cpu ({runs[name][-1]['engine']}), load "
                      f"{runs[name][-1]['loadavg_after'][:1]}", flush=True)
        steps = {name: phases(history, engines[name]) for name in engines} if args.phases else None
    first = next(iter(engines))
    medians = {name: {"wall_s": round(statistics.median(r["wall_s"] for r in rows), 3),
                      "cpu_s": round(statistics.median(r["cpu_s"] for r in rows), 3),
                      "min_wall_s": min(r["wall_s"] for r in rows), "max_wall_s": max(r["wall_s"] for r in rows)}
               for name, rows in runs.items()}
    record = {
        "bench": "bot_cli",
        "command": "python -m bots generate --num-candidates 4 --history H --seed 1 [--engine transformers "
                   "[--dtype float32]]",
        "history_turns": len(HISTORY), "runs": runs, "median": medians,
        "speedup_wall": {name: round(medians[name]["wall_s"] / medians[first]["wall_s"], 2) for name in engines},
        "phases": steps, "machine": machine, "loadavg_before": load_before, "loadavg_after": loadavg(),
        "when_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
    }
    print(json.dumps({k: record[k] for k in ("median", "speedup_wall", "phases", "loadavg_before", "loadavg_after")},
                     indent=1))
    if args.json:
        write_json(args.json, record, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
