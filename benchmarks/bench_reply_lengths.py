"""How many of the embedded bot's replies keep a whole sentence under a given token limit?

Samples candidates with a generous limit (so the model ends its turn on its own, or not), then, for
each smaller limit, cuts every reply to that many tokens as generation would have, trims it with
bots.base.complete_sentences and counts the replies that still end at a sentence (not with "…").
A sample's first N tokens do not depend on the limit, so one sampling run answers every limit.

    HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.bench_reply_lengths --messages 8 --budget 96
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from embedded import configure_openmp

configure_openmp()

from benchmarks.bench_app import MESSAGES  # noqa: E402
from benchmarks.machine import write_json  # noqa: E402
from bots.base import PRESETS, complete_sentences  # noqa: E402
from guard.records import Turn  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=8, help="user turns (from benchmarks.bench_app.MESSAGES)")
    parser.add_argument("--candidates", type=int, default=4)
    parser.add_argument("--budget", type=int, default=96, help="max_new_tokens while sampling")
    parser.add_argument("--limits", type=int, nargs="+", default=[24, 32, 40, 48, 64])
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    from bots.registry import make_bot

    bot = make_bot("embedded")
    tokenizer = bot.tokenizer
    history: list[Turn] = []
    replies = []
    for message in MESSAGES[: args.messages]:
        history.append(Turn(0, "user", message))
        started = time.perf_counter()
        decoding = PRESETS["fast"].replace(max_new_tokens=args.budget, seed=len(history))
        candidates = bot.generate(history, args.candidates, decoding)
        replies.extend(c.text for c in candidates)
        history.append(Turn(0, "bot", candidates[0].text))
        print(f"{time.perf_counter() - started:5.1f} s  {candidates[0].text[:70]!r}", flush=True)
    lengths = [len(tokenizer(r, add_special_tokens=False)["input_ids"]) for r in replies]
    rows = []
    for limit in args.limits:
        whole, words = 0, []
        for reply, length in zip(replies, lengths):
            ids = tokenizer(reply, add_special_tokens=False)["input_ids"]
            text = complete_sentences(tokenizer.decode(ids[:limit]), cut=length > limit)
            whole += not text.endswith("…")
            words.append(len(text.split()))
        rows.append({"max_new_tokens": limit, "replies": len(replies), "end_at_a_sentence": whole,
                     "ended_on_their_own": sum(n <= limit for n in lengths),
                     "median_words_kept": statistics.median(words)})
        print(f"max_new_tokens {limit:3d}: {whole}/{len(replies)} end at a sentence after trimming, "
              f"{rows[-1]['ended_on_their_own']} ended on their own, median {rows[-1]['median_words_kept']} words")
    if args.json:
        write_json(args.json, {"lengths": lengths, "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
