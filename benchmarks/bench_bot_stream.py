"""Detectors judged as a live chat sees them: every bot turn of the labelled real conversations (``guard.stream``).

    # score every bot turn of one half with a detector (threshold-free scores, cached in a JSON file)
    .venv/bin/python -m benchmarks.bench_bot_stream score --model embedded --split calibration \\
        --out benchmarks/results/stream/embedded-calibration.json
    # the stream table: each scored detector at its operating point (its guard_config.json, or the calibration
    # half's rule with --tau calibrated), on one half
    .venv/bin/python -m benchmarks.bench_bot_stream report benchmarks/results/stream/*-evaluation.json --tau config

Needs the shared data folder (``../shared/data`` or ``GUARD_SHARED_DATA``) for the conversations' text and
``guard/data/bot_stream/labels.jsonl`` for the labels. The product detector is built as the app builds it: sentence
pairing, prefilter k = 8 over the packaged MiniLM embedder, categories on.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict
from pathlib import Path

from benchmarks.machine import machine_info


def cmd_score(args) -> int:
    from guard import stream
    from guard.evaluation import progress
    from guard.pipeline import load_guard

    sample = stream.read_sample()
    wanted = set(sample.split(args.split)) if args.split != "both" else set(sample.record_ids)
    dialogues = [d for d in stream.read_conversations() if d.record_id in wanted]
    turns = stream.stream_turns(dialogues)
    detector = load_guard(args.model).detector()  # the app's detector: its τ, prefilter k and categories
    started = time.perf_counter()
    scores = stream.score_stream(detector, turns, progress=lambda items: progress(items, args.model))
    elapsed = time.perf_counter() - started
    out = {"model": args.model, "split": args.split, "prefilter_k": detector.prefilter_k,
           "scored_with_threshold": detector.threshold, "scored_with_intra_threshold": detector.intra_threshold,
           "seconds": round(elapsed, 1), "bot_turns": len(scores), "machine": machine_info(),
           "turns": [asdict(s) for s in scores]}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out) + "\n")
    print(f"{len(scores)} bot turns scored in {elapsed:.0f} s -> {args.out}", file=sys.stderr)
    return 0


def load_scores(path: Path):
    from guard.stream import TurnScore

    data = json.loads(Path(path).read_text())
    return data, [TurnScore(**t) for t in data["turns"]]


def report_rows(paths, tau: str, calibration_files: dict[str, Path] | None = None) -> list[dict]:
    """One stream report per scored file, at the detector's configured operating point or the one its
    calibration-half scores give by the rule (``--tau calibrated``)."""
    from guard import stream
    from guard.registry import read_config

    labels = {(x.record_id, x.turn_id): x for x in stream.read_labels()}
    rows = []
    for path in paths:
        data, scores = load_scores(path)
        y = [labels[(s.record_id, s.turn_id)].contradiction for s in scores]
        if tau == "calibrated":
            cal_path = (calibration_files or {}).get(data["model"])
            if cal_path is None:
                raise SystemExit(f"--tau calibrated needs the calibration-half scores of {data['model']}")
            _, cal = load_scores(cal_path)
            point = stream.stream_operating_point(cal, [labels[(s.record_id, s.turn_id)].contradiction for s in cal])
            threshold, intra, own = point["threshold"], point["intra_threshold"], point["own_question_threshold"]
        else:
            config = read_config(data["model"])
            threshold = config.threshold
            intra, own = config.intra_threshold_at(threshold), config.own_question_threshold_at(threshold)
        flagged = [s.flagged(threshold, intra, own) for s in scores]
        report = stream.stream_report(y, [s.score(intra, own) for s in scores], flagged)
        hits = [(s, labels[(s.record_id, s.turn_id)]) for s, f in zip(scores, flagged) if f]
        right_evidence = sum(1 for s, lab in hits if lab.contradiction and _evidence_overlaps(s, lab, threshold))
        report.update({"model": data.get("label") or data["model"], "split": data["split"], "threshold": threshold,
                       "intra_threshold": intra, "own_question_threshold": own,
                       "evidence_right_of_caught": right_evidence})
        rows.append(report)
    return rows


def _evidence_overlaps(score, label, threshold: float) -> bool:
    """A caught contradiction whose evidence names a turn or persona line the people named (intra: any)."""
    if str(label.category) == "intra":
        return True
    turns, persona = score.evidence(threshold)
    return bool(set(turns) & set(label.evidence_turns) or set(persona) & set(label.evidence_persona))


COLUMNS = ("model", "split", "bot_turns", "contradictions", "threshold", "intra_threshold", "own_question_threshold",
           "badges_per_100",
           "precision", "recall", "false_alarm_rate", "auc", "evidence_right_of_caught")


def cmd_report(args) -> int:
    calibration = {}
    for path in args.calibration or []:
        data, _ = load_scores(path)
        calibration[data["model"]] = path
    rows = report_rows(args.scores, args.tau, calibration)
    print("| " + " | ".join(COLUMNS) + " |")
    print("|" + "---|" * len(COLUMNS))
    for row in rows:
        print("| " + " | ".join(str(row.get(c, "")) for c in COLUMNS) + " |")
    if args.json:
        args.json.write_text(json.dumps({"tau": args.tau, "rows": rows, "machine": machine_info()}, indent=2) + "\n")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_bot_stream", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    score = sub.add_parser("score", help="score every bot turn of one half with a detector")
    score.add_argument("--model", required=True)
    score.add_argument("--split", choices=("calibration", "evaluation", "both"), required=True)
    score.add_argument("--out", type=Path, required=True)
    score.set_defaults(func=cmd_score)
    report = sub.add_parser("report", help="the stream table for scored files")
    report.add_argument("scores", nargs="+", type=Path)
    report.add_argument("--tau", choices=("config", "calibrated"), default="config",
                        help="config: each detector's guard_config.json; calibrated: the rule on --calibration files")
    report.add_argument("--calibration", nargs="*", type=Path, help="calibration-half score files (--tau calibrated)")
    report.add_argument("--json", type=Path, default=None)
    report.set_defaults(func=cmd_report)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
