"""The detector's training run: data, the training loop, evaluation, weight averaging and export.

Driven by ``python -m guard.training`` (``guard/training/__main__.py``). A run writes everything to its
folder: the fp32 checkpoint, ``data_counts.json``, ``metrics.json``, ``args.json`` and a log; ``export``
copies the checkpoint in fp16 with ``guard_config.json`` (thresholds from ``guard.training.calibration``).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from guard.models.nli import LabelLayout, NLIScorer
from guard.training.calibration import (
    HELDOUT_FRACTION,
    SyntheticDialogue,
    calibrate,
    calibrate_intra,
    calibration_dialogues,
)
from guard.training.labels import ID2LABEL, LABEL2ID, THREE_WAY, LabelledPair
from guard.training.pairs import (
    add_context_noise,
    chitchat_pairs,
    negated_entailment_pairs,
    negated_neutral_pairs,
    overlap_neutral_pairs,
    restatement_pairs,
)
from guard.training.persona import persona_pairs
from guard.training.sources import (
    ChitchatConversation,
    load_chitchat,
    load_snli,
    split_conversations,
    usable_utterance,
    wordnet_entities,
)
from guard.training.step import train_step


def log(message: str, handle=None) -> None:
    """Print a time-stamped line, and append it to the run's log file when one is open."""
    line = f"[{time.strftime('%H:%M:%S')}] {message}"
    print(line, flush=True)
    if handle is not None:
        handle.write(line + "\n")
        handle.flush()


# --------------------------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------------------------

# The options that say how many training pairs of each kind build_data makes.
TRAINING_PAIR_COUNTS = ("snli", "persona", "chitchat", "overlap_neutral", "negated_neutral", "restatements",
                        "negated_entailment")


def build_data(args) -> tuple[list[LabelledPair], list[LabelledPair], list[SyntheticDialogue], dict,
                              list[ChitchatConversation]]:
    """Training pairs, a held-out dialogue-domain pair set, held-out calibration dialogues, counts, and the
    held-out conversations themselves (the intra threshold is set on their real messages)."""
    import embedded

    nlp, wn = embedded.spacy_nlp(), embedded.wordnet()
    snli = load_snli(embedded.snli_dir() / "snli_1.0_train_subset.jsonl", limit=args.snli, seed=args.seed)
    convs = load_chitchat()
    # the held-out split and the dev / calibration sets depend on --split-seed only, so a continued run with
    # another --seed never trains on the conversations an earlier stage held out
    train_convs, held_convs = split_conversations(convs, heldout_fraction=HELDOUT_FRACTION, seed=args.split_seed)
    entities = wordnet_entities(wn)
    fillers = [u for c in train_convs for u in c.utterances if usable_utterance(u, 3, 20)]
    persona = persona_pairs(args.persona, seed=args.seed, entities=entities, extended=args.persona_extended,
                            fillers=fillers, dress=args.persona_dress)
    chitchat = chitchat_pairs(train_convs, args.chitchat, nlp, wn, seed=args.seed)
    if args.overlap_neutral:
        chitchat += overlap_neutral_pairs(train_convs, args.overlap_neutral, seed=args.seed + 3)
    if args.negated_neutral:
        chitchat += negated_neutral_pairs(train_convs, args.negated_neutral, nlp, seed=args.seed)
    if args.restatements:
        chitchat += restatement_pairs(train_convs, args.restatements, nlp, seed=args.seed + 2)
    if args.negated_entailment:
        chitchat += negated_entailment_pairs(train_convs, args.negated_entailment, nlp, seed=args.seed + 1)
    dialogue_train = add_context_noise(persona + chitchat, fillers, prob=args.context_noise, seed=args.seed)

    # held-out dialogue-domain pairs: persona pairs from another seed, chit-chat from held-out conversations
    held_fillers = [u for c in held_convs for u in c.utterances if usable_utterance(u, 3, 20)]
    dev_pairs = add_context_noise(
        persona_pairs(args.dev_pairs // 2, seed=args.split_seed + 1000, entities=entities,
                      extended=args.persona_extended, fillers=held_fillers, dress=args.persona_dress)
        + chitchat_pairs(held_convs, args.dev_pairs // 2, nlp, wn, seed=args.split_seed + 1000),
        held_fillers, prob=args.context_noise, seed=args.split_seed + 1000)
    calib = calibration_dialogues(held_convs, args.calibration_dialogues, nlp, wn, seed=args.split_seed + 2000)

    train = snli + dialogue_train
    random.Random(args.seed).shuffle(train)
    counts = {
        "train_total": len(train),
        "train_by_source": dict(Counter(p.source.split("+")[0] for p in train)),
        "train_by_label": dict(Counter(p.label for p in train)),
        "train_with_context_noise": sum(p.source.endswith("+ctx") for p in train),
        "dev_pairs": len(dev_pairs), "dev_by_label": dict(Counter(p.label for p in dev_pairs)),
        "calibration_dialogues": len(calib),
        "calibration_positive": sum(d.label for d in calib),
        "chitchat_conversations_train": len(train_convs), "chitchat_conversations_heldout": len(held_convs),
    }
    return train, dev_pairs, calib, counts, held_convs


def length_grouped_batches(lengths: Sequence[int], batch_size: int, seed: int, group: int = 50
                           ) -> list[list[int]]:
    """Batches of similar length (less padding), in random order."""
    rng = random.Random(seed)
    order = list(range(len(lengths)))
    rng.shuffle(order)
    batches = []
    chunk = batch_size * group
    for start in range(0, len(order), chunk):
        part = sorted(order[start:start + chunk], key=lambda i: lengths[i])
        batches.extend(part[i:i + batch_size] for i in range(0, len(part), batch_size))
    rng.shuffle(batches)
    return batches


# --------------------------------------------------------------------------------------------
# Evaluation
# --------------------------------------------------------------------------------------------

def nli_accuracy(scorer: NLIScorer, pairs: Sequence[LabelledPair]) -> dict:
    """3-way accuracy and contradiction-vs-rest AUC on labelled pairs."""
    from sklearn.metrics import roc_auc_score

    probs = scorer.predict_proba([(p.premise, p.hypothesis) for p in pairs])
    layout = scorer.layout  # classes found by name, whatever the checkpoint calls or orders them
    column = {"contradiction": layout.contradiction, "entailment": layout.entailment, "neutral": layout.neutral}
    gold = [p.label for p in pairs]
    is_contra = np.array([g == "contradiction" for g in gold])
    out = {"n": len(pairs), "accuracy": float(np.mean(probs.argmax(axis=1) == np.array([column[g] for g in gold])))}
    if 0 < is_contra.sum() < len(pairs):
        out["contradiction_auc"] = float(roc_auc_score(is_contra, probs[:, scorer.layout.contradiction]))
    return out


# --------------------------------------------------------------------------------------------
# Training
# --------------------------------------------------------------------------------------------

def resolve_base(name: str) -> str:
    """A local folder for ``--base`` / ``--average``: "embedded-minilm" is the packaged all-MiniLM-L6-v2."""
    if name == "embedded-minilm":
        import embedded

        return str(embedded.embedder_path())
    return name


def train(args) -> Path:
    """Build the data, fine-tune ``--base`` as a 3-way NLI cross-encoder, then save and evaluate; the run folder."""
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    logfile = open(out / "train.log", "a", encoding="utf-8")
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    device = "cuda" if torch.cuda.is_available() and not args.cpu else "cpu"
    if device == "cpu":
        torch.set_num_threads(args.threads)
    log(f"device={device} threads={torch.get_num_threads()} args={vars(args)}", logfile)

    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    import embedded

    t0 = time.time()
    train_pairs, dev_pairs, calib, counts, held_convs = build_data(args)
    log(f"data built in {time.time() - t0:.0f}s: {json.dumps(counts)}", logfile)
    (out / "data_counts.json").write_text(json.dumps(counts, indent=2))

    base = resolve_base(args.base)
    tokenizer = AutoTokenizer.from_pretrained(base)
    model = AutoModelForSequenceClassification.from_pretrained(
        base, num_labels=len(THREE_WAY), id2label=ID2LABEL, label2id=LABEL2ID, dtype=torch.float32)
    if args.freeze_word_embeddings:  # ~half of MiniLM's weights; freezing them roughly halves the optimizer cost
        model.get_input_embeddings().weight.requires_grad_(False)
    if args.freeze_layers:  # no backward pass through the lowest layers: more examples per CPU-second
        encoder = getattr(model, model.base_model_prefix)
        for module in [encoder.embeddings, *encoder.encoder.layer[: args.freeze_layers]]:
            for param in module.parameters():
                param.requires_grad_(False)
    model.to(device)
    # mixed precision: fp32 master weights, bf16 matmuls (AMX / AVX-512 BF16 on CPU, tensor cores on GPU)
    use_bf16 = {"auto": device == "cuda" or embedded.cpu_dtype() == "bfloat16",
                "on": True, "off": False}[args.bf16]
    log(f"bf16 autocast: {use_bf16}", logfile)

    enc = tokenizer([p.premise for p in train_pairs], [p.hypothesis for p in train_pairs],
                    truncation=True, max_length=args.max_length)
    lengths = [len(ids) for ids in enc["input_ids"]]
    labels = [LABEL2ID[p.label] for p in train_pairs]
    batches = length_grouped_batches(lengths, args.batch_size, args.seed)
    total_steps = min(len(batches) * args.epochs, args.max_steps or 10**9)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.01)
    budget_s = args.time_budget_min * 60 if args.time_budget_min else None

    def learning_rate(step: int, elapsed: float) -> float:
        """Linear warmup then linear decay over whichever ends first: the planned steps or the time budget.

        On a shared CPU the step rate is unknown in advance; decaying by elapsed time still ends the run
        at a low learning rate instead of cutting it off at its peak."""
        progress = step / total_steps
        if budget_s:
            progress = max(progress, elapsed / budget_s)
        warmup = 0.06
        scale = progress / warmup if progress < warmup else max(0.0, (1 - progress) / (1 - warmup))
        return args.lr * scale
    log(f"{len(train_pairs)} pairs, {len(batches)} batches/epoch, planned steps {total_steps}, "
        f"mean tokens {np.mean(lengths):.1f}", logfile)

    model.train()
    step, start, running = 0, time.time(), []
    stopped_by_budget = False
    for epoch in range(args.epochs):
        order = batches if epoch == 0 else length_grouped_batches(lengths, args.batch_size, args.seed + epoch)
        for batch in order:
            if step >= total_steps:
                break
            if args.time_budget_min and time.time() - start > args.time_budget_min * 60:
                stopped_by_budget = True
                break
            features = tokenizer.pad({"input_ids": [enc["input_ids"][i] for i in batch],
                                      "token_type_ids": [enc["token_type_ids"][i] for i in batch],
                                      "attention_mask": [enc["attention_mask"][i] for i in batch]},
                                     return_tensors="pt")
            features = {k: v.to(device) for k, v in features.items()}
            target = torch.tensor([labels[i] for i in batch], device=device)
            running.append(train_step(model, features, lambda logits: F.cross_entropy(logits.float(), target),
                                      optimizer, params, learning_rate(step, time.time() - start), use_bf16, device))
            step += 1
            if step % args.log_every == 0:
                elapsed = time.time() - start
                log(f"step {step}/{total_steps} loss {np.mean(running):.4f} lr {optimizer.param_groups[0]['lr']:.2e} "
                    f"{elapsed:.0f}s ({step / elapsed:.2f} steps/s)", logfile)
                running = []
        if stopped_by_budget:
            break
    train_seconds = time.time() - start
    log(f"trained {step} steps ({step * args.batch_size} examples) in {train_seconds:.0f}s"
        + (" (stopped by time budget)" if stopped_by_budget else ""), logfile)

    metrics: dict = {"steps": step, "examples_seen": step * args.batch_size, "train_seconds": round(train_seconds),
                     "device": device, "threads": torch.get_num_threads(), "base": args.base, "bf16_autocast": use_bf16,
                     "stopped_by_time_budget": stopped_by_budget, "seed": args.seed}
    save_and_evaluate(model, tokenizer, out, args, dev_pairs, calib, held_convs, metrics, logfile)
    logfile.close()
    return out


def save_and_evaluate(model, tokenizer, out: Path, args, dev_pairs, calib, held_convs, metrics: dict,
                      logfile) -> None:
    """Save the checkpoint, then SNLI test, held-out dialogue pairs and threshold calibration into metrics.json."""
    import embedded

    model.eval()
    model.save_pretrained(out / "checkpoint")
    tokenizer.save_pretrained(out / "checkpoint")
    scorer = NLIScorer(model, tokenizer, LabelLayout.from_id2label(model.config.id2label),
                       max_length=args.max_length, batch_size=128, name=str(out))
    t1 = time.time()
    snli_test = load_snli(embedded.snli_dir() / "snli_1.0_test.jsonl", limit=args.eval_snli, seed=args.split_seed)
    metrics["snli_test"] = nli_accuracy(scorer, snli_test)
    metrics["dialogue_dev_pairs"] = nli_accuracy(scorer, dev_pairs)
    metrics["calibration"] = calibrate(scorer, calib)
    chosen = metrics["calibration"]["chosen"]
    metrics["calibration"]["intra"] = calibrate_intra(scorer, held_convs, metrics["calibration"][chosen]["threshold"],
                                                      seed=args.split_seed)
    metrics["eval_seconds"] = round(time.time() - t1)
    log(f"metrics: {json.dumps(metrics)}", logfile)
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2))
    (out / "args.json").write_text(json.dumps(vars(args), indent=2))


def average_weights(model_a, model_b, weight: float):
    """``model_a`` with every floating-point tensor set to weight * a + (1 - weight) * b (same architecture
    and label layout required; integer buffers such as position ids are kept)."""
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"the weight must be between 0 and 1, got {weight}")
    if model_a.config.id2label != model_b.config.id2label:
        raise ValueError(f"label layouts differ ({model_a.config.id2label} vs {model_b.config.id2label})")
    state_b = model_b.state_dict()
    state_a = model_a.state_dict()
    if state_a.keys() != state_b.keys() or any(v.shape != state_b[k].shape for k, v in state_a.items()):
        raise ValueError("the two checkpoints have different architectures")
    model_a.load_state_dict({k: weight * v + (1 - weight) * state_b[k] if v.is_floating_point() else v
                             for k, v in state_a.items()})
    return model_a


def average(args) -> Path:
    """A weight average ("model soup") of two checkpoints fine-tuned from the same base, evaluated and
    calibrated like a trained run (``--average A B --average-weight w``: w * A + (1 - w) * B).

    Averaging fine-tuned models that share their pre-trained start tends to keep what each learned
    (Wortsman et al. 2022, model soups); here it trades a short run's transfer against a long run's NLI.
    """
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    logfile = open(out / "train.log", "a", encoding="utf-8")
    torch.set_num_threads(args.threads)
    first, second = (resolve_base(name) for name in args.average)
    model_a, model_b = (AutoModelForSequenceClassification.from_pretrained(path, dtype=torch.float32)
                        for path in (first, second))
    w = args.average_weight
    try:
        soup = average_weights(model_a, model_b, w)
    except ValueError as exc:
        raise SystemExit(f"--average: {exc}") from None
    log(f"averaged {w} x {first} + {1 - w} x {second}", logfile)
    # only the held-out sets are needed: no training pairs, whatever the counts on the command line say
    heldout_only = argparse.Namespace(**{**vars(args), **{name: 0 for name in TRAINING_PAIR_COUNTS}})
    _, dev_pairs, calib, counts, held_convs = build_data(heldout_only)
    (out / "data_counts.json").write_text(json.dumps({"averaged": [first, second], "weight": w} | counts, indent=2))
    metrics = {"averaged": [first, second], "average_weight": w, "seed": args.seed}
    save_and_evaluate(soup, AutoTokenizer.from_pretrained(first), out, args, dev_pairs, calib, held_convs, metrics,
                      logfile)
    logfile.close()
    return out


def export(run_dir: Path, target: Path) -> None:
    """Copy a run's checkpoint to ``target`` in fp16 with guard_config.json (threshold from calibration)."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    run_dir = Path(run_dir)
    metrics = json.loads((run_dir / "metrics.json").read_text())
    model = AutoModelForSequenceClassification.from_pretrained(run_dir / "checkpoint", dtype=torch.float16)
    tokenizer = AutoTokenizer.from_pretrained(run_dir / "checkpoint")
    target = Path(target)
    target.mkdir(parents=True, exist_ok=True)
    for old in target.glob("*.safetensors"):
        old.unlink()
    model.save_pretrained(target)
    tokenizer.save_pretrained(target)
    calibration = metrics["calibration"]
    pairing = calibration["chosen"]
    config = {
        "threshold": round(calibration[pairing]["threshold"], 4),
        "pairing": pairing,
        "label_names": ID2LABEL,
        "max_length": json.loads((run_dir / "args.json").read_text())["max_length"],
        "calibrated_on": "held-out synthetic chit-chat dialogues built by "
                         "guard.training.calibration.calibration_dialogues "
                         "(conversations never used for training; never rgm)",
        "calibration": calibration,
    }
    if "intra" in calibration:  # calibrate_intra keeps it >= the history threshold
        config["intra_threshold"] = round(calibration["intra"]["threshold"], 4)
    (target / "guard_config.json").write_text(json.dumps(config, indent=2) + "\n")
    shutil.copy(run_dir / "metrics.json", target / "training_metrics.json")
    shutil.copy(run_dir / "data_counts.json", target / "training_data_counts.json")


