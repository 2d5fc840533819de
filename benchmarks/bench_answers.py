"""Short answers read with their question: the frozen probe set, and how many real answers the rules read.

    # the probes (guard/data/probe_answers.jsonl, hand-written and frozen before any rule): contradicting short answers
    # caught, their consistent twins flagged, by kind, with the detector as the chat builds it
    .venv/bin/python -m benchmarks.bench_answers probes --model embedded
    # the wordy-persona facts (guard/data/probe_facts.jsonl, frozen before the fact sheet), by relation; --no-facts:
    # the detector alone, the fact sheet's check off
    .venv/bin/python -m benchmarks.bench_answers probes --probes guard/data/probe_facts.jsonl --model embedded
    # coverage: the share of bot turns answering a question that the rules read, on unlabelled ConvAI2 conversations
    # (outside the labelled sample) and the DECODE stream's calibration half, and a seeded sample to check by hand
    .venv/bin/python -m benchmarks.bench_answers coverage --sample 50 --seed 0

Needs the shared data folder for ``coverage`` only.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import defaultdict
from pathlib import Path

from benchmarks.machine import machine_info, write_json

PROBES = Path(__file__).resolve().parents[1] / "guard" / "data" / "probe_answers.jsonl"


def probe_rows(model: str, every_check: bool = False, probes: Path = PROBES, no_facts: bool = False) -> dict:
    """Caught and twins flagged by kind (or relation) for ``model``'s chat detector (or with every check on; without
    the fact sheet's check with ``no_facts``)."""
    from guard.eval.datasets import read_decode
    from guard.judge.pipeline import load_guard
    from guard.vocabulary import CHECKS

    guard = load_guard(model)
    checks = set(CHECKS) if every_check else set(guard.settings().checks)
    if no_facts:
        checks.discard("facts")
    settings = guard.settings(mode="flag", checks=sorted(checks))
    counts: dict[str, dict[str, int]] = defaultdict(lambda: {"contradictions": 0, "caught": 0, "twins": 0,
                                                             "twins_flagged": 0})
    misses = []
    for dialogue in read_decode(probes):
        verdict = guard.verdict_on_dialogue(dialogue, settings)
        row = counts[dialogue.meta.get("kind") or dialogue.meta.get("relation")]
        if dialogue.label:
            row["contradictions"] += 1
            row["caught"] += int(verdict.contradiction)
        else:
            row["twins"] += 1
            row["twins_flagged"] += int(verdict.contradiction)
        if bool(verdict.contradiction) != bool(dialogue.label):
            misses.append({"record_id": dialogue.record_id, "reply": dialogue.last.text,
                           "reading": verdict.details.answer_reading, "score": round(verdict.score, 4),
                           "category": str(verdict.category)})
    total = {k: sum(r[k] for r in counts.values()) for k in ("contradictions", "caught", "twins", "twins_flagged")}
    return {"model": model, "probes": str(probes), "checks": sorted(str(c) for c in settings.checks),
            "threshold": settings.threshold,
            "caught": round(total["caught"] / total["contradictions"], 4),
            "twins_flagged": round(total["twins_flagged"] / total["twins"], 4),
            "by_kind": dict(counts), "total": total, "wrong": misses}


def cmd_probes(args) -> int:
    out = {"machine": machine_info(),
           "rows": [probe_rows(m, args.every_check, args.probes, args.no_facts) for m in args.model]}
    for row in out["rows"]:
        print(f"{row['model']} (τ {row['threshold']}, checks {row['checks']}): caught {row['caught']}, "
              f"twins flagged {row['twins_flagged']}")
        for kind, r in row["by_kind"].items():
            print(f"  {kind:12} caught {r['caught']}/{r['contradictions']}  twins flagged {r['twins_flagged']}/{r['twins']}")
    if args.json:
        write_json(args.json, out, indent=2)
    return 0


def cmd_coverage(args) -> int:
    from guard.eval import decode_stream, stream
    from guard.language.answers import read_answer

    labelled = stream.labelled_record_ids()
    sources = {"convai2 (unlabelled conversations)": [d for d in stream.read_conversations()
                                                       if d.record_id not in labelled],
               "decode (calibration half)": decode_stream.read_conversations(split="calibration")}
    out = {"machine": machine_info(), "sources": {}}
    for name, dialogues in sources.items():
        answers, read = 0, []
        for d in dialogues:
            for before, turn in zip(d.turns, d.turns[1:]):
                if before.agent_id == "user" and turn.agent_id == "bot" and "?" in before.text:
                    answers += 1
                    reading = read_answer(before.text, turn.text)
                    if reading is not None:
                        read.append({"record_id": d.record_id, "turn_id": turn.turn_id, "kind": str(reading.kind),
                                     "text": (reading.question, reading.answer, reading.statement)})
        random.Random(args.seed).shuffle(read)
        by_kind: dict[str, int] = defaultdict(int)
        for r in read:
            by_kind[r["kind"]] += 1
        sample = read[: args.sample]
        # the conversations' text stays in the shared data folder: the file keeps ids, the screen shows the text
        out["sources"][name] = {"answer_turns": answers, "read": len(read),
                                "coverage": round(len(read) / answers, 4) if answers else None, "by_kind": dict(by_kind),
                                "sample": [{k: v for k, v in r.items() if k != "text"} for r in sample]}
        print(f"{name}: {len(read)} of {answers} bot turns answering a question read "
              f"({len(read) / max(answers, 1):.1%}); by kind {dict(by_kind)}")
        for i, r in enumerate(sample):
            question, answer, statement = r["text"]
            print(f"  {i:2} | {question[-75:]} | {answer[:70]} => {statement}")
    if args.json:
        write_json(args.json, out, indent=2)
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_answers", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    probes = sub.add_parser("probes", help="the frozen short-answer probes")
    probes.add_argument("--model", nargs="+", default=["embedded"])
    probes.add_argument("--every-check", action="store_true", help="every check on (the playground's detector)")
    probes.add_argument("--probes", type=Path, default=PROBES, help="the probe file (DECODE-shaped JSON lines)")
    probes.add_argument("--no-facts", action="store_true", help="the fact sheet's check off: the detector alone")
    probes.add_argument("--json", type=Path, default=None)
    probes.set_defaults(func=cmd_probes)
    coverage = sub.add_parser("coverage", help="how many real answers the rules read, with a sample to check")
    coverage.add_argument("--sample", type=int, default=50)
    coverage.add_argument("--seed", type=int, default=0)
    coverage.add_argument("--json", type=Path, default=None)
    coverage.set_defaults(func=cmd_coverage)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
