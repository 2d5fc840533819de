"""Seconds per training step of each backbone / LoRA setting on this CPU: ``python -m benchmarks.bench_training_step``.

Batches are real DECODE train pairs (length-grouped like the run, max 128 tokens); the figure is the median of
``--steps`` optimizer steps after one warm-up step. Needs ../shared/data (or GUARD_SHARED_DATA).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import torch

from guard.training import finetune as ft
from guard.training import real_data as rd

SETTINGS = {
    "minilm-full": {"base": "minilm", "lora_r": 0, "lora_targets": ""},
    "mpnet-full": {"base": "mpnet", "lora_r": 0, "lora_targets": ""},
    "mpnet-lora8-qv": {"base": "mpnet", "lora_r": 8, "lora_targets": "q,v"},
    "mpnet-lora8-qkvo": {"base": "mpnet", "lora_r": 8, "lora_targets": "q,k,v,o"},
    "mpnet-lora16-all": {"base": "mpnet", "lora_r": 16, "lora_targets": "q,k,v,o,intermediate.dense,output.dense"},
}


def measure(name: str, pairs: list[rd.LabelledPair], steps: int, batch_size: int, use_bf16: bool) -> dict:
    args = argparse.Namespace(lora_alpha=32, **SETTINGS[name])
    model, tokenizer = ft.build_model(args)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=1e-4)
    enc = tokenizer([p.premise for p in pairs], [p.hypothesis for p in pairs], truncation=True, max_length=128)
    keys = [k for k in ("input_ids", "token_type_ids", "attention_mask") if k in enc]
    lengths = [len(ids) for ids in enc["input_ids"]]
    plan = ft.batch_plan(lengths, batch_size, seed=0, steps=steps + 1)
    targets = [ft.TARGET[p.label] for p in pairs]
    model.train()
    times = []
    for batch in plan:
        started = time.perf_counter()
        features = tokenizer.pad({k: [enc[k][i] for i in batch] for k in keys}, return_tensors="pt")
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=use_bf16):
            logits = model(**features).logits
        ft.pair_loss(logits, torch.tensor([targets[i] for i in batch])).backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        times.append(time.perf_counter() - started)
    return {"setting": name, "trainable": sum(p.numel() for p in params),
            "seconds_per_step": round(statistics.median(times[1:]), 2), "batch_size": batch_size,
            "mean_tokens": round(sum(lengths) / len(lengths), 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--settings", nargs="+", default=list(SETTINGS), choices=list(SETTINGS))
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--bf16", action="store_true", help="bf16 autocast (only where the CPU has it natively)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    pairs = rd.load_corpus("decode", "train", limit=args.batch_size * 60, seed=0)
    for name in args.settings:
        print(json.dumps(measure(name, pairs, args.steps, args.batch_size, args.bf16)), flush=True)


if __name__ == "__main__":
    main()
