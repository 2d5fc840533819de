"""Shared transformers generation for the local backends: decoding settings -> generate() -> scored candidates.

One ``generate`` call draws all candidates (``num_return_sequences``), so the prompt is encoded in a
single batch. Scores come from the raw logits generate() already computed (``output_logits``), so
scoring costs no second forward pass: the score is the mean log-softmax probability (temperature 1,
before any top-k/top-p filtering) of the tokens the reply keeps, including the end-of-turn token
when the model produced one. A reply cut by ``max_new_tokens`` is trimmed to its last complete
sentence (``bots.base.complete_sentences``); its score still covers the tokens generated up to the cut.
"""

from __future__ import annotations

import contextlib
import copy
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
from transformers import StoppingCriteria

from bots.base import DEFAULT_SAMPLE_RANK_SAMPLES, BotError, Candidate, DecodingConfig
from bots.candidates import _distinct, _kept_token_count, common_prefix_length, make_candidate  # noqa: F401 (re-exported)


@dataclass
class GenerationPlan:
    """What generate() is asked for, and how many of its outputs are kept."""

    kwargs: dict
    num_draws: int
    keep: int
    rank_by_score: bool


def plan_generation(decoding: DecodingConfig, num_candidates: int) -> GenerationPlan:
    """Translate our decoding settings into generate() keyword arguments."""
    if num_candidates < 1:
        raise BotError("num_candidates must be >= 1")
    kwargs: dict = {
        "max_new_tokens": decoding.max_new_tokens,
        "min_new_tokens": decoding.min_new_tokens or None,
        "no_repeat_ngram_size": decoding.no_repeat_ngram_size or None,
        "repetition_penalty": decoding.repetition_penalty if decoding.repetition_penalty != 1.0 else None,
    }
    keep = num_candidates
    rank = True
    if decoding.method == "greedy":
        # a deterministic search has exactly one answer; asking for more returns that one
        kwargs.update(do_sample=False, num_beams=1)
        num_draws, keep = 1, 1
    elif decoding.method == "beam":
        num_draws = num_candidates
        kwargs.update(do_sample=False, num_beams=max(decoding.num_beams, num_candidates), early_stopping=True)
    else:
        top_k, top_p = decoding.filters
        kwargs.update(do_sample=True, temperature=decoding.temperature, top_k=top_k, top_p=top_p)
        if decoding.method == "sample_rank":
            num_draws = max(decoding.num_samples or DEFAULT_SAMPLE_RANK_SAMPLES, num_candidates)
        else:
            num_draws = num_candidates
    kwargs["num_return_sequences"] = num_draws
    return GenerationPlan({k: v for k, v in kwargs.items() if v is not None}, num_draws, keep, rank)


def generate_candidates(
    model,
    tokenizer,
    inputs: dict[str, torch.Tensor],
    decoding: DecodingConfig,
    num_candidates: int,
    *,
    stop_strings: Sequence[str] = (),
    end_token_ids: Sequence[int] = (),
    stopping_criteria: Sequence = (),
    share_prefill: bool = True,
    prefix_cache: PrefixCache | None = None,
    clean: Callable[[str], str] = str.strip,
    banned_sequences: Sequence[Sequence[int]] = (),
) -> list[Candidate]:
    """Run one batched generate() for a single prompt and return scored candidates, best first.

    ``stop_strings`` end the reply text (and its score) where they first occur after the reply began;
    ``stopping_criteria`` let generate() stop early for them. ``share_prefill`` encodes the prompt
    once for all samples or beams instead of once per row (decoder-only models; same results), and
    ``prefix_cache`` keeps that state between calls so the next turn encodes only its new tokens.
    ``banned_sequences`` become ``bad_words_ids``: no generated token completes one of them.
    """
    plan = plan_generation(decoding, num_candidates)
    end_ids = {int(t) for t in end_token_ids}
    eos = model.generation_config.eos_token_id
    end_ids.update([eos] if isinstance(eos, int) else (eos or []))
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else next(iter(end_ids), 0)
    kwargs = dict(plan.kwargs)
    if end_ids:
        kwargs["eos_token_id"] = sorted(end_ids)
    banned = [list(map(int, b)) for b in banned_sequences if len(b) > 1]
    if banned:
        kwargs["bad_words_ids"] = banned
    if stopping_criteria:
        from transformers import StoppingCriteriaList

        kwargs["stopping_criteria"] = StoppingCriteriaList(stopping_criteria)
    seed_context = contextlib.nullcontext()
    if decoding.seed is not None:
        seed_context = torch.random.fork_rng(devices=[])
    try:
        with seed_context, torch.inference_mode():
            if decoding.seed is not None:
                torch.manual_seed(decoding.seed)
            generate_inputs = dict(inputs)
            prompt = inputs["input_ids"]
            if share_prefill and not model.config.is_encoder_decoder and prompt.shape[0] == 1 and prompt.shape[1] > 1:
                generate_inputs, kwargs = _shared_prefill(model, inputs, kwargs, prefix_cache)
            output = model.generate(
                **generate_inputs,
                **kwargs,
                pad_token_id=pad_id,
                return_dict_in_generate=True,
                output_logits=True,
            )
            transition = model.compute_transition_scores(
                output.sequences, output.logits, getattr(output, "beam_indices", None), normalize_logits=True
            )
    except (RuntimeError, ValueError) as exc:
        raise BotError(f"generation failed: {exc}") from exc

    # the transition scores cover the last len(steps) positions of every sequence: the generated part
    generated = output.sequences[:, output.sequences.shape[1] - transition.shape[1]:]
    candidates = [make_candidate(tokenizer, generated[row].tolist(), transition[row].tolist(), stop_strings, end_ids,
                                 clean) for row in range(generated.shape[0])]
    if decoding.method == "sample_rank":
        candidates = _distinct(candidates)
    candidates.sort(key=lambda c: c.score, reverse=True)
    return candidates[: plan.keep]


class StopAtStrings(StoppingCriteria):
    """Stop each sequence once its generated text contains a stop string (per row).

    Only the tokens after ``prompt_length`` are decoded, so it works with any tokenizer.
    """

    def __init__(self, tokenizer: object, prompt_length: int, stop_strings: Sequence[str]):
        self.tokenizer = tokenizer
        self.prompt_length = prompt_length
        self.stop_strings = tuple(stop_strings)

    def __call__(self, input_ids: torch.LongTensor, scores, **kwargs) -> torch.BoolTensor:
        done = []
        for row in input_ids[:, self.prompt_length:]:
            text = self.tokenizer.decode(row, skip_special_tokens=True)
            # a reply that starts with a newline has not begun yet; only a newline after text ends it
            done.append(any(s in text.lstrip() for s in self.stop_strings))
        return torch.tensor(done, dtype=torch.bool, device=input_ids.device)


FP32_ATTENTION = "sdpa_fp32"


def _sdpa_in_fp32(module, query, key, value, attention_mask, **kwargs):
    """transformers' SDPA attention computed in float32 for a bfloat16 model.

    On CPU, torch's bf16 scaled_dot_product_attention for one query token is ~9x slower than fp32
    (1.06 vs 0.13 ms for a 500-token cache here), so upcasting q/k/v per call and keeping the linear
    layers in bf16 made 4 x 32 tokens after a 500-token prompt 23% faster (docs/bots.md).
    """
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    dtype = query.dtype
    if dtype == torch.float32:
        return sdpa_attention_forward(module, query, key, value, attention_mask, **kwargs)
    if attention_mask is not None and attention_mask.is_floating_point():
        attention_mask = attention_mask.float()
    output, weights = sdpa_attention_forward(module, query.float(), key.float(), value.float(), attention_mask,
                                             **kwargs)
    return output.to(dtype), weights


def use_fp32_attention(model) -> None:
    """Switch a bfloat16 CPU model that uses SDPA to float32 attention (no-op for anything else)."""
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

    first = next(model.parameters(), None)
    if first is None or first.dtype != torch.bfloat16 or first.device.type != "cpu":
        return
    if getattr(model.config, "_attn_implementation", None) != "sdpa":
        return
    AttentionInterface.register(FP32_ATTENTION, _sdpa_in_fp32)
    AttentionMaskInterface.register(FP32_ATTENTION, sdpa_mask)
    model.set_attn_implementation(FP32_ATTENTION)


class PrefixCache:
    """Decoder states (batch 1) of recent prompts, kept between calls: a turn prefills only its new tokens.

    ``state_for(model, ids)`` finds the stored prompt sharing the longest token prefix with ``ids``
    (as llama.cpp's server does with its slots), reuses its state for that prefix and runs the model on
    the remaining tokens only. A prompt that extends a stored one (the next turn) replaces it; one that
    diverges from it (an edited or re-judged history, a different conversation) starts from a cropped
    copy, or from scratch when the model's cache cannot be cropped (sliding-window layers), and the
    stored entry stays for its own conversation. ``max_entries`` bounds the memory (a SmolLM2-135M
    state is about 46 MB per 1,000 float32 tokens). Every caller gets its own copy of the state.
    """

    def __init__(self, max_entries: int = 4):
        self.max_entries = max_entries
        self.entries: list[tuple[list[int], object]] = []
        self.prefilled_tokens = 0  # counters for tests and benchmarks
        self.reused_tokens = 0
        self._lock = threading.Lock()

    def clear(self) -> None:
        with self._lock:
            self.entries.clear()

    def state_for(self, model, ids: Sequence[int]):
        """A private DynamicCache holding exactly ``ids`` (batch 1)."""
        from transformers import DynamicCache

        ids = [int(t) for t in ids]
        with self._lock:
            best, shared = None, 0
            for index, (tokens, _) in enumerate(self.entries):
                length = common_prefix_length(tokens, ids)
                if length > shared:
                    best, shared = index, length
            cache = None
            if best is not None:
                tokens, stored = self.entries[best]
                if shared == len(tokens):  # the new prompt extends the stored one: grow it in place
                    cache = stored
                    del self.entries[best]
                elif getattr(stored, "is_croppable", False):
                    cache = copy.deepcopy(stored)
                    cache.crop(shared - len(tokens))  # transformers 5 crops by a negative count of tokens to drop
            if cache is None:
                cache, shared = DynamicCache(config=model.config), 0
            if shared < len(ids):
                model(input_ids=torch.tensor([ids[shared:]]), past_key_values=cache, use_cache=True,
                      logits_to_keep=1)
            self.prefilled_tokens += len(ids) - shared
            self.reused_tokens += shared
            if self.max_entries > 0:
                self.entries.insert(0, (ids, cache))
                del self.entries[self.max_entries:]
            return copy.deepcopy(cache) if self.max_entries > 0 else cache


def _shared_prefill(model, inputs: dict[str, torch.Tensor], kwargs: dict, prefix_cache: PrefixCache | None):
    """Encode all but the last prompt token once (reusing ``prefix_cache``), then share that state.

    generate() would otherwise expand the prompt to one row per sample or beam before encoding it,
    paying the prompt's cost once per row; now each row only encodes the last prompt token. Samples
    get a copy of the state per row and one row each; beam search gets the state tiled to its beams
    and the one-row prompt, which generate() expands to the same number of rows.
    """
    input_ids, attention_mask = inputs["input_ids"], inputs["attention_mask"]
    cache = (prefix_cache or PrefixCache(max_entries=0)).state_for(model, input_ids[0, :-1].tolist())
    beams = kwargs.get("num_beams", 1)
    if beams > 1:
        cache.batch_repeat_interleave(beams)
        return {"input_ids": input_ids, "attention_mask": attention_mask, "past_key_values": cache}, kwargs
    copies = kwargs.get("num_return_sequences", 1)
    if copies > 1:
        cache.batch_repeat_interleave(copies)
    expanded = {"input_ids": input_ids.repeat(copies, 1), "attention_mask": attention_mask.repeat(copies, 1),
                "past_key_values": cache}
    return expanded, {**kwargs, "num_return_sequences": 1}
