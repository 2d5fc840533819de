"""Two scorings of the same stream half, turn by turn: the same verdicts, and scores within a tolerance?

A refactor of the judge path must not change what it decides (issue 43): both dev streams' calibration halves scored
before and after (``benchmarks.bench_bot_stream score``), then compared here. Exits 1 when any turn's category
differs or any score (history, intra, own question, each premise) moves by more than ``--tolerance`` (int8's batch
noise: 0.01), and prints the largest moves either way.

    .venv/bin/python -m benchmarks.compare_stream_scores benchmarks/results/house/before-decode-calibration.json \\
        benchmarks/results/house/after-decode-calibration.json --out benchmarks/results/house/compare-decode.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

SCORES = ("history_score", "intra_score", "own_question_score")


def compare(before: dict, after: dict, tolerance: float) -> dict:
    def keyed(data: dict) -> dict:
        return {(t["record_id"], t["turn_id"]): t for t in data["turns"]}

    old, new = keyed(before), keyed(after)
    if set(old) != set(new):
        missing, extra = sorted(set(old) - set(new))[:5], sorted(set(new) - set(old))[:5]
        return {"same_turns": False, "missing": missing, "extra": extra}
    categories, moves = [], []
    for key, a in old.items():
        b = new[key]
        if a["category"] != b["category"]:
            categories.append({"turn": list(key), "before": a["category"], "after": b["category"]})
        for name in SCORES:
            moves.append((abs(a[name] - b[name]), name, key, a[name], b[name]))
        for premise in set(a["premises"]) | set(b["premises"]):
            x, y = a["premises"].get(premise), b["premises"].get(premise)
            if x is None or y is None:
                moves.append((1.0, f"premise {premise} paired only {'after' if x is None else 'before'}", key, x, y))
            else:
                moves.append((abs(x - y), f"premise {premise}", key, x, y))
    moves.sort(key=lambda m: -m[0])
    over = [m for m in moves if m[0] > tolerance]
    return {"same_turns": True, "turns": len(old), "tolerance": tolerance,
            "category_changes": categories, "scores_over_tolerance": len(over),
            "largest_moves": [{"delta": round(d, 5), "what": w, "turn": list(k), "before": x, "after": y}
                              for d, w, k, x, y in moves[:5]],
            "same": not categories and not over}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--tolerance", type=float, default=0.01)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    result = compare(json.loads(args.before.read_text()), json.loads(args.after.read_text()), args.tolerance)
    result = {"before": str(args.before), "after": str(args.after), **result}
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0 if result.get("same") else 1


if __name__ == "__main__":
    sys.exit(main())
