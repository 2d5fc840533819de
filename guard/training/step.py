"""One optimizer step, shared by both training runs (``run.py``'s synthetic data, ``finetune.py``'s real data)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch


def train_step(model, features: dict[str, torch.Tensor], loss_of: Callable[[torch.Tensor], torch.Tensor],
               optimizer: torch.optim.Optimizer, params: Sequence[torch.nn.Parameter], lr: float,
               use_bf16: bool, device: str = "cpu", max_grad_norm: float = 1.0) -> float:
    """Forward (bf16 autocast where the hardware computes it natively), ``loss_of(logits)``, backward, clip the
    gradient norm, set the learning rate, step, clear the gradients; returns the loss."""
    with torch.autocast(device_type=device, dtype=torch.bfloat16, enabled=use_bf16):
        logits = model(**features).logits
    loss = loss_of(logits)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(params, max_grad_norm)
    for group in optimizer.param_groups:
        group["lr"] = lr
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return loss.item()
