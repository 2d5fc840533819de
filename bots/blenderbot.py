"""BlenderBot (facebook/blenderbot-400M-distill, blenderbot_small-90M, -1B-distill, -3B) as a seq2seq bot.

The encoder input is built the way BlenderBot was trained and served: persona lines first
("your persona: ..."), then the turns, separated by two spaces (as transformers'
BlenderbotTokenizer joins conversation turns), truncated at turn boundaries so the newest turns fit
the model's 128-token context. The weights are not shipped: the hub names need internet once
(or a filled Hugging Face cache); a local folder works offline.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import torch

from bots.base import first_line, Bot, BotError, Candidate, DecodingConfig, Message, check_history
from bots.hf import generate_candidates

DEFAULT_MODEL = "facebook/blenderbot-400M-distill"
KNOWN_MODELS = (
    "facebook/blenderbot-400M-distill",
    "facebook/blenderbot_small-90M",
    "facebook/blenderbot-1B-distill",
    "facebook/blenderbot-3B",
)
TURN_SEPARATOR = "  "
CONTEXT_TOKENS = 128


def encoder_text(history: Sequence[Message], persona: Sequence[str]) -> list[str]:
    """The pieces of the encoder input, oldest first: persona lines, then turns (user turns get a leading space)."""
    pieces = [f"your persona: {line.strip()}" for line in persona if line.strip()]
    for message in history:
        text = " ".join(message.text.split())
        # BlenderbotTokenizer prefixes user turns with a space (byte-level BPE "Ġ" word start)
        pieces.append(" " + text if message.speaker == "user" else text)
    return pieces


class BlenderBot(Bot):
    """BlenderBot-style seq2seq model; ``model``/``tokenizer`` are already loaded."""

    def __init__(self, model, tokenizer, name: str = "blenderbot", context_tokens: int = CONTEXT_TOKENS):
        if not model.config.is_encoder_decoder:
            raise BotError(f"{name}: not an encoder-decoder model; use the 'causal' bot")
        self.model = model
        self.tokenizer = tokenizer
        self.name = name
        self.context_tokens = min(context_tokens, getattr(model.config, "max_position_embeddings", context_tokens))

    @classmethod
    def from_pretrained(cls, model: str | Path = DEFAULT_MODEL, name: str | None = None,
                        dtype: str = "float32", **options) -> "BlenderBot":
        from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

        try:
            tokenizer = AutoTokenizer.from_pretrained(model)
            seq2seq = AutoModelForSeq2SeqLM.from_pretrained(model, dtype=getattr(torch, dtype)).eval()
        except (OSError, ValueError) as exc:
            raise BotError(
                f"could not load BlenderBot {model}: {first_line(exc)} (hub names need internet once; offline, pass a "
                f"local folder; known names: {', '.join(KNOWN_MODELS)})"
            ) from exc
        return cls(seq2seq, tokenizer, name=name or Path(str(model)).name, **options)

    def encoder_ids(self, history: Sequence[Message], persona: Sequence[str]) -> torch.Tensor:
        """Keep persona lines and the newest turns whose tokens fit; cut inside a turn only if one turn is too long."""
        persona_pieces = encoder_text([], persona)
        turn_pieces = encoder_text(history, ())
        kept: list[str] = []
        for piece in reversed(turn_pieces):
            candidate = persona_pieces + [piece] + kept
            if self._length(TURN_SEPARATOR.join(candidate)) > self.context_tokens and kept:
                break
            kept.insert(0, piece)
        pieces = persona_pieces + kept
        # persona lines go first; if even they plus the last turn overflow, drop persona lines before the turn
        while len(pieces) > 1 and self._length(TURN_SEPARATOR.join(pieces)) > self.context_tokens and persona_pieces:
            persona_pieces = persona_pieces[1:]
            pieces = persona_pieces + kept
        ids = self.tokenizer(TURN_SEPARATOR.join(pieces), return_tensors="pt")["input_ids"]
        if ids.shape[1] > self.context_tokens:  # a single turn longer than the context: keep its end
            ids = ids[:, -self.context_tokens:]
        return ids

    def _length(self, text: str) -> int:
        return len(self.tokenizer(text)["input_ids"])

    def generate(self, history: list[Message], num_candidates: int, decoding: DecodingConfig | None = None,
                 persona: Sequence[str] = ()) -> list[Candidate]:
        history = check_history(history)
        input_ids = self.encoder_ids(history, persona)
        inputs = {"input_ids": input_ids, "attention_mask": torch.ones_like(input_ids)}
        return generate_candidates(
            self.model, self.tokenizer, inputs, decoding or self.default_decoding, num_candidates
        )
