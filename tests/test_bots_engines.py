"""Both engines on tiny models built here: CTranslate2 int8 (converted in the test) and transformers.

Plumbing (every preset through both engines), how decoding settings map to CTranslate2, the conversion
cache (atomic, keyed, one clear error on failure), the shared prefill (same candidates as separate
prefills) and the transformers prefix cache across turns (only new tokens prefilled; an edited history
invalidates what it no longer shares).
"""

from __future__ import annotations

import math

import ctranslate2
import pytest
import torch
from tiny_models import HISTORY

from bots import ct2
from bots.base import PRESETS, BotError, DecodingConfig
from bots.blenderbot import BlenderBot
from bots.causal import TranscriptBot
from bots.embedded import ChatTemplateBot
from bots.engines import TransformersEngine, resolve_engine
from bots.hf import PrefixCache, generate_candidates, make_candidate
from guard.records import Turn

pytestmark = pytest.mark.usefixtures("module_cache_dir")


def test_auto_picks_ctranslate2_where_it_converts_and_transformers_elsewhere(opt_dir, llama_dir, blenderbot_dir):
    chat = ChatTemplateBot.from_pretrained(llama_dir)
    opt = TranscriptBot.from_pretrained(opt_dir)
    assert chat.engine.name == opt.engine.name == "ctranslate2"
    assert chat.engine_label == f"CTranslate2 {ctranslate2.__version__} int8"
    blender = BlenderBot.from_pretrained(blenderbot_dir)
    assert blender.engine.name == "transformers" and blender.engine_label.startswith("transformers ")
    with pytest.raises(BotError, match="engine 'ctranslate2' is not available"):
        BlenderBot.from_pretrained(blenderbot_dir, engine="ctranslate2")
    reference = ChatTemplateBot.from_pretrained(llama_dir, engine="transformers")
    assert reference.engine.name == "transformers"
    with pytest.raises(BotError, match="engine must be one of"):
        ChatTemplateBot.from_pretrained(llama_dir, engine="onnx")


def test_guard_engine_changes_the_default(llama_dir, monkeypatch):
    monkeypatch.setenv("GUARD_ENGINE", "transformers")
    assert ChatTemplateBot.from_pretrained(llama_dir).engine.name == "transformers"
    assert resolve_engine("ctranslate2", ChatTemplateBot.from_pretrained(llama_dir).config) == "ctranslate2"


@pytest.mark.parametrize("preset", list(PRESETS))
@pytest.mark.parametrize("engine", ["ctranslate2", "transformers"])
def test_every_preset_through_both_engines(opt_dir, preset, engine):
    bot = TranscriptBot.from_pretrained(opt_dir, engine=engine)
    decoding = PRESETS[preset].replace(max_new_tokens=8, min_new_tokens=min(PRESETS[preset].min_new_tokens, 3),
                                       seed=5)
    candidates = bot.generate(HISTORY, 3, decoding, persona=["i am a teacher"])
    expected = 1 if preset == "greedy" else 3
    assert 1 <= len(candidates) <= expected
    assert len({c.text for c in candidates}) == len(candidates)  # copies are dropped (bots.local.distinct_replies)
    if preset not in ("decode_sample_rank", "decode_beam"):  # the tiny model's beams end alike once cut at the line
        assert len(candidates) == expected
    scores = [c.score for c in candidates]
    assert scores == sorted(scores, reverse=True) and all(math.isfinite(s) and s < 0 for s in scores)
    assert all("\n" not in c.text for c in candidates)  # the stop string ends every reply


def test_decoding_settings_map_to_generate_batch():
    greedy = ct2.generation_options(PRESETS["greedy"], 4)
    assert greedy.keep == 1 and greedy.kwargs["sampling_topk"] == 1 and greedy.kwargs["num_hypotheses"] == 1
    beam = ct2.generation_options(PRESETS["decode_beam"], 4)
    assert beam.beam and beam.kwargs["beam_size"] == 10 and beam.kwargs["num_hypotheses"] == 4
    assert beam.kwargs["min_length"] == 20 and beam.kwargs["no_repeat_ngram_size"] == 3
    assert beam.kwargs["max_length"] == 64 and beam.kwargs["include_prompt_in_result"] is False
    top_k = ct2.generation_options(PRESETS["decode_top_k"], 4)
    assert top_k.kwargs["sampling_topk"] == 40 and top_k.kwargs["sampling_temperature"] == 1.0
    assert top_k.kwargs["sampling_topp"] == 1.0 and top_k.kwargs["num_hypotheses"] == 4
    fast = ct2.generation_options(PRESETS["fast"], 4)  # the default: top-k 40 and top-p 0.9 at temperature 0.8
    assert fast.kwargs["sampling_topk"] == 40 and fast.kwargs["sampling_topp"] == 0.9
    assert fast.kwargs["sampling_temperature"] == 0.8 and fast.kwargs["num_hypotheses"] == 4
    top_p = ct2.generation_options(PRESETS["top_p"], 4)
    assert top_p.kwargs["sampling_topk"] == 0 and top_p.kwargs["sampling_topp"] == 0.9
    both = ct2.generation_options(PRESETS["fast"].replace(method="top_p", top_p=0.9), 4)  # serve --top-k 40 --top-p 0.9
    assert both.kwargs["sampling_topk"] == 40 and both.kwargs["sampling_topp"] == 0.9
    rank = ct2.generation_options(PRESETS["decode_sample_rank"], 3)
    assert rank.kwargs["num_hypotheses"] == 20 and rank.keep == 3
    with pytest.raises(BotError):
        ct2.generation_options(PRESETS["fast"], 0)


def test_ctranslate2_scores_are_temperature_1_teacher_forced_log_probs(llama_dir):
    """Candidate scores are mean log-probabilities at temperature 1, whatever temperature sampled them."""
    bot = ChatTemplateBot.from_pretrained(llama_dir)
    prompt = bot.prompt_ids(HISTORY, ())
    decoding = DecodingConfig(method="top_k", top_k=20, temperature=0.5, max_new_tokens=6, seed=2)
    candidates = bot.engine.generate(prompt, decoding, 3)  # no end tokens: every reply keeps its 6 tokens
    ctranslate2.set_random_seed(2)  # the same draws again, straight from CTranslate2
    request = ct2.generation_options(decoding, 3)
    (raw,) = bot.engine.generator.generate_batch([bot.tokenizer.convert_ids_to_tokens(prompt)], **request.kwargs)
    teacher_forced = bot.engine.score(prompt, raw.sequences_ids)
    # int8 step-by-step decoding and whole-sequence scoring round slightly differently (about 0.01 here); the
    # embedded test checks the temperature on the real model, where T = 0.5 would move scores far more
    assert sorted(c.score for c in candidates) == pytest.approx(sorted(teacher_forced), abs=0.03)


def test_ctranslate2_shared_prefill_and_static_head_give_the_greedy_reply_of_a_plain_prefill(llama_dir):
    bot = ChatTemplateBot.from_pretrained(llama_dir)
    prompt = bot.prompt_ids(HISTORY, ["i am a teacher"])
    head = len(bot.head_ids(["i am a teacher"]))
    assert 0 < head < len(prompt) and bot.head_ids(["i am a teacher"]) == prompt[:head]
    greedy = DecodingConfig(method="greedy", max_new_tokens=10)
    shared = bot.engine.generate(prompt, greedy, 1, end_ids=bot.end_ids(), static_length=head)
    again = bot.engine.generate(prompt, greedy, 1, end_ids=bot.end_ids(), static_length=head)  # cached head
    # the prompt decoded token by token in the loop, once per row: no shared state at all
    plain = bot.engine.generator.generate_batch([bot.tokenizer.convert_ids_to_tokens(prompt)] * 2, beam_size=1,
                                                max_length=10 + len(prompt), include_prompt_in_result=True,
                                                end_token=bot.end_ids())
    plain_ids = plain[0].sequences_ids[0][len(prompt):]
    assert shared == again
    assert shared[0].text == make_candidate(bot.tokenizer, plain_ids, [0.0] * len(plain_ids), (),
                                            set(bot.end_ids())).text


def test_transformers_shared_prefill_gives_the_greedy_and_beam_replies_of_separate_prefills(opt_dir, tokenizer):
    bot = TranscriptBot.from_pretrained(opt_dir, engine="transformers")
    prompt = torch.tensor([bot.prompt_ids(HISTORY, ())])
    inputs = {"input_ids": prompt, "attention_mask": torch.ones_like(prompt)}
    for decoding, n in ((DecodingConfig(method="greedy", max_new_tokens=8), 1),
                        (DecodingConfig(method="beam", num_beams=4, max_new_tokens=8), 3)):
        shared = generate_candidates(bot.model, tokenizer, inputs, decoding, n, share_prefill=True)
        plain = generate_candidates(bot.model, tokenizer, inputs, decoding, n, share_prefill=False)
        assert [c.text for c in shared] == [c.text for c in plain]
        assert [c.score for c in shared] == pytest.approx([c.score for c in plain], abs=1e-4)


def test_prefix_cache_prefills_only_new_tokens_and_an_edit_invalidates_the_rest(llama_dir):
    bot = ChatTemplateBot.from_pretrained(llama_dir, engine="transformers")
    cache = bot.engine.prefix_cache
    greedy = DecodingConfig(method="greedy", max_new_tokens=6)
    history = list(HISTORY)
    bot.generate(history, 1, greedy)
    first = len(bot.prompt_ids(history, ())) - 1
    assert (cache.prefilled_tokens, cache.reused_tokens) == (first, 0)

    history += [Turn(0, "bot", "pizza, and you?"), Turn(0, "user", "i like dogs and cats")]
    extended = bot.generate(history, 1, greedy)
    second = len(bot.prompt_ids(history, ())) - 1
    assert cache.reused_tokens == first and cache.prefilled_tokens == second  # only the new turns ran
    uncached = TransformersEngine(bot.model, bot.tokenizer, PrefixCache(max_entries=0))
    reference = uncached.generate(bot.prompt_ids(history, ()), greedy, 1, end_ids=bot.end_ids())
    assert [c.text for c in extended] == [c.text for c in reference]
    assert extended[0].score == pytest.approx(reference[0].score, abs=1e-4)

    edited = history[:1] + [Turn(0, "bot", "no pets at all.")] + history[2:]  # an edited earlier turn
    before = cache.prefilled_tokens
    replies = bot.generate(edited, 1, greedy)
    prompt = bot.prompt_ids(edited, ())
    shared = len(bot.head_ids(()))  # at most the system message and the first user turn survive the edit
    assert cache.prefilled_tokens - before >= len(prompt) - 1 - shared - len(bot.prompt_ids(history[:1], ()))
    reference = uncached.generate(prompt, greedy, 1, end_ids=bot.end_ids())
    assert [c.text for c in replies] == [c.text for c in reference]
    assert len(cache.entries) == 2  # the unedited conversation keeps its own entry


def test_score_replies_agree_between_engines(llama_dir):
    int8 = ChatTemplateBot.from_pretrained(llama_dir)
    fp32 = ChatTemplateBot.from_pretrained(llama_dir, engine="transformers")
    replies = ["i like dogs and cats", "hello there", "my favourite food is pizza"]
    a, b = int8.score_replies(HISTORY, replies), fp32.score_replies(HISTORY, replies)
    assert a == pytest.approx(b, abs=0.05)  # int8 weights move a tiny random model's log-probs a little


def test_conversion_is_cached_and_keyed_by_the_source(llama_dir, module_cache_dir):
    first = ct2.convert(llama_dir, "tiny")
    assert ct2.is_complete(first) and first.parent == module_cache_dir / "ct2"
    calls = []
    assert ct2.convert(llama_dir, "tiny", converter=lambda *a: calls.append(a)) == first and calls == []
    (llama_dir / "config.json").touch()  # a changed source gets a new key
    try:
        assert ct2.converted_dir(llama_dir, "tiny") != first
    finally:
        ct2.convert(llama_dir, "tiny")  # leave a complete cache for the next tests


def test_a_failed_conversion_is_one_error_and_leaves_nothing(llama_dir, module_cache_dir, capsys):
    def half_written(source: str, output_dir: str) -> None:
        (__import__("pathlib").Path(output_dir) / "model.bin").write_bytes(b"partial")
        raise RuntimeError("disk full\nsecond line")

    with pytest.raises(BotError) as error:
        ct2.convert(llama_dir, "broken", converter=half_written)
    assert str(error.value).startswith("could not convert broken to CTranslate2: disk full (nothing was cached")
    assert "\n" not in str(error.value)
    # nothing cached, nothing half-built: only the lock file the builders take turns on (embedded.once.build_once)
    assert [p.name for p in (module_cache_dir / "ct2").iterdir() if p.name.startswith("broken")
            and not p.name.endswith(".lock")] == []
    assert "Converting broken to CTranslate2 int8 (first use only" in capsys.readouterr().err


def test_transformers_engine_drops_turns_a_block_at_a_time_so_the_cache_survives(llama_dir):
    bot = ChatTemplateBot.from_pretrained(llama_dir, engine="transformers")
    history = [Turn(0, "user" if i % 2 == 0 else "bot", f"message {i} about dogs") for i in range(41)]
    bot.max_prompt_tokens = len(bot.prompt_ids(history[-12:], ()))  # room for about 12 turns
    starts = []
    for end in range(13, 42, 2):  # the conversation grows by one exchange at a time
        prompt = bot.prompt_ids(history[:end], ())
        assert len(prompt) <= bot.max_prompt_tokens
        text = bot.tokenizer.decode(prompt)
        starts.append(next(i for i in range(end) if f"message {i} " in text))
    assert all(start % 8 == 0 for start in starts) and starts == sorted(starts)
    assert len(set(starts)) < len(starts) / 2  # the prompt's start stays put over several turns


def test_ctranslate2_caches_the_prompt_up_to_a_checkpoint_and_reloads_past_its_budget(llama_dir, monkeypatch):
    bot = ChatTemplateBot.from_pretrained(llama_dir)
    engine = bot.engine
    history = [Turn(0, "user" if i % 2 == 0 else "bot", f"message {i} about dogs and cats") for i in range(21)]
    prompt = bot.prompt_ids(history, ())
    engine.checkpoint_tokens = 32
    static = engine.static_prefix(prompt, static_length=5)
    assert len(static) % 32 == 0 and len(prompt) - 32 <= len(static) <= len(prompt) - 2
    assert engine.static_prefix(prompt[:20], static_length=5) == prompt[:5]  # shorter than a checkpoint: the head
    greedy = DecodingConfig(method="greedy", max_new_tokens=8)
    cached = engine.generate(prompt, greedy, 1, end_ids=bot.end_ids())
    longer = prompt + bot.tokenizer("more", add_special_tokens=False)["input_ids"]
    assert engine.static_prefix(longer) == static  # the next turn reuses the same cached prefix
    engine.checkpoint_tokens = 0
    plain = engine.generate(prompt, greedy, 1, end_ids=bot.end_ids())
    assert cached == plain
    monkeypatch.setattr(ct2, "CACHE_BUDGET_TOKENS", len(static) + 1)
    engine.checkpoint_tokens = 32
    before = engine.generator
    engine.generate(prompt[:-40], greedy, 1, end_ids=bot.end_ids())  # a second prefix overflows the budget
    assert engine.generator is not before and len(engine.cached_prefixes) == 1
    assert engine.generate(prompt, greedy, 1, end_ids=bot.end_ids()) == plain
