"""One base for the bots that run a transformers model in this process: chat template, transcript, BlenderBot.

What every local backend shares lives here: loading the tokenizer and model in the asked dtype
(float32 attention for bfloat16 decoder-only models, bots.hf.use_fp32_attention), fitting the prompt
into a token budget by dropping the oldest whole turns, and drawing the candidates through
transformers' own generate() (bots.hf.generate_candidates). A backend says only what differs: how
its prompt is built, which model class it loads, where a reply stops and how its text is cleaned.
"""

from __future__ import annotations

from abc import abstractmethod
from bisect import bisect_left
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import ClassVar

import torch
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    PreTrainedModel,
    PreTrainedTokenizerBase,
    StoppingCriteria,
)

import embedded
from bots.base import Bot, BotError, Candidate, DecodingConfig, Message, check_history, first_line
from bots.hf import generate_candidates, use_fp32_attention

#: Weight dtypes a local bot loads in; "auto" is bfloat16 where the CPU computes it natively (embedded.cpu_dtype).
DTYPES = ("auto", "float32", "bfloat16")


def check_dtype(dtype: str) -> str:
    """Refuse an unknown dtype name with a BotError that lists the valid ones."""
    if dtype not in DTYPES:
        raise BotError(f"dtype must be one of {', '.join(DTYPES)}, not {dtype!r}")
    return dtype


class StopAtStrings(StoppingCriteria):
    """Stop each sequence once its generated text contains a stop string (per row).

    Only the tokens after ``prompt_length`` are decoded, so it works with any tokenizer.
    """

    def __init__(self, tokenizer: PreTrainedTokenizerBase, prompt_length: int, stop_strings: Sequence[str]):
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


class LocalTransformersBot(Bot):
    """A transformers model run in this process; ``model``/``tokenizer`` are already loaded.

    Subclasses implement ``encode_prompt`` and may set the class attributes below.
    """

    #: The transformers Auto class ``from_pretrained`` loads the weights with.
    model_class: ClassVar[type] = AutoModelForCausalLM
    #: What the model is called in load errors ("chat model", "causal LM", ...).
    kind: ClassVar[str] = "model"
    #: The model ``from_pretrained`` loads when none is named (None: a name is required).
    default_model: ClassVar[str | None] = None
    #: Said after a load error: how to get the weights.
    load_hint: ClassVar[str] = "hub names need internet once; offline, pass a local folder"
    #: A reply ends before the first of these (once it began); generation stops there too.
    stop_strings: ClassVar[tuple[str, ...]] = ()

    def __init__(self, model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, name: str,
                 max_prompt_tokens: int, end_token_ids: Sequence[int] = ()):
        if not model.config.is_encoder_decoder:
            use_fp32_attention(model)
        self.model = model
        self.tokenizer = tokenizer
        self.name = name
        self.max_prompt_tokens = max_prompt_tokens
        self.end_token_ids = list(end_token_ids)  # end-of-turn tokens besides the model's eos

    @classmethod
    def from_pretrained(cls, model: str | Path | None = None, name: str | None = None, dtype: str = "float32",
                        **options):
        """Load tokenizer and weights from a local folder or a hub name (needs internet or a filled cache)."""
        model = model if model is not None else cls.default_model
        if model is None:
            raise BotError(f"a {cls.kind} needs model=... (a local folder or a hub name)")
        resolved = embedded.cpu_dtype() if check_dtype(dtype) == "auto" else dtype
        try:
            tokenizer = AutoTokenizer.from_pretrained(model)
            weights = cls.model_class.from_pretrained(model, dtype=getattr(torch, resolved)).eval()
        except (OSError, ValueError) as exc:
            raise BotError(f"could not load {cls.kind} {model}: {first_line(exc)} ({cls.load_hint})") from exc
        return cls(weights, tokenizer, name=name or Path(str(model)).name, **options)

    @classmethod
    def from_gguf(cls, locate: Callable[[], Path], name: str, dtype: str = "float32", **options):
        """Load a shipped GGUF causal LM (``locate`` finds the file; converted and cached on first use)."""
        from embedded.gguf import load_gguf_causal_lm

        check_dtype(dtype)
        try:
            weights, tokenizer = load_gguf_causal_lm(locate(), dtype)
        except embedded.MissingAssetError as exc:
            raise BotError(str(exc)) from exc
        return cls(weights, tokenizer, name=name, **options)

    @abstractmethod
    def encode_prompt(self, history: Sequence[Message], persona: Sequence[str]) -> torch.Tensor:
        """The prompt's token ids (shape 1 x length) for exactly these turns."""

    def clean_reply(self, text: str) -> str:
        """The candidate's text from the decoded reply."""
        return text.strip()

    def prompt_ids(self, history: Sequence[Message], persona: Sequence[str]) -> torch.Tensor:
        """The prompt for the newest turns that fit ``max_prompt_tokens``; the last turn always stays.

        Oldest whole turns are dropped first. A prompt only shrinks as turns are dropped, so the
        first start that fits is found by bisection (few encodings even in a long conversation).
        """
        history = list(history)
        encoded: dict[int, torch.Tensor] = {}

        def encode(start: int) -> torch.Tensor:
            if start not in encoded:
                encoded[start] = self.encode_prompt(history[start:], persona)
            return encoded[start]

        def fits(start: int) -> bool:
            return encode(start).shape[1] <= self.max_prompt_tokens

        if len(history) <= 1 or fits(0):
            return encode(0)
        return encode(bisect_left(range(len(history) - 1), True, lo=1, key=fits))

    def generate(self, history: list[Message], num_candidates: int, decoding: DecodingConfig | None = None,
                 persona: Sequence[str] = ()) -> list[Candidate]:
        history = check_history(history)
        input_ids = self.prompt_ids(history, persona)
        inputs = {"input_ids": input_ids, "attention_mask": torch.ones_like(input_ids)}
        stopping = []
        if self.stop_strings:  # an encoder-decoder's generated rows hold only the reply
            prompt_length = 0 if self.model.config.is_encoder_decoder else input_ids.shape[1]
            stopping.append(StopAtStrings(self.tokenizer, prompt_length, self.stop_strings))
        return generate_candidates(
            self.model, self.tokenizer, inputs, decoding or self.default_decoding, num_candidates,
            stop_strings=self.stop_strings, end_token_ids=self.end_token_ids, stopping_criteria=stopping,
            clean=self.clean_reply,
        )
