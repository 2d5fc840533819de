"""Structured vs unstructured detection (DECODE §4.1) on real and probe data, one table.

Runs the same checkpoint both ways on:
* rgm/topical_dev.jsonl: 300 model-generated replies (Sato et al. 2024), overall and per generator;
  an evaluation set only: nothing is tuned on it.
* the project's probe suite (guard/data/probe_suite.jsonl) and its checklist variants: A2T (must
  stay flagged), RCT (must be cleared), negation / antonym (must be flagged), synonym (must stay
  clear).
* optionally (--mutual N) MuTual dev response selection, R@1 / R@2 / MRR, on the first N items.

    HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.bench_methods --update-doc docs/cli.md \
        --json docs/bench_methods.json

With --update-doc the markdown table replaces the block between the markers
``<!-- bench_methods:start -->`` and ``<!-- bench_methods:end -->`` in that file.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import torch

from benchmarks.machine import write_json
from embedded import shared_data_dir
from guard.eval import metrics
from guard.eval.datasets import read_dataset
from guard.eval.evaluation import evaluate_detection, evaluate_mutual, progress
from guard.eval.probes import ProbeCase, report
from guard.judge.pipeline import load_guard

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = shared_data_dir()
RGM = SHARED_DATA / "rgm" / "topical_dev.jsonl" if SHARED_DATA else None
MUTUAL = SHARED_DATA / "mutual" / "mutual_dev.jsonl" if SHARED_DATA else None
DATA = REPO / "guard" / "data"
PROBE_SETS = [  # (file, what the set checks)
    ("probe_suite.jsonl", "planted history contradictions + consistent continuations"),
    ("probe_suite_a2t.jsonl", "A2T: stays flagged"),
    ("probe_suite_rct.jsonl", "RCT: cleared"),
    ("probe_suite_negation.jsonl", "negated restatement: flagged"),
    ("probe_suite_antonym.jsonl", "antonym restatement: flagged"),
    ("probe_suite_synonym.jsonl", "synonym restatement: stays clear"),
]
START, END = "<!-- bench_methods:start -->", "<!-- bench_methods:end -->"


def run_set(guard, settings, name: str, path: Path, note: str, limit: int | None = None) -> dict:
    records = read_dataset("rgm" if path == RGM else "decode", path, limit=limit)
    started = time.perf_counter()
    verdicts = [guard.verdict_on_dialogue(d, settings) for d in progress(records, f"{settings.method} {name}")]
    seconds = time.perf_counter() - started
    result = evaluate_detection(records, verdicts)
    return {"set": name, "note": note, "method": settings.method, "seconds": round(seconds, 1),
            "ms_per_record": round(1000 * seconds / len(records), 1), **result,
            "_records": records, "_predictions": [bool(v.contradiction) for v in verdicts]}


def checklist(rows: list[dict]) -> None:
    """CheckList view of A2T / RCT: did the prediction stay (A2T) or move (RCT) from the original's?"""
    by_set = {r["set"]: r for r in rows}
    suite = by_set.get("probe_suite")
    if suite is None:
        return
    original = {d.record_id: (d, p) for d, p in zip(suite["_records"], suite["_predictions"])}
    for name in ("probe_suite_a2t", "probe_suite_rct"):
        row = by_set.get(name)
        if row is None:
            continue
        pairs = [(d, p) for d, p in zip(row["_records"], row["_predictions"])
                 if d.meta.get("source_record_id") in original]
        cases = [ProbeCase(d.meta["probe"], d.meta["expectation"], original[d.meta["source_record_id"]][0], d)
                 for d, _ in pairs]
        (rep,) = report(cases, [p for _, p in pairs], [original[d.meta["source_record_id"]][1] for d, _ in pairs])
        row["checklist"] = rep.as_dict()


def markdown(rows: list[dict], mutual: list[dict], meta: dict) -> str:
    head = ("| set | method | n | accuracy | AUC | contradiction F1 | fire rate | strict acc. | evidence F1 | ms/record |\n"
            "|---|---|---|---|---|---|---|---|---|---|")
    lines = [head]
    for r in rows:
        o = r["overall"]
        lines.append(
            f"| {r['set']} | {r['method']} | {o['n']} | {metrics.fmt(o['accuracy'])} | {metrics.fmt(o['auc'])} "
            f"| {metrics.fmt(o['f1'])} | {metrics.fmt(o['fire_rate'])} | {metrics.fmt(o.get('strict_accuracy'))} "
            f"| {metrics.fmt(o.get('evidence_f1'))} | {r['ms_per_record']} |")
        for group, g in (r.get("groups") or {}).items():
            if r["set"].startswith("rgm"):
                lines.append(f"| &nbsp;&nbsp;{group} | {r['method']} | {g['n']} | {metrics.fmt(g['accuracy'])} "
                             f"| {metrics.fmt(g['auc'])} | {metrics.fmt(g['f1'])} | {metrics.fmt(g['fire_rate'])} "
                             "| | | |")
    held = [r for r in rows if r.get("checklist")]
    if held:
        lines += ["", "| CheckList view (relative to the prediction on the original record) | method | n | held |",
                  "|---|---|---|---|"]
        for r in held:
            c = r["checklist"]
            what = "A2T: prediction unchanged" if c["probe"] == "a2t" else "RCT: prediction changed"
            lines.append(f"| {what} | {r['method']} | {c['n']} | {c['checklist_held']} ({metrics.fmt(c['checklist_rate'])}) |")
    if mutual:
        lines += ["", "| MuTual dev (response selection) | method | n | R@1 | R@2 | MRR |", "|---|---|---|---|---|---|"]
        for m in mutual:
            o = m["overall"]
            lines.append(f"| first {o['n']} items | {m['method']} | {o['n']} | {metrics.fmt(o['R@1'])} "
                         f"| {metrics.fmt(o['R@2'])} | {metrics.fmt(o['MRR'])} |")
    lines += ["", f"Detector `{meta['detector']}`, threshold {meta['threshold']:.3f} (both methods), pairing "
              f"`{meta['pairing']}`, CDConv categories {'on' if meta['categories'] else 'off'}; "
              f"{meta['machine']}; {meta['date']}. Accuracy on the A2T/RCT/negation/antonym/synonym rows is "
              "the share of variants that got their expected label."]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--detector", default="embedded")
    parser.add_argument("--threshold", type=float, default=None)
    parser.add_argument("--mutual", type=int, default=0, help="also rank the first N MuTual dev items")
    parser.add_argument("--no-categories", action="store_true", help="history contradictions only (faster)")
    parser.add_argument("--limit", type=int, default=None, help="first N records of each set (plumbing checks)")
    parser.add_argument("--json", type=Path, default=None, help="write every number here")
    parser.add_argument("--update-doc", type=Path, default=None, help="replace the marked table in this file")
    parser.add_argument("--sets", nargs="*", default=None,
                        help="only the sets whose name starts with one of these (e.g. rgm probe_suite)")
    parser.add_argument("--merge", nargs="*", type=Path, default=None,
                        help="no measuring: combine the rows of these --json files into one table")
    args = parser.parse_args()
    if args.merge:
        parts = [json.loads(p.read_text()) for p in args.merge]
        rows = [r for part in parts for r in part["rows"]]
        mutual = [m for part in parts for m in part["mutual"]]
        meta = {**parts[0]["meta"], "command": " && ".join(part["meta"]["command"] for part in parts)}
        print(write(args, rows, mutual, meta))
        return

    guard = load_guard(args.detector, prefilter=False)  # both methods read every earlier turn
    scorer = guard.scorer
    threshold = args.threshold if args.threshold is not None else guard.config.threshold
    sets = ([("rgm topical_dev", RGM, "model-generated replies (Sato et al. 2024)")] if RGM and RGM.is_file() else []) + \
        [(f.replace(".jsonl", ""), DATA / f, note) for f, note in PROBE_SETS]
    if args.sets is not None:
        sets = [s for s in sets if any(s[0].startswith(prefix) for prefix in args.sets)]
    rows, mutual = [], []
    detectors = {m: guard.settings(mode="flag", method=m, threshold=threshold, checks=not args.no_categories,
                                   prefilter=False) for m in ("structured", "unstructured")}
    meta = {
        "detector": args.detector, "threshold": threshold, "categories": not args.no_categories,
        "pairing": detectors["structured"].pairing,
        "machine": f"{platform.processor() or platform.machine()}, {torch.get_num_threads()} torch thread(s) (CPU)",
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "command": "HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.bench_methods " + " ".join(sys.argv[1:]),
    }
    for name, path, note in sets:  # set by set, both methods, results written as they come
        for method, settings in detectors.items():
            rows.append(run_set(guard, settings, name, path, note, args.limit))
            print(f"{method:12s} {name:28s} acc={rows[-1]['overall']['accuracy']:.3f} "
                  f"({rows[-1]['seconds']} s)", file=sys.stderr)
        for method in detectors:
            checklist([r for r in rows if r["method"] == method])
        write(args, rows, mutual, meta)
    if args.mutual and MUTUAL and MUTUAL.is_file():
        records = read_dataset("mutual", MUTUAL, limit=args.mutual)
        for method in detectors:
            mutual.append({"method": method, **evaluate_mutual(scorer, records, method, quiet=False)})
    print(write(args, rows, mutual, meta))


def write(args, rows: list[dict], mutual: list[dict], meta: dict) -> str:
    """Write the JSON and the doc table for what has been measured so far; return the table."""
    ordered = sorted(rows, key=lambda r: (r["method"] != "structured",))  # structured rows first
    table = markdown(ordered, mutual, meta)
    public = [{k: v for k, v in r.items() if not k.startswith("_")} for r in ordered]
    if args.json:
        write_json(args.json, {"meta": meta, "rows": public, "mutual": mutual}, indent=1, default=float)
    if args.update_doc:
        text = args.update_doc.read_text()
        if START not in text or END not in text:
            raise SystemExit(f"{args.update_doc} has no {START} ... {END} block to replace")
        before, rest = text.split(START, 1)
        _, after = rest.split(END, 1)
        args.update_doc.write_text(f"{before}{START}\n{table}\n\nMade by `{meta['command']}`.\n{END}{after}")
    return table


if __name__ == "__main__":
    main()
