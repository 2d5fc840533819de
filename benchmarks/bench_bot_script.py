"""Does the default bot hold a conversation? A fixed 10-turn user script played against it, as the app plays it.

Each turn goes through the app's own code path (``conversation.guarding.guarded_reply``: the bot's N candidates,
the embedded detector judging them in re-rank mode, the policy's pick), with the app's defaults: the
``embedded`` bot, the default decoding preset, 4 candidates, no persona, the embedded detector at its calibrated
τ with the 8-turn prefilter. Sampling is seeded per run and turn (``seed * 100 + turn``) so a run can be
repeated; the app itself does not seed.

Reported per run and over all runs: distinct replies (of the script's turns), the share of each reply's word
3-grams already seen in the bot's earlier replies (mean over turns 2..10), distinct candidates per turn, and
the seconds per turn (generation, guard, both). ``--dump`` writes every turn's message, reply and candidates
as plain text for a person to read.

    HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.bench_bot_script --seeds 1 2 3 \
        --json benchmarks/results/bot-script.json --dump benchmarks/results/bot-script.txt
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from benchmarks.machine import loadavg, machine_info, write_json

#: What a class types to a chatbot: questions about the bot (pets, home, job, hobbies), follow-ups that only
#: make sense after the bot's previous answer, and statements about the user that call for a reaction.
SCRIPT = (
    "Hi! How are you today?",
    "Do you have any pets?",
    "What are their names?",
    "Where do you live?",
    "Do you like living there?",
    "What do you do for a living?",
    "I'm a teacher. I teach history at a high school.",
    "What do you do for fun?",
    "How long have you been doing that?",
    "What's your favorite food?",
)

_WORD = re.compile(r"[a-z0-9']+")


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower().replace("’", "'"))


def normalized(text: str) -> str:
    """A reply compared as its words only: case and punctuation do not make two replies different."""
    return " ".join(words(text))


def ngrams(text: str, n: int = 3) -> list[tuple[str, ...]]:
    tokens = words(text)
    return [tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1)]


def repeated_ngram_share(replies: Sequence[str], n: int = 3) -> list[float | None]:
    """Per reply: the share of its word n-grams that occur in an earlier reply (None: the first reply, or one
    shorter than n words)."""
    seen: set[tuple[str, ...]] = set()
    shares: list[float | None] = []
    for index, reply in enumerate(replies):
        grams = ngrams(reply, n)
        shares.append(sum(g in seen for g in grams) / len(grams) if grams and index else None)
        seen.update(grams)
    return shares


def distinct_count(texts: Sequence[str]) -> int:
    return len({normalized(t) for t in texts})


def summarize_run(turns: Sequence[dict]) -> dict:
    """The figures of one scripted conversation from its turn rows (``reply``, ``candidates``, timings)."""
    replies = [t["reply"] for t in turns]
    shares = [s for s in repeated_ngram_share(replies) if s is not None]
    return {
        "distinct_replies": distinct_count(replies),
        "turns": len(turns),
        "repeated_3gram_share_mean": round(statistics.mean(shares), 4) if shares else None,
        "repeated_3gram_share_max": round(max(shares), 4) if shares else None,
        "distinct_candidates_mean": round(statistics.mean(t["distinct_candidates"] for t in turns), 3),
        "distinct_candidates_min": min(t["distinct_candidates"] for t in turns),
        "total_s": [t["total_s"] for t in turns],
    }


def _median(values: Sequence[float]) -> float | None:
    return round(statistics.median(values), 3) if values else None


def play(bot, guard, settings, decoding, seed: int | None, script: Sequence[str], persona: Sequence[str] = (),
         echo: bool = True) -> list[dict]:
    """One conversation: every scripted message, then the guarded reply, through the app's guarded_reply (``guard``:
    a ``guard.judge.pipeline.Guard``, None in mode off)."""
    from conversation.guarding import guarded_reply
    from conversation.records import USER, Conversation

    conversation = Conversation(persona=list(persona))
    rows = []
    for k, message in enumerate(script):
        conversation.add(USER, message)
        turn_decoding = decoding.replace(seed=seed * 100 + k) if seed is not None else decoding
        started = time.perf_counter()
        turn = conversation.append(guarded_reply(conversation, bot, guard, replace(settings, decoding=turn_decoding)))
        total = time.perf_counter() - started
        report = turn.report
        candidates = [c.text for c in report.candidates]
        rows.append({
            "turn": k + 1, "user": message, "reply": turn.text, "candidates": candidates,
            "distinct_candidates": distinct_count(candidates), "used_fallback": report.used_fallback,
            "contradicting_candidates": sum(c.contradicts for c in report.candidates),
            "generate_s": report.timings.get("generate_s"), "guard_s": report.timings.get("guard_s"),
            "total_s": round(total, 4), "loadavg": loadavg(),
        })
        if echo:
            print(f"  [{k + 1:2d}] {total:5.2f} s  {len(set(map(normalized, candidates)))}/{len(candidates)} distinct  "
                  f"{message!r} -> {turn.text!r}", flush=True)
    return rows


def dump_text(runs: Sequence[dict]) -> str:
    """Every run as plain text: the user's message, the reply sent, and the other candidates."""
    lines = []
    for run in runs:
        lines.append(f"=== seed {run['seed']} ===")
        for t in run["turns"]:
            lines.append(f"[{t['turn']}] USER: {t['user']}")
            lines.append(f"    BOT:  {t['reply']}")
            others = [c for c in t["candidates"] if c != t["reply"]]
            for c in others:
                lines.append(f"          (candidate) {c}")
        lines.append("")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bot", default="embedded")
    parser.add_argument("--engine", default="auto")
    parser.add_argument("--preset", default=None, help="decoding preset (default: bots.base.DEFAULT_PRESET)")
    parser.add_argument("--candidates", type=int, default=4)
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--mode", default="rerank", help="guard mode (off: no detector is loaded)")
    parser.add_argument("--warmup", type=int, default=1, help="untimed replies before the runs (loads, caches)")
    parser.add_argument("--persona", type=Path, help="a persona file (one line a fact); default: none, as the app")
    parser.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                        help="change one decoding setting of the preset (experiments), e.g. history_ngram_size=4")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--dump", type=Path, help="write the replies and candidates as plain text here")
    args = parser.parse_args(argv)

    from bots.base import DEFAULT_PRESET, PRESETS
    from bots.registry import make_bot
    from conversation.records import ChatSettings

    machine = machine_info()
    started = time.perf_counter()
    options = {"engine": args.engine} if args.bot not in ("scripted", "remote") else {}
    bot = make_bot(args.bot, **options)
    guard, threshold = None, 0.5
    if args.mode != "off":
        from guard.judge.pipeline import load_guard

        guard = load_guard("embedded")  # the app's guard: its calibrated τ and prefilter
        threshold = guard.threshold
    load_s = time.perf_counter() - started
    preset_name = args.preset or DEFAULT_PRESET
    decoding = PRESETS[preset_name]
    for change in args.set:
        field, _, value = change.partition("=")
        current = getattr(decoding, field)
        decoding = decoding.replace(**{field: type(current)(value) if current is not None else int(value)})
    persona = [line for line in args.persona.read_text().splitlines() if line.strip()] if args.persona else []
    settings = ChatSettings(bot=args.bot, preset=preset_name, decoding=decoding, guard_mode=args.mode,
                            detector="embedded", threshold=threshold, num_candidates=args.candidates, persona=persona)
    if args.warmup:
        play(bot, guard, settings, decoding, None, SCRIPT[:args.warmup], persona, echo=False)
    runs = []
    for seed in args.seeds:
        print(f"seed {seed}:", flush=True)
        turns = play(bot, guard, settings, decoding, seed, SCRIPT, persona)
        runs.append({"seed": seed, "summary": summarize_run(turns), "turns": turns})
    all_turns = [t for run in runs for t in run["turns"]]
    summary = {
        "bot": args.bot, "engine_label": getattr(bot, "engine_label", ""), "preset": preset_name,
        "decoding": {k: v for k, v in vars(decoding).items()}, "candidates": args.candidates, "mode": args.mode,
        "persona": persona,
        "threshold": threshold, "seeds": args.seeds, "script_turns": len(SCRIPT),
        "distinct_replies_per_run": [r["summary"]["distinct_replies"] for r in runs],
        "repeated_3gram_share_mean": round(statistics.mean(
            r["summary"]["repeated_3gram_share_mean"] or 0.0 for r in runs), 4),
        "distinct_candidates_mean": round(statistics.mean(t["distinct_candidates"] for t in all_turns), 3),
        "total_p50_s": _median([t["total_s"] for t in all_turns]),
        "total_p50_turn6_s": _median([r["turns"][5]["total_s"] for r in runs if len(r["turns"]) > 5]),
        "total_p50_turns4to6_s": _median([t["total_s"] for r in runs for t in r["turns"][3:6]]),
        "generate_p50_s": _median([t["generate_s"] for t in all_turns if t["generate_s"] is not None]),
        "guard_p50_s": _median([t["guard_s"] for t in all_turns if t["guard_s"] is not None]),
        "fallbacks": sum(t["used_fallback"] for t in all_turns),
        "load_s": round(load_s, 1),
    }
    print(json.dumps(summary, indent=2))
    if args.json:
        write_json(args.json, {"machine": machine, "loadavg_end": loadavg(), "command": sys.argv, "summary": summary,
                               "runs": runs}, ensure_ascii=False)
    if args.dump:
        args.dump.parent.mkdir(parents=True, exist_ok=True)
        args.dump.write_text(dump_text(runs), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
