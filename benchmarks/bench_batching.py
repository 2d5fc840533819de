"""Prototype before building: does one CTranslate2 batch of several students' turns cost less than their turns one
after another, and does one call of the guard's scorer over several turns' pairs cost less than one call each?

Issue 55 asked to measure before building a batching worker. Each case takes B conversations of the class (the
embedded bot's prompts, personas of their own, at the turn counts a class reaches together or apart) and times:

* ``serial``: the bot's own ``generate`` for each, one after the other (the path of main: a static prefix cached per
  conversation, its history n-grams banned); each conversation generated once beforehand, so its prefix is cached as
  it is in a running class;
* ``batch``: one ``generate_batch`` of the B prompts (no static prompt: the conversations share none; every
  conversation's banned n-grams suppressed for all, CTranslate2 takes one list per batch);
* ``batch-even``: the same with every prompt cut to the shortest one's length: what batching would cost if the
  prompts' lengths did not differ (CTranslate2 forwards only the tokens up to the shortest prompt at once, and the
  rest one token a step inside the decoding loop).

And the guard: B turns judged one ``Guard.judge`` call each against the same B turns' pairs scored by one
``predict_proba`` call (the pairs of every turn planned by the detector, the scorer's cache emptied before each).

    HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.bench_batching --sizes 1 2 4 8 --reps 3 --json out.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from benchmarks.bench_app import MESSAGES
from benchmarks.bench_class import PERSONAS  # the same students the class benchmark plays

#: Replies of the length the embedded bot writes (about 20-30 tokens), so a conversation's prompt grows as it does.
REPLIES = [
    "I'm doing great, thanks for asking! I just got back from a long walk with my dog.",
    "I work as a nurse at a children's hospital, and I really love helping the kids there.",
    "Yes, I have a dog named Max. He is a golden retriever and he loves the park.",
    "I live in Portland, Oregon. It rains a lot, but the forests around the city are beautiful.",
    "My favorite food is pizza, especially with mushrooms and olives on top of it.",
    "No kids yet, but I spend a lot of time with my nieces and nephews on weekends.",
    "Last weekend I went hiking on Mount Hood and then played the guitar at home.",
    "I like folk music and a bit of jazz. I play some of the songs on my guitar.",
]


def conversation(k: int, turns: int):
    """Student ``k``'s conversation after ``turns`` exchanges, ending with a user message."""
    from guard.records import Turn

    history = []
    for t in range(turns):
        history.append(Turn(len(history), "user", MESSAGES[(t + k) % len(MESSAGES)]))
        history.append(Turn(len(history), "bot", REPLIES[(t + 2 * k) % len(REPLIES)]))
    history.append(Turn(len(history), "user", MESSAGES[(turns + k) % len(MESSAGES)]))
    return history, PERSONAS[k % len(PERSONAS)]


def generation_case(bot, size: int, turn_counts: list[int], reps: int) -> dict:
    from bots.base import preset
    from bots.ct2 import generation_options

    decoding = preset("fast")
    engine = bot.engine
    chats = [conversation(k, turn_counts[k % len(turn_counts)]) for k in range(size)]
    for history, persona in chats:  # each conversation's prefix cached, as in a running class
        bot.generate(history, 4, decoding, persona)
    prompts = [bot.prompt_ids(h, p) for h, p in chats]
    banned = [g for h, _ in chats for g in bot.history_ngrams(h, decoding.history_ngram_size)]
    request = generation_options(decoding, 4)
    kwargs = dict(request.kwargs, end_token=bot.end_ids(), return_end_token=True,
                  suppress_sequences=[engine._tokens(b) for b in banned if len(b) > 1])
    shortest = min(map(len, prompts))
    timings: dict[str, list[float]] = {"serial": [], "batch": [], "batch-even": []}
    for _ in range(reps):
        started = time.perf_counter()
        for history, persona in chats:
            bot.generate(history, 4, decoding, persona)
        timings["serial"].append(time.perf_counter() - started)
        for name, batch in (("batch", prompts), ("batch-even", [p[-shortest:] for p in prompts])):
            started = time.perf_counter()
            engine.generator.generate_batch([engine._tokens(p) for p in batch], **kwargs)
            timings[name].append(time.perf_counter() - started)
    lengths = sorted(map(len, prompts))
    return {"size": size, "turn_counts": turn_counts, "prompt_tokens": lengths,
            **{f"{k}_s": round(statistics.median(v), 3) for k, v in timings.items()},
            "batch_over_serial": round(statistics.median(timings["batch"]) / statistics.median(timings["serial"]), 3),
            "even_over_serial": round(statistics.median(timings["batch-even"]) /
                                      statistics.median(timings["serial"]), 3)}


def guard_case(guard, bot, size: int, turns: int, reps: int) -> dict:
    """B turns' candidates judged one call each, against their pairs scored in one call."""
    from guard.judge.planning import plan_turn
    from guard.models.pair_cache import clear_pair_cache

    settings = guard.settings(mode="rerank")
    chats = [conversation(k, turns) for k in range(size)]
    candidates = [[c.text for c in bot.generate(h, 4, None, p)] for h, p in chats]
    detector = guard.judge.detector
    scorer = detector.scorer

    def empty_caches() -> None:  # the scored pairs only: embeddings and parses stay, as in a running class
        clear_pair_cache(scorer)

    one, together = [], []
    for _ in range(reps):
        empty_caches()
        started = time.perf_counter()
        for (history, persona), cands in zip(chats, candidates):
            detector.judge(history, cands, "bot", persona, settings)
        one.append(time.perf_counter() - started)
        empty_caches()
        started = time.perf_counter()
        plans = [plan_turn(h, c, "bot", p, settings, detector.embedder, detector.claims_only)
                 for (h, p), c in zip(chats, candidates)]
        pairs = [pair for plan in plans for pair in plan.pairs]
        planned = time.perf_counter() - started
        unique = list(dict.fromkeys(pairs))
        order = sorted(range(len(unique)), key=lambda i: len(unique[i][0]) + len(unique[i][1]))
        scorer.predict_proba([unique[i] for i in order])
        together.append((time.perf_counter() - started, planned, len(unique)))
    return {"size": size, "turns": turns, "one_call_each_s": round(statistics.median(one), 3),
            "one_call_for_all_s": round(statistics.median(t[0] for t in together), 3),
            "of_which_planning_s": round(statistics.median(t[1] for t in together), 3),
            "pairs": together[0][2]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--apart-max", type=int, default=4, help="the largest batch of prompts of unlike length")
    parser.add_argument("--skip", nargs="*", default=[], choices=["generation", "guard"])
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    from benchmarks.machine import machine_info, write_json
    from bots.registry import make_bot

    bot = make_bot("embedded")
    result: dict = {"benchmark": "bench_batching", "command": "python -m benchmarks.bench_batching " +
                    " ".join(sys.argv[1:]), "machine": machine_info(), "generation": [], "guard": []}
    if "generation" not in args.skip:
        for size in args.sizes:
            for label, counts in (("together", [3]), ("apart", [1, 4, 8, 12])):
                if label == "apart" and size > args.apart_max:
                    continue  # a batch of 8 prompts of 118-379 tokens takes minutes a repetition
                row = {"case": label, **generation_case(bot, size, counts, args.reps)}
                print(json.dumps(row), flush=True)
                result["generation"].append(row)
    if "guard" not in args.skip:
        from guard.judge.pipeline import load_guard

        guard = load_guard("embedded")
        for size in args.sizes:
            row = guard_case(guard, bot, size, 6, args.reps)
            print(json.dumps(row), flush=True)
            result["guard"].append(row)
    if args.json:
        write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
