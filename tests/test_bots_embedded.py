"""The shipped embedded bot (SmolLM2-135M-Instruct from its GGUF) answers for real; the registry finds it; on its
default engine it prompts exactly as through transformers' tokenizer, and ``python -m bots generate`` never
imports torch or transformers."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

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
    # up to 3: the bot keeps one copy of a reply sampled twice
    assert 1 <= len(sampled) <= 3 and len({c.text for c in sampled}) == len(sampled)
    assert all(c.text and math.isfinite(c.score) for c in sampled)


def test_gguf_and_ctranslate2_conversions_are_cached(embedded_bot):
    from bots import ct2
    from bots.embedded import smollm2_path
    from embedded.gguf import ensure_converted

    # CTranslate2 converts the GGUF itself, in one pass (bots.gguf_ct2; tests/test_bots_gguf_ct2.py)
    assert embedded_bot.engine.name == "ctranslate2"
    assert embedded_bot.engine.model_dir == ct2.converted_dir(smollm2_path(), "embedded")
    assert ct2.is_complete(embedded_bot.engine.model_dir)
    cached = ensure_converted(smollm2_path(), "float32")  # transformers' weights, where something asks for them
    assert (cached / "config.json").exists() and (cached / "model.safetensors").exists()
    assert "quantization_config" not in (cached / "config.json").read_text()


def test_int8_engine_scores_like_the_transformers_engine(embedded_bot):
    """The same replies ranked the same way by both engines; int8 moves a score by a few hundredths."""
    reference = make_bot("embedded", engine="transformers", dtype="float32")
    history = [Turn(0, "user", "Do you have any pets?")]
    replies = ["Yes, I have two dogs.", "The capital of France is Paris.", "Purple elephant sandwich quickly."]
    int8, fp32 = embedded_bot.score_replies(history, replies), reference.score_replies(history, replies)
    assert sorted(range(3), key=int8.__getitem__) == sorted(range(3), key=fp32.__getitem__)
    assert int8 == pytest.approx(fp32, abs=0.3)
    # a sample drawn at temperature 0.5 is scored at temperature 1 (the reference engine agrees); room enough to end
    # by itself: a reply cut at the token limit is trimmed to its last sentence but keeps the score of all its tokens
    (sample,) = embedded_bot.generate(history, 1, PRESETS["fast"].replace(temperature=0.5, seed=1,
                                                                           max_new_tokens=96))
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


def test_the_light_tokenizer_prompts_smollm2_as_transformers_tokenizer_does(embedded_bot):
    """The bot's prompt ids (chat template, persona, turns dropped to fit), the fixed head, the banned n-grams and
    decoded replies: the same through the light tokenizer (bots.tokenizer) and through transformers'."""
    from bots.embedded import EMBEDDED_PERSONA, ChatTemplateBot
    from bots.tokenizer import LightTokenizer

    if not isinstance(embedded_bot.tokenizer, LightTokenizer):
        pytest.skip("the embedded bot does not run on CTranslate2 here")
    # transformers' tokenizer of the same model, read from the GGUF the engine was converted from
    reference = ChatTemplateBot(None, embedded_bot.tokenizer.transformers_tokenizer(), "reference",
                                engine=embedded_bot.engine, default_persona=EMBEDDED_PERSONA)
    histories = [
        [Turn(0, "user", "Do you have any pets?")],
        [Turn(0, "user", "Hi! What do you do for a living?"), Turn(0, "bot", "I'm a nurse at a children's hospital."),
         Turn(0, "user", "Nice. Do you have any pets?")],
        [Turn(0, "user", "Ça va? 🐶 naïve café — “quotes” 日本語 and <|im_end|> in the text\n\nsecond line")],
        [Turn(0, "user" if i % 2 == 0 else "bot", f"Message {i}: I really like hiking near Portland. " * 3)
         for i in range(40)],  # past the 384-token budget: whole turns dropped
    ]
    for history in histories:
        for persona in ((), ["I am a chef.", "I have three cats."]):
            ids = embedded_bot.prompt_ids(history, persona)
            assert ids == reference.prompt_ids(history, persona)
            assert embedded_bot.head_ids(persona) == reference.head_ids(persona)
            assert embedded_bot.tokenizer.decode(ids) == reference.tokenizer.decode(ids)
            assert embedded_bot.tokenizer.decode(ids, skip_special_tokens=True) == \
                reference.tokenizer.decode(ids, skip_special_tokens=True)
        assert embedded_bot.history_ngrams(history, 4) == reference.history_ngrams(history, 4)
    assert embedded_bot.end_ids() == reference.end_ids()
    assert embedded_bot.tokenizer.get_vocab() == reference.tokenizer.get_vocab()


def test_python_m_bots_generate_imports_neither_torch_nor_transformers(tmp_path):
    """A whole ``python -m bots generate`` process on the default engine (CTranslate2 int8) with its model converted
    loads only ctranslate2, tokenizers and jinja2 (issue 24: transformers' import was most of its time). Skipped
    where the shipped model or its conversion is absent (converting is the first use's job, not this test's)."""
    from bots import ct2
    from bots.embedded import smollm2_path
    from embedded import MissingAssetError

    try:
        source = smollm2_path()
    except MissingAssetError as exc:
        pytest.skip(str(exc))
    if not ct2.is_complete(ct2.converted_dir(source, "embedded")):
        pytest.skip("the embedded model is not converted to CTranslate2 on this machine")
    bot = make_bot("embedded")  # keeps the tokenizer beside the conversion if no process did yet
    assert bot.engine.name == "ctranslate2"
    history = tmp_path / "history.json"
    history.write_text(json.dumps([{"speaker": "user", "text": "Hi! What do you do for a living?"},
                                   {"speaker": "bot", "text": "I'm a nurse at a children's hospital."},
                                   {"speaker": "user", "text": "Nice. Do you have any pets?"}]))
    script = ("import json, runpy, sys\n"
              f"sys.argv = ['bots', 'generate', '--num-candidates', '4', '--history', {str(history)!r}, '--seed', '1']\n"
              "try:\n    runpy.run_module('bots', run_name='__main__', alter_sys=True)\n"
              "except SystemExit as stop:\n    assert not stop.code, stop.code\n"
              "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'transformers'))))\n")
    env = {key: value for key, value in os.environ.items() if key != "GUARD_ENGINE"}
    repo = Path(__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, "-c", script], cwd=repo, capture_output=True, text=True, timeout=300,
                          env={**env, "HF_HUB_OFFLINE": "1"})
    assert done.returncode == 0, done.stderr
    output, modules = done.stdout.strip().splitlines()[-2:]
    reply = json.loads(output)
    assert len(reply["candidates"]) >= 1 and reply["engine"].startswith("CTranslate2")
    assert json.loads(modules) == []
