"""The shipped embedded bot (SmolLM2-135M-Instruct from its GGUF) answers for real; the registry finds it."""

from __future__ import annotations

import math

import pytest

from bots import registry
from bots.base import PRESETS, BotError
from bots.registry import available_bots, make_bot, register_bot
from guard.records import Turn


def test_embedded_bot_gives_a_real_answer(embedded_bot):
    history = [Turn(0, "user", "Hi!"), Turn(0, "bot", "Hello! How can I help?"),
               Turn(0, "user", "What is the capital city of France?")]
    (answer,) = embedded_bot.generate(history, 4, PRESETS["greedy"].replace(max_new_tokens=16))
    assert "Paris" in answer.text
    assert -3.0 < answer.score < 0.0
    sampled = embedded_bot.generate(history, 3, PRESETS["fast"].replace(max_new_tokens=12, seed=0), persona=["I am a chef."])
    assert len(sampled) == 3 and all(c.text and math.isfinite(c.score) for c in sampled)


def test_gguf_and_ctranslate2_conversions_are_cached(embedded_bot):
    from bots import ct2
    from bots.embedded import smollm2_path
    from embedded.gguf import converted_dir

    cached = converted_dir(smollm2_path(), "float32")  # CTranslate2 converts from the float32 folder
    assert (cached / "config.json").exists() and (cached / "model.safetensors").exists()
    assert "quantization_config" not in (cached / "config.json").read_text()
    assert embedded_bot.engine.name == "ctranslate2" and embedded_bot.engine.model_dir == ct2.converted_dir(cached, "embedded")
    assert ct2.is_complete(embedded_bot.engine.model_dir)


def test_int8_engine_scores_like_the_transformers_engine(embedded_bot):
    """The same replies ranked the same way by both engines; int8 moves a score by a few hundredths."""
    reference = make_bot("embedded", engine="transformers", dtype="float32")
    history = [Turn(0, "user", "Do you have any pets?")]
    replies = ["Yes, I have two dogs.", "The capital of France is Paris.", "Purple elephant sandwich quickly."]
    int8, fp32 = embedded_bot.score_replies(history, replies), reference.score_replies(history, replies)
    assert sorted(range(3), key=int8.__getitem__) == sorted(range(3), key=fp32.__getitem__)
    assert int8 == pytest.approx(fp32, abs=0.3)
    # a sample drawn at temperature 0.5 is scored at temperature 1 (the reference engine agrees)
    (sample,) = embedded_bot.generate(history, 1, PRESETS["fast"].replace(temperature=0.5, seed=1))
    assert sample.score == pytest.approx(reference.score_replies(history, [sample.text])[0], abs=0.3)


def test_registry_plugs_in_and_rejects_names():
    assert {"embedded", "blenderbot", "causal", "gemma3", "plato", "remote", "chat", "scripted"} <= set(available_bots())
    with pytest.raises(BotError, match="unknown bot 'nope'.*embedded"):
        make_bot("nope")
    with pytest.raises(BotError, match="does not take that option"):
        make_bot("remote", colour="blue")
    sentinel = object()
    register_bot("test-sentinel", lambda **options: (sentinel, options))
    try:
        assert make_bot("test-sentinel", size=3) == (sentinel, {"size": 3})
    finally:
        registry._FACTORIES.pop("test-sentinel", None)  # keep the shared registry clean for other tests
