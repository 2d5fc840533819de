"""Load the guard's models once: the NLI scorer, its decision threshold, the sentence embedder.

"embedded" always means the project's own assets (models/detector, the packaged MiniLM);
nothing here reaches a model hub unless the caller names a hub checkpoint explicitly.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

from embedded import DETECTOR_DIR, MissingAssetError, detector_path, embedder_path
from guard.nli import LabelLayoutError, NLIScorer
from guard.vocabulary import PAIRINGS, Pairing

#: DECODE's default decision threshold (Nie et al. 2021, "Thresholding").
FALLBACK_THRESHOLD = 0.5
#: Written next to a checkpoint by the detector training run: {"threshold": <float>, ...}.
GUARD_CONFIG_NAME = "guard_config.json"


class ModelLoadError(RuntimeError):
    """A model could not be loaded; the message says what to pass instead."""


def _resolve(name_or_path: str | Path) -> str:
    name = str(name_or_path).strip()
    if not name:
        raise ModelLoadError("empty model name: pass 'embedded', a local checkpoint folder or a hub name")
    if name == "embedded":
        return str(detector_path())  # raises MissingAssetError with the fix in its message
    return name


def quantize_scorer(scorer: NLIScorer) -> NLIScorer:
    """int8 dynamic quantization of the Linear layers: about 2x faster on CPU (measure the agreement)."""
    import warnings

    import torch

    with warnings.catch_warnings():  # torch 2.13 points eager quantization to torchao; it still works
        warnings.simplefilter("ignore")
        scorer.model = torch.ao.quantization.quantize_dynamic(scorer.model, {torch.nn.Linear}, dtype=torch.qint8)
    return scorer


@functools.lru_cache(maxsize=4)
def _load_scorer(resolved: str, quantize: bool, dtype: str) -> NLIScorer:
    max_length = guard_config(resolved).get("max_length", 128)  # the length the checkpoint was trained at
    try:
        scorer = NLIScorer.from_pretrained(resolved, max_length=int(max_length),
                                           dtype="float32" if quantize else dtype)
    except LabelLayoutError:
        raise
    except (OSError, ValueError) as exc:
        where = "local folder" if Path(resolved).exists() else "hub name (needs it in the local HF cache: offline)"
        raise ModelLoadError(
            f"cannot load NLI checkpoint {resolved!r} as a {where}: {str(exc).splitlines()[0]}; "
            "pass 'embedded' or a folder holding config.json, the weights and a tokenizer"
        ) from exc
    return quantize_scorer(scorer) if quantize else scorer


def load_scorer(name_or_path: str | Path = "embedded", quantize: bool = False, dtype: str = "auto") -> NLIScorer:
    """The NLI scorer for "embedded" (models/detector), a local folder or a cached hub name; loaded once.

    ``quantize=True`` gives an int8 CPU copy (faster, slightly different probabilities).
    ``dtype="auto"`` is bfloat16 on CPUs that compute it natively, else float32 (``embedded.cpu_dtype``).
    """
    if dtype == "auto":
        from embedded import cpu_dtype

        dtype = cpu_dtype()
    return _load_scorer(_resolve(name_or_path), bool(quantize), dtype)


def _config_file(name_or_path: str | Path) -> Path:
    name = str(name_or_path).strip()
    return (DETECTOR_DIR if name == "embedded" else Path(name)) / GUARD_CONFIG_NAME


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


def default_intra_threshold(name_or_path: str | Path = "embedded", threshold: float | None = None) -> float | None:
    """The checkpoint's threshold for the intra-utterance clause check (``intra_threshold`` in its
    guard_config.json), never below the history ``threshold``; None when the config has none.

    Clause pairs inside one reply are mostly elaborations ("I hate tea, I never drink it") that an NLI
    model trained on negations calls contradictory, so they get their own, stricter threshold.
    """
    config = _config_file(name_or_path)
    raw = guard_config(name_or_path).get("intra_threshold")
    if raw is None:
        return None
    try:
        value = float(raw)
    except (TypeError, ValueError) as exc:
        raise ModelLoadError(f"{config}: 'intra_threshold' must be a number: {exc}") from exc
    if not 0.0 < value < 1.0:
        raise ModelLoadError(f"{config}: intra_threshold {value} must lie strictly between 0 and 1")
    return max(value, threshold) if threshold is not None else value


@functools.lru_cache(maxsize=1)
def load_embedder():
    """all-MiniLM-L6-v2 from the installed package, offline; used to prefilter long histories."""
    from sentence_transformers import SentenceTransformer

    try:
        path = embedder_path()
    except MissingAssetError:
        raise
    return SentenceTransformer(str(path), device="cpu", local_files_only=True)
