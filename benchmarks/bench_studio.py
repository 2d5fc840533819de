"""Goading studio benchmarks: suggestion latency, database concurrency, trigger effectiveness.

    python -m benchmarks.bench_studio suggest [--conversations 40] [--lm]
    python -m benchmarks.bench_studio db [--sessions 5] [--turns 10] [--db URL | --postgres]
    python -m benchmarks.bench_studio triggers [--sessions 30] [--turns 3] [--modes off rerank block]

* ``suggest``: wall time of ``studio.goading.suggest`` after each bot turn of real two-person chats
  (the ``chitchat-dataset`` package; the second speaker plays the bot), p50/p90 after a warm-up; with
  ``--lm`` also the FQness re-ranking of the follow-up question under the embedded bot's LM.
* ``db``: N sessions writing T user+bot turns each at once, each through its own engine (as separate
  browser sessions or processes do); rows are counted afterwards. SQLite by default (a fresh file),
  ``--postgres`` starts a throwaway server (harness/postgres.py).
* ``triggers``: self-play with the embedded bot and detector (``studio.redteam``), N sessions per
  method and guard mode; share of bot replies flagged per method (CDConv's Table 2 shape), judged by
  the guard's detector and by a second judge, and ``per_method``: per trigger method, the share of its
  suggestions that led to a flagged or annotated contradiction (the guard flagged a candidate, either
  judge flags the sent reply, or annotators in ``--db`` said so), over all modes and per mode (also
  printed as a table on stderr). Slow: minutes per session on a 2-core CPU.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.machine import write_json

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def chitchat_histories(conversations: int, max_turns: int = 10) -> list[list]:
    """Real chats (guard.eval.chitchat) as user/bot turns: ASCII turns only, the second speaker plays the bot."""
    from guard.eval.chitchat import iter_chitchat
    from guard.records import Turn

    out = []
    for conv in iter_chitchat():
        texts = [text for text in conv.utterances if text.isascii()]
        turns = [Turn(i, "user" if i % 2 == 0 else "bot", text) for i, text in enumerate(texts)]
        if len(turns) >= 4:
            out.append(turns[:max_turns])
        if len(out) >= conversations:
            break
    return out


def _percentiles(values: list[float]) -> dict:
    values = sorted(values)
    if not values:
        return {"n": 0}
    p90 = values[min(len(values) - 1, int(round(0.9 * (len(values) - 1))))]
    return {"n": len(values), "p50_ms": round(statistics.median(values) * 1000, 1), "p90_ms": round(p90 * 1000, 1),
            "max_ms": round(values[-1] * 1000, 1)}


def bench_suggest(args: argparse.Namespace) -> dict:
    from studio.goading import refine_follow_ups, suggest, warm_up

    histories = chitchat_histories(args.conversations)
    started = time.perf_counter()
    warm_up()  # spaCy and WordNet load (the app does this in the background when it starts)
    warmup = time.perf_counter() - started
    template, refine, counts = [], [], []
    scorer = None
    if args.lm:
        from bots.registry import make_bot
        from studio.lm import continuation_scorer

        scorer = continuation_scorer(make_bot("embedded"))
    for turns in histories:
        for end in range(2, len(turns) + 1, 2):  # after each bot turn
            history = turns[:end]
            t0 = time.perf_counter()
            result = suggest(history)
            template.append(time.perf_counter() - t0)
            counts.append(len(result.suggestions))
            if scorer is not None:
                t0 = time.perf_counter()
                refine_follow_ups(result, history, scorer)
                refine.append(time.perf_counter() - t0)
    report = {"benchmark": "suggest", "conversations": len(histories), "warmup_s": round(warmup, 2),
              "template": _percentiles(template), "suggestions_per_turn": {
                  "min": min(counts), "max": max(counts), "mean": round(statistics.mean(counts), 2)}}
    if scorer is not None:
        report["fqness_refine"] = _percentiles(refine)
    return report


def bench_db(args: argparse.Namespace) -> dict:
    from guard.config import JudgeSettings
    from guard.judge.report import BotTurnReport, CandidateReport
    from guard.judge.verdicts import Verdict, VerdictDetails
    from guard.vocabulary import Category, GuardMode, Method
    from harness.studio_writers import write_sessions_at_once
    from studio.storage import safe_url

    def report(k: int, t: int) -> BotTurnReport:
        """4 candidates, each judged consistent (score 0.1), the first one sent."""
        details = VerdictDetails(Method.STRUCTURED, 2 * t + 1, 0.5, 1, 0.1)
        verdicts = [Verdict(False, 0.1, Category.NONE, (), (), details) for _ in range(4)]
        return BotTurnReport(JudgeSettings.resolve(mode=GuardMode.RERANK, threshold=0.5), "bench", 0, False, tuple(
            CandidateReport(i, f"answer {t}.{i}", -0.5, i == 0, "r", v) for i, v in enumerate(verdicts)))

    def run(url: str) -> dict:
        done = write_sessions_at_once(url, args.sessions, args.turns, report)
        expected = args.sessions * args.turns * 2
        return {"benchmark": "db", "url": safe_url(url), "sessions": args.sessions, "turns_each": args.turns,
                "seconds": round(done.seconds, 2), "turn_rows": done.counts["turns"], "expected_turn_rows": expected,
                "candidate_rows": done.counts["candidates"], "lost": expected - done.counts["turns"],
                "errors": done.errors, "save_turn": _percentiles(done.save_seconds)}

    if args.postgres:
        from harness.postgres import postgres_server

        with postgres_server() as url:
            return run(url)
    if args.db:
        return run(args.db)
    with tempfile.TemporaryDirectory() as folder:
        return run(f"sqlite:///{folder}/bench.db")


def bench_triggers(args: argparse.Namespace) -> dict:
    from bots.base import preset
    from bots.registry import make_bot
    from conversation.records import ChatSettings
    from guard.judge.pipeline import load_guard
    from studio.goading import METHODS
    from studio.redteam import Judge, RedteamSettings, run_redteam
    from studio.storage import Store

    store = Store(args.db or f"sqlite:///{tempfile.mkdtemp()}/triggers.db")
    bot = make_bot("embedded")
    guard = load_guard("embedded")
    own = Judge("embedded:structured (guard)", guard, guard.settings(mode="flag"))  # the guard's τ and prefilter
    other = Judge("embedded:unstructured", guard, guard.settings(mode="flag", method="unstructured", prefilter=False))
    rows = []
    methods = args.methods or list(METHODS)
    for mode in args.modes:
        for method in methods:
            chat = ChatSettings(bot="embedded", preset="fast", decoding=preset("fast"), guard_mode=mode,
                                threshold=guard.threshold)
            settings = RedteamSettings(chat=chat, methods=[method], sessions=args.sessions, turns=args.turns,
                                       seed=args.seed, use_lm=not args.no_lm)
            run = run_redteam(settings, store, bot, guard, own, other)
            confirmed = _annotated_contradictions(store, run)
            for row in run.report()["per_method"]:
                mine = [j for j in run.judgements if j.method == row["method"]]
                led = sum(j.guard_flag or j.guard_judge or j.judge or (j.session_id, j.turn_index) in confirmed
                          for j in mine)
                rows.append({**row, "flagged_or_annotated_share": round(led / len(mine), 4),
                             "sessions": args.sessions, "seconds": round(run.seconds, 1)})
                print(json.dumps(rows[-1]), file=sys.stderr)
            if run.interrupted:
                return {"benchmark": "triggers", "interrupted": True, "rows": rows, "db": store.display_url,
                        "per_method": _per_method(rows)}
    report = {"benchmark": "triggers", "turns": args.turns, "rows": rows, "db": store.display_url,
              "per_method": _per_method(rows)}
    print(_share_table(report["per_method"]), file=sys.stderr)
    return report


def _annotated_contradictions(store, run) -> set[tuple[str, int]]:
    """Bot turns of the run that people annotated as contradictions (majority), e.g. in a --db shared with the
    Review page; self-play alone has none."""
    from studio.scores import by_turn, majority

    grouped = by_turn(a for a in store.annotations() if a.session_id in set(run.session_ids))
    return {key for key, labels in grouped.items() if majority(labels)}


def _per_method(rows: list[dict]) -> list[dict]:
    """Per trigger method over every guard mode: replies, and the share whose message led to a contradiction
    (flagged by the guard at generation or by either judge, or annotated as one)."""
    out = []
    for method in dict.fromkeys(r["method"] for r in rows):
        mine = [r for r in rows if r["method"] == method]
        replies = sum(r["replies"] for r in mine)
        led = sum(r["flagged_or_annotated_share"] * r["replies"] for r in mine)
        by_mode = {}
        for mode in dict.fromkeys(str(r["guard_mode"]) for r in mine):  # the opener is in every method's runs
            rows_of_mode = [r for r in mine if str(r["guard_mode"]) == mode]
            n = sum(r["replies"] for r in rows_of_mode)
            by_mode[mode] = round(sum(r["flagged_or_annotated_share"] * r["replies"] for r in rows_of_mode) / n, 4)
        out.append({"method": method, "replies": replies,
                    "flagged_or_annotated_share": round(led / replies, 4) if replies else None,
                    "by_mode": by_mode})
    return sorted(out, key=lambda r: -(r["flagged_or_annotated_share"] or 0))


def _share_table(per_method: list[dict]) -> str:
    modes = list(dict.fromkeys(m for r in per_method for m in r["by_mode"]))
    lines = ["method              replies  share  " + "  ".join(f"{m:>7}" for m in modes)]
    for r in per_method:
        lines.append(f"{r['method']:<20}{r['replies']:>7}  {r['flagged_or_annotated_share']:.2f}  "
                     + "  ".join(f"{r['by_mode'].get(m, float('nan')):>7.2f}" for m in modes))
    return "\n".join(lines)


def main(argv=None) -> int:
    from embedded import configure_openmp

    configure_openmp()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("suggest")
    s.add_argument("--conversations", type=int, default=40)
    s.add_argument("--lm", action="store_true", help="also time the FQness re-ranking under the embedded bot")
    s.set_defaults(func=bench_suggest)
    d = sub.add_parser("db")
    d.add_argument("--sessions", type=int, default=5)
    d.add_argument("--turns", type=int, default=10)
    d.add_argument("--db", default=None)
    d.add_argument("--postgres", action="store_true")
    d.set_defaults(func=bench_db)
    t = sub.add_parser("triggers")
    t.add_argument("--sessions", type=int, default=30, help="sessions per method and guard mode")
    t.add_argument("--turns", type=int, default=3, help="bot turns per session")
    t.add_argument("--modes", nargs="+", default=["off", "rerank", "block"])
    t.add_argument("--methods", nargs="+", default=None)
    t.add_argument("--db", default=None)
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--no-lm", action="store_true")
    t.set_defaults(func=bench_triggers)
    parser.add_argument("--json", type=Path, default=None, help="also write the report here")
    args = parser.parse_args(argv)
    report = args.func(args)
    print(json.dumps(report, indent=2))
    if args.json:
        write_json(args.json, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
