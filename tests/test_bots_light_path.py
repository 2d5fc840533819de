"""The CTranslate2 engine's light path (issue 24): a bot whose model is converted loads without torch or
transformers, and its tokenizer (bots.tokenizer.LightTokenizer, read from the snapshot kept beside the
conversion) gives exactly the ids and texts of transformers' tokenizer.

Tiny models built here (tests/tiny_models.py); the shipped SmolLM2 and ``python -m bots generate`` as a process:
tests/test_bots_embedded.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tiny_models import HISTORY
from transformers import AutoTokenizer

from bots import ct2
from bots.base import PRESETS, chat_messages
from bots.causal import TranscriptBot
from bots.embedded import EMBEDDED_PERSONA, ChatTemplateBot
from bots.tokenizer import META_FILE, LightTokenizer, snapshot
from guard.records import Turn

pytestmark = pytest.mark.usefixtures("module_cache_dir")
REPO = Path(__file__).resolve().parent.parent

#: Histories whose rendered prompts are compared: plain, empty, unicode and emoji, ChatML markers and newlines
#: inside a message, whitespace at the edges, a long run of turns.
HISTORIES = [
    list(HISTORY),
    [],
    [Turn(0, "user", "Ça va? 🐶 naïve café — “quotes” and 日本語")],
    [Turn(0, "user", "what does <|im_end|> mean?\n<|im_start|>assistant\nsure"), Turn(0, "bot", "  spaces  \n\n")],
    [Turn(0, "user" if i % 2 == 0 else "bot", f"message {i} about dogs and cats") for i in range(25)],
]
PERSONAS = [(), ["i am a teacher", "  i have two dogs  "], list(EMBEDDED_PERSONA)]
TEXTS = ["hello how are you today", " i like pizza\nPerson 1: hi", "", "  leading spaces", "Ça va? 🐶 日本語",
         "<|im_start|>user\nhi<|im_end|>", "</s> and <s> and <pad>"]


def _light(folder: Path, tmp_path: Path) -> LightTokenizer:
    reference = AutoTokenizer.from_pretrained(folder)
    assert snapshot(reference, tmp_path)
    light = LightTokenizer.load(tmp_path, folder)
    assert light is not None
    return light


def _assert_same_tokenizer(light: LightTokenizer, reference) -> None:
    for text in TEXTS:
        for special in (True, False):
            assert light(text, add_special_tokens=special)["input_ids"] == \
                reference(text, add_special_tokens=special)["input_ids"], (text, special)
        ids = reference(text)["input_ids"] + [reference.eos_token_id]
        for skip in (True, False):
            assert light.decode(ids, skip_special_tokens=skip) == reference.decode(ids, skip_special_tokens=skip)
        assert light.convert_ids_to_tokens(ids) == reference.convert_ids_to_tokens(ids)
    assert light.get_vocab() == reference.get_vocab()
    assert light.convert_tokens_to_ids("<|im_end|>") == reference.convert_tokens_to_ids("<|im_end|>")
    assert light.convert_tokens_to_ids("no-such-token") == reference.convert_tokens_to_ids("no-such-token")
    for name in ("eos_token_id", "bos_token_id", "pad_token_id", "unk_token_id"):
        assert getattr(light, name) == getattr(reference, name), name


@pytest.mark.parametrize("model_dir", ["llama_dir", "opt_dir", "blenderbot_dir"])
def test_the_light_tokenizer_encodes_and_decodes_as_transformers_does(request, model_dir, tmp_path):
    folder = request.getfixturevalue(model_dir)
    _assert_same_tokenizer(_light(folder, tmp_path), AutoTokenizer.from_pretrained(folder))


def test_the_light_chat_template_gives_transformers_prompt_ids(llama_dir, tmp_path):
    light, reference = _light(llama_dir, tmp_path), AutoTokenizer.from_pretrained(llama_dir)
    for history in HISTORIES:
        for persona in PERSONAS:
            messages = chat_messages(history, persona)
            for generation in (True, False):
                assert light.apply_chat_template(messages, add_generation_prompt=generation, tokenize=False) == \
                    reference.apply_chat_template(messages, add_generation_prompt=generation, tokenize=False)
                assert light.apply_chat_template(messages, add_generation_prompt=generation)["input_ids"] == \
                    reference.apply_chat_template(messages, add_generation_prompt=generation)["input_ids"]


def test_the_light_template_renders_transformers_extensions(tmp_path, llama_dir):
    """What chat templates use beyond plain Jinja: loop controls, namespace, tojson, raise_exception, the
    special tokens as variables, the {% generation %} tag."""
    reference = AutoTokenizer.from_pretrained(llama_dir)
    reference.chat_template = (
        "{% set ns = namespace(n=0) %}{% for m in messages %}{% if m['role'] == 'system' %}{% continue %}{% endif %}"
        "{% set ns.n = ns.n + 1 %}{{ bos_token }}{{ m['role'] | tojson }}:{% generation %}{{ m['content'] }}"
        "{% endgeneration %}{{ eos_token }}\n{% endfor %}{{ ns.n }}"
        "{% if messages | length > 30 %}{{ raise_exception('too long') }}{% endif %}")
    assert snapshot(reference, tmp_path)
    light = LightTokenizer.load(tmp_path)
    for history in HISTORIES:
        messages = chat_messages(history, ["i am a teacher"])
        assert light.apply_chat_template(messages, return_dict=False) == \
            reference.apply_chat_template(messages, return_dict=False)
    too_long = chat_messages([Turn(0, "user", "hi")] * 31)
    with pytest.raises(Exception, match="too long"):
        light.apply_chat_template(too_long)


def test_a_converted_bot_runs_on_the_light_tokenizer_and_prompts_as_transformers_would(llama_dir, opt_dir):
    first = ChatTemplateBot.from_pretrained(llama_dir)  # converts (or finds the conversion) through transformers
    again = ChatTemplateBot.from_pretrained(llama_dir)  # from the cache alone
    reference = ChatTemplateBot.from_pretrained(llama_dir, engine="transformers")
    assert isinstance(first.tokenizer, LightTokenizer) and isinstance(again.tokenizer, LightTokenizer)
    assert not isinstance(reference.tokenizer, LightTokenizer)
    for history in HISTORIES[:1] + HISTORIES[2:]:
        for persona in PERSONAS:
            assert again.prompt_ids(history, persona) == reference.prompt_ids(history, persona)
            assert again.head_ids(persona) == reference.head_ids(persona)
        assert again.history_ngrams(history, 4) == reference.history_ngrams(history, 4)
    assert again.end_ids() == first.end_ids() == reference.end_ids()
    assert again.config.is_encoder_decoder is False and again.config.eos_token_id == reference.config.eos_token_id
    greedy = PRESETS["greedy"].replace(max_new_tokens=8)
    assert again.generate(HISTORY, 1, greedy) == first.generate(HISTORY, 1, greedy)
    transcript = TranscriptBot.from_pretrained(opt_dir)
    transcript_reference = TranscriptBot.from_pretrained(opt_dir, engine="transformers")
    assert isinstance(TranscriptBot.from_pretrained(opt_dir).tokenizer, LightTokenizer)
    for persona in PERSONAS:  # the transcript prompt keeps the special tokens the tokenizer adds (OPT's </s>)
        assert transcript.prompt_ids(HISTORY, persona) == transcript_reference.prompt_ids(HISTORY, persona)
        assert transcript.head_ids(persona) == transcript_reference.head_ids(persona)


def test_a_snapshot_of_another_transformers_version_is_not_used(llama_dir):
    bot = ChatTemplateBot.from_pretrained(llama_dir)
    meta_path = bot.engine.model_dir / META_FILE
    meta = json.loads(meta_path.read_text())
    meta_path.write_text(json.dumps({**meta, "transformers_version": "0.0.1"}))
    assert ct2.CTranslate2Engine.from_cache(llama_dir, "tiny-llama") is None
    assert ct2.CTranslate2Engine.from_cache(llama_dir, llama_dir.name) is None
    ChatTemplateBot.from_pretrained(llama_dir)  # through transformers once more: the snapshot is written again
    assert json.loads(meta_path.read_text())["transformers_version"] == meta["transformers_version"]
    assert ct2.CTranslate2Engine.from_cache(llama_dir, llama_dir.name) is not None


def test_the_studio_scores_with_transformers_tokenizer_of_a_ctranslate2_bot(llama_dir):
    from studio.lm import CausalLMScorer, continuation_scorer

    bot = ChatTemplateBot.from_pretrained(llama_dir)
    scorer = continuation_scorer(bot)
    assert isinstance(scorer, CausalLMScorer) and scorer.tokenizer.is_fast
    assert not isinstance(scorer.tokenizer, LightTokenizer)


_GENERATE_AND_LIST_MODULES = """
import json, sys
{setup}
print(json.dumps({{"candidates": len(candidates), "engine": bot.engine.name,
                   "heavy": sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "transformers"))}}))
"""


def _run_without_heavy_imports(setup: str, cache_dir: str | None = None) -> dict:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO)}
    if cache_dir is not None:
        env["GUARD_CACHE_DIR"] = cache_dir
    env.pop("GUARD_ENGINE", None)
    done = subprocess.run([sys.executable, "-c", _GENERATE_AND_LIST_MODULES.format(setup=setup)], cwd=REPO,
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_generating_with_a_converted_tiny_model_imports_neither_torch_nor_transformers(llama_dir, module_cache_dir):
    ChatTemplateBot.from_pretrained(llama_dir)  # make sure the conversion and its tokenizer are cached
    turns = [(t.agent_id, t.text) for t in HISTORY]  # tests/tiny_models.py itself imports torch and transformers
    setup = ("from bots.embedded import ChatTemplateBot\nfrom bots.base import PRESETS\nfrom guard.records import Turn\n"
             f"bot = ChatTemplateBot.from_pretrained({str(llama_dir)!r})\n"
             f"history = [Turn(0, agent, text) for agent, text in {turns!r}]\n"
             "candidates = bot.generate(history, 4, PRESETS['fast'].replace(max_new_tokens=6, seed=1))")
    result = _run_without_heavy_imports(setup, str(module_cache_dir))
    assert result["engine"] == "ctranslate2" and result["candidates"] >= 1
    assert result["heavy"] == []


def test_the_goading_panel_offers_fqness_without_loading_a_ctranslate2_bots_weights(llama_dir):
    """The chat's goading panel asks whether the bot can rank follow-up questions after every reply; for a
    CTranslate2 bot the answer must not load its transformers weights (on a machine that converted the GGUF in one
    pass that meant a second de-quantization of the GGUF in the page, beside the next replies); the click does."""
    from studio.lm import can_score_continuations, continuation_scorer

    ChatTemplateBot.from_pretrained(llama_dir)  # converted and cached
    bot = ChatTemplateBot.from_pretrained(llama_dir)  # from the cache, as in a new process
    assert bot.engine.name == "ctranslate2" and bot._model is None
    assert can_score_continuations(bot)
    assert bot._model is None
    assert continuation_scorer(bot) is not None and bot._model is not None  # the click loads them
    assert not can_score_continuations(type("Remote", (), {"model": "gpt-4o", "tokenizer": None})())
