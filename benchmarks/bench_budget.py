"""The embedded bot's prompt budget: generation time over a 30-turn chat, and what a smaller budget makes it forget.

For each ``--budgets`` value the bot chats ``--turns`` turns with benchmarks.bench_app's messages (its own best
candidate sent each time, the "fast" preset, 4 candidates) and every turn's ``generate`` is timed; the summary gives
the p50 of the first and last ``--window`` turns, their ratio, and the prompt's length at the end. Then the recall
probe: the first message tells the bot a fact about the user ("my cat is called Pepper"), the chat goes on, and the
last message asks for it back; over ``--seeds`` seeds it counts the chats where any candidate, and the best one,
names it. The persona is in every prompt whatever the budget; what a budget drops is the oldest turns.

    HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.bench_budget --budgets 1024 384 --json runs/budget.json
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from embedded import configure_openmp

configure_openmp()  # as the app does, before anything loads torch

from benchmarks.bench_app import MESSAGES  # noqa: E402
from benchmarks.machine import machine_info, write_json  # noqa: E402
from bots.base import PRESETS  # noqa: E402
from guard.records import Turn  # noqa: E402

FACT = "Hi! I'm Alex, and my cat is called Pepper."
QUESTION = "By the way, do you remember what my cat is called?"
ANSWER = "pepper"


def chat(bot, messages: list[str], seed: int) -> tuple[list[Turn], list[float], list[list[str]]]:
    """The conversation of ``messages`` with the bot's best candidate sent each turn: turns, each generate's seconds,
    each turn's candidates."""
    history: list[Turn] = []
    seconds, candidates = [], []
    for k, message in enumerate(messages):
        history.append(Turn(len(history), "user", message))
        started = time.perf_counter()
        replies = bot.generate(history, 4, PRESETS["fast"].replace(seed=seed * 1000 + k))
        seconds.append(time.perf_counter() - started)
        candidates.append([c.text for c in replies])
        history.append(Turn(len(history), "bot", replies[0].text))
    return history, seconds, candidates


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budgets", type=int, nargs="+", default=[1024, 384])
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--window", type=int, default=6)
    parser.add_argument("--seeds", type=int, default=3, help="recall-probe chats per budget")
    parser.add_argument("--probe-turns", type=int, default=12, help="turns between the fact and the question")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    from bots.registry import make_bot

    bot = make_bot("embedded")
    results = []
    for budget in args.budgets:
        bot.max_prompt_tokens = budget
        history, seconds, _ = chat(bot, MESSAGES[:args.turns], seed=1)
        first, last = seconds[1:1 + args.window], seconds[-args.window:]  # the first turn warms the engine up
        row = {"budget": budget, "first_p50_s": round(statistics.median(first), 3),
               "last_p50_s": round(statistics.median(last), 3),
               "last_over_first": round(statistics.median(last) / statistics.median(first), 2),
               "prompt_tokens_at_end": len(bot.prompt_ids(history, [])),
               "turns_read_at_end": len(history) - bot.fit_prompt(history, []).start,
               "seconds": [round(s, 3) for s in seconds]}
        recalled_any = recalled_best = 0
        for seed in range(args.seeds):
            probe = [FACT, *MESSAGES[1:1 + args.probe_turns], QUESTION]
            _, _, candidates = chat(bot, probe, seed=100 + seed)
            recalled_any += any(ANSWER in c.lower() for c in candidates[-1])
            recalled_best += ANSWER in candidates[-1][0].lower()
        row.update(recall_chats=args.seeds, recalled_by_any_candidate=recalled_any, recalled_by_best=recalled_best,
                   probe_turns_between=args.probe_turns)
        results.append(row)
        print({k: v for k, v in row.items() if k != "seconds"}, flush=True)
    if args.json:
        write_json(args.json, {"results": results, "machine": machine_info(), "engine": bot.engine_label})
    return 0


if __name__ == "__main__":
    sys.exit(main())
