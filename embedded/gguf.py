"""Load a GGUF causal LM through transformers, caching the de-quantized weights.

transformers de-quantizes GGUF tensors on every load (about 20-40 s for SmolLM2-135M on this
machine). The first load converts once and ``save_pretrained``s the result into
``embedded.cache_dir()/gguf-hf/...``; later loads read that safetensors folder in under a second.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path

from embedded import cache_dir
from embedded.once import LoadedOnce, build_once

logger = logging.getLogger(__name__)

_DTYPES = ("float32", "bfloat16")


def converted_dir(gguf_path: Path, dtype: str = "float32") -> Path:
    """Cache folder for one GGUF file: keyed by name, size and mtime (to the nanosecond: in whole seconds a file of the
    same size rewritten within the second it was converted in kept the stale conversion, as ``bots.ct2``'s key did)
    so a new file converts again."""
    stat = gguf_path.stat()
    key = hashlib.sha1(f"{gguf_path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}".encode()).hexdigest()[:12]
    return cache_dir() / "gguf-hf" / f"{gguf_path.stem}-{key}-{dtype}"


def _convert(gguf_path: Path, into: Path, dtype: str) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(gguf_path.parent, gguf_file=gguf_path.name)
    model = AutoModelForCausalLM.from_pretrained(gguf_path.parent, gguf_file=gguf_path.name)
    # The tensors are plain de-quantized floats now; only the GGUF quantizer marker blocks saving.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.to(getattr(torch, dtype))
    model.save_pretrained(into)
    tokenizer.save_pretrained(into)


def ensure_converted(gguf_path: str | Path, dtype: str = "float32") -> Path:
    """The cached transformers folder of a GGUF file (de-quantized on first use); the CTranslate2 engine
    converts from the float32 one."""
    if dtype not in _DTYPES:
        raise ValueError(f"dtype must be one of {_DTYPES}, not {dtype!r}")
    gguf_path = Path(gguf_path)
    if not gguf_path.is_file():
        raise FileNotFoundError(f"GGUF file not found: {gguf_path}")
    target = converted_dir(gguf_path, dtype)

    def build(staging: Path) -> None:
        logger.info("converting %s to %s (first load only)", gguf_path.name, target)
        _convert(gguf_path, staging, dtype)

    return build_once(target, build, lambda built: (built / "config.json").is_file(),
                      fix=f"check that {gguf_path} is a whole GGUF file (reinstall its package)")


#: (model, tokenizer) per converted GGUF file and dtype; four at most, as a run that tries several bots and dtypes
#: lets the oldest go
_MODELS = LoadedOnce(limit=4)


def load_gguf_causal_lm(gguf_path: str | Path, dtype: str = "float32"):
    """Return ``(model, tokenizer)`` for a GGUF causal LM, in eval mode, converting once per file.

    ``dtype`` is "float32", "bfloat16" (half the memory; faster on CPUs with AVX-512 BF16, see docs/bots.md)
    or "auto" (bfloat16 only where the CPU has it natively).
    The result is loaded once per process (``embedded.once.LoadedOnce``), so callers share one copy of the weights.
    """
    if dtype == "auto":
        from embedded import cpu_dtype

        dtype = cpu_dtype()
    if dtype not in _DTYPES:
        raise ValueError(f"dtype must be 'auto' or one of {_DTYPES}, not {dtype!r}")
    gguf_path = Path(gguf_path)

    def load():
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        target = ensure_converted(gguf_path, dtype)
        tokenizer = AutoTokenizer.from_pretrained(target)
        model = AutoModelForCausalLM.from_pretrained(target, dtype=getattr(torch, dtype))
        model.eval()
        return model, tokenizer

    return _MODELS.get(("causal LM from GGUF", str(gguf_path.resolve()), dtype), load)
