"""Detectors judged as a live chat sees them: every bot turn of the two dev streams (``guard.eval.stream``).

    # score every bot turn of one stream's half with a detector, every check on (threshold-free scores, cached)
    .venv/bin/python -m benchmarks.bench_bot_stream score --model embedded --stream decode --split calibration \\
        --out benchmarks/results/stream3/embedded-decode-calibration.json
    # the stream table: each scored file at the detector's configured decision (its guard_config.json), with 90 %
    # bootstrap intervals over conversations
    .venv/bin/python -m benchmarks.bench_bot_stream report benchmarks/results/stream3/*-evaluation.json
    # two detectors on the same half: AUC B minus A with a paired bootstrap over conversations
    .venv/bin/python -m benchmarks.bench_bot_stream paired A-decode-evaluation.json B-decode-evaluation.json

The streams: ``convai2`` (ConvAI2 wild evaluation, every bot turn of the sample labelled by us in two passes) and
``decode`` (DECODE's human-bot dev half, the last bot turn of each conversation verified by three annotators; the
earlier bot turns count for badges per 100 only). Needs the shared data folder (``../shared/data`` or
``GUARD_SHARED_DATA``). The detector is built as the app builds it (sentence pairing, prefilter k = 8 over the
packaged MiniLM embedder) with every check on, so any decision can be read off the scores afterwards.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict
from pathlib import Path

from benchmarks.machine import machine_info, write_json


def cmd_score(args) -> int:
    from guard.eval import dev_streams, stream
    from guard.eval.evaluation import progress
    from guard.judge.pipeline import load_guard

    turns = dev_streams.labelled_turns(args.stream, None if args.split == "both" else args.split)
    guard = load_guard(args.model)
    settings = guard.settings(mode="flag", checks=True)  # every check: the budget picks among them
    started = time.perf_counter()
    scores = stream.score_stream(guard, settings, turns, progress=lambda items: progress(items, args.model))
    elapsed = time.perf_counter() - started
    out = {"model": args.model, "stream": args.stream, "split": args.split, "prefilter_k": settings.prefilter_k,
           "scored_with_threshold": settings.threshold, "seconds": round(elapsed, 1), "bot_turns": len(scores),
           "machine": machine_info(),
           "turns": [{**asdict(s), "label": None if t.label is None else bool(t.label.contradiction)}
                     for s, t in zip(scores, turns)]}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_json(args.out, out, indent=None)
    print(f"{len(scores)} bot turns scored in {elapsed:.0f} s -> {args.out}", file=sys.stderr)
    return 0


def load_scored(path: Path):
    """A scored file as (its header, a ``guard.eval.stream.ScoredStream``)."""
    from guard.eval.dev_streams import ScoredStream
    from guard.eval.stream import TurnScore

    data = json.loads(Path(path).read_text())
    turns = data["turns"]
    scores = [TurnScore(**{k: v for k, v in t.items() if k != "label"}) for t in turns]
    return data, ScoredStream(data.get("stream", "convai2"), scores, [t.get("label") for t in turns])


def config_decision(model: str):
    """The decision a detector's guard_config.json sets: τ and the thresholds of the checks it keeps on."""
    from guard.config import JudgeSettings
    from guard.eval.dev_streams import Decision
    from guard.models.registry import read_config
    from guard.vocabulary import Check

    config = read_config(model)
    settings = JudgeSettings.resolve(config, threshold=config.threshold)  # each check's threshold at τ, as judged
    return Decision(settings.threshold, settings.intra_threshold if Check.INTRA in settings.checks else 1.0,
                    settings.own_question_threshold if Check.OWN_QUESTION in settings.checks else 1.0,
                    1.0 if Check.FACTS in settings.checks else 2.0, settings.fact_confidence)


def stream_row(scored, decision, resamples: int = 1000) -> dict:
    """The stream figures for one scored half at ``decision``: badges per 100 over every bot turn; precision,
    recall, false alarms and AUC over the verified turns, each with a 90 % bootstrap interval over conversations."""
    import numpy as np
    from sklearn.metrics import roc_auc_score

    from guard.eval.dev_streams import bootstrap_interval

    flagged = np.array([decision.flagged(s) for s in scored.scores])
    score = np.array([decision.score(s) for s in scored.scores])
    verified = scored.verified
    y = np.array([bool(scored.labels[i]) for i in verified])
    f, s = flagged[verified], score[verified]
    groups = [scored.scores[i].record_id for i in verified]

    def recall(idx):
        yy, ff = y[idx], f[idx]
        return float(ff[yy].mean()) if yy.any() else float("nan")

    def false_alarms(idx):
        yy, ff = y[idx], f[idx]
        return float(ff[~yy].mean()) if (~yy).any() else float("nan")

    def precision(idx):
        yy, ff = y[idx], f[idx]
        return float(yy[ff].mean()) if ff.any() else float("nan")

    def auc(idx):
        yy = y[idx]
        return float(roc_auc_score(yy, s[idx])) if 0 < yy.sum() < len(yy) else float("nan")

    everything = list(range(len(y)))
    row = {"stream": scored.name, "bot_turns": len(scored.scores), "verified": len(verified),
           "contradictions": int(y.sum()), "threshold": decision.threshold,
           "intra_threshold": decision.intra_threshold, "own_question_threshold": decision.own_question_threshold,
           "badges_per_100": round(100.0 * float(flagged.mean()), 2)}
    for name, stat in (("precision", precision), ("recall", recall), ("false_alarm_rate", false_alarms),
                       ("auc", auc)):
        value = stat(everything)
        row[name] = round(value, 4) if value == value else None
        row[f"{name}_90"] = bootstrap_interval(groups, stat, resamples=resamples)
    return row


COLUMNS = ("model", "stream", "split", "bot_turns", "verified", "contradictions", "threshold", "badges_per_100",
           "precision", "recall", "false_alarm_rate", "auc")


def cmd_report(args) -> int:
    rows = []
    for path in args.scores:
        data, scored = load_scored(path)
        row = stream_row(scored, config_decision(data["model"]), resamples=args.resamples)
        row.update({"model": data["model"], "split": data["split"]})
        rows.append(row)
    print("| " + " | ".join(COLUMNS) + " |")
    print("|" + "---|" * len(COLUMNS))
    for row in rows:
        cells = []
        for c in COLUMNS:
            value = row.get(c, "")
            interval = row.get(f"{c}_90")
            cells.append(f"{value} [{interval[0]}, {interval[1]}]" if interval and value is not None else str(value))
        print("| " + " | ".join(cells) + " |")
    if args.json:
        write_json(args.json, {"rows": rows, "machine": machine_info()}, indent=2)
    return 0


def paired_auc(scored_a, decision_a, scored_b, decision_b, resamples: int = 1000) -> dict:
    """AUC over the verified turns of one stream half for two detectors, and B's minus A's with a 90 % paired
    bootstrap interval over conversations (the same resampled conversations for both; docs/experiments/
    2026-11-27-detector-v5.md's rule)."""
    import numpy as np
    from sklearn.metrics import roc_auc_score

    from guard.eval.dev_streams import bootstrap_interval

    keys_a = [(s.record_id, s.turn_id) for s in scored_a.scores]
    keys_b = [(s.record_id, s.turn_id) for s in scored_b.scores]
    if keys_a != keys_b or scored_a.labels != scored_b.labels:
        raise SystemExit("the two files must score the same turns of the same stream half, in the same order")
    verified = scored_a.verified
    y = np.array([bool(scored_a.labels[i]) for i in verified])
    a = np.array([decision_a.score(scored_a.scores[i]) for i in verified])
    b = np.array([decision_b.score(scored_b.scores[i]) for i in verified])
    groups = [scored_a.scores[i].record_id for i in verified]

    def auc(values, idx):
        yy = y[idx]
        return float(roc_auc_score(yy, values[idx])) if 0 < yy.sum() < len(yy) else float("nan")

    everything = list(range(len(y)))
    return {"stream": scored_a.name, "verified": len(verified), "contradictions": int(y.sum()),
            "auc_a": round(auc(a, everything), 4), "auc_b": round(auc(b, everything), 4),
            "auc_b_minus_a": round(auc(b, everything) - auc(a, everything), 4),
            "auc_b_minus_a_90": bootstrap_interval(groups, lambda idx: auc(b, idx) - auc(a, idx),
                                                   resamples=resamples)}


def cmd_paired(args) -> int:
    data_a, scored_a = load_scored(args.a)
    data_b, scored_b = load_scored(args.b)
    row = paired_auc(scored_a, config_decision(data_a["model"]), scored_b, config_decision(data_b["model"]),
                     resamples=args.resamples)
    row.update({"a": data_a["model"], "b": data_b["model"], "split": data_a["split"]})
    print(json.dumps(row, indent=2))
    if args.json:
        write_json(args.json, {**row, "machine": machine_info()}, indent=2)
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_bot_stream", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    score = sub.add_parser("score", help="score every bot turn of one stream's half with a detector")
    score.add_argument("--model", required=True)
    score.add_argument("--stream", choices=("convai2", "decode"), required=True)
    score.add_argument("--split", choices=("calibration", "evaluation", "both"), required=True)
    score.add_argument("--out", type=Path, required=True)
    score.set_defaults(func=cmd_score)
    report = sub.add_parser("report", help="the stream table for scored files, at each detector's configured decision")
    report.add_argument("scores", nargs="+", type=Path)
    report.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples (conversations)")
    report.add_argument("--json", type=Path, default=None)
    report.set_defaults(func=cmd_report)
    paired = sub.add_parser("paired", help="two detectors' AUC on one stream half, B minus A, paired bootstrap")
    paired.add_argument("a", type=Path, help="detector A's scored file (the one shipped)")
    paired.add_argument("b", type=Path, help="detector B's scored file (the candidate), the same turns")
    paired.add_argument("--resamples", type=int, default=1000)
    paired.add_argument("--json", type=Path, default=None)
    paired.set_defaults(func=cmd_paired)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
