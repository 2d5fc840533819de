"""One base for the bots that run a model in this process: chat template, transcript, BlenderBot.

What every local backend shares lives here: choosing the engine (``engine="auto"``: CTranslate2 int8
where its converter handles the architecture, transformers elsewhere; bots.engines), loading the
tokenizer and model (transformers in the asked dtype, with float32 attention for bfloat16 decoder-only
models, bots.hf.use_fp32_attention; or the cached CTranslate2 conversion, bots.ct2), fitting the prompt
into a token budget by dropping the oldest whole turns, and drawing the candidates through the engine.
A backend says only what differs: how its prompt is built, which model class it loads, where a reply
stops and how its text is cleaned.
"""

from __future__ import annotations

import re
from abc import abstractmethod
from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import embedded
from bots.base import Bot, BotError, Candidate, DecodingConfig, PromptCoverage, check_history, first_line
from bots.candidates import common_prefix_length
from bots.engines import (
    CT2_ENGINE,
    CTranslate2Engine,
    TransformersEngine,
    prefers_ctranslate2,
    resolve_engine,
)
from guard.records import Turn

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

#: Weight dtypes a local bot loads in; "auto" is bfloat16 where the CPU computes it natively (embedded.cpu_dtype).
DTYPES = ("auto", "float32", "bfloat16")


def check_dtype(dtype: str) -> str:
    """Refuse an unknown dtype name with a BotError that lists the valid ones."""
    if dtype not in DTYPES:
        raise BotError(f"dtype must be one of {', '.join(DTYPES)}, not {dtype!r}")
    return dtype


#: Put in front of a turn cut to its end to fit the prompt (``LocalTransformersBot.cut_to_fit``).
ELLIPSIS = "… "
#: Fewest tokens of a cut turn worth sending; with less room the turn goes whole and the backend's own limit applies.
MIN_CUT_TOKENS = 8


@dataclass(frozen=True)
class PromptFit:
    """A prompt fitted to the budget: its ids, the first turn of the history it holds, and the last turn's text as
    it holds it (its end when it was cut)."""

    ids: list[int]
    start: int
    last_text: str


class LocalTransformersBot(Bot):
    """A model run in this process, through a transformers ``model`` or a CTranslate2 ``engine``.

    Subclasses implement ``encode_prompt`` and may set the class attributes below. With the CTranslate2
    engine ``model`` may be None: the transformers weights then load on first use of ``.model`` (the
    studio's FQness scorer reads them), never for generation. A CTranslate2 bot whose conversion is cached
    loads without importing torch or transformers (its tokenizer is bots.tokenizer.LightTokenizer).
    """

    #: The transformers Auto class ``from_pretrained`` loads the weights with: its name in ``transformers``
    #: (imported only when weights load) or the class itself.
    model_class: ClassVar[str | type] = "AutoModelForCausalLM"
    #: What the model is called in load errors ("chat model", "causal LM", ...).
    kind: ClassVar[str] = "model"
    #: The model ``from_pretrained`` loads when none is named (None: a name is required).
    default_model: ClassVar[str | None] = None
    #: Said after a load error: how to get the weights.
    load_hint: ClassVar[str] = "hub names need internet once; offline, pass a local folder"
    #: A reply ends before the first of these (once it began); generation stops there too.
    stop_strings: ClassVar[tuple[str, ...]] = ()

    def __init__(self, model: PreTrainedModel | None, tokenizer: PreTrainedTokenizerBase, name: str,
                 max_prompt_tokens: int, end_token_ids: Sequence[int] = (), engine: CTranslate2Engine | None = None):
        if model is None and engine is None:
            raise BotError(f"{name}: a local bot needs a transformers model or a CTranslate2 engine")
        self.config = model.config if model is not None else engine.config
        if model is not None and not self.config.is_encoder_decoder:
            from bots.hf import use_fp32_attention

            use_fp32_attention(model)
        self._model = model
        self.tokenizer = tokenizer
        self.name = name
        self.max_prompt_tokens = max_prompt_tokens
        self.end_token_ids = list(end_token_ids)  # end-of-turn tokens besides the model's eos
        self.engine = engine if engine is not None else TransformersEngine(model, tokenizer)
        self.engine_label = self.engine.label
        self._last_fit: tuple[tuple, PromptFit] | None = None  # (conversation state, its fit): ``fitted``

    @property
    def model(self) -> PreTrainedModel:
        """The transformers weights (loaded now if the bot generates through CTranslate2)."""
        if self._model is None:
            self._model = self.engine.load_transformers_model()
        return self._model

    @property
    def is_encoder_decoder(self) -> bool:
        return bool(self.config.is_encoder_decoder)

    @classmethod
    def weights_class(cls) -> type:
        """The transformers Auto class of ``model_class`` (imports transformers)."""
        if isinstance(cls.model_class, str):
            import transformers

            return getattr(transformers, cls.model_class)
        return cls.model_class

    @classmethod
    def cached_ctranslate2_engine(cls, source: str | Path, name: str, engine: str,
                                  load_transformers_model: Callable | None = None) -> CTranslate2Engine | None:
        """The CTranslate2 engine of ``source`` straight from its cached conversion and tokenizer snapshot, loaded
        without torch or transformers; None where ``engine`` does not pick CTranslate2 for this bot or nothing is
        cached yet (then the transformers config decides, and the conversion runs once)."""
        if not prefers_ctranslate2(engine, cls.model_class):
            return None
        return CTranslate2Engine.from_cache(source, name, load_transformers_model)

    @classmethod
    def from_pretrained(cls, model: str | Path | None = None, name: str | None = None, dtype: str = "float32",
                        engine: str = "auto", **options):
        """Load tokenizer and weights from a local folder or a hub name (needs internet or a filled cache).

        ``engine``: "auto" (CTranslate2 where it converts the architecture, else transformers),
        "ctranslate2" or "transformers"; ``dtype`` applies to the transformers engine.
        """
        model = model if model is not None else cls.default_model
        if model is None:
            raise BotError(f"a {cls.kind} needs model=... (a local folder or a hub name)")
        check_dtype(dtype)
        name = name or Path(str(model)).name
        loader = _weights_loader(cls, model, dtype)
        cached = cls.cached_ctranslate2_engine(model, name, engine, loader)
        if cached is not None:
            return cls(None, cached.tokenizer, name=name, engine=cached, **options)
        from transformers import AutoConfig, AutoTokenizer

        try:
            tokenizer = AutoTokenizer.from_pretrained(model)
            config = AutoConfig.from_pretrained(model)
        except (OSError, ValueError) as exc:
            raise BotError(f"could not load {cls.kind} {model}: {first_line(exc)} ({cls.load_hint})") from exc
        if resolve_engine(engine, config, cls.model_class) == CT2_ENGINE:
            ct2 = CTranslate2Engine.from_source(model, tokenizer, config, name, loader)
            return cls(None, ct2.tokenizer, name=name, engine=ct2, **options)
        return cls(loader(), tokenizer, name=name, **options)

    @classmethod
    def from_gguf(cls, locate: Callable[[], Path], name: str, dtype: str = "float32", engine: str = "auto",
                  **options):
        """Load a shipped GGUF causal LM (``locate`` finds the file; converted and cached on first use).

        On CTranslate2 the GGUF converts in one pass (``CTranslate2Engine.from_gguf``: read once, int8 straight from
        the de-quantized tensors, the tokenizer kept beside it), and once cached loads without torch or transformers.
        The transformers weights (the studio's FQness scorer reads them) then come from the float32 folder of the
        two-pass way (embedded.gguf), made on that first use only. ``engine="transformers"`` loads that folder.
        """
        from embedded.gguf import ensure_converted, load_gguf_causal_lm

        check_dtype(dtype)
        try:
            gguf = locate()
            if prefers_ctranslate2(engine, cls.model_class):
                # the float32 folder cast to ``dtype`` on load: the same numbers as a bfloat16 de-quantization
                loader = _weights_loader(cls, lambda: ensure_converted(gguf, "float32"), dtype)
                ct2 = CTranslate2Engine.from_gguf(gguf, name, loader)
                return cls(None, ct2.tokenizer, name=name, engine=ct2, **options)
            weights, tokenizer = load_gguf_causal_lm(gguf, dtype)
        except embedded.MissingAssetError as exc:
            raise BotError(str(exc)) from exc
        return cls(weights, tokenizer, name=name, **options)

    @abstractmethod
    def encode_prompt(self, history: Sequence[Turn], persona: Sequence[str], memory: Sequence[str] = ()) -> list[int]:
        """The prompt's token ids for exactly these turns (``memory``: facts the reply must agree with, ``generate``)."""

    def clean_reply(self, text: str) -> str:
        """The candidate's text from the decoded reply."""
        return text.strip()

    def prompt_ids(self, history: Sequence[Turn], persona: Sequence[str], memory: Sequence[str] = ()) -> list[int]:
        """The prompt for the newest turns that fit ``max_prompt_tokens``; the last turn always stays, cut to its end
        when it alone is longer than the budget (``fit_prompt``, once per conversation state: ``fitted``)."""
        return self.fitted(history, persona, memory).ids

    def prompt_coverage(self, history: Sequence[Turn], persona: Sequence[str] = (),
                        memory: Sequence[str] = ()) -> PromptCoverage:
        """What the prompt for a reply to ``history`` holds of it: how much of the last turn, how many earlier turns."""
        history = list(history)
        fit = self.fitted(history, persona, memory)
        last = history[-1].text if history else ""
        return PromptCoverage(budget=self.max_prompt_tokens, last_chars=len(last),
                             last_chars_read=len(last) if fit.last_text == last else len(fit.last_text),
                             earlier=max(len(history) - 1, 0), earlier_read=max(len(history) - 1 - fit.start, 0))

    def fitted(self, history: Sequence[Turn], persona: Sequence[str], memory: Sequence[str] = ()) -> PromptFit:
        """``fit_prompt`` once per turn: the bot fits the prompt when it generates, and the page asks right after
        what that prompt held (``reading``); a fit renders the chat template several times (twice the bisection's
        steps), which a long chat paid twice a turn. The last fit is kept, keyed by every turn's speaker and text,
        the persona and the budget."""
        key = (tuple((t.agent_id, t.text) for t in history), tuple(persona), tuple(memory), self.max_prompt_tokens)
        last = getattr(self, "_last_fit", None)
        if last is not None and last[0] == key:
            return last[1]
        fit = self.fit_prompt(history, persona, memory)
        self._last_fit = (key, fit)
        return fit

    def fit_prompt(self, history: Sequence[Turn], persona: Sequence[str], memory: Sequence[str] = ()) -> PromptFit:
        """The prompt for the newest turns that fit ``max_prompt_tokens``; the last turn always stays.

        Oldest whole turns are dropped first. A prompt only shrinks as turns are dropped, so the
        first start that fits is found by bisection (few encodings even in a long conversation). An
        engine that keeps the prompt's state across turns (``drop_block`` > 1: transformers) drops them
        ``drop_block`` at a time, so the start moves once every few turns instead of every turn and
        the cached state stays valid in between (otherwise a conversation past the budget would
        re-encode its whole prompt each turn). When the last turn alone does not fit, its text is cut
        to its end (``cut_to_fit``): a reply to a very long message answers what it ends with, and
        ``reading`` says so.
        """
        history = list(history)
        encoded: dict[int, list[int]] = {}

        def encode(start: int) -> list[int]:
            if start not in encoded:
                encoded[start] = self.encode_prompt(history[start:], persona, memory)
            return encoded[start]

        def fits(start: int) -> bool:
            return len(encode(start)) <= self.max_prompt_tokens

        last = history[-1].text if history else ""
        if len(history) <= 1 or fits(0):
            if history and not fits(0):
                return self.cut_to_fit(history[-1], persona, len(history) - 1, memory)
            return PromptFit(encode(0), 0, last)
        start = bisect_left(range(len(history) - 1), True, lo=1, key=fits)
        if not fits(start):  # even the last turn alone is too long
            return self.cut_to_fit(history[-1], persona, start, memory)
        block = 1 if self.is_encoder_decoder else getattr(self.engine, "drop_block", 1)  # no cached prefix to keep
        if block > 1:  # drop turns a block at a time: the prompt's start, and so its cached state, stays put
            blocked = -(-start // block) * block
            if blocked < len(history) and fits(blocked):
                start = blocked
        return PromptFit(encode(start), start, last)

    def cut_to_fit(self, turn: Turn, persona: Sequence[str], start: int, memory: Sequence[str] = ()) -> PromptFit:
        """The prompt of ``turn`` alone with its text cut to its end, whole words after an ellipsis, so that it fits
        ``max_prompt_tokens``; as long as it is when even the ellipsis leaves no room (a persona or system prompt
        over the budget: the backend's own limits then apply)."""
        room = self.max_prompt_tokens - len(self.encode_prompt([replace(turn, text=ELLIPSIS)], persona, memory))
        tokens = list(self.tokenizer(turn.text, add_special_tokens=False)["input_ids"])
        keep = min(room, len(tokens))
        while keep >= MIN_CUT_TOKENS:
            tail = self.tokenizer.decode(tokens[-keep:], skip_special_tokens=True)
            words = tail.split(maxsplit=1)  # the first word may be cut in the middle: it goes
            text = ELLIPSIS + (words[1] if len(words) > 1 else tail.strip())
            ids = self.encode_prompt([replace(turn, text=text)], persona, memory)
            if len(ids) <= self.max_prompt_tokens:
                return PromptFit(ids, start, text[len(ELLIPSIS):])
            keep -= len(ids) - self.max_prompt_tokens
        return PromptFit(self.encode_prompt([turn], persona, memory), start, turn.text)

    def head_ids(self, persona: Sequence[str]) -> list[int]:
        """The fixed start of every prompt for this persona (system prompt, preamble): the CTranslate2 engine
        caches its state across turns. Empty: no fixed head."""
        return []

    #: every local bot words the memory into its prompt (``encode_prompt``)
    reads_memory = True

    @property
    def streams_text(self) -> bool:
        """Whether ``generate(on_text=...)`` hands on the candidates' text while they are written (CTranslate2)."""
        return bool(getattr(self.engine, "streams", False))

    @property
    def reports_queue(self) -> bool:
        """Whether ``generate(on_wait=...)`` tells how many generations are ahead while it waits (CTranslate2's line,
        bots.worker), and ``queued_s`` how long the last one waited."""
        return hasattr(self.engine, "worker")

    @property
    def queued_s(self) -> float | None:
        """Seconds this thread's last generation waited for the model (None: the engine keeps no line)."""
        return self.engine.queued_s if self.reports_queue else None

    @property
    def crowded(self) -> tuple[int, int] | None:
        """(candidates drawn, generations that needed the model) when this thread's last generation drew fewer
        candidates than asked for because other students' waited (bots.ct2.BUSY_CANDIDATES); else None."""
        return getattr(self.engine, "crowded", None) if self.reports_queue else None

    @property
    def continues_openings(self) -> bool:
        """A decoder-only model writes on from an opening put at the start of its reply (``continue_reply``)."""
        return not self.is_encoder_decoder

    def continue_reply(self, history: list[Turn], opening: str, num_candidates: int,
                       decoding: DecodingConfig | None = None, persona: Sequence[str] = (),
                       memory: Sequence[str] = ()) -> list[Candidate]:
        """Replies that begin with ``opening`` and go on as the model writes them (the prompt ends with the opening's
        tokens, as the reply would spell them); scored by the continuation alone."""
        if not self.continues_openings:
            return super().continue_reply(history, opening, num_candidates, decoding, persona)
        opening = " ".join(opening.split())
        if not opening:
            raise BotError("an opening to continue needs some words")
        return self.generate(history, num_candidates, decoding, persona, opening=opening, memory=memory)

    def reply_ids(self, text: str) -> list[int]:
        """``text``'s token ids as they follow the prompt at the start of a reply (a transcript bot's reply starts
        after a space, a chat template's right after the assistant header)."""
        return list(self.tokenizer(" " + text.strip() if self.stop_strings else text.strip(),
                                   add_special_tokens=False)["input_ids"])

    def generate(self, history: list[Turn], num_candidates: int, decoding: DecodingConfig | None = None,
                 persona: Sequence[str] = (), opening: str = "", *,
                 on_text: Callable[[list[str]], None] | None = None,
                 on_wait: Callable[[int], None] | None = None, memory: Sequence[str] = ()) -> list[Candidate]:
        """Up to ``num_candidates`` distinct replies, best score first (see ``distinct_replies``). ``on_text`` (where
        ``streams_text``) gets every candidate's text so far while they are written, from the engine's thread; with
        ``opening`` (``continue_reply``), each begins with it. ``on_wait(n)`` (where ``reports_queue``) hears how many
        generations are ahead of this one while it waits for the model (bots.worker). ``memory``: facts the reply must
        agree with, put right before the reply (``bots.base.chat_messages``; a transcript model reads them beside its
        persona)."""
        history = check_history(history)
        decoding = decoding or self.default_decoding
        input_ids = self.prompt_ids(history, persona, memory) + (self.reply_ids(opening) if opening else [])
        head = self.head_ids(persona)
        banned = self.history_ngrams(history, decoding.history_ngram_size, allowed=[*persona, *memory]) \
            if decoding.history_ngram_size else []
        candidates = self.engine.generate(
            input_ids, decoding, num_candidates,
            stop_strings=self.stop_strings, end_ids=self.end_ids(), clean=self.clean_reply,
            static_length=common_prefix_length(head, input_ids) if head else 0,
            banned_sequences=banned, **({"on_text": on_text} if on_text is not None and self.streams_text else {}),
            **({"on_wait": on_wait} if on_wait is not None and self.reports_queue else {}),
        )
        if opening:
            candidates = [Candidate(opened_reply(opening, c.text), c.score) for c in candidates]
        return distinct_replies(candidates, [m.text for m in history if m.agent_id == "bot"])

    def history_ngrams(self, history: Sequence[Turn], n: int, allowed: Sequence[str] = ()) -> list[list[int]]:
        """Every run of ``n`` tokens in the conversation's turns, as the reply would spell it: each text is
        tokenized as it starts a reply and after a space (a phrase reused mid-sentence), and the runs go to the
        engine as banned sequences (DecodingConfig.history_ngram_size). Runs of the ``allowed`` texts (the persona
        and the memory) stay allowed: a fact the bot said once may be said again in its own words ("I live in
        Valparaiso." banned once said, the next answer misspelt it "Valparaisos")."""
        def runs(texts) -> dict[tuple[int, ...], None]:
            found: dict[tuple[int, ...], None] = {}
            for text in texts:
                text = " ".join(text.split())
                for variant in (text, " " + text):
                    ids = self.tokenizer(variant, add_special_tokens=False)["input_ids"]
                    for start in range(len(ids) - n + 1):
                        found.setdefault(tuple(ids[start:start + n]), None)
            return found

        kept = runs(allowed)
        return [list(g) for g in runs(m.text for m in history) if g not in kept]

    def end_ids(self) -> list[int]:
        """Every token that ends a reply: the backend's end-of-turn tokens and the model's eos."""
        ends = set(self.end_token_ids)
        generation_config = getattr(self.engine, "generation_config", None)
        eos = getattr(generation_config, "eos_token_id", None)
        if eos is None:
            eos = self.config.eos_token_id
        ends.update([eos] if isinstance(eos, int) else (eos or []))
        return sorted(ends)

    def score_replies(self, history: Sequence[Turn], replies: Sequence[str],
                      persona: Sequence[str] = ()) -> list[float]:
        """Mean log-probability of each reply's tokens (and the end-of-turn token) after the prompt, under the
        engine that generates: the generator as a response ranker (MuTual, docs/bots.md)."""
        history = check_history(list(history))
        if self.is_encoder_decoder:
            raise BotError(f"{self.name}: scoring replies needs a decoder-only model")
        prompt = self.prompt_ids(history, persona)
        end = self.end_token_ids[:1] or self.end_ids()[:1]
        rows = [self.tokenizer(" " + r.strip() if self.stop_strings else r.strip(),
                               add_special_tokens=False)["input_ids"] + end for r in replies]
        return self.engine.score(prompt, rows)


def opened_reply(opening: str, continuation: str) -> str:
    """The reply a continuation makes after its opening: joined by a space, unless it goes on inside a word or with
    punctuation ("No, I work as a nurse" + ", and I love it.")."""
    rest = continuation.strip()
    if not rest:
        return opening
    return opening + rest if rest[0] in ",.;:!?'’)" else f"{opening} {rest}"


def _reply_key(text: str) -> str:
    """A reply compared by its words only: case, spacing and punctuation do not make two replies differ."""
    return " ".join(re.findall(r"[a-z0-9']+", text.lower().replace("\u2019", "'")))


def distinct_replies(candidates: Sequence[Candidate], earlier_replies: Sequence[str] = ()) -> list[Candidate]:
    """The candidates without copies: of replies with the same words only the best-scored stays, and a reply
    the bot already sent (same words) is dropped while another candidate remains. Samples of a small model
    repeat (three of four were one sentence in one ten-turn chat); the guard has nothing to choose among copies.
    Order: best score first."""
    ordered = sorted(candidates, key=lambda c: c.score, reverse=True)
    seen: set[str] = set()
    unique = []
    for candidate in ordered:
        key = _reply_key(candidate.text)
        if key not in seen:
            seen.add(key)
            unique.append(candidate)
    said = {_reply_key(text) for text in earlier_replies}
    fresh = [c for c in unique if _reply_key(c.text) not in said]
    return fresh or unique


def _resolve_dtype(dtype: str) -> str:
    """"auto" as the CPU's dtype (embedded.cpu_dtype, which imports torch), any other name as it is."""
    return embedded.cpu_dtype() if dtype == "auto" else dtype


def _weights_loader(cls, source: str | Path | Callable[[], Path], dtype: str) -> Callable[[], PreTrainedModel]:
    """A function that loads the transformers weights of ``source`` (or of the folder ``source()`` returns, found
    only then) in ``dtype`` ("auto" resolved then), with a BotError on failure. CTranslate2 bots never call it to
    generate; nothing of torch or transformers is imported before it runs."""

    def load() -> PreTrainedModel:
        try:
            import torch

            folder = source() if callable(source) else source
            return cls.weights_class().from_pretrained(folder, dtype=getattr(torch, _resolve_dtype(dtype))).eval()
        except (OSError, ValueError) as exc:
            raise BotError(f"could not load {cls.kind} {source}: {first_line(exc)} ({cls.load_hint})") from exc

    return load
