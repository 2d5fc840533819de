"""The CPU dtype choice: bfloat16 only where the CPU has it natively, overridable, never a crash."""

from __future__ import annotations

import pytest
import torch

import embedded
from guard.models.nli import NLIScorer


def test_env_override_wins(monkeypatch):
    monkeypatch.setenv("GUARD_DTYPE", "float32")
    assert embedded.cpu_dtype() == "float32"
    monkeypatch.setenv("GUARD_DTYPE", "BFloat16")
    assert embedded.cpu_dtype() == "bfloat16"


def test_auto_follows_the_cpu(monkeypatch):
    monkeypatch.delenv("GUARD_DTYPE", raising=False)
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: False)
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: False)
    assert embedded.cpu_dtype() == "float32"
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: True)
    assert embedded.cpu_dtype() == "bfloat16"


def test_unknown_override_warns_and_falls_back(monkeypatch):
    monkeypatch.setenv("GUARD_DTYPE", "int4")
    with pytest.warns(UserWarning, match="GUARD_DTYPE"):
        assert embedded.cpu_dtype() in ("float32", "bfloat16")


def test_bf16_scorer_agrees_with_fp32(tiny_nli_model_dir):
    pairs = [("I have two dogs.", "I have no pets."), ("I like tea.", "The sky is blue."), ("Hi", "Hello there")]
    fp32 = NLIScorer.from_pretrained(tiny_nli_model_dir, dtype="float32")
    bf16 = NLIScorer.from_pretrained(tiny_nli_model_dir, dtype="bfloat16")
    assert next(bf16.model.parameters()).dtype == torch.bfloat16
    a, b = fp32.predict_proba(pairs), bf16.predict_proba(pairs)
    assert b.dtype == a.dtype and abs(a - b).max() < 0.05
    with pytest.raises(ValueError, match="dtype"):
        NLIScorer.from_pretrained(tiny_nli_model_dir, dtype="fp8")


def test_bf16_llama_gets_fp32_attention_with_the_same_tokens(tmp_path):
    """A bf16 causal LM on CPU switches to float32 attention; greedy output matches plain SDPA."""
    from transformers import LlamaConfig, LlamaForCausalLM

    from bots.hf import FP32_ATTENTION, use_fp32_attention

    def config():
        return LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                           num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
                           attn_implementation="sdpa")

    torch.manual_seed(0)
    model = LlamaForCausalLM(config()).to(torch.bfloat16).eval()
    ids = torch.randint(0, 64, (1, 40))
    with torch.inference_mode():
        plain = model(input_ids=ids).logits.float()
        use_fp32_attention(model)
        assert model.config._attn_implementation == FP32_ATTENTION
        upcast = model(input_ids=ids).logits.float()
        out = model.generate(input_ids=ids, max_new_tokens=5, do_sample=False)
    assert out.shape == (1, 45)
    assert (plain - upcast).abs().max() < 0.1  # bf16 rounding only
    fp32 = LlamaForCausalLM(config()).eval()
    use_fp32_attention(fp32)
    assert fp32.config._attn_implementation == "sdpa"  # float32 models are left alone
