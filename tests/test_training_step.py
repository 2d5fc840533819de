"""The one optimizer step both training runs use (guard.training.step)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from transformers import AutoModelForSequenceClassification, AutoTokenizer

from guard.training.step import train_step


def test_one_step_sets_the_rate_clips_steps_and_clears_gradients(tiny_nli_model_dir):
    torch.manual_seed(0)
    model = AutoModelForSequenceClassification.from_pretrained(tiny_nli_model_dir)
    tokenizer = AutoTokenizer.from_pretrained(tiny_nli_model_dir)
    features = dict(tokenizer(["I have two dogs.", "The sky is blue."], ["I have no pets.", "I like tea."],
                              padding=True, return_tensors="pt"))
    target = torch.tensor([0, 2])
    with torch.no_grad():  # the loss the synthetic-data run used to take from the model's own labels= path
        expected = model(**features, labels=target).loss.item()
    params = [p for p in model.parameters() if p.requires_grad]
    before = [p.detach().clone() for p in params]
    optimizer = torch.optim.AdamW(params, lr=1.0)
    loss = train_step(model, features, lambda logits: F.cross_entropy(logits.float(), target), optimizer, params,
                      lr=1e-3, use_bf16=False, max_grad_norm=1e-6)
    assert abs(loss - expected) < 1e-5
    assert optimizer.param_groups[0]["lr"] == 1e-3
    assert all(p.grad is None for p in params)
    moved = max((p - b).abs().max().item() for p, b in zip(params, before))
    assert 0 < moved <= 1e-3 * 1.01  # AdamW's first step moves each weight by about lr (a tiny clip keeps it there)
