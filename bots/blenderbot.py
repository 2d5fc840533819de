"""BlenderBot (facebook/blenderbot-400M-distill, blenderbot_small-90M, -1B-distill, -3B) as a seq2seq bot.

The encoder input is built the way BlenderBot was trained and served: persona lines first
("your persona: ..."), then the turns, separated by two spaces (as transformers'
BlenderbotTokenizer joins conversation turns), truncated at turn boundaries so the newest turns fit
the model's 128-token context. The weights are not shipped: the hub names need internet once
(or a filled Hugging Face cache); a local folder works offline.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from bots.base import BotError, persona_lines
from bots.local import LocalTransformersBot, PromptFit
from guard.records import Turn

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

DEFAULT_MODEL = "facebook/blenderbot-400M-distill"
KNOWN_MODELS = (
    "facebook/blenderbot-400M-distill",
    "facebook/blenderbot_small-90M",
    "facebook/blenderbot-1B-distill",
    "facebook/blenderbot-3B",
)
TURN_SEPARATOR = "  "
CONTEXT_TOKENS = 128


def encoder_text(history: Sequence[Turn], persona: Sequence[str]) -> list[str]:
    """The pieces of the encoder input, oldest first: persona lines, then turns (user turns get a leading space)."""
    pieces = [f"your persona: {line}" for line in persona_lines(persona)]
    for message in history:
        text = " ".join(message.text.split())
        # BlenderbotTokenizer prefixes user turns with a space (byte-level BPE "Ġ" word start)
        pieces.append(" " + text if message.agent_id == "user" else text)
    return pieces


class BlenderBot(LocalTransformersBot):
    """BlenderBot-style seq2seq model; ``model``/``tokenizer`` are already loaded."""

    model_class = "AutoModelForSeq2SeqLM"
    kind = "BlenderBot"
    default_model = DEFAULT_MODEL
    load_hint = (f"hub names need internet once; offline, pass a local folder; known names: "
                 f"{', '.join(KNOWN_MODELS)}")

    def __init__(self, model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, name: str = "blenderbot",
                 context_tokens: int = CONTEXT_TOKENS, engine=None):
        """``engine`` is accepted for a uniform interface; CTranslate2 has no BlenderBot converter, so
        BlenderBot always runs on transformers (the encoder runs once, its output shared by all beams)."""
        if model is None or not model.config.is_encoder_decoder:
            raise BotError(f"{name}: not an encoder-decoder model; use the 'causal' bot")
        context_tokens = min(context_tokens, getattr(model.config, "max_position_embeddings", context_tokens))
        super().__init__(model, tokenizer, name, max_prompt_tokens=context_tokens, engine=engine)

    def encode_prompt(self, history: Sequence[Turn], persona: Sequence[str], memory: Sequence[str] = ()) -> list[int]:
        # BlenderBot reads its memory as more persona lines ("your persona: ..."), as it was trained to
        return list(self.tokenizer(TURN_SEPARATOR.join(encoder_text(history, [*persona, *memory])))["input_ids"])

    def fit_prompt(self, history: Sequence[Turn], persona: Sequence[str], memory: Sequence[str] = ()) -> PromptFit:
        """Persona lines first, then the newest whole turns that fit the context.

        When even the persona and the last turn overflow, persona lines are dropped before the turn; a single turn
        longer than the context keeps its end (``cut_to_fit``).
        """
        history = list(history)
        persona = persona_lines([*persona, *memory])
        fit = super().fit_prompt(history, persona)
        if not history or fit.last_text == history[-1].text or not persona:
            return fit
        last = history[-1]  # cut with the persona: drop persona lines, oldest first, before cutting the turn
        while persona:
            persona = persona[1:]
            ids = self.encode_prompt([last], persona)
            if len(ids) <= self.max_prompt_tokens:
                return PromptFit(ids, len(history) - 1, last.text)
        return self.cut_to_fit(last, persona, len(history) - 1)

    def prompt_ids(self, history: Sequence[Turn], persona: Sequence[str], memory: Sequence[str] = ()) -> list[int]:
        return super().prompt_ids(history, persona, memory)[-self.max_prompt_tokens:]  # a turn too long even to cut
