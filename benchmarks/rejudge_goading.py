"""A goading run's stored candidates judged again, offline: each message's candidates against the conversation as it
was when they were written (the persona, the user's messages, the replies sent before).

Two uses: a refactor of the judge path must not change what it decides (issue 50: before and after compared with
``benchmarks.compare_stream_scores``, one record per candidate), and a change to the choice is read on the same
candidates without generating again (issue 51: which candidate the guard would send now).

    .venv/bin/python -m benchmarks.rejudge_goading benchmarks/results/goading/after.json \\
        --out benchmarks/results/house/before-goading.json

Writes ``turns`` in ``compare_stream_scores``' form (``record_id`` = "<persona> s<seed> m<message>", ``turn_id`` =
the candidate's index) and ``choices``: per message, the index the guard chooses now and the one the run sent.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from benchmarks.machine import machine_info, write_json


def rejudge(record: dict, guard_name: str = "embedded") -> dict:
    """Every message's stored candidates judged again by ``guard_name`` at its chat settings (re-rank)."""
    from guard.judge.pipeline import load_guard
    from guard.records import Turn
    from guard.vocabulary import PremiseSource

    guard = load_guard(guard_name)
    settings = guard.settings(mode="rerank")
    rows, choices = [], []
    for run in record["runs"]:
        turns: list[Turn] = []
        for row in run["turns"]:
            turns.append(Turn(len(turns), "user", row["user"]))
            texts = [c["text"] for c in row["candidates"]]
            report = guard.judge(turns, texts, speaker="bot", persona=run["persona"], settings=settings)
            key = f"{run['name']} s{run['seed']} m{row['message']:02d}"
            for candidate in report.candidates:
                verdict = candidate.verdict
                premises: dict[str, float] = {}
                for pair in verdict.pair_scores:
                    name = f"{'persona' if pair.source == PremiseSource.PERSONA else 'turn'}:{pair.turn_id}"
                    premises[name] = max(premises.get(name, 0.0), round(float(pair.score), 5))
                intra = verdict.details.intra
                rows.append({"record_id": key, "turn_id": candidate.index, "text": candidate.text,
                             "category": str(verdict.category),
                             "history_score": round(float(verdict.details.history_score), 5),
                             "intra_score": round(float(intra.score), 5) if intra is not None else 0.0,
                             "own_question_score": round(float(verdict.details.own_question_score or 0.0), 5),
                             "fact_clashes": len(verdict.details.fact_clashes or ()), "premises": premises})
            sent_before = next((c["text"] for c in row["candidates"] if c["chosen"]), None)
            choices.append({"record_id": key, "chosen_now": report.chosen_index, "sent_now": report.sent,
                            "sent_in_run": row["reply"], "chosen_in_run_text": sent_before})
            turns.append(Turn(len(turns), "bot", row["reply"]))
    return {"guard": guard_name, "threshold": settings.threshold,
            "turns": rows, "choices": choices}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("record", type=Path, help="a bench_goading run's JSON (its runs with their candidates)")
    parser.add_argument("--guard", default="embedded")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    result = rejudge(json.loads(args.record.read_text()), args.guard)
    changed = sum(c["sent_now"] != c["sent_in_run"] for c in result["choices"])
    write_json(args.out, {"record": str(args.record), "seconds": round(time.perf_counter() - started, 1),
                          "machine": machine_info(), "sent_differently": changed, **result}, ensure_ascii=False)
    print(f"{len(result['turns'])} candidates of {len(result['choices'])} messages judged again; "
          f"{changed} messages would send another reply -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
