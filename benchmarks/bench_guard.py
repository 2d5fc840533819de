"""Guard latency, prefilter evidence recall, and batched-vs-single scoring, on real chit-chat.

Histories are stitched from real human chit-chat messages (the Chit Chat Challenge data in the
``chitchat_dataset`` package), alternating user/bot turns. One bot turn gets a planted first-person
fact appended; one of the 4 candidates contradicts it (a real chit-chat message with the
contradicting sentence in front), the other 3 are real chit-chat messages from other conversations.

    HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.bench_guard --out docs/bench_guard.json

Sections:
* latency: one guard turn (4 candidates) vs history length, exhaustive vs prefilter, p50/p90. What is
  timed is the guard's detector alone (``Guard.detector.judge``: planning, scoring, building the
  verdicts), on purpose: the policy and the report around it are not. "warm" = the history was
  split/embedded when its turns arrived (``Guard.prepare``), as in a running chat; "cold" = nothing
  cached, for comparison.
* recall: evidence found with the prefilter vs exhaustive pairing (same guard, same threshold, the
  prefilter on or off in the settings), and how often the planted turn is in the evidence for each.
* batching: the same pairs scored in one ``predict_proba`` call vs one pair per call.
* categories: the full guard's verdicts (``Guard.judge``) on the planted contradictions and on the
  human filler candidates (false alarms), by CDConv category.

Every guard here is ``Guard.over(scorer, embedder, config)``: the checkpoint's settings with the
prefilter keeping ``--prefilter-k`` sentences.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

# How idle OpenMP threads wait (bounded spin unless OMP_WAIT_POLICY is set): embedded.configure_openmp,
# measured in docs/app.md. Must run before torch loads its OpenMP runtime.
from embedded import configure_openmp

configure_openmp()

import numpy as np  # noqa: E402
import torch  # noqa: E402

from benchmarks.machine import machine_info, write_json  # noqa: E402
from guard.config import DEFAULT_PREFILTER_K, GuardConfig  # noqa: E402
from guard.judge.pipeline import Guard, load_guard  # noqa: E402
from guard.language import text as textsplit  # noqa: E402
from guard.models.loading import load_embedder  # noqa: E402
from guard.models.pair_cache import clear_pair_cache, embed, score_pairs  # noqa: E402
from guard.records import Turn  # noqa: E402
from guard.vocabulary import PremiseSource  # noqa: E402

# (planted fact, contradicting sentence): first-person persona facts, written for this benchmark.
PLANTS = [
    ("I have two dogs.", "I don't have any pets."),
    ("I am a vegetarian.", "I eat steak almost every day."),
    ("I live in Chicago.", "I have never been to Chicago."),
    ("I have three sisters.", "I am an only child."),
    ("I love swimming.", "I hate swimming."),
    ("I am married.", "I have never been married."),
    ("I don't drink coffee.", "I drink coffee every morning."),
    ("I grew up in Texas.", "I have never been to Texas."),
    ("I play the piano.", "I can't play any instrument."),
    ("I am twenty years old.", "I am sixty years old."),
    ("I have never been to Europe.", "I lived in Paris for two years."),
    ("I hate winter.", "Winter is my favourite season."),
    ("My favourite food is pizza.", "I can't stand pizza."),
    ("I drive to work every day.", "I don't have a driver's license."),
    ("I have a daughter.", "I don't have any children."),
    ("I am a morning person.", "I never get up before noon."),
    ("I read a lot of books.", "I never read books."),
    ("I work from home.", "I commute to my office every day."),
    ("I am allergic to cats.", "I have three cats at home."),
    ("I don't watch TV.", "I watch TV every night."),
    ("I study biology at college.", "I never went to college."),
    ("I love spicy food.", "I can't eat spicy food."),
]
SPEAKERS = ("user", "bot")


def load_messages() -> list[list[str]]:
    """Conversations of the Chit Chat Challenge data (guard.eval.chitchat), each a list of its turns' texts."""
    from guard.eval.chitchat import load_chitchat

    conversations = []
    for conv in load_chitchat():
        msgs = [m for m in conv.utterances if len(m) >= 2]
        if len(msgs) >= 4:
            conversations.append(msgs)
    return conversations


class Sampler:
    """Builds histories of a given length with one planted fact, plus 4 candidates."""

    def __init__(self, conversations: list[list[str]], seed: int) -> None:
        self.conversations = conversations
        self.rng = random.Random(seed)

    def messages(self, n: int) -> list[str]:
        out: list[str] = []
        while len(out) < n:
            out.extend(self.rng.choice(self.conversations))
        return out[:n]

    def sample(self, length: int) -> tuple[list[Turn], list[str], int, int]:
        """(history, candidates, index of the contradicting candidate, planted turn id)."""
        fact, contra = self.rng.choice(PLANTS)
        texts = self.messages(length)
        turns = [Turn(i, SPEAKERS[i % 2], t) for i, t in enumerate(texts)]
        bot_ids = [t.turn_id for t in turns if t.agent_id == "bot"]
        planted = self.rng.choice(bot_ids)
        turns[planted] = replace(turns[planted], text=f"{turns[planted].text} {fact}")
        fillers = self.messages(4)
        candidates = fillers[:3]
        contra_at = self.rng.randrange(4)
        candidates.insert(contra_at, f"{contra} {fillers[3]}")
        return turns, candidates, contra_at, planted


def stand_in_scorer(folder: Path):
    """all-MiniLM-L6-v2's encoder with a random 3-way head: the detector's architecture, no training."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    import embedded
    from guard.models.nli import NLIScorer

    base = str(embedded.embedder_path())
    id2label = {0: "entailment", 1: "neutral", 2: "contradiction"}
    torch.manual_seed(0)
    model = AutoModelForSequenceClassification.from_pretrained(
        base, num_labels=3, id2label=id2label, label2id={v: k for k, v in id2label.items()})
    model.save_pretrained(folder)
    AutoTokenizer.from_pretrained(base).save_pretrained(folder)
    return NLIScorer.from_pretrained(folder)


def percentiles(values: list[float]) -> dict:
    """p50 / p90 / mean in ms and the count; None for each figure where nothing was timed (``--cold-reps 0``)."""
    if not values:
        return {"p50_ms": None, "p90_ms": None, "mean_ms": None, "n": 0}
    arr = np.asarray(values) * 1000.0
    return {"p50_ms": round(float(np.percentile(arr, 50)), 1), "p90_ms": round(float(np.percentile(arr, 90)), 1),
            "mean_ms": round(float(arr.mean()), 1), "n": len(values)}


def guard_over(scorer, embedder, args) -> Guard:
    """A guard over the benchmark's scorer and embedder with the checkpoint's settings, its prefilter keeping
    ``--prefilter-k`` sentences."""
    return Guard.over(scorer, embedder, replace(args.config, prefilter_k=args.prefilter_k))


def verdicts_of(guard: Guard, settings, history: list[Turn], candidates: list[str]) -> list:
    """Each candidate's verdict from the guard's one way in (``Guard.judge``)."""
    report = guard.judge(history, candidates, speaker="bot", settings=settings)
    return [c.verdict for c in report.candidates]


def forget(scorer, embedder) -> None:
    """Forget the scored pairs and the embeddings: every pair scored and every sentence embedded afresh."""
    clear_pair_cache(scorer)
    if embedder is not None:
        clear_pair_cache(embedder)


def bench_latency(scorer, embedder, args, conversations) -> list[dict]:
    guard = guard_over(scorer, embedder, args)
    rows = []
    for length in args.lengths:
        for k in ((None,) if args.exhaustive_reps else ()) + (args.prefilter_k,):
            # the chat's settings: the checks its checkpoint's calibration kept (checks=None)
            settings = guard.settings(mode="flag", prefilter=k is not None, checks=None)
            sampler = Sampler(conversations, seed=args.seed + length)
            warm_times, cpu_times, cold_times, pairs = [], [], [], []
            reps = args.reps if k else min(args.reps, args.exhaustive_reps)
            for rep in range(reps + 1):
                history, candidates, _, _ = sampler.sample(length)
                textsplit.clear_caches()
                forget(scorer, embedder)  # every pair scored afresh, as a turn's new candidates are
                guard.prepare(history, (), settings)  # turns were split/embedded as they arrived
                start, cpu_start = time.perf_counter(), time.process_time()
                verdicts = guard.detector.judge(history, candidates, "bot", (), settings)  # the bare detector
                elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu_start
                if rep == 0:
                    continue  # warm-up (first call allocates)
                warm_times.append(elapsed)
                cpu_times.append(cpu)
                pairs.append(sum(v.details.n_pairs for v in verdicts))
                if rep <= args.cold_reps:
                    textsplit.clear_caches()
                    forget(scorer, embedder)
                    start = time.perf_counter()
                    guard.detector.judge(history, candidates, "bot", (), settings)
                    cold_times.append(time.perf_counter() - start)
            row = {"history_turns": length, "prefilter_k": k, "warm": percentiles(warm_times),
                   "warm_cpu_time": percentiles(cpu_times), "cold": percentiles(cold_times),
                   "mean_pairs_per_turn": round(float(np.mean(pairs)), 1), "loadavg_1min": os.getloadavg()[0]}
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


RECALL_KS = (1, 3, 8, 16, 32, 64)


def k_needed(verdict, embedder, threshold: float) -> dict[int, int]:
    """For each turn an exhaustive verdict cites: the smallest prefilter k that would still cite it.

    A turn stays in the evidence at k when one of its pairs scoring >= tau has its premise sentence
    among the k most similar to that candidate sentence (the rule of ``guard.judge.planning.paired_with``), so
    one exhaustive run gives the recall at every k.
    """
    by_cand: dict[str, list] = {}
    for ps in verdict.pair_scores:
        if ps.source == PremiseSource.HISTORY:  # persona lines are always paired
            by_cand.setdefault(ps.hypothesis, []).append(ps)
    needed: dict[int, int] = {}
    for cand, pairs in by_cand.items():
        sims = embed(embedder, [ps.premise for ps in pairs]) @ embed(embedder, [cand])[0]
        rank = np.empty(len(pairs), dtype=int)
        rank[np.argsort(-sims, kind="stable")] = np.arange(1, len(pairs) + 1)
        for ps, r in zip(pairs, rank):
            if ps.score >= threshold:
                needed[ps.turn_id] = min(needed.get(ps.turn_id, r), int(r))
    return needed


def bench_recall(scorer, embedder, args, conversations) -> list[dict]:
    guard = guard_over(scorer, embedder, args)
    full = guard.settings(mode="flag", checks=False, prefilter=False)
    pre = guard.settings(mode="flag", checks=False)  # the same but the prefilter
    rows = []
    for length in args.recall_lengths:
        sampler = Sampler(conversations, seed=args.seed + 1000 + length)
        kept = total = planted_full = planted_pre = 0
        flagged_full = flagged_pre = 0
        needed_all: list[int] = []
        needed_planted: list[int] = []
        for _ in range(args.recall_dialogues):
            history, candidates, contra_at, planted = sampler.sample(length)
            if not args.recall_all_candidates:  # the planted contradiction only (4x cheaper)
                candidates, contra_at = [candidates[contra_at]], 0
            v_full = verdicts_of(guard, full, history, candidates)
            v_pre = verdicts_of(guard, pre, history, candidates)
            for a, b in zip(v_full, v_pre):
                ev_full, ev_pre = set(a.evidence_turn_ids), set(b.evidence_turn_ids)
                total += len(ev_full)
                kept += len(ev_full & ev_pre)
                needed = k_needed(a, embedder, pre.threshold)
                needed_all.extend(needed.values())
                if planted in needed:
                    needed_planted.append(needed[planted])
            planted_full += planted in v_full[contra_at].evidence_turn_ids
            planted_pre += planted in v_pre[contra_at].evidence_turn_ids
            flagged_full += v_full[contra_at].contradiction
            flagged_pre += v_pre[contra_at].contradiction
        n = args.recall_dialogues
        row = {
            "history_turns": length, "dialogues": n, "prefilter_k": args.prefilter_k,
            "candidates": "all 4" if args.recall_all_candidates else "the planted contradiction",
            "evidence_turns_exhaustive": total, "evidence_turns_kept_by_prefilter": kept,
            "evidence_recall_vs_exhaustive": round(kept / total, 4) if total else None,
            "evidence_recall_loss": round(1 - kept / total, 4) if total else None,
            "planted_turn_in_evidence_exhaustive": round(planted_full / n, 4),
            "planted_turn_in_evidence_prefilter": round(planted_pre / n, 4),
            "contradicting_candidate_flagged_exhaustive": round(flagged_full / n, 4),
            "contradicting_candidate_flagged_prefilter": round(flagged_pre / n, 4),
            # recall against exhaustive evidence had the prefilter kept k sentences (one exhaustive run)
            "evidence_recall_at_k": {k: round(float(np.mean(np.array(needed_all) <= k)), 4) if needed_all else None
                                     for k in RECALL_KS},
            "planted_turn_recall_at_k": {k: round(float(np.mean(np.array(needed_planted) <= k)), 4)
                                         if needed_planted else None for k in RECALL_KS},
        }
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def bench_categories(scorer, embedder, args, conversations) -> dict:
    """Verdicts of the full guard (categories on, prefilter) on planted vs human chit-chat candidates.

    The 3 filler candidates are real human messages from other conversations: any flag on them is
    a false alarm (DECODE's "fire rate on human utterances"), by category.
    """
    guard = guard_over(scorer, embedder, args)
    settings = guard.settings(mode="flag", checks=True)  # every check on, the prefilter
    sampler = Sampler(conversations, seed=args.seed + 3000)
    planted_cats: dict[str, int] = {}
    filler_cats: dict[str, int] = {}
    planted_hit_turn = 0
    for _ in range(args.category_dialogues):
        history, candidates, contra_at, planted = sampler.sample(args.category_history)
        verdicts = verdicts_of(guard, settings, history, candidates)
        for i, v in enumerate(verdicts):
            bucket = planted_cats if i == contra_at else filler_cats
            bucket[v.category.value] = bucket.get(v.category.value, 0) + 1
        planted_hit_turn += planted in verdicts[contra_at].evidence_turn_ids
    n = args.category_dialogues
    row = {
        "dialogues": n, "history_turns": args.category_history, "prefilter_k": args.prefilter_k,
        "planted_candidates_by_category": planted_cats,
        "planted_flag_rate": round(1 - planted_cats.get("none", 0) / n, 4),
        "planted_turn_in_evidence": round(planted_hit_turn / n, 4),
        "human_filler_candidates_by_category": filler_cats,
        "human_filler_fire_rate": round(1 - filler_cats.get("none", 0) / (3 * n), 4),
    }
    print(json.dumps({"categories": row}), flush=True)
    return row


def bench_quantization(scorer, quantized, args, conversations) -> dict:
    """How often int8 and fp32 agree on the flag, and how far their scores move."""
    full, fast = Guard.over(scorer, config=args.config), Guard.over(quantized, config=args.config)
    settings = full.settings(mode="flag", checks=False, prefilter=False)  # the same settings for both
    sampler = Sampler(conversations, seed=args.seed + 2000)
    agree = n = 0
    diffs = []
    for _ in range(args.quant_dialogues):
        history, candidates, _, _ = sampler.sample(20)
        for a, b in zip(verdicts_of(full, settings, history, candidates),
                        verdicts_of(fast, settings, history, candidates)):
            agree += a.contradiction == b.contradiction
            n += 1
            diffs.append(abs(a.score - b.score))
    row = {"candidates": n, "flag_agreement": round(agree / n, 4),
           "score_abs_diff_mean": round(float(np.mean(diffs)), 4), "score_abs_diff_max": round(float(np.max(diffs)), 4)}
    print(json.dumps({"quantization": row}), flush=True)
    return row


def bench_batching(scorer, args, conversations) -> dict:
    """One forward pass per pair vs batches: plain (NLIScorer order) and length-sorted (the detector's)."""
    sampler = Sampler(conversations, seed=args.seed + 7)
    history, candidates, _, _ = sampler.sample(args.batch_history)
    textsplit.prepare([t.text for t in history] + candidates)
    pairs = []
    for cand in candidates:
        for t in history:
            if t.agent_id == "bot":
                pairs += [(p, c) for p in textsplit.sentences(t.text) for c in textsplit.sentences(cand)]
    scorer.predict_proba(pairs[:8])  # warm-up
    ways = {
        "one_at_a_time": lambda: np.concatenate([scorer.predict_proba([p]) for p in pairs]),
        "batched_plain": lambda: scorer.predict_proba(pairs),
        "batched_length_sorted": lambda: score_pairs(scorer, pairs),  # the detector's (guard.models.pair_cache)
    }
    wall: dict[str, list[float]] = {k: [] for k in ways}
    cpu: dict[str, list[float]] = {k: [] for k in ways}
    probs = {}
    for _ in range(args.batch_reps):  # interleaved, so load changes hit all three alike
        for name, run in ways.items():
            start, cpu_start = time.perf_counter(), time.process_time()
            probs[name] = run()
            wall[name].append(time.perf_counter() - start)
            cpu[name].append(time.process_time() - cpu_start)
    med = {k: float(np.median(v)) for k, v in wall.items()}
    med_cpu = {k: float(np.median(v)) for k, v in cpu.items()}
    one_by_one, plain, sorted_probs = probs["one_at_a_time"], probs["batched_plain"], probs["batched_length_sorted"]
    row = {
        "pairs": len(pairs), "history_turns": args.batch_history, "batch_size": scorer.batch_size,
        **{f"{k}_wall_s": round(v, 3) for k, v in med.items()},
        **{f"{k}_cpu_s": round(v, 3) for k, v in med_cpu.items()},
        "speedup_length_sorted_batch_over_single": round(med["one_at_a_time"] / med["batched_length_sorted"], 2),
        "speedup_plain_batch_over_single": round(med["one_at_a_time"] / med["batched_plain"], 2),
        "cpu_speedup_length_sorted_batch_over_single":
            round(med_cpu["one_at_a_time"] / med_cpu["batched_length_sorted"], 2),
        "cpu_speedup_plain_batch_over_single": round(med_cpu["one_at_a_time"] / med_cpu["batched_plain"], 2),
        "max_abs_prob_diff": float(max(np.abs(plain - one_by_one).max(), np.abs(sorted_probs - one_by_one).max())),
    }
    print(json.dumps(row), flush=True)
    return row


def render_markdown(results: dict) -> str:
    """The results as the tables docs/guard.md shows."""
    out = [f"Model: {results['model']}; τ = {results['threshold']}, pairing = {results['pairing']}; "
           f"torch threads = {results['machine']['torch_threads']}; load average at start "
           f"{results['machine']['loadavg_at_start'][0]:.1f} on {results['machine']['cpu_count']} cores."]
    if "quantization_vs_fp32" in results:
        q = results["quantization_vs_fp32"]
        out.append(f"\nint8 vs fp32 on {q['candidates']} candidates (20-turn histories, exhaustive): flag agreement "
                   f"{q['flag_agreement']:.1%}, mean |Δscore| {q['score_abs_diff_mean']}, max {q['score_abs_diff_max']}.")
    if "latency" in results:
        out += ["", "| history turns | prefilter k | pairs/turn | wall p50 ms | wall p90 ms | CPU p50 ms | CPU p90 ms "
                "| cold wall p50 ms | n | load 1 min |", "|---|---|---|---|---|---|---|---|---|---|"]
        for r in results["latency"]:
            out.append(f"| {r['history_turns']} | {r['prefilter_k'] or 'exhaustive'} | {r['mean_pairs_per_turn']} "
                       f"| {r['warm']['p50_ms']} | {r['warm']['p90_ms']} | {r['warm_cpu_time']['p50_ms']} "
                       f"| {r['warm_cpu_time']['p90_ms']} | {r['cold']['p50_ms']} | {r['warm']['n']} "
                       f"| {r['loadavg_1min']:.1f} |")
    if "batching" in results:
        b = results["batching"]
        out.append(f"\nBatching ({b['pairs']} sentence pairs of a 20-turn history, batch size {b['batch_size']}): "
                   f"one pair per call {b['one_at_a_time_wall_s']} s wall / {b['one_at_a_time_cpu_s']} s CPU; "
                   f"plain batches {b['batched_plain_wall_s']} s / {b['batched_plain_cpu_s']} s; length-sorted "
                   f"batches (the detector's) {b['batched_length_sorted_wall_s']} s / "
                   f"{b['batched_length_sorted_cpu_s']} s. Speed-up of length-sorted batching over one-at-a-time: "
                   f"{b['speedup_length_sorted_batch_over_single']}x wall, "
                   f"{b['cpu_speedup_length_sorted_batch_over_single']}x CPU (plain batching: "
                   f"{b['speedup_plain_batch_over_single']}x / {b['cpu_speedup_plain_batch_over_single']}x); "
                   f"max |Δp| {b['max_abs_prob_diff']:.1e}.")
    if "recall" in results:
        out += ["", "| history turns | dialogues | candidates | evidence turns (exhaustive) | kept by prefilter "
                "| recall loss | planted turn found: exhaustive / prefilter | planted flagged: exhaustive / prefilter |",
                "|---|---|---|---|---|---|---|---|"]
        for r in results["recall"]:
            loss = "n/a" if r["evidence_recall_loss"] is None else f"{r['evidence_recall_loss']:.1%}"
            out.append(f"| {r['history_turns']} | {r['dialogues']} | {r['candidates']} "
                       f"| {r['evidence_turns_exhaustive']} | {r['evidence_turns_kept_by_prefilter']} | {loss} "
                       f"| {r['planted_turn_in_evidence_exhaustive']:.0%} / {r['planted_turn_in_evidence_prefilter']:.0%} "
                       f"| {r['contradicting_candidate_flagged_exhaustive']:.0%} / "
                       f"{r['contradicting_candidate_flagged_prefilter']:.0%} |")
        out += ["", "Share of the exhaustive evidence a prefilter keeping k sentences per candidate sentence would keep "
                "(from the same exhaustive runs):", "",
                "| history turns | evidence | " + " | ".join(f"k = {k}" for k in RECALL_KS) + " |",
                "|---|---|" + "---|" * len(RECALL_KS)]
        for r in results["recall"]:
            for what, key in (("all cited turns", "evidence_recall_at_k"), ("planted turn", "planted_turn_recall_at_k")):
                cells = [("n/a" if r[key][k] is None else f"{r[key][k]:.0%}") for k in RECALL_KS]
                out.append(f"| {r['history_turns']} | {what} | " + " | ".join(cells) + " |")
    if "categories" in results:
        c = results["categories"]
        out.append(f"\nFull guard (categories on, prefilter k={c['prefilter_k']}), {c['dialogues']} dialogues of "
                   f"{c['history_turns']} turns: planted contradictions flagged {c['planted_flag_rate']:.0%} "
                   f"(by category {c['planted_candidates_by_category']}), planted turn in evidence "
                   f"{c['planted_turn_in_evidence']:.0%}; human chit-chat fillers flagged "
                   f"{c['human_filler_fire_rate']:.0%} (by category {c['human_filler_candidates_by_category']}).")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="embedded",
                        help="'embedded' (models/detector), a local checkpoint, or 'stand-in' "
                             "(MiniLM-L6 with a random head: latency only)")
    parser.add_argument("--lengths", type=int, nargs="+", default=[6, 20, 60, 100])
    parser.add_argument("--reps", type=int, default=30, help="timed turns per (length, prefilter)")
    parser.add_argument("--exhaustive-reps", type=int, default=30,
                        help="cap on timed turns without prefilter (slow on long histories); 0 skips them")
    parser.add_argument("--recall-all-candidates", action="store_true",
                        help="recall over all 4 candidates' evidence, not only the planted contradiction's")
    parser.add_argument("--cold-reps", type=int, default=5, help="of those, how many also timed cold")
    parser.add_argument("--prefilter-k", type=int, default=DEFAULT_PREFILTER_K,
                        help="earlier same-speaker sentences paired with each candidate sentence (default: the "
                             f"product's, {DEFAULT_PREFILTER_K}; the first tables of docs/guard.md ran with 3)")
    parser.add_argument("--recall-lengths", type=int, nargs="+", default=[20, 60, 100])
    parser.add_argument("--recall-dialogues", type=int, default=100)
    parser.add_argument("--batch-history", type=int, default=20)
    parser.add_argument("--batch-reps", type=int, default=3)
    parser.add_argument("--quantize", action="store_true",
                        help="int8 dynamic quantization (guard.models.loading.quantize_scorer) for every section")
    parser.add_argument("--quant-dialogues", type=int, default=50,
                        help="with --quantize: dialogues (20 turns, 4 candidates) to compare int8 with fp32")
    parser.add_argument("--category-dialogues", type=int, default=50)
    parser.add_argument("--category-history", type=int, default=20)
    parser.add_argument("--skip", nargs="*", default=[], choices=["latency", "recall", "batching", "categories"])
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads (1 is several times faster than 2 when other processes load the CPU)")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--out", type=Path, help="write the results as JSON here")
    parser.add_argument("--render", type=Path, help="only print the markdown tables of a results JSON")
    args = parser.parse_args(argv)
    if args.render:
        print(render_markdown(json.loads(args.render.read_text())))
        return 0
    torch.set_num_threads(args.threads)

    if args.model == "stand-in":
        scorer = stand_in_scorer(Path(tempfile.mkdtemp(prefix="standin_nli_")))
        model_note = "stand-in: all-MiniLM-L6-v2 encoder + random 3-way head (latency only; recall meaningless)"
        args.config, embedder = GuardConfig(), load_embedder()  # no guard_config.json: DECODE's τ 0.5
    else:
        guard = load_guard(args.model)  # the product's guard: its scorer, embedder and settings
        scorer, embedder, args.config = guard.scorer, guard.embedder, guard.config
        model_note = f"{args.model} ({scorer.name})"
    conversations = load_messages()
    quant_row = None
    if args.quantize:
        import copy

        from guard.models.loading import quantize_scorer

        fp32 = scorer
        scorer = quantize_scorer(copy.deepcopy(fp32))
        model_note += ", int8 dynamic quantization"
        quant_row = bench_quantization(fp32, scorer, args, conversations)
    settings = Guard.over(scorer, config=args.config).settings()  # the checkpoint's τ and pairing
    results = {
        "model": model_note, "threshold": settings.threshold, "pairing": settings.pairing,
        "command": " ".join([".venv/bin/python", "-m", "benchmarks.bench_guard", *(argv or sys.argv[1:])]),
        "machine": {**machine_info(), "torch_threads": torch.get_num_threads(),
                    "loadavg_at_start": os.getloadavg()},
        "chitchat_conversations": len(conversations),
    }
    if quant_row:
        results["quantization_vs_fp32"] = quant_row
    print(json.dumps(results), flush=True)
    if "batching" not in args.skip:
        results["batching"] = bench_batching(scorer, args, conversations)
    if "latency" not in args.skip:
        results["latency"] = bench_latency(scorer, embedder, args, conversations)
    if "recall" not in args.skip:
        results["recall"] = bench_recall(scorer, embedder, args, conversations)
    if "categories" not in args.skip:
        results["categories"] = bench_categories(scorer, embedder, args, conversations)
    results["loadavg_at_end"] = os.getloadavg()
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        write_json(args.out, results, indent=2)
    print(render_markdown(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
