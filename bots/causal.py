"""OPT-style base LMs (facebook/opt-125m ... -1.3b, Gemma 3 270M base, any causal LM): a transcript prompt.

A base LM has no chat template, so the conversation is written as a "Person 1: / Person 2:"
transcript after a short few-shot preamble; the bot is Person 2. Generation stops at the end of
the line (the next speaker tag follows a newline), through a StoppingCriteria that decodes only
the generated tokens, so it works with any tokenizer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import embedded
from bots.base import persona_lines
from bots.local import LocalTransformersBot
from guard.records import Turn

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

USER_TAG = "Person 1:"
BOT_TAG = "Person 2:"
FEW_SHOT = (
    "The following is a friendly conversation between two people who just met.\n\n"
    f"{USER_TAG} Hi! How are you doing today?\n"
    f"{BOT_TAG} I'm good, thanks. I just got back from a run in the park.\n"
    f"{USER_TAG} Nice, do you run often?\n"
    f"{BOT_TAG} Almost every morning. It helps me wake up before work.\n\n"
    "A new conversation between two other people.\n\n"
)
STOP_STRINGS = ("\n",)
MAX_PROMPT_TOKENS = 768


def transcript(history: Sequence[Turn], persona: Sequence[str], few_shot: str = FEW_SHOT) -> str:
    """The prompt: preamble, Person 2's persona (if any), the turns, and an open "Person 2:" line."""
    lines = [few_shot.rstrip("\n") + "\n"] if few_shot else []
    described = persona_lines(persona)
    if described:
        lines.append("Person 2's persona: " + " ".join(described) + "\n")
    for message in history:
        tag = USER_TAG if message.agent_id == "user" else BOT_TAG
        lines.append(f"{tag} {' '.join(message.text.split())}")
    lines.append(BOT_TAG)
    return "\n".join(lines)


class TranscriptBot(LocalTransformersBot):
    """A causal LM continuing a Person 1 / Person 2 transcript; ``model``/``tokenizer`` are loaded."""

    kind = "causal LM"
    default_model = "facebook/opt-125m"
    stop_strings = STOP_STRINGS

    def __init__(self, model: PreTrainedModel | None, tokenizer: PreTrainedTokenizerBase, name: str = "causal",
                 few_shot: str = FEW_SHOT, max_prompt_tokens: int = MAX_PROMPT_TOKENS, engine=None):
        super().__init__(model, tokenizer, name, max_prompt_tokens, engine=engine)
        self.few_shot = few_shot

    def head_ids(self, persona: Sequence[str]) -> list[int]:
        """The preamble and the persona line, the same at every turn (only the part that tokenizes the same
        inside the whole prompt is used)."""
        head = transcript([], persona, self.few_shot).removesuffix(BOT_TAG)
        return self.tokenizer(head)["input_ids"]

    def encode_prompt(self, history: Sequence[Turn], persona: Sequence[str], memory: Sequence[str] = ()) -> list[int]:
        # a transcript has no place for a note before the reply: the memory is read as more of the persona
        return list(self.tokenizer(transcript(history, [*persona, *memory], self.few_shot))["input_ids"])

    def prompt_ids(self, history: Sequence[Turn], persona: Sequence[str], memory: Sequence[str] = ()) -> list[int]:
        """Oldest whole turns dropped until it fits; a single turn longer than the budget keeps its end."""
        return super().prompt_ids(history, persona, memory)[-self.max_prompt_tokens:]

    def clean_reply(self, text: str) -> str:
        """Drop a speaker tag the model may repeat at the start of its line."""
        text = text.strip()
        for tag in (BOT_TAG, USER_TAG):
            if text.startswith(tag):
                text = text[len(tag):].strip()
        return text


def make_gemma3_bot(dtype: str = "float32", engine: str = "auto", **options) -> TranscriptBot:
    """Gemma 3 270M base from the shipped GGUF (converted and cached on first use; CTranslate2 converts
    Gemma 3, so ``engine="auto"`` runs it in int8)."""
    return TranscriptBot.from_gguf(embedded.gemma3_gguf_path, name="gemma3", dtype=dtype, engine=engine, **options)
