"""Detectors on held-out human-labelled data: ``python -m benchmarks.bench_detector_data --models embedded runs/x``.

For each model (an embedded name, a checkpoint folder or an adapter folder):
* DECODE dev, the odd-numbered half (2,135 pairs; the even half sets τ): pair accuracy at p(contradiction) >= 0.5,
  contradiction AUC, and the structured detector's accuracy and recall at the model's own τ; the half regrouped into
  dialogues by last utterance: Remove-Contradicting-Turns versions and never-contradicting dialogues judged right
  (not flagged), contradiction dialogues caught;
* Dialogue NLI dev, MNLI dev mismatched and matched (1,500 pairs each, seed 0), SNLI test (all 9,824 labelled):
  three-way argmax accuracy;
* the built-in playground / Learn examples (guard/eval/examples.py): does the detector's yes/no match the person's label;
* the probe suite (A2T, RCT, labelled accuracy) and rgm topical dev (evaluation only) from bench_detector.

Needs ../shared/data (or GUARD_SHARED_DATA). Results: benchmarks/results/detector_data.json and a markdown table.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import torch

from benchmarks.machine import write_json
from guard.config import GuardConfig, JudgeSettings

REPO = Path(__file__).resolve().parent.parent
THREE_WAY_SETS = (("dnli", "dev"), ("mnli", "dev_mismatched"), ("mnli", "dev"))


def decode_report(scorer, threshold: float, pairs_only: bool = False) -> dict:
    from sklearn.metrics import roc_auc_score

    from guard.training import decode_calibration as dc

    _, report = dc.decode_dev_halves()
    labels = np.array([p.is_contradiction for p in report])
    pair_probs = scorer.contradiction_proba([(p.premise, p.hypothesis) for p in report])
    pairs = {"n": len(report), "pair_accuracy_at_0.5": round(float(np.mean((pair_probs >= 0.5) == labels)), 4),
             "pair_auc": round(float(roc_auc_score(labels, pair_probs)), 4)}
    if pairs_only:  # the NLI model alone, without the detector's dialogues (quick)
        return pairs
    detector = dc.detector_scores(scorer, report)
    dialogues = dc.decode_dialogues(report)
    rct = dc.dialogue_scores(scorer, dc.rct_dialogues(dialogues))
    never = dc.dialogue_scores(scorer, [d for d in dialogues if not d.contradicts])
    contradicting = dc.dialogue_scores(scorer, [d for d in dialogues if d.contradicts])
    return {**pairs,
            "detector_accuracy_at_tau": round(float(np.mean((detector >= threshold) == labels)), 4),
            "detector_recall_at_tau": round(float(np.mean(detector[labels] >= threshold)), 4),
            "detector_auc": round(float(roc_auc_score(labels, detector)), 4), "tau": threshold,
            # dialogues regrouped by last utterance (guard.training.decode_calibration)
            "rct_dialogues": {"n": len(rct), "right": round(float(np.mean(rct < threshold)), 4)},
            "consistent_dialogues": {"n": len(never), "right": round(float(np.mean(never < threshold)), 4)},
            "contradiction_dialogues": {"n": len(contradicting),
                                        "recall": round(float(np.mean(contradicting >= threshold)), 4)}}


def examples_agreement(scorer, threshold: float, config: GuardConfig) -> dict:
    """The playground's examples, every earlier sentence paired, with the checkpoint's settings (``config``: its
    pairing, intra and own-question thresholds) at ``threshold``."""
    from guard.eval.dialogue_text import parse_dialogue_text
    from guard.eval.examples import EXAMPLES
    from guard.judge.pipeline import Guard
    from guard.vocabulary import Category

    guard = Guard.over(scorer, config=config)
    settings = guard.settings(mode="flag", threshold=threshold, checks=True, prefilter=False)
    rows = []
    for example in EXAMPLES:
        verdict = guard.verdict_on_dialogue(parse_dialogue_text(example.text, example.key), settings)
        expected = example.expected != Category.NONE
        rows.append({"key": example.key, "expected": str(example.expected), "detected": str(verdict.category),
                     "score": round(verdict.score, 3), "agrees": verdict.contradiction == expected})
    return {"agree": sum(r["agrees"] for r in rows), "n": len(rows), "rows": rows}


def evaluate(model: str, skip: set[str], decode_pairs_only: bool = False) -> dict:
    import embedded
    from benchmarks import bench_detector
    from guard.eval.datasets import read_snli
    from guard.judge.pipeline import load_guard
    from guard.training import real_data as rd
    from guard.training.run import nli_accuracy

    guard = load_guard(model, prefilter=False)  # the detectors here pair every earlier sentence
    scorer, config = guard.scorer, guard.config
    threshold = JudgeSettings.resolve(config, pairing="sentence").threshold
    out: dict = {"model": model, "threshold": threshold}
    started = time.time()
    if "decode" not in skip:
        out["decode_dev_odd"] = decode_report(scorer, threshold, decode_pairs_only)
    for corpus, split in THREE_WAY_SETS:
        if f"{corpus}_{split}" not in skip:
            pairs = rd.load_corpus(corpus, split, limit=1500, seed=0)
            out[f"{corpus}_{split}"] = {"n": len(pairs), "accuracy": round(nli_accuracy(scorer, pairs)["accuracy"], 4)}
    if "snli" not in skip:
        snli = [rd.LabelledPair(d.turns[0].text, d.turns[1].text, d.meta["nli_label"], "snli-test")
                for d in read_snli(embedded.snli_dir() / "snli_1.0_test.jsonl")]
        out["snli_test"] = {"n": len(snli), "accuracy": round(nli_accuracy(scorer, snli)["accuracy"], 4)}
    if "examples" not in skip:
        out["examples"] = examples_agreement(scorer, threshold, config)
    if "probes" not in skip:
        out["probes"] = bench_detector.probe_eval(scorer, threshold, "sentence", config)
        out["category_probes"] = bench_detector.category_probe_eval(scorer, threshold, "sentence", config)
    if "rgm" not in skip and bench_detector.RGM is not None:
        rgm = bench_detector.rgm_eval(scorer, threshold, "sentence", config)
        out["rgm"] = rgm["rows"][rgm["product_row"]]
    out["seconds"] = round(time.time() - started)
    return out


def table(results: list[dict]) -> str:
    def cell(result: dict, *path: str) -> str:
        value = result
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        return f"{value:.3f}" if isinstance(value, float) else ("" if value is None else str(value))

    lines = ["| model | τ | DECODE dev pairs (p ≥ 0.5) | DECODE dev detector at τ | DNLI dev | MNLI dev mm | "
             "MNLI dev m | SNLI test | examples agree | probe suite | A2T | RCT | rgm acc | rgm AUC |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        examples = r.get("examples", {})
        lines.append(" | ".join([
            f"| {r['model']}", cell(r, "threshold"), cell(r, "decode_dev_odd", "pair_accuracy_at_0.5"),
            cell(r, "decode_dev_odd", "detector_accuracy_at_tau"), cell(r, "dnli_dev", "accuracy"),
            cell(r, "mnli_dev_mismatched", "accuracy"), cell(r, "mnli_dev", "accuracy"), cell(r, "snli_test", "accuracy"),
            f"{examples.get('agree', '')}/{examples.get('n', '')}", cell(r, "probes", "suite_accuracy"),
            cell(r, "probes", "a2t", "rate"), cell(r, "probes", "rct", "rate"), cell(r, "rgm", "accuracy"),
            cell(r, "rgm", "auc")]) + " |")
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["embedded"])
    parser.add_argument("--skip", nargs="*", default=[],
                        choices=["decode", "dnli_dev", "mnli_dev_mismatched", "mnli_dev", "snli", "examples", "probes",
                                 "rgm"])
    parser.add_argument("--decode-pairs-only", action="store_true",
                        help="DECODE dev: only the NLI model's pair accuracy and AUC (no detector, no dialogues)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", default=str(REPO / "benchmarks" / "results" / "detector_data.json"))
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    results = [evaluate(model, set(args.skip), args.decode_pairs_only) for model in args.models]
    write_json(Path(args.out), results, indent=2)
    print(table(results))


if __name__ == "__main__":
    main()
