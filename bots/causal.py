"""OPT-style base LMs (facebook/opt-125m ... -1.3b, Gemma 3 270M base, any causal LM): a transcript prompt.

A base LM has no chat template, so the conversation is written as a "Person 1: / Person 2:"
transcript after a short few-shot preamble; the bot is Person 2. Generation stops at the end of
the line (the next speaker tag follows a newline), through a StoppingCriteria that decodes only
the generated tokens, so it works with any tokenizer.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import torch
from transformers import StoppingCriteria

from bots.base import first_line, Bot, BotError, Candidate, DecodingConfig, Message, check_history
from bots.hf import generate_candidates, use_fp32_attention

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


class StopAtStrings(StoppingCriteria):
    """Stop each sequence once its generated text contains a stop string (per row)."""

    def __init__(self, tokenizer, prompt_length: int, stop_strings: Sequence[str]):
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


def transcript(history: Sequence[Message], persona: Sequence[str], few_shot: str = FEW_SHOT) -> str:
    """The prompt: preamble, Person 2's persona (if any), the turns, and an open "Person 2:" line."""
    lines = [few_shot.rstrip("\n") + "\n"] if few_shot else []
    persona_lines = [line.strip() for line in persona if line.strip()]
    if persona_lines:
        lines.append("Person 2's persona: " + " ".join(persona_lines) + "\n")
    for message in history:
        tag = USER_TAG if message.speaker == "user" else BOT_TAG
        lines.append(f"{tag} {' '.join(message.text.split())}")
    lines.append(BOT_TAG)
    return "\n".join(lines)


class TranscriptBot(Bot):
    """A causal LM continuing a Person 1 / Person 2 transcript; ``model``/``tokenizer`` are loaded."""

    def __init__(self, model, tokenizer, name: str = "causal", few_shot: str = FEW_SHOT,
                 max_prompt_tokens: int = MAX_PROMPT_TOKENS):
        use_fp32_attention(model)
        self.model = model
        self.tokenizer = tokenizer
        self.name = name
        self.few_shot = few_shot
        self.max_prompt_tokens = max_prompt_tokens

    @classmethod
    def from_pretrained(cls, model: str | Path = "facebook/opt-125m", name: str | None = None,
                        dtype: str = "float32", **options) -> "TranscriptBot":
        """Load a causal LM by hub name (needs internet or a filled HF cache) or local folder."""
        from transformers import AutoModelForCausalLM, AutoTokenizer

        try:
            tokenizer = AutoTokenizer.from_pretrained(model)
            lm = AutoModelForCausalLM.from_pretrained(model, dtype=getattr(torch, dtype)).eval()
        except (OSError, ValueError) as exc:
            raise BotError(
                f"could not load causal LM {model}: {first_line(exc)} (hub names need internet once; "
                "offline, pass a local folder)"
            ) from exc
        return cls(lm, tokenizer, name=name or Path(str(model)).name, **options)

    def prompt_ids(self, history: Sequence[Message], persona: Sequence[str]) -> torch.Tensor:
        """Encode the transcript, dropping the oldest whole turns until it fits."""
        history = list(history)
        while True:
            ids = self.tokenizer(transcript(history, persona, self.few_shot), return_tensors="pt")["input_ids"]
            if ids.shape[1] <= self.max_prompt_tokens or len(history) <= 1:
                return ids[:, -self.max_prompt_tokens:]
            history = history[1:]

    def generate(self, history: list[Message], num_candidates: int, decoding: DecodingConfig | None = None,
                 persona: Sequence[str] = ()) -> list[Candidate]:
        history = check_history(history)
        input_ids = self.prompt_ids(history, persona)
        inputs = {"input_ids": input_ids, "attention_mask": torch.ones_like(input_ids)}
        return generate_candidates(
            self.model, self.tokenizer, inputs, decoding or self.default_decoding, num_candidates,
            stop_strings=STOP_STRINGS,
            stopping_criteria=[StopAtStrings(self.tokenizer, input_ids.shape[1], STOP_STRINGS)],
            clean=_clean_reply,
        )


def _clean_reply(text: str) -> str:
    """Drop a speaker tag the model may repeat at the start of its line."""
    text = text.strip()
    for tag in (BOT_TAG, USER_TAG):
        if text.startswith(tag):
            text = text[len(tag):].strip()
    return text


def make_gemma3_bot(dtype: str = "float32", **options) -> TranscriptBot:
    """Gemma 3 270M base from the shipped GGUF (converted and cached on first use)."""
    import embedded
    from embedded.gguf import load_gguf_causal_lm

    try:
        model, tokenizer = load_gguf_causal_lm(embedded.gemma3_gguf_path(), dtype)
    except embedded.MissingAssetError as exc:
        raise BotError(str(exc)) from exc
    return TranscriptBot(model, tokenizer, name="gemma3", **options)
