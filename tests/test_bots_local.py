"""Local transformers backends on tiny random models built here (no hub): BlenderBot, OPT-style, chat template.

Each model is saved into tmp_path and loaded back through the real backend's from_pretrained, so
the loading, prompt building, batched generation and scoring code all run.
"""

from __future__ import annotations

import math

import pytest
import torch
from tiny_models import HISTORY

from bots.base import PRESETS, BotError, DecodingConfig, complete_sentences
from bots.blenderbot import TURN_SEPARATOR, BlenderBot
from bots.causal import BOT_TAG, USER_TAG, TranscriptBot, transcript
from bots.embedded import ChatTemplateBot
from bots.hf import StopAtStrings, _kept_token_count, generate_candidates, plan_generation
from guard.records import Turn


def _forward_mean_logprob(model, prompt_ids: torch.Tensor, reply_ids: list[int]) -> float:
    """Teacher-forced mean log-probability of ``reply_ids`` after the prompt (causal LM)."""
    ids = torch.cat([prompt_ids[0], torch.tensor(reply_ids)]).unsqueeze(0)
    with torch.no_grad():
        logprobs = torch.log_softmax(model(ids).logits[0, :-1].float(), dim=-1)
    start = prompt_ids.shape[1] - 1
    return float(torch.stack([logprobs[start + i, t] for i, t in enumerate(reply_ids)]).mean())


def test_opt_transcript_bot_scores_equal_teacher_forced_logprob(opt_dir, tokenizer):
    bot = TranscriptBot.from_pretrained(opt_dir, engine="transformers")
    decoding = DecodingConfig(method="greedy", max_new_tokens=8)
    (candidate,) = bot.generate(HISTORY, 3, decoding, persona=["i am a teacher"])
    prompt = torch.tensor([bot.prompt_ids(HISTORY, ["i am a teacher"])])
    with torch.inference_mode():
        output = bot.model.generate(prompt, attention_mask=torch.ones_like(prompt), do_sample=False,
                                    max_new_tokens=8, pad_token_id=tokenizer.pad_token_id)
    generated = output[0, prompt.shape[1]:].tolist()
    kept, text = _kept_token_count(tokenizer, generated, ("\n",), {tokenizer.eos_token_id})
    assert candidate.score == pytest.approx(_forward_mean_logprob(bot.model, prompt, generated[:kept]), abs=1e-4)
    cut = kept == len(generated) and generated[-1] != tokenizer.eos_token_id  # ran into max_new_tokens
    assert candidate.text == complete_sentences(text.strip().removeprefix(BOT_TAG).strip(), cut=cut)


@pytest.mark.parametrize("preset", ["fast", "decode_top_k", "decode_beam", "decode_sample_rank"])
def test_opt_bot_returns_n_candidates_best_first(opt_dir, preset):
    bot = TranscriptBot.from_pretrained(opt_dir, engine="transformers")
    decoding = PRESETS[preset].replace(max_new_tokens=10, min_new_tokens=min(PRESETS[preset].min_new_tokens, 4),
                                       seed=3)
    candidates = bot.generate(HISTORY, 4, decoding)
    assert 1 <= len(candidates) <= 4
    assert len({c.text for c in candidates}) == len(candidates)  # copies are dropped (bots.local.distinct_replies)
    if preset not in ("decode_sample_rank", "decode_beam"):  # the tiny model's beams end alike once cut at the line
        assert len(candidates) == 4
    scores = [c.score for c in candidates]
    assert scores == sorted(scores, reverse=True)
    assert all(math.isfinite(s) and s < 0 for s in scores)


def test_beam_scores_are_teacher_forced_logprobs(opt_dir, tokenizer):
    bot = TranscriptBot.from_pretrained(opt_dir, engine="transformers")
    prompt = torch.tensor([bot.prompt_ids(HISTORY, ())])
    inputs = {"input_ids": prompt, "attention_mask": torch.ones_like(prompt)}
    decoding = DecodingConfig(method="beam", num_beams=4, max_new_tokens=6)
    candidates = generate_candidates(bot.model, tokenizer, inputs, decoding, 3)
    with torch.inference_mode():
        out = bot.model.generate(**inputs, num_beams=4, num_return_sequences=3, do_sample=False,
                                 early_stopping=True, max_new_tokens=6, pad_token_id=tokenizer.pad_token_id)
    expected = []
    for row in out[:, prompt.shape[1]:].tolist():
        kept, _ = _kept_token_count(tokenizer, row, (), {tokenizer.eos_token_id})
        expected.append(_forward_mean_logprob(bot.model, prompt, row[:kept]))
    assert [c.score for c in candidates] == pytest.approx(sorted(expected, reverse=True), abs=1e-4)


def test_seeded_sampling_is_reproducible_and_leaves_global_rng_alone(opt_dir):
    bot = TranscriptBot.from_pretrained(opt_dir, engine="transformers")
    decoding = PRESETS["fast"].replace(max_new_tokens=8, seed=11)
    torch.manual_seed(123)
    before = torch.rand(1)
    first = bot.generate(HISTORY, 3, decoding)
    torch.manual_seed(123)
    torch.rand(1)
    second = bot.generate(HISTORY, 3, decoding)
    assert first == second
    torch.manual_seed(123)
    assert torch.rand(1) == before


def test_transcript_prompt_tags_speakers_and_ends_open():
    text = transcript(HISTORY, ["i am a teacher"])
    assert text.endswith(f"{USER_TAG} what is your favourite food?\n{BOT_TAG}")
    assert "Person 2's persona: i am a teacher" in text
    assert f"{BOT_TAG} i have two dogs." in text


def test_stop_criterion_and_cut_at_newline(tokenizer):
    reply = tokenizer(" i like pizza\nPerson 1: hi", add_special_tokens=False)["input_ids"]
    prompt = [tokenizer.bos_token_id] * 3
    criterion = StopAtStrings(tokenizer, 3, ("\n",))
    not_yet = torch.tensor([prompt + reply[:2]])
    assert not bool(criterion(not_yet, None)[0])
    assert bool(criterion(torch.tensor([prompt + reply]), None)[0])
    leading_newline = tokenizer("\n i like", add_special_tokens=False)["input_ids"]
    assert not bool(criterion(torch.tensor([prompt + leading_newline]), None)[0])
    kept, text = _kept_token_count(tokenizer, reply, ("\n",), {tokenizer.eos_token_id})
    assert text == " i like pizza"
    assert tokenizer.decode(reply[:kept]) == " i like pizza"


def test_blenderbot_context_is_persona_first_and_cut_at_turn_boundaries(blenderbot_dir, tokenizer):
    bot = BlenderBot.from_pretrained(blenderbot_dir)
    long_history = [Turn(0, "user" if i % 2 == 0 else "bot", f"turn {i} " + "i like dogs and cats " * 3)
                    for i in range(12)]
    ids = bot.prompt_ids(long_history, ["i am a teacher"])
    text = tokenizer.decode(ids, skip_special_tokens=True)
    assert len(ids) <= 128
    assert text.startswith("your persona: i am a teacher" + TURN_SEPARATOR)
    assert text.rstrip().endswith("turn 11 " + ("i like dogs and cats " * 3).strip())
    assert "turn 0 " not in text
    kept_turns = [piece for piece in text.split(TURN_SEPARATOR) if "turn" in piece]
    assert all(piece.strip().startswith("turn") for piece in kept_turns)  # whole turns only
    short = tokenizer.decode(bot.prompt_ids(HISTORY, ()), skip_special_tokens=True)
    assert short == TURN_SEPARATOR.join([" hi, do you have any pets?", "i have two dogs.",
                                         " what is your favourite food?"])


def test_blenderbot_generates_scored_candidates(blenderbot_dir):
    bot = BlenderBot.from_pretrained(blenderbot_dir)
    greedy = bot.generate(HISTORY, 1, DecodingConfig(method="greedy", max_new_tokens=6))
    input_ids = torch.tensor([bot.prompt_ids(HISTORY, ())])
    with torch.inference_mode():
        out = bot.model.generate(input_ids, do_sample=False, max_new_tokens=6)
        decoder = out[:, :-1]
        logprobs = torch.log_softmax(bot.model(input_ids=input_ids, decoder_input_ids=decoder).logits[0], -1)
    targets = out[0, 1:].tolist()
    eos = bot.tokenizer.eos_token_id
    kept = targets.index(eos) + 1 if eos in targets else len(targets)
    expected = float(torch.stack([logprobs[i, t] for i, t in enumerate(targets[:kept])]).mean())
    assert greedy[0].score == pytest.approx(expected, abs=1e-4)
    beams = bot.generate(HISTORY, 3, PRESETS["decode_beam"].replace(max_new_tokens=8, min_new_tokens=2))
    assert len(beams) == 3 and [c.score for c in beams] == sorted((c.score for c in beams), reverse=True)


def test_blenderbot_refuses_a_causal_model(opt_dir):
    with pytest.raises(BotError, match="could not load BlenderBot .*Unrecognized configuration class"):
        BlenderBot.from_pretrained(opt_dir)


def test_chat_template_bot_uses_roles_and_persona(llama_dir):
    bot = ChatTemplateBot.from_pretrained(llama_dir)
    prompt = bot.tokenizer.decode(bot.prompt_ids(HISTORY, ["i am a teacher"]))
    assert prompt.startswith("<|im_start|>system\n") and "Your persona: i am a teacher" in prompt
    assert "<|im_start|>assistant\ni have two dogs.<|im_end|>" in prompt
    assert prompt.endswith("<|im_start|>assistant\n")
    candidates = bot.generate(HISTORY, 2, PRESETS["fast"].replace(max_new_tokens=6, seed=0))
    assert len(candidates) == 2 and all(math.isfinite(c.score) for c in candidates)


def test_chat_prompt_drops_oldest_turns_to_fit(llama_dir):
    bot = ChatTemplateBot.from_pretrained(llama_dir)
    history = [Turn(0, "user" if i % 2 == 0 else "bot", f"message number {i} about dogs and cats")
               for i in range(20)]
    bot.max_prompt_tokens = len(bot.prompt_ids(history[-3:], ())) + 5  # room for about three turns
    prompt_ids = bot.prompt_ids(history, ())
    prompt = bot.tokenizer.decode(prompt_ids)
    assert len(prompt_ids) <= bot.max_prompt_tokens
    assert "message number 17 " in prompt and "message number 16 " not in prompt
    assert "message number 19 " in prompt and "message number 0 " not in prompt


def test_missing_model_folder_is_a_bot_error(tmp_path):
    with pytest.raises(BotError, match="could not load"):
        TranscriptBot.from_pretrained(tmp_path / "nothing-here")


def test_plan_generation_maps_methods():
    beam = plan_generation(PRESETS["decode_beam"], 4)
    assert beam.kwargs["num_beams"] == 10 and beam.kwargs["no_repeat_ngram_size"] == 3
    assert beam.kwargs["min_new_tokens"] == 20 and beam.kwargs["num_return_sequences"] == 4
    top_k = plan_generation(PRESETS["decode_top_k"], 5)
    assert top_k.kwargs["do_sample"] and top_k.kwargs["top_k"] == 40 and top_k.kwargs["top_p"] == 1.0
    top_p = plan_generation(PRESETS["top_p"], 4)
    assert top_p.kwargs["top_k"] == 0 and top_p.kwargs["top_p"] == 0.9
    both = plan_generation(PRESETS["fast"].replace(method="top_p", top_p=0.9), 4)
    assert both.kwargs["top_k"] == 40 and both.kwargs["top_p"] == 0.9
    rank = plan_generation(PRESETS["decode_sample_rank"], 3)
    assert rank.num_draws == 20 and rank.keep == 3
    assert plan_generation(PRESETS["greedy"], 4).keep == 1
    with pytest.raises(BotError):
        plan_generation(PRESETS["fast"], 0)


@pytest.mark.parametrize("model_dir", ["opt_dir", "llama_dir"])
def test_shared_prefill_gives_the_same_samples(request, model_dir, tokenizer):
    path = request.getfixturevalue(model_dir)
    bot = TranscriptBot.from_pretrained(path, engine="transformers")
    prompt = torch.tensor([bot.prompt_ids(HISTORY, ())])
    inputs = {"input_ids": prompt, "attention_mask": torch.ones_like(prompt)}
    decoding = PRESETS["fast"].replace(max_new_tokens=8, min_new_tokens=8, seed=4)
    shared = generate_candidates(bot.model, tokenizer, inputs, decoding, 4, share_prefill=True)
    plain = generate_candidates(bot.model, tokenizer, inputs, decoding, 4, share_prefill=False)
    assert [c.text for c in shared] == [c.text for c in plain]
    assert [c.score for c in shared] == pytest.approx([c.score for c in plain], abs=1e-4)


def test_prompt_keeps_exactly_the_newest_turns_that_fit(llama_dir):
    bot = ChatTemplateBot.from_pretrained(llama_dir)
    bot.engine.drop_block = 1  # exact fitting; the engines' block-wise dropping: test_bots_engines
    history = [Turn(0, "user" if i % 2 == 0 else "bot", f"message {i} " + "about dogs " * (i % 4))
               for i in range(15)]
    lengths = [len(bot.encode_prompt(history[start:], ())) for start in range(len(history))]
    for budget in range(lengths[-1] - 3, lengths[0] + 3):
        bot.max_prompt_tokens = budget
        fitting = [start for start, length in enumerate(lengths) if length <= budget]
        if fitting:
            assert bot.prompt_ids(history, ()) == bot.encode_prompt(history[fitting[0]:], ()), budget
        else:  # the last turn alone is too long: it stays, cut to its end within the budget
            assert len(bot.prompt_ids(history, ())) <= budget and bot.prompt_coverage(history, ()).cut, budget


def test_a_message_longer_than_the_budget_is_cut_to_its_end_and_the_bot_says_so(llama_dir):
    """Issue 32: a 5,000-character message went whole into the embedded bot's prompt, over its 1,024-token budget,
    and pushed every earlier turn out, with no word of it; now the prompt keeps the message's end within the budget
    (whole words after an ellipsis) and ``reading`` says how much the bot read."""
    bot = ChatTemplateBot.from_pretrained(llama_dir)
    long = " ".join(f"word{k} i like dogs and cats." for k in range(200))
    history = HISTORY[:2] + [Turn(2, "user", long)]
    # room for about 80 tokens of the message (the tiny tokenizer spells the system prompt out nearly byte by byte)
    bot.max_prompt_tokens = len(bot.encode_prompt([Turn(2, "user", "")], ["i am a teacher"])) + 80
    ids = bot.prompt_ids(history, ["i am a teacher"])
    prompt = bot.tokenizer.decode(ids)
    assert len(ids) <= bot.max_prompt_tokens
    assert "Your persona: i am a teacher" in prompt and prompt.endswith("<|im_start|>assistant\n")
    kept = prompt.split("<|im_start|>user\n")[-1].split("<|im_end|>")[0]
    assert kept.startswith("… ") and long.endswith(" " + kept[2:]) and len(kept) < len(long)  # whole words
    reading = bot.prompt_coverage(history, ["i am a teacher"])
    assert reading.cut and reading.last_chars == len(long) and reading.last_chars_read == len(kept) - 2
    assert (reading.earlier, reading.earlier_read) == (2, 0)
    note = reading.note("Your message")
    assert note == (f"Your message was too long for the bot: it read only the last {len(kept) - 2:,} of its "
                    f"{len(long):,} characters (its prompt holds {bot.max_prompt_tokens:,} tokens), and none of the "
                    "conversation before it.")
    # a message that fits is read whole, and there is nothing to say
    short = bot.prompt_coverage(HISTORY, ())
    assert not short.cut and short.note() == "" and short.earlier_read == 2
    # the causal bot keeps its preamble and the message's end as well
    causal = TranscriptBot.from_pretrained(llama_dir)
    causal.max_prompt_tokens = len(causal.encode_prompt([Turn(2, "user", "")], ())) + 80
    assert len(causal.prompt_ids(history, ())) <= causal.max_prompt_tokens and causal.prompt_coverage(history, ()).cut
    assert causal.tokenizer.decode(causal.prompt_ids(history, ())).startswith(
        causal.tokenizer.decode(causal.encode_prompt([], ()))[:40])  # the preamble stays


def test_blenderbot_drops_persona_lines_before_the_last_turn(blenderbot_dir, tokenizer):
    bot = BlenderBot.from_pretrained(blenderbot_dir)
    persona = [f"line {i} quixotic wyverns" for i in range(4)]  # words the tiny BPE spells out byte by byte
    last = Turn(0, "user", "last turn " + "i like dogs and cats " * 12)
    text = tokenizer.decode(bot.prompt_ids([Turn(0, "bot", "hello there"), last], persona),
                            skip_special_tokens=True)
    assert len(tokenizer(text)["input_ids"]) <= 128
    assert "line 0" not in text and "line 3" in text and "hello there" not in text
    assert text.rstrip().endswith(("i like dogs and cats " * 12).strip())


def test_local_bots_refuse_missing_model_names_and_unknown_dtypes(llama_dir):
    with pytest.raises(BotError, match="needs model="):
        ChatTemplateBot.from_pretrained()
    with pytest.raises(BotError, match="dtype must be one of auto, float32, bfloat16"):
        TranscriptBot.from_pretrained(llama_dir, dtype="float8")
