"""The int8 inference engine under the local bots: CTranslate2, converted once per model and cached.

Why: on a CPU without native bfloat16 (most laptops) transformers' float32 decode loop ran at a
fifth of CTranslate2's int8 speed on the same two cores (docs/bots.md has the
side-by-side table). The converter runs once per model; its output lives in
``embedded.cache_dir()/ct2/<name>-<key>-int8/``, keyed by the source folder's files and the
CTranslate2 version, written into a temporary folder and renamed into place, so a failed or
interrupted conversion never leaves a half-written model behind.

Decoding maps onto ``Generator.generate_batch`` (see ``generation_options``). The prompt is given
once (batch 1) with ``include_prompt_in_result=False``: CTranslate2 forwards it through the decoder
in one pass and only then tiles the state for the N hypotheses (beams or samples), so the N
candidates share one prefill.

Across turns: CTranslate2 cannot extend a cached decoder state; its ``static_prompt`` caches the
state of one fixed prefix, computed from scratch, keyed by its tokens. So the prompt is cut at a
checkpoint, the last multiple of ``CHECKPOINT_TOKENS`` before its end (or the fixed head: system
prompt and persona, whichever is longer), and that prefix goes in as ``static_prompt``. A growing
conversation keeps the same checkpoint for several turns (only the tokens after it are encoded),
and pays one full encoding when it passes the next multiple. CTranslate2's state cache has no
eviction, so the engine reloads its model (a fresh, empty cache) once the prefixes it cached hold
more than ``CACHE_BUDGET_TOKENS`` tokens.

Loading without transformers: the conversion also keeps the tokenizer as transformers set it up and the few
model settings the engine reads (``snapshot_tokenizer``: bots.tokenizer), so a later process builds the
engine from the cache alone (``CTranslate2Engine.from_cache``) and never imports torch or transformers,
whose import took most of a ``python -m bots generate``. Only the first conversion needs them, and not even
that for a llama GGUF such as the embedded bot's (bots.gguf_direct).
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import logging
import math
import os
import random
import sys
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

from bots.base import DEFAULT_SAMPLE_RANK_SAMPLES, BotError, Candidate, DecodingConfig, first_line
from bots.candidates import _distinct, make_candidate
from bots.tokenizer import LightTokenizer, snapshot
from bots.worker import GenerationWorker, Job
from embedded.threads import ThreadFit
from embedded.turns import cpu_turn

logger = logging.getLogger(__name__)

#: Weights int8, activations float32: the compute type every x86-64 CPU runs natively in CTranslate2.
COMPUTE_TYPE = "int8"
#: The prompt's cached prefix ends at a multiple of this many tokens. Encoding cost per turn is about
#: (prompt length x tokens per turn / C) + C / 2 token-encodings, smallest near C = sqrt(2 x 1000 x 38)
#: = 275 for a 1,000-token chat growing 38 tokens a turn (the embedded bot's budget and bench_engines' chat).
CHECKPOINT_TOKENS = 256
#: Tokens of cached prefixes before the engine reloads its model to empty CTranslate2's cache (for
#: SmolLM2-135M a cached token holds 30 layers x 2 x 3 heads x 64 floats = 46 KB: about 380 MB).
CACHE_BUDGET_TOKENS = 8192
#: While candidates are written, their text goes to ``on_text`` at most this often, from a thread of its own: a
#: reader takes in about 4 words a second, and each hand-on makes the page draw (Streamlit, then the browser) on the
#: cores the decoding needs. ``GUARD_STREAM_INTERVAL_S`` sets it (benchmarks compare a page that streams with one
#: that all but does not: ``GUARD_STREAM_INTERVAL_S=1000``).
STREAM_INTERVAL_S = float(os.environ.get("GUARD_STREAM_INTERVAL_S", "0.25"))
#: Generations of several conversations waiting at once may share one ``generate_batch`` (bots.worker), up to this
#: many; ``GUARD_GEN_BATCH`` sets it (1: one at a time, as before). Measured before it was set (bench_batching, 4
#: candidates each, prompts of like length): 2 took 0.76x, 4 took 0.55x, 8 took 0.80x their generations one after
#: the other (at 8 x 4 rows a step is bound by arithmetic, no longer by reading the weights).
BATCH_LIMIT = max(int(os.environ.get("GUARD_GEN_BATCH", "4")), 1)
#: Generations share a batch only when their prompts' lengths differ by at most this many tokens
#: (``GUARD_GEN_SPREAD``): CTranslate2 forwards a batch's prompts at once only up to the shortest one's length and
#: the rest one token a decoding step, so a batch of a 118- and a 233-token prompt took 2.3 times their two
#: generations one after the other, while four prompts of 184-194 tokens took 0.55 times (benchmarks/bench_batching.py).
BATCH_SPREAD = max(int(os.environ.get("GUARD_GEN_SPREAD", "24")), 0)
#: How long the head of the line waits for more generations to share its batch (``GUARD_GEN_GATHER_MS``, at most
#: 100 ms; 0: only those already waiting), and only when other generations arrived in the last seconds
#: (bots.worker.ACTIVE_S), so a lone student never waits for company: a class's burst of messages reaches the
#: server some milliseconds apart (two API clients sent at once: the second waited the first's whole generation).
GATHER_S = min(max(float(os.environ.get("GUARD_GEN_GATHER_MS", "50")), 0.0), 100.0) / 1000
#: ``GUARD_STREAM=0``: the engine hands nothing on while it writes (``streams`` False: no step callback at all in the
#: page's generation), for benchmarks that compare the page with and without the stream.
STREAMS = os.environ.get("GUARD_STREAM", "1").strip() != "0"
#: When a batch starts while other students' generations need the model too (``bots.worker.Job.crowd`` > 1), each
#: of its sampled generations draws at most this many candidates (``GUARD_BUSY_CANDIDATES``; 0, the default: the
#: number asked for, always). Why it exists: a class of 30 keeps the line full, and both a batch's decoding and the
#: guard's scoring grow with the candidates. Why it is off: measured (docs/experiments/2026-11-28-class-of-30.md),
#: 2 cut 30 students' p95 from 5.95x to 3.48x one student's p50 and 3 to 4.17x, but the report script's replies
#: with 2 or 3 candidates held 1.40x and 1.55x the contradictions and dodges of 4 (the rule allowed 1.25x). A
#: teacher who prefers faster replies to better ones sets it. A lone student's turn, a seeded one (a replay must
#: draw what it drew) and a search (greedy, beam) keep their number whatever it is.
BUSY_CANDIDATES = max(int(os.environ.get("GUARD_BUSY_CANDIDATES", "0")), 0)


def available() -> bool:
    """Whether the ctranslate2 package is installed."""
    import importlib.util

    return importlib.util.find_spec("ctranslate2") is not None


def converts(config) -> bool:
    """Whether CTranslate2's transformers converter handles this (decoder-only) architecture.

    The converter registers one loader per config class (LlamaConfig, OPTConfig, Gemma3TextConfig, ...);
    encoder-decoder models would need its Translator, and BlenderBot has no loader at all, so they stay
    on transformers.
    """
    if getattr(config, "is_encoder_decoder", False) or not available():
        return False
    from ctranslate2.converters.transformers import _MODEL_LOADERS

    return type(config).__name__ in _MODEL_LOADERS


def _source_key(source: str | Path) -> str:
    """A key that changes when the source model changes: its files' names, sizes and mtimes to the nanosecond (a
    folder or one file; whole seconds missed a file rewritten within the second it was converted in), or its name (a
    hub model), plus the CTranslate2 version and compute type."""
    import ctranslate2

    path = Path(source)
    parts = [str(path.resolve()) if path.exists() else str(source), ctranslate2.__version__, COMPUTE_TYPE]
    files = sorted(f for f in path.iterdir() if f.is_file()) if path.is_dir() else [path] if path.is_file() else []
    for file in files:  # a folder's files, or the one file (a GGUF converted in one pass, bots.gguf_ct2)
        stat = file.stat()
        parts.append(f"{file.name}:{stat.st_size}:{stat.st_mtime_ns}")
    return hashlib.sha1("|".join(parts).encode()).hexdigest()[:12]


def converted_dir(source: str | Path, name: str | None = None) -> Path:
    """Where the CTranslate2 conversion of ``source`` is cached (whether or not it exists yet)."""
    import embedded

    label = (name or Path(str(source)).name).replace("/", "--")
    return embedded.cache_dir() / "ct2" / f"{label}-{_source_key(source)}-{COMPUTE_TYPE}"


def is_complete(folder: Path) -> bool:
    return (folder / "model.bin").is_file() and (folder / "config.json").is_file()


def convert(source: str | Path, name: str | None = None, converter: Callable | None = None) -> Path:
    """The cached CTranslate2 int8 model of ``source`` (a transformers folder or hub name), converting it once.

    Built through ``embedded.once.build_once``: one process converts while others asking for the same model wait
    and use its result, and a reader sees a whole model or none; any failure leaves nothing that looks finished and
    raises one BotError. ``converter(source, output_dir)`` replaces the real converter (tests make it fail).
    """
    from embedded.once import build_once

    target = converted_dir(source, name)
    if is_complete(target):
        return target

    def build(staging: Path) -> None:
        print(f"Converting {name or source} to CTranslate2 {COMPUTE_TYPE} (first use only; cached in "
              f"{target.parent})…", file=sys.stderr, flush=True)
        started = time.perf_counter()
        (converter or _convert_with_ctranslate2)(str(source), str(staging))
        print(f"Converted {name or source} in {time.perf_counter() - started:.0f} s.", file=sys.stderr, flush=True)

    try:
        return build_once(target, build, is_complete, fix="the converter wrote no model.bin and config.json")
    except Exception as exc:
        raise BotError(f"could not convert {name or source} to CTranslate2: {first_line(exc)} "
                       "(nothing was cached; engine='transformers' runs it without conversion)") from exc


class SourceSettings(SimpleNamespace):
    """The settings of the source model's transformers config (or generation config) that the engine and the local
    bots read (``is_encoder_decoder``, ``eos_token_id``, ``model_type``), kept beside the conversion so a cached
    engine needs no transformers config."""


def _settings(config) -> dict:
    eos = getattr(config, "eos_token_id", None)
    return {"model_type": getattr(config, "model_type", None),
            "is_encoder_decoder": bool(getattr(config, "is_encoder_decoder", False)),
            "eos_token_id": list(eos) if isinstance(eos, (list, tuple)) else eos}


def snapshot_tokenizer(folder: Path, source: str | Path, tokenizer, config, generation_config=None):
    """Keep ``tokenizer`` and the model settings beside the conversion in ``folder`` and return the light tokenizer
    read back from there; the transformers ``tokenizer`` itself where it cannot be kept (no ``tokenizers``
    backend) or the folder is not writable."""
    extra = {"config": _settings(config),
             "generation_config": _settings(generation_config) if generation_config is not None else None}
    try:
        written = snapshot(tokenizer, folder, extra)
    except OSError as exc:
        logger.warning("could not keep the tokenizer beside %s: %s", folder, exc)
        written = False
    return (LightTokenizer.load(folder, source) if written else None) or tokenizer


def _convert_with_ctranslate2(source: str, output_dir: str) -> None:
    from ctranslate2.converters import TransformersConverter

    TransformersConverter(source, low_cpu_mem_usage=True).convert(output_dir, quantization=COMPUTE_TYPE, force=True)


def _transformers_one_pass(source: str, output_dir: str) -> None:
    """A GGUF file converted in one pass through transformers (bots.gguf_ct2) and its tokenizer kept beside it: the
    way for the files the direct conversion does not handle."""
    from bots.gguf_ct2 import convert_loaded, load_gguf

    loaded = load_gguf(source)
    convert_loaded(loaded, output_dir, COMPUTE_TYPE)
    extra = {"config": _settings(loaded.config), "generation_config": _settings(loaded.generation_config)}
    if not snapshot(loaded.tokenizer, output_dir, extra):
        raise RuntimeError("its tokenizer has no tokenizers backend to keep beside the model")


@dataclass
class GenerationRequest:
    """One generate_batch call: its keyword arguments and what is done with the hypotheses."""

    kwargs: dict
    keep: int
    beam: bool


def generation_options(decoding: DecodingConfig, num_candidates: int) -> GenerationRequest:
    """Our decoding settings as ``Generator.generate_batch`` keyword arguments.

    greedy -> beam_size 1, sampling_topk 1 (one hypothesis: a deterministic search has one answer);
    beam -> beam_size max(num_beams, N), num_hypotheses N; top_k / top_p / sample_rank -> beam_size 1,
    sampling_topk (0 = the whole vocabulary) / sampling_topp / sampling_temperature, num_hypotheses N
    (sample_rank: num_samples, ranked afterwards); min/max_new_tokens -> min_length / max_length (counted
    after the prompt when include_prompt_in_result=False); no_repeat_ngram_size -> no_repeat_ngram_size;
    repetition_penalty -> repetition_penalty (both see the generated tokens only: the prompt is forwarded
    outside the decoding loop).
    """
    if num_candidates < 1:
        raise BotError("num_candidates must be >= 1")
    kwargs: dict = {
        "max_length": decoding.max_new_tokens,
        "min_length": decoding.min_new_tokens,
        "no_repeat_ngram_size": decoding.no_repeat_ngram_size,
        "repetition_penalty": decoding.repetition_penalty,
        "include_prompt_in_result": False,
        "return_scores": True,  # also makes every step report its token's log-probability
    }
    keep, beam = num_candidates, False
    if decoding.method == "greedy":
        kwargs.update(beam_size=1, sampling_topk=1, num_hypotheses=1)
        keep = 1
    elif decoding.method == "beam":
        beam = True
        kwargs.update(beam_size=max(decoding.num_beams, num_candidates), num_hypotheses=num_candidates)
    else:
        draws = num_candidates
        if decoding.method == "sample_rank":
            draws = max(decoding.num_samples or DEFAULT_SAMPLE_RANK_SAMPLES, num_candidates)
        top_k, top_p = decoding.filters
        kwargs.update(
            beam_size=1,
            num_hypotheses=draws,
            sampling_topk=top_k,
            sampling_topp=top_p,
            sampling_temperature=decoding.temperature,
        )
    return GenerationRequest(kwargs, keep, beam)


def _backend(tokenizer):
    """The ``tokenizers.Tokenizer`` under ``tokenizer`` (LightTokenizer's and transformers' fast tokenizers have one),
    or None (a slow tokenizer: its text is decoded whole instead)."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    return backend if backend is not None and hasattr(backend, "decode") else None


class _Written:
    """One hypothesis's text as it is written: each new token decoded alone (``tokenizers.decoders.DecodeStream``,
    which holds back a token that ends inside a multi-byte character until the character is whole) and appended."""

    def __init__(self, tokenizer):
        from tokenizers.decoders import DecodeStream

        self.tokenizer = tokenizer
        self.backend = _backend(tokenizer)
        self.stream = DecodeStream(skip_special_tokens=True) if self.backend is not None else None
        self.ids: list[int] = []
        self.text = ""

    def add(self, token_id: int) -> None:
        if self.stream is None:  # no tokenizers backend: the whole text again (slow tokenizers only)
            self.ids.append(token_id)
            self.text = self.tokenizer.decode(self.ids, skip_special_tokens=True)
            return
        chunk = self.stream.step(self.backend, token_id)
        if chunk:
            self.text += chunk


@dataclass
class _Hypotheses:
    """What generate_batch's step callback collects: each hypothesis's tokens and their log-probabilities, and, where
    the text is wanted while it is written (``stop_strings`` to stop at, an ``on_text`` to hand it to), the text,
    decoding only each new token. The callback runs in CTranslate2's worker thread between two decoding steps,
    holding the interpreter lock, so it does no more than that: the texts are handed on from a thread of their own
    (``_Streamer``), never from here."""

    tokenizer: object
    stop_strings: Sequence[str]
    end_ids: set[int]
    expected: int
    write: bool = False  # decode the text as it is written (stop strings or a stream need it)
    clean: Callable[[str], str] = str.strip
    tokens: dict[int, list[int]] = field(default_factory=dict)
    log_probs: dict[int, list[float]] = field(default_factory=dict)
    written: dict[int, _Written] = field(default_factory=dict)
    done: set[int] = field(default_factory=set)
    changed: threading.Event = field(default_factory=threading.Event)  # new text since the streamer last looked
    failed: BaseException | None = None  # what the receiver of the texts raised: the batch stops, generate raises it

    def __call__(self, step) -> bool:
        """Record one step; True (stop the batch) once every hypothesis has ended or hit a stop string, or the
        receiver of the texts failed."""
        hypothesis, token = step.hypothesis_id, step.token_id
        self.tokens.setdefault(hypothesis, []).append(token)
        self.log_probs.setdefault(hypothesis, []).append(step.log_prob)
        ended = step.is_last or token in self.end_ids
        if self.write and token not in self.end_ids:
            written = self.written.get(hypothesis)
            if written is None:
                written = self.written[hypothesis] = _Written(self.tokenizer)
            before = len(written.text)
            written.add(token)
            if len(written.text) != before:
                self.changed.set()
                if self.stop_strings and not ended:
                    text = written.text.lstrip()
                    ended = any(s in text for s in self.stop_strings)
        if ended:
            self.done.add(hypothesis)
        if self.failed is not None:
            return True
        return bool(self.stop_strings) and len(self.done) >= self.expected

    def let_go(self) -> None:
        """Drop the caller's functions once the batch is over. CTranslate2's worker thread may hold this callback
        until its next job; were it the last holder of a bot (``clean`` is a bot's method), the bot's model would be
        freed in that thread, which then waits for itself to end ("Resource deadlock avoided", the process aborts)."""
        self.clean = str.strip

    def texts(self) -> list[str]:
        """Every hypothesis's text so far (one per hypothesis asked for, "" before its first token), in hypothesis
        order, cut where its reply ends (stop string)."""
        texts = []
        for hypothesis in range(max(self.expected, len(self.written))):
            written = self.written.get(hypothesis)
            text = written.text.lstrip() if written is not None else ""
            cut = min((text.find(s) for s in self.stop_strings if s and s in text), default=-1)
            texts.append(self.clean(text[:cut] if cut >= 0 else text))
        return texts


class _Streamer:
    """Hands the hypotheses' texts to ``on_text`` from a thread of its own while they are written: as soon as the
    first words are there, then at most every ``interval`` seconds and only when a text changed. Generation never
    waits for it (the callback only sets an event); what ``on_text`` raises stops the batch (``_Hypotheses.failed``)
    and is raised by ``generate``."""

    def __init__(self, hypotheses: _Hypotheses, on_text: Callable[[list[str]], None], interval: float):
        self.hypotheses, self.on_text, self.interval = hypotheses, on_text, max(interval, 0.0)
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, name="ct2-stream", daemon=True)

    def __enter__(self) -> _Streamer:
        self.thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self.stopping.set()
        self.hypotheses.changed.set()  # wakes the thread if it waits for text
        self.thread.join()
        self.on_text = None  # nothing of the caller's is kept past the batch

    def _run(self) -> None:
        changed, last = self.hypotheses.changed, None
        while True:
            changed.wait()
            if self.stopping.is_set():
                return
            changed.clear()
            texts = self.hypotheses.texts()
            if texts != last:
                try:
                    self.on_text(texts)
                except BaseException as exc:  # noqa: BLE001 - raised by generate in the caller's thread
                    self.hypotheses.failed = exc
                    return
                last = texts
            if self.stopping.wait(self.interval):
                return


@dataclass
class _Generation:
    """One generation in the engine's line (``bots.worker.Job.payload``): the whole prompt and its cached prefix,
    the decoding options, the banned sequences as tokens, the step callback (None: none needed), the decoding."""

    prompt: list[int]
    static: list[int]
    kwargs: dict
    banned: list[list[str]]
    callback: _Hypotheses | None
    decoding: DecodingConfig
    drawn: int | None = None  # candidates drawn, when fewer than asked for (a crowded batch, ``BUSY_CANDIDATES``)


def _drawn_for_crowd(head: Job, kwargs: dict) -> int | None:
    """How many candidates each generation of ``head``'s batch draws when others need the model too
    (``BUSY_CANDIDATES``), or None: the number asked for. Only for shared sampling: a job that may share a batch
    (``Job.key``: no seed, no beam) whose batch started with a crowd, drawing plain samples (not sample_rank's pool,
    which is ranked afterwards, nor greedy's one)."""
    generation: _Generation = head.payload
    asked = int(kwargs.get("num_hypotheses", 1))
    if (BUSY_CANDIDATES < 1 or head.key is None or head.crowd < 2
            or generation.decoding.method not in ("top_k", "top_p") or asked <= BUSY_CANDIDATES):
        return None
    return BUSY_CANDIDATES


class _Router:
    """The step callback of a batch of several generations: each step to its own generation's callback."""

    def __init__(self, callbacks: list[_Hypotheses | None]):
        self.callbacks = callbacks

    def __call__(self, step) -> bool:
        callback = self.callbacks[step.batch_id]
        return callback(step) if callback is not None else False


#: Every engine alive, so their models are released before the interpreter shuts down (``_release_models``).
_ENGINES: weakref.WeakSet = weakref.WeakSet()


@atexit.register
def _release_models() -> None:
    """Free every CTranslate2 model while the interpreter is still whole. A Generator still referenced at exit (a
    script's global bot) is otherwise destroyed during finalization, where CTranslate2 aborted the process in about
    one run of three here ("terminate called without an active exception", exit status 134, after the output)."""
    for engine in list(_ENGINES):
        engine.generator = None


class CTranslate2Engine:
    """Generation and scoring through a converted CTranslate2 model (decoder-only).

    Threads: ``intra_threads`` > 0 fixes the count; 0 (the default) fits it to the machine before each generation
    (``embedded.threads.ThreadFit``: the usable cores less those other processes keep busy, ``GUARD_BOT_THREADS``
    overrides), reloading the model when the count changes (CTranslate2 sets it per loaded model).

    Seeds: CTranslate2 draws from one random generator per worker thread, seeded from the process-wide seed when
    that thread first samples; ``set_random_seed`` later changes nothing for it. So a seeded generation on a model
    that has sampled already reloads it first (a fresh worker thread, about 0.2 s), and the same seed gives the
    same candidates however often it is asked for in one process, as in a new one.
    """

    name = "ctranslate2"
    #: Turns dropped at a time past the prompt budget (bots.local.prompt_ids), so the checkpoint stays valid.
    drop_block = 8
    #: generate(on_text=...) hands the candidates' text on while they are written (unless ``GUARD_STREAM=0``)
    streams = STREAMS

    def __init__(self, model_dir: str | Path, tokenizer, config, generation_config=None,
                 load_transformers_model: Callable | None = None, intra_threads: int = 0):
        import ctranslate2

        self.model_dir = Path(model_dir)
        self.tokenizer = tokenizer
        self.config = config  # the transformers config of the source (architecture, eos, context size)
        self.generation_config = generation_config
        self._load_transformers_model = load_transformers_model
        self.thread_fit = None if intra_threads > 0 else ThreadFit()
        self.intra_threads = intra_threads if intra_threads > 0 else self.thread_fit.threads()
        self.checkpoint_tokens = CHECKPOINT_TOKENS  # 0: cache the fixed head only (benchmarks compare both)
        self.cached_prefixes: set[tuple[int, ...]] = set()  # static prompts CTranslate2 holds a state for
        self.sampled = False  # whether the loaded model's worker thread has drawn (its random generator is seeded)
        self.generator = self._load()
        #: the line of generations in front of the model (bots.worker): who is ahead, who shares a batch
        self.worker = GenerationWorker(self._run_jobs, batch_limit=BATCH_LIMIT, gather_s=GATHER_S,
                                       max_spread=BATCH_SPREAD)
        self._caller = threading.local()  # what the calling thread's last generation waited (``queued_s``)
        self.label = f"CTranslate2 {ctranslate2.__version__} {COMPUTE_TYPE}"
        _ENGINES.add(self)

    def _load(self):
        import ctranslate2

        try:
            return ctranslate2.Generator(str(self.model_dir), device="cpu", compute_type=COMPUTE_TYPE,
                                         intra_threads=self.intra_threads)
        except (RuntimeError, ValueError, OSError) as exc:
            raise BotError(f"could not load the CTranslate2 model in {self.model_dir}: {first_line(exc)}") from exc

    def reload(self) -> None:
        """Load the model again: a new worker thread (its random generator not seeded yet), the current thread count,
        and an empty prefix cache."""
        self.generator = None  # the old model's memory goes before the new one's comes
        self.generator = self._load()
        self.cached_prefixes.clear()
        self.sampled = False

    def set_threads(self, threads: int) -> None:
        """Fix the thread count (0: fit it to the machine again before each generation) and reload at that count."""
        self.thread_fit = None if threads > 0 else ThreadFit()
        self.intra_threads = threads if threads > 0 else self.thread_fit.threads()
        self.reload()

    def _fit_threads(self) -> None:
        """Before a generation: the thread count the machine's load calls for, reloading when it changed."""
        if self.thread_fit is None:
            return
        wanted = self.thread_fit.threads()
        if wanted != self.intra_threads:
            logger.info("CTranslate2 threads %d -> %d (others keep %.2f cores busy)", self.intra_threads, wanted,
                        self.thread_fit.others or 0.0)
            self.intra_threads = wanted
            self.reload()

    def _seed(self, decoding: DecodingConfig) -> None:
        """Before a sampling generation: the seed it asks for, on a worker thread that has not drawn yet (reloaded
        when it has), or a fresh random seed for a new worker thread, which would otherwise replay the last seed."""
        import ctranslate2

        if not decoding.samples:
            return
        if decoding.seed is not None:
            if self.sampled:
                self.reload()
            ctranslate2.set_random_seed(decoding.seed)
        elif not self.sampled:
            ctranslate2.set_random_seed(random.SystemRandom().randrange(2**31))
        self.sampled = True

    def static_prefix(self, prompt: Sequence[int], static_length: int = 0) -> list[int]:
        """The prefix whose state CTranslate2 caches: the last checkpoint or the fixed head, whichever is longer
        (empty when that would leave fewer than 2 tokens to encode)."""
        step = self.checkpoint_tokens
        checkpoint = (len(prompt) - 2) // step * step if step > 0 else 0
        length = max(checkpoint, static_length)
        return list(prompt[:length]) if 0 < length < len(prompt) - 1 else []

    def _remember(self, static: Sequence[int]) -> None:
        """Count a new cached prefix; past the budget, reload the model so CTranslate2's cache starts empty."""
        key = tuple(static)
        if not key or key in self.cached_prefixes:
            return
        if sum(map(len, self.cached_prefixes)) + len(key) > CACHE_BUDGET_TOKENS:
            self.reload()
        self.cached_prefixes.add(key)

    @classmethod
    def from_source(cls, source: str | Path, tokenizer, config, name: str | None = None,
                    load_transformers_model: Callable | None = None) -> CTranslate2Engine:
        """The engine over the cached conversion of ``source`` (converted now on first use). ``tokenizer`` and
        ``config`` are transformers': the tokenizer is kept beside the conversion and the engine runs on the
        light copy read back from there (bots.tokenizer), as ``from_cache`` will in later processes."""
        from transformers import GenerationConfig

        try:
            generation_config = GenerationConfig.from_pretrained(source)
        except (OSError, ValueError):
            generation_config = None
        target = convert(source, name)
        light = snapshot_tokenizer(target, source, tokenizer, config, generation_config)
        return cls(target, light, config, generation_config, load_transformers_model)

    @classmethod
    def from_gguf(cls, gguf: str | Path, name: str | None = None,
                  load_transformers_model: Callable | None = None) -> CTranslate2Engine:
        """The engine over a GGUF file's conversion, made now on first use, its tokenizer snapshot written with the
        model so that a later process loads both from the cache (``from_cache``) without torch or transformers.

        A llama file with a byte-level BPE tokenizer (the embedded SmolLM2) is converted directly, without torch or
        transformers (bots.gguf_direct); any other (a Gemma3 GGUF...) in one pass through transformers
        (bots.gguf_ct2: read once, de-quantized in memory, no float32 copy on disk). Both give the two-pass way's
        bytes."""
        cached = cls.from_cache(gguf, name, load_transformers_model)
        if cached is not None:
            return cached

        def one_pass(source: str, output_dir: str) -> None:
            from bots import gguf_direct

            reader, meta = gguf_direct.read(source)
            reason = gguf_direct.unsupported(meta)
            if reason is None:
                done = gguf_direct.convert(reader, meta, output_dir, COMPUTE_TYPE)
                done.tokenizer.write_snapshot(output_dir, {"config": _settings(done.config),
                                                           "generation_config": _settings(done.generation_config)})
                return
            logger.info("converting %s through transformers: %s", source, reason)
            del reader  # transformers reads the file again its own way
            _transformers_one_pass(source, output_dir)

        convert(gguf, name, converter=one_pass)
        engine = cls.from_cache(gguf, name, load_transformers_model)
        if engine is None:  # the snapshot is there unless another transformers version wrote it meanwhile
            raise BotError(f"the conversion of {name or gguf} has no tokenizer this transformers version reads; "
                           f"remove {converted_dir(gguf, name)} to convert it again")
        return engine

    @classmethod
    def from_cache(cls, source: str | Path, name: str | None = None,
                   load_transformers_model: Callable | None = None) -> CTranslate2Engine | None:
        """The engine over an existing conversion of ``source`` with its tokenizer kept beside it (``from_source``
        wrote both), loaded without torch or transformers; None when either is missing."""
        target = converted_dir(source, name)
        if not is_complete(target):
            return None
        tokenizer = LightTokenizer.load(target, source)
        if tokenizer is None:
            return None
        extra = tokenizer.meta.get("extra") or {}
        config = SourceSettings(**extra.get("config") or {"is_encoder_decoder": False, "eos_token_id": None})
        generation = extra.get("generation_config")
        return cls(target, tokenizer, config, SourceSettings(**generation) if generation else None,
                   load_transformers_model)

    def load_transformers_model(self):
        """The source's transformers weights, for code that needs them (the studio's FQness scorer)."""
        if self._load_transformers_model is None:
            raise BotError("this CTranslate2 bot has no transformers weights to load")
        return self._load_transformers_model()

    def _tokens(self, ids: Sequence[int]) -> list[str]:
        return self.tokenizer.convert_ids_to_tokens(list(ids))

    def generate(self, prompt: Sequence[int], decoding: DecodingConfig, num_candidates: int, *,
                 stop_strings: Sequence[str] = (), end_ids: Sequence[int] = (), static_length: int = 0,
                 clean: Callable[[str], str] = str.strip,
                 banned_sequences: Sequence[Sequence[int]] = (),
                 on_text: Callable[[list[str]], None] | None = None,
                 on_wait: Callable[[int], None] | None = None) -> list[Candidate]:
        """N scored candidates after ``prompt`` (token ids). The first ``static_length`` ids are a fixed head;
        it, or the last checkpoint if longer, goes in as ``static_prompt`` (see the module docstring).
        ``banned_sequences`` (each of 2 or more tokens) go in as ``suppress_sequences``: a reply never
        completes one (CTranslate2 matches them against the generated tokens only). ``on_text`` gets every
        hypothesis's text so far while they are written (sampling and greedy; a beam search has no step callback),
        from a thread of its own at most every ``STREAM_INTERVAL_S`` (``_Streamer``); what it raises stops the
        generation and is raised here. The generation waits its turn in the engine's line (``worker``, bots.worker):
        ``on_wait(n)`` hears how many generations are ahead of it while it waits; a full line raises
        ``bots.worker.ServerBusy``."""
        request = generation_options(decoding, num_candidates)
        ends = {int(t) for t in end_ids}
        prompt = list(prompt)
        static = self.static_prefix(prompt, static_length)
        kwargs = dict(request.kwargs)
        if ends:
            kwargs["end_token"] = sorted(ends)
        kwargs["return_end_token"] = True
        banned = [self._tokens(b) for b in banned_sequences if len(b) > 1]
        # The step callback only where something needs the tokens while they are written: stop strings (CTranslate2 has
        # no per-hypothesis stop string) or a stream of the texts. Otherwise the decoding loop runs without calling
        # into Python, and the scores are CTranslate2's own (the mean log-probability of each hypothesis's tokens,
        # end token included, at temperature 1: the same numbers the step callback reports, averaged).
        stream = on_text is not None and not request.beam
        hypotheses = _Hypotheses(self.tokenizer, tuple(stop_strings), ends, kwargs["num_hypotheses"],
                                 write=bool(stop_strings) or stream, clean=clean)
        wanted = not request.beam and bool(stop_strings or stream)
        job = Job(_Generation(prompt, static, kwargs, banned, hypotheses if wanted else None, decoding),
                  key=self._batch_key(kwargs, decoding, request.beam), size=len(prompt))
        streamer = _Streamer(hypotheses, on_text, STREAM_INTERVAL_S) if stream else contextlib.nullcontext()
        try:
            with streamer:
                result = self.worker.run(job, on_wait)
        finally:
            hypotheses.let_go()
        self._caller.queued_s = job.queued_s
        self._caller.crowded = (job.payload.drawn, job.crowd) if job.payload.drawn is not None else None
        if hypotheses.failed is not None:  # the receiver of the texts raised (a page that stopped): so does this
            raise hypotheses.failed
        rows = [list(ids) for ids in result.sequences_ids]
        means: list[float | None] = [None] * len(rows)
        scores: list[list[float] | None] = [None] * len(rows)
        if request.beam:  # no step callback in beam search: score the finished beams token by token
            with cpu_turn(self):
                scores = self._token_log_probs(prompt, rows)
        elif stop_strings:  # a stop string cuts a reply inside its tokens: its score needs each token's
            order = sorted(hypotheses.tokens)
            rows = [hypotheses.tokens[h] for h in order]
            scores = [hypotheses.log_probs[h] for h in order]
        else:
            means = [float(score) for score in result.scores]
        candidates = [make_candidate(self.tokenizer, row, row_scores, stop_strings, ends, clean, mean=mean)
                      for row, row_scores, mean in zip(rows, scores, means)]
        if decoding.method == "sample_rank":
            candidates = _distinct(candidates)
        candidates.sort(key=lambda c: c.score, reverse=True)
        return candidates[: request.keep]

    @property
    def queued_s(self) -> float:
        """Seconds the calling thread's last generation waited in the line before it ran (0.0 before any)."""
        return getattr(self._caller, "queued_s", 0.0)

    @property
    def crowded(self) -> tuple[int, int] | None:
        """For the calling thread's last generation: (candidates drawn, generations that needed the model) when it
        drew fewer than asked for because others waited (``BUSY_CANDIDATES``); None when it drew them all."""
        return getattr(self._caller, "crowded", None)

    @staticmethod
    def _batch_key(kwargs: dict, decoding: DecodingConfig, beam: bool):
        """What generations must share to run in one batch: every decoding option CTranslate2 takes per batch, except
        the prompts, the static prompt and the banned sequences (``_run_jobs`` merges those). None (alone): a seed
        (CTranslate2's is process-wide, and a seeded replay must draw as it did alone) or a beam search."""
        if beam or decoding.seed is not None:
            return None
        return tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in kwargs.items()))

    def _run_jobs(self, jobs: list[Job]) -> None:
        """The worker's runner: one ``generate_batch`` for the jobs, holding the model's turn. One job runs as it
        always did (its static prefix cached across turns); several share a batch of their whole prompts, the static
        prompt only where they all have the same, and every job's banned sequences banned for the batch."""
        with cpu_turn(self):  # one generation at a time (embedded.turns); the seed is process-wide
            self._fit_threads()
            first: _Generation = jobs[0].payload
            kwargs = dict(first.kwargs)
            drawn = _drawn_for_crowd(jobs[0], kwargs)
            if drawn is not None:
                kwargs["num_hypotheses"] = drawn
                for job in jobs:
                    job.payload.drawn = drawn
                    if job.payload.callback is not None:
                        job.payload.callback.expected = drawn
            if len(jobs) == 1:
                self._remember(first.static)
                starts = [first.prompt[len(first.static):]]
                static, banned = first.static, first.banned
                callback = first.callback
            else:
                gens: list[_Generation] = [job.payload for job in jobs]
                static = first.static if all(g.static == first.static for g in gens) else []
                self._remember(static)
                starts = [g.prompt[len(static):] for g in gens]
                banned = list({tuple(b): b for g in gens for b in g.banned}.values())
                callback = _Router([g.callback for g in gens]) if any(g.callback for g in gens) else None
            self._seed(first.decoding)
            if static:
                kwargs["static_prompt"] = self._tokens(static)
            if banned:
                kwargs["suppress_sequences"] = banned
            if callback is not None:
                kwargs["callback"] = callback
            try:
                results = self.generator.generate_batch([self._tokens(s) for s in starts], **kwargs)
            except (RuntimeError, ValueError) as exc:
                raise BotError(f"generation failed: {first_line(exc)}") from exc
        for job, result in zip(jobs, results):
            job.result = result

    def _token_log_probs(self, prompt: Sequence[int], replies: Sequence[Sequence[int]]) -> list[list[float]]:
        """Log-probability of every reply token after the prompt (temperature 1), by CTranslate2's scorer."""
        if not replies:
            return []
        batch = [self._tokens(list(prompt) + list(reply)) for reply in replies]
        results = self.generator.score_batch(batch, max_input_length=0)
        return [list(r.log_probs[len(r.log_probs) - len(reply):]) if reply else []
                for r, reply in zip(results, replies)]

    def score(self, prompt: Sequence[int], replies: Sequence[Sequence[int]]) -> list[float]:
        """Mean log-probability of each reply's tokens after ``prompt`` (-inf for an empty reply)."""
        with cpu_turn(self):
            rows = self._token_log_probs(prompt, replies)
        return [sum(r) / len(r) if r else -math.inf for r in rows]
