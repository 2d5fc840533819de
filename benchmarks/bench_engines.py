"""The embedded bot on both engines side by side, in one run on one machine (tracker issue 20).

    HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.bench_engines speed   [--repeats 5]   # 4 x 32 tokens, 269-token prompt
    HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.bench_engines turns   [--turns 30]    # prefill as a chat grows
    HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.bench_engines quality [--mutual-limit 300] [--rounds 2]
    HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.bench_engines all --json benchmarks/results/engines.json

speed: SmolLM2-135M, 4 candidates of exactly 32 tokens (top-k 40, temperature 0.8), after the same chat
prompt (about 269 tokens), median of ``--repeats`` after a warm-up: transformers float32 with the prompt
encoded once per candidate (how generate() works by default), with one shared prefill, with the previous
turn's prompt cached; CTranslate2 int8 with the prompt per candidate and with one shared prefill; and
the prompt's checkpoint cached as a chat leaves it (bots.ct2), and the prefill alone. turns: the time to encode the prompt (one greedy token) at every exchange of a
growing chat, and a whole 4 x 32 reply at 2, 10 and 30 exchanges. quality: the generator as a MuTual
response ranker (mean log-probability of each option; R@1) and the share of sampled replies that end
at a sentence, per engine. Every result carries the CPU's flags and the load average (benchmarks.machine):
figures from a busy machine are slower, ratios from one run stay comparable.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from embedded import configure_openmp

configure_openmp()  # as the app and the CLI do; before torch loads

from benchmarks.bench_app import MESSAGES  # noqa: E402
from benchmarks.machine import loadavg, machine_info, write_json  # noqa: E402
from bots.base import PRESETS  # noqa: E402
from guard.records import Turn  # noqa: E402

#: Canned bot replies (about 15-20 tokens each), so the chat grows the same way on both engines.
REPLIES = [
    "I'm doing great, thanks for asking! I just got back from a long walk with my dogs.",
    "I work as a nurse at the local hospital. It keeps me busy, but I love helping people.",
    "Yes, I have two dogs, Max and Bella. They are both golden retrievers and very playful.",
    "I live in a small town near the coast. It's quiet, and the beaches are lovely in summer.",
    "Pizza, definitely! I make my own dough on Sundays and try new toppings every week.",
    "No kids yet, but my sister has three, so I get plenty of practice as an aunt.",
]
DECODING_32 = PRESETS["fast"].replace(min_new_tokens=32, max_new_tokens=32)


def chat(exchanges: int) -> list[Turn]:
    """A conversation of ``exchanges`` user/bot pairs, then one more user message to answer."""
    history: list[Turn] = []
    for i in range(exchanges):
        history += [Turn(0, "user", MESSAGES[i % len(MESSAGES)]), Turn(0, "bot", REPLIES[i % len(REPLIES)])]
    return history + [Turn(0, "user", MESSAGES[exchanges % len(MESSAGES)])]


def _timed(call, repeats: int, warmup: int = 1) -> dict:
    """Median wall and CPU seconds of ``call(run)`` over ``repeats`` runs after ``warmup`` untimed ones."""
    for run in range(warmup):
        call(1000 + run)
    walls, cpus = [], []
    for run in range(repeats):
        start, cpu = time.perf_counter(), time.process_time()
        call(run)
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    return {"p50_s": round(statistics.median(walls), 3), "min_s": round(min(walls), 3),
            "max_s": round(max(walls), 3), "cpu_p50_s": round(statistics.median(cpus), 3), "repeats": repeats,
            "loadavg_1min": loadavg()[:1]}


def load_bots(threads: int = 0):
    """Both engines on the embedded bot; ``threads`` > 0 gives each that many threads (torch and CTranslate2)."""
    import torch

    from bots.registry import make_bot

    bots = {"ctranslate2": make_bot("embedded", engine="ctranslate2"),
            "transformers": make_bot("embedded", engine="transformers", dtype="float32")}
    if threads:
        torch.set_num_threads(threads)
        bots["ctranslate2"].engine.set_threads(threads)
    return bots


def speed(bots: dict, repeats: int) -> dict:
    import ctranslate2
    import torch

    from bots.ct2 import CHECKPOINT_TOKENS
    from bots.engines import TransformersEngine
    from bots.hf import PrefixCache, generate_candidates

    fp32, int8 = bots["transformers"], bots["ctranslate2"]
    exchanges = next(n for n in range(1, 40) if len(fp32.prompt_ids(chat(n), ())) >= 260)
    history = chat(exchanges)
    prompt = fp32.prompt_ids(history, ())
    previous = fp32.prompt_ids(history[:-2], ())  # the prompt of the turn before
    head = len(int8.head_ids(()))
    ends = fp32.end_ids()
    inputs = {"input_ids": torch.tensor([prompt]), "attention_mask": torch.ones(1, len(prompt), dtype=torch.long)}
    fresh = TransformersEngine(fp32.model, fp32.tokenizer, PrefixCache(max_entries=0))
    cached = TransformersEngine(fp32.model, fp32.tokenizer, PrefixCache(max_entries=1))

    def cached_turn(run: int) -> None:
        cached.prefix_cache.clear()
        cached.prefix_cache.state_for(fp32.model, previous[:-1])  # what the previous turn left in the cache

    rows = {}
    rows["transformers fp32, prompt encoded per candidate"] = _timed(
        lambda run: generate_candidates(fp32.model, fp32.tokenizer, inputs, DECODING_32.replace(seed=run), 4,
                                        end_token_ids=ends, share_prefill=False), repeats)
    rows["transformers fp32, one shared prefill"] = _timed(
        lambda run: fresh.generate(prompt, DECODING_32.replace(seed=run), 4, end_ids=ends), repeats)

    walls = []
    for run in range(-1, repeats):  # the previous turn's prompt is cached (untimed), then the new turn
        with torch.inference_mode():
            cached_turn(run)
        start = time.perf_counter()
        cached.generate(prompt, DECODING_32.replace(seed=max(run, 0)), 4, end_ids=ends)
        if run >= 0:
            walls.append(time.perf_counter() - start)
    rows["transformers fp32, shared prefill, previous turn cached"] = {
        "p50_s": round(statistics.median(walls), 3), "min_s": round(min(walls), 3), "repeats": repeats,
        "loadavg_1min": loadavg()[:1]}

    tokens = int8.tokenizer.convert_ids_to_tokens(prompt)
    options = dict(sampling_topk=40, sampling_temperature=0.8, max_length=32, min_length=32,
                   include_prompt_in_result=False, end_token=ends)

    def ct2_per_candidate(run: int) -> None:
        ctranslate2.set_random_seed(run)
        int8.engine.generator.generate_batch([tokens] * 4, **options)

    rows["ctranslate2 int8, prompt encoded per candidate"] = _timed(ct2_per_candidate, repeats)
    int8.engine.checkpoint_tokens = 0  # nothing of this prompt cached: the whole prompt is encoded once per call
    rows["ctranslate2 int8, one shared prefill (the engine)"] = _timed(
        lambda run: int8.engine.generate(prompt, DECODING_32.replace(seed=run), 4, end_ids=ends), repeats)
    int8.engine.checkpoint_tokens = CHECKPOINT_TOKENS  # as in a chat: the prompt's last checkpoint is cached
    rows["ctranslate2 int8, shared prefill, checkpoint cached"] = _timed(
        lambda run: int8.engine.generate(prompt, DECODING_32.replace(seed=run), 4, end_ids=ends,
                                         static_length=head), repeats)

    def torch_prefill(run: int) -> None:
        with torch.inference_mode():
            fp32.model(input_ids=inputs["input_ids"], logits_to_keep=1)

    rows["prefill only: transformers fp32, batch 1"] = _timed(torch_prefill, repeats)
    rows["prefill only: ctranslate2 int8 (+1 token)"] = _timed(
        lambda run: int8.engine.generator.generate_batch([tokens], max_length=1, include_prompt_in_result=False),
        repeats)
    base = rows["transformers fp32, prompt encoded per candidate"]["p50_s"]
    engine = rows["ctranslate2 int8, one shared prefill (the engine)"]["p50_s"]
    return {"bench": "speed", "prompt_tokens": len(prompt), "exchanges": exchanges, "candidates": 4,
            "new_tokens": 32, "rows": rows,
            "speedup_vs_transformers_per_candidate": round(base / engine, 2),
            "speedup_vs_transformers_shared_prefill": round(
                rows["transformers fp32, one shared prefill"]["p50_s"] / engine, 2)}


def turns(bots: dict, max_turns: int, reply_at: tuple[int, ...]) -> dict:
    """Prompt encoding time (one greedy token) at every exchange of a growing chat, per engine."""
    one_token = PRESETS["greedy"].replace(max_new_tokens=1)
    results = {}
    for name, bot in bots.items():
        if name == "transformers":
            bot.engine.prefix_cache.clear()
        per_turn = []
        for exchanges in range(1, max_turns + 1):
            history = chat(exchanges)
            start = time.perf_counter()
            bot.generate(history, 1, one_token)
            per_turn.append({"exchanges": exchanges, "prompt_tokens": len(bot.prompt_ids(history, ())),
                             "prefill_s": round(time.perf_counter() - start, 3)})
        replies = {}
        for exchanges in reply_at:
            if exchanges > max_turns:
                continue
            history = chat(exchanges)
            if name == "transformers":  # as in a chat: the previous turn's prompt is what the cache holds
                bot.engine.prefix_cache.clear()
                bot.generate(history[:-2], 1, one_token)
            start = time.perf_counter()
            bot.generate(history, 4, DECODING_32.replace(seed=exchanges))
            replies[str(exchanges)] = round(time.perf_counter() - start, 3)
        results[name] = {"label": bot.engine_label, "per_turn": per_turn, "reply_4x32_s": replies,
                         "loadavg_1min": loadavg()[:1]}
    return {"bench": "turns", "results": results}


def quality(bots: dict, mutual_limit: int, messages: int, rounds: int = 1) -> dict:
    from bots.base import complete_sentences  # noqa: F401  (the rule the replies were trimmed by)
    from embedded import shared_data_dir

    out: dict = {"bench": "quality"}
    shared = shared_data_dir()
    mutual = shared / "mutual" / "mutual_dev.jsonl" if shared else None
    if mutual is not None and mutual.exists():
        from bots.mutual import evaluate_ranker, read_mutual

        items = read_mutual(mutual, limit=mutual_limit)
        picks = {}
        for name, bot in bots.items():
            ranker = GeneratorRanker(bot)
            started = time.perf_counter()
            metrics = evaluate_ranker(ranker, items)
            picks[name] = ranker.picks
            out[f"mutual_dev_{name}"] = {"r_at_1": round(metrics.r_at_1, 3), "r_at_2": round(metrics.r_at_2, 3),
                                         "mrr": round(metrics.mrr, 3), "n": metrics.n,
                                         "seconds": round(time.perf_counter() - started, 1)}
        same = sum(a == b for a, b in zip(picks["ctranslate2"], picks["transformers"]))
        out["mutual_same_top_choice"] = round(same / max(len(items), 1), 3)
    else:
        out["mutual"] = "skipped: MuTual not found in the shared data (../shared/data or GUARD_SHARED_DATA)"
    for name, bot in bots.items():
        replies = []
        for round_ in range(rounds):  # the same chat again with other seeds
            history: list[Turn] = []
            for index, message in enumerate(MESSAGES[:messages]):
                history.append(Turn(0, "user", message))
                candidates = bot.generate(history, 4, PRESETS["fast"].replace(seed=1000 * round_ + index))
                replies += [c.text for c in candidates]
                history.append(Turn(0, "bot", candidates[0].text))
        whole = sum(bool(r) and not r.endswith("…") for r in replies)
        out[f"replies_{name}"] = {"replies": len(replies), "end_at_a_sentence": whole,
                                  "share": round(whole / len(replies), 3),
                                  "median_words": statistics.median(len(r.split()) for r in replies)}
    out["loadavg_1min"] = loadavg()[:1]
    return out


class GeneratorRanker:
    """MuTual options ranked by the generator's mean log-probability of each, as the next bot turn."""

    def __init__(self, bot):
        self.bot = bot
        self.picks: list[int] = []

    def score(self, context: list[str], options: list[str]) -> list[float]:
        # the last context turn is the other speaker's: it is the user, and turns alternate backwards
        history = [Turn(0, "user" if (len(context) - i) % 2 else "bot", text) for i, text in enumerate(context)]
        scores = self.bot.score_replies(history, options)
        self.picks.append(max(range(len(scores)), key=scores.__getitem__))
        return scores


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=("speed", "turns", "quality", "all"))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--turns", type=int, default=30, help="turns: exchanges the chat grows to")
    parser.add_argument("--mutual-limit", type=int, default=300, help="quality: MuTual dev items scored")
    parser.add_argument("--messages", type=int, default=16, help="quality: user messages sampled (4 replies each)")
    parser.add_argument("--rounds", type=int, default=1, help="quality: times the chat is replayed with other seeds")
    parser.add_argument("--threads", type=int, default=0,
                        help="threads per engine (0: their defaults, all cores). On a busy machine 1 thread gives "
                             "CPU times that measure the work rather than the contention")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    command = "HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.bench_engines " + " ".join(argv or sys.argv[1:])
    results: dict = {"command": command, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                     "machine": machine_info()}
    bots = load_bots(args.threads)
    results["engines"] = {name: bot.engine_label for name, bot in bots.items()}
    results["threads"] = args.threads or "default"
    print(json.dumps({k: results[k] for k in ("machine", "engines")}), flush=True)
    if args.what in ("speed", "all"):
        results["speed"] = speed(bots, args.repeats)
        print(json.dumps(results["speed"]), flush=True)
    if args.what in ("turns", "all"):
        results["turns"] = turns(bots, args.turns, (2, 10, 30))
        print(json.dumps(results["turns"]), flush=True)
    if args.what in ("quality", "all"):
        results["quality"] = quality(bots, args.mutual_limit, args.messages, args.rounds)
        print(json.dumps(results["quality"]), flush=True)
    results["loadavg_at_end"] = loadavg()
    if args.json:
        write_json(args.json, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
