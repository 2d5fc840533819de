"""The shipped embedded bot (SmolLM2-135M-Instruct from its GGUF) answers for real; the registry finds it."""

from __future__ import annotations

import math

import pytest

from bots import registry
from bots.base import PRESETS, BotError, Message
from bots.registry import available_bots, make_bot, register_bot


@pytest.fixture(scope="module")
def bot():
    try:
        return make_bot("embedded")
    except BotError as exc:
        pytest.skip(f"embedded model unavailable: {exc}")


def test_embedded_bot_gives_a_real_answer(bot):
    history = [Message("user", "Hi!"), Message("bot", "Hello! How can I help?"),
               Message("user", "What is the capital city of France?")]
    (answer,) = bot.generate(history, 4, PRESETS["greedy"].replace(max_new_tokens=16))
    assert "Paris" in answer.text
    assert -3.0 < answer.score < 0.0
    sampled = bot.generate(history, 3, PRESETS["fast"].replace(max_new_tokens=12, seed=0), persona=["I am a chef."])
    assert len(sampled) == 3 and all(c.text and math.isfinite(c.score) for c in sampled)


def test_gguf_conversion_is_cached(bot):
    from bots.embedded import smollm2_path
    from embedded.gguf import converted_dir

    dtype = str(bot.model.dtype).removeprefix("torch.")  # the cache is kept per dtype
    cached = converted_dir(smollm2_path(), dtype)
    assert (cached / "config.json").exists() and (cached / "model.safetensors").exists()
    assert "quantization_config" not in (cached / "config.json").read_text()


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
