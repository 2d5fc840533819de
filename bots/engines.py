"""Which engine runs a local bot, and the transformers one (the reference engine).

``engine="auto"`` (the default everywhere) picks CTranslate2 int8 (bots.ct2) for every decoder-only
architecture its converter handles (SmolLM2/Llama, OPT, Gemma 3, ...) and transformers for the rest
(BlenderBot and other encoder-decoders, architectures without a converter, or without the ctranslate2
package). ``GUARD_ENGINE`` changes the default; ``engine="transformers"`` keeps the reference engine,
``engine="ctranslate2"`` insists (a BotError where it cannot convert).

Both engines take the prompt as token ids and return ``Candidate``s built by one rule
(``bots.candidates.make_candidate``), so a bot's replies differ between engines only by what int8 changes.

Only the transformers engine imports torch and transformers (when it is made): a CTranslate2 bot whose model is
converted already loads without them (bots.ct2, bots.tokenizer).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from bots.base import BotError, Candidate, DecodingConfig
from bots.ct2 import CTranslate2Engine, converts
from embedded.turns import cpu_turn

if TYPE_CHECKING:
    from bots.hf import PrefixCache

CT2_ENGINE = "ctranslate2"
TRANSFORMERS_ENGINE = "transformers"
ENGINES = ("auto", CT2_ENGINE, TRANSFORMERS_ENGINE)

__all__ = ["CT2_ENGINE", "ENGINES", "TRANSFORMERS_ENGINE", "CTranslate2Engine", "TransformersEngine",
           "check_engine", "default_engine", "prefers_ctranslate2", "resolve_engine"]


def check_engine(engine: str) -> str:
    if engine not in ENGINES:
        raise BotError(f"engine must be one of {', '.join(ENGINES)}, not {engine!r}")
    return engine


def default_engine() -> str:
    """``GUARD_ENGINE`` (auto | ctranslate2 | transformers) or "auto"."""
    return check_engine(os.environ.get("GUARD_ENGINE", "").strip().lower() or "auto")


def _is_seq2seq(model_class) -> bool:
    """Whether a bot's model class (a transformers Auto class or its name) is an encoder-decoder one."""
    name = model_class if isinstance(model_class, str) else getattr(model_class, "__name__", "")
    return "Seq2Seq" in (name or "")


def prefers_ctranslate2(engine: str, model_class=None) -> bool:
    """Whether ``engine`` (after ``GUARD_ENGINE`` for "auto") lets a model of this class run on CTranslate2, as
    far as can be told without its config: not when it asks for transformers or the model is an encoder-decoder."""
    engine = check_engine(engine)
    if engine == "auto":
        engine = default_engine()
    from bots.ct2 import available

    return engine != TRANSFORMERS_ENGINE and not (model_class is not None and _is_seq2seq(model_class)) and available()


def resolve_engine(engine: str, config, model_class=None) -> str:
    """The engine a model of this config runs on: "ctranslate2" or "transformers"."""
    engine = check_engine(engine)
    if engine == "auto":
        engine = default_engine()
    if engine == TRANSFORMERS_ENGINE:
        return engine
    if model_class is not None and _is_seq2seq(model_class):
        supported = False
    else:
        supported = converts(config)
    if supported:
        return CT2_ENGINE
    if engine == CT2_ENGINE:
        from bots.ct2 import available

        why = ("the ctranslate2 package is not installed" if not available()
               else f"CTranslate2 cannot convert {type(config).__name__} (decoder-only architectures only)")
        raise BotError(f"engine 'ctranslate2' is not available for this model: {why}; use engine='transformers'")
    return TRANSFORMERS_ENGINE


class TransformersEngine:
    """transformers' generate() on the loaded model: the reference engine.

    The prompt is encoded once for all candidates and its state kept between turns (bots.hf.PrefixCache),
    so a turn encodes only the tokens the conversation gained.
    """

    name = TRANSFORMERS_ENGINE
    #: Turns dropped at a time once a conversation outgrows the prompt budget (bots.local.prompt_ids), so the
    #: cached prefix survives 8 turns out of 9 instead of none.
    drop_block = 8

    def __init__(self, model, tokenizer, prefix_cache: PrefixCache | None = None):
        import transformers

        from bots.hf import PrefixCache

        self.model = model
        self.tokenizer = tokenizer
        self.config = model.config
        self.generation_config = model.generation_config
        self.prefix_cache = prefix_cache if prefix_cache is not None else PrefixCache()
        dtype = str(next(model.parameters()).dtype).removeprefix("torch.")
        self.label = f"transformers {transformers.__version__} {dtype}"

    def load_transformers_model(self):
        return self.model

    def generate(self, prompt: Sequence[int], decoding: DecodingConfig, num_candidates: int, *,
                 stop_strings: Sequence[str] = (), end_ids: Sequence[int] = (), static_length: int = 0,
                 clean: Callable[[str], str] = str.strip,
                 banned_sequences: Sequence[Sequence[int]] = ()) -> list[Candidate]:
        import torch

        from bots.hf import StopAtStrings, generate_candidates

        input_ids = torch.tensor([list(prompt)])
        stopping = []
        if stop_strings:  # an encoder-decoder's generated rows hold only the reply
            prompt_length = 0 if self.config.is_encoder_decoder else input_ids.shape[1]
            stopping.append(StopAtStrings(self.tokenizer, prompt_length, stop_strings))
        with cpu_turn(self):  # one generation at a time (embedded.turns)
            return generate_candidates(
                self.model, self.tokenizer, {"input_ids": input_ids, "attention_mask": torch.ones_like(input_ids)},
                decoding, num_candidates, stop_strings=stop_strings, end_token_ids=end_ids,
                stopping_criteria=stopping, prefix_cache=self.prefix_cache, clean=clean,
                banned_sequences=banned_sequences,
            )

    def score(self, prompt: Sequence[int], replies: Sequence[Sequence[int]]) -> list[float]:
        """Mean log-probability of each reply's tokens after ``prompt``: the prompt's state comes from the
        prefix cache (encoded once), then each reply runs on a copy of it."""
        import torch

        scores = []
        with cpu_turn(self), torch.inference_mode():
            prompt = list(prompt)
            for reply in replies:
                if not reply:
                    scores.append(float("-inf"))
                    continue
                cache = self.prefix_cache.state_for(self.model, prompt[:-1])
                ids = torch.tensor([prompt[-1:] + list(reply)])
                logits = self.model(input_ids=ids, past_key_values=cache, use_cache=True).logits[0, :-1].float()
                log_probs = torch.log_softmax(logits, -1).gather(-1, torch.tensor(reply).unsqueeze(-1))
                scores.append(float(log_probs.mean()))
        return scores
