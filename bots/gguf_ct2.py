"""A GGUF model to CTranslate2 int8 in one pass: the file read once, its tensors de-quantized in memory, and the model
handed to CTranslate2's own converter without a float32 copy on disk.

Why: a new machine's first reply waited for the embedded bot's conversion (40-55 s on a 2-core CPU). The two-pass way
(``embedded.gguf.ensure_converted``, then ``bots.ct2.convert`` of that folder) loaded transformers' tokenizer,
config and model from the GGUF, each parsing its metadata again (about 8 s a parse here: gguf's reader slices a
memory map once per vocabulary entry, 100,000 times), saved 540 MB of float32 weights, loaded them back, and
CTranslate2's Llama loader then called ``gc.collect()`` after each of the 30 layers (10 s in a process holding
those parses' objects).

Here the same transformers code reads the GGUF and the same CTranslate2 loader builds the model, so the result is
the two-pass one byte for byte (tests/test_bots_gguf_ct2.py compares model.bin, config.json and vocabulary.json);
only the repeated work goes: one parse of the file, over its bytes as a plain array rather than a memory map, shared
by the tokenizer, the config and the weights; no float32 folder; no garbage collection between layers (nothing is
left to collect in a 135M model's conversion). The float32 transformers folder is still made, on first use only,
where something needs transformers' weights (the studio's FQness scorer, the transformers engine).

A llama GGUF with a byte-level BPE tokenizer (the embedded SmolLM2) no longer comes here: bots.gguf_direct converts it
to the same bytes without torch or transformers (3 s instead of 9-10 s here). This way stays for the other GGUF
files (``CTranslate2Engine.from_gguf`` picks), and its ``array_reader_class`` is shared with the direct one.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

#: What a converted model folder holds besides the tokenizer snapshot (compared byte for byte by the tests)
MODEL_FILES = ("model.bin", "config.json", "vocabulary.json")


@dataclass
class LoadedGGUF:
    """What transformers makes of a GGUF file: the float32 model, its tokenizer, config and generation config."""

    model: object
    tokenizer: object
    config: object
    generation_config: object


@functools.cache
def array_reader_class() -> type:
    """gguf's reader over a plain array view of its memory map: the same bytes, without numpy's memmap bookkeeping on
    each of the metadata's 250,000 slices (5x faster here). Shared by this one-pass way and the direct one
    (bots.gguf_direct)."""
    import gguf
    import numpy as np

    class ArrayReader(gguf.GGUFReader):
        @property
        def data(self):
            return self._data

        @data.setter
        def data(self, value):
            self._data = value.view(np.ndarray) if isinstance(value, np.memmap) else value

    return ArrayReader


@contextmanager
def _one_reading(path: Path) -> Iterator[None]:
    """While open: transformers' GGUF loading parses ``path`` once (one reader, its metadata read once) over the
    file's bytes as a plain array, and builds gguf's tensor-name table once (it built it again for each of the
    model's 397 modules: 36 ms each here). transformers asks for the file by its path three times (tokenizer, config,
    weights) and imports these by name at each call, so they are replaced for this path and put back afterwards."""
    import gguf
    from transformers import modeling_gguf_pytorch_utils as hf_gguf

    ArrayReader = array_reader_class()
    plain_reader, plain_load, plain_names = gguf.GGUFReader, hf_gguf.load_gguf_checkpoint, gguf.get_tensor_name_map
    target = Path(path).resolve()

    @functools.cache
    def reader(where: str, mode: str = "r"):
        return ArrayReader(where, mode)

    def shared_reader(where, mode="r"):
        return reader(str(Path(where).resolve()), mode) if Path(where).resolve() == target else plain_reader(where, mode)

    metadata: dict = {}

    def load_once(where, return_tensors=False, model_to_load=None, torch_dtype=None):
        if return_tensors or Path(where).resolve() != target:
            return plain_load(where, return_tensors=return_tensors, model_to_load=model_to_load,
                              torch_dtype=torch_dtype)
        if "parsed" not in metadata:
            metadata["parsed"] = plain_load(where)
        return copy.deepcopy(metadata["parsed"])  # callers pop and update what they get

    gguf.GGUFReader, hf_gguf.load_gguf_checkpoint = shared_reader, load_once
    gguf.get_tensor_name_map = functools.cache(plain_names)  # read only; asked once per module of the model
    try:
        yield
    finally:
        gguf.GGUFReader, hf_gguf.load_gguf_checkpoint = plain_reader, plain_load
        gguf.get_tensor_name_map = plain_names


def load_gguf(path: str | Path) -> LoadedGGUF:
    """The GGUF's model (float32, de-quantized in memory), tokenizer and configs, from one reading of the file."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = Path(path)
    with _one_reading(path), torch.no_grad():
        tokenizer = AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
        model = AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name)
    # as the two-pass way has it before saving (embedded.gguf): the tensors are plain de-quantized floats now, only the
    # GGUF quantizer's marker is left of the file's format, and the weights are float32
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.to(torch.float32)
    model.eval()
    return LoadedGGUF(model, tokenizer, model.config, model.generation_config)


@contextmanager
def _no_collection_between_layers() -> Iterator[None]:
    """CTranslate2's transformers loaders call ``gc.collect()`` after every layer (to bound the memory of multi-GB
    conversions); for a small model there is nothing to free and each call walks every object of the process."""
    from ctranslate2.converters import transformers as ct2_transformers

    real = ct2_transformers.gc

    class NoCollect:
        @staticmethod
        def collect(*_args) -> int:
            return 0

    ct2_transformers.gc = NoCollect
    try:
        yield
    finally:
        ct2_transformers.gc = real


def convert_loaded(loaded: LoadedGGUF, output_dir: str | Path, quantization: str) -> None:
    """Write ``loaded``'s model in CTranslate2's format to ``output_dir``, through the loader CTranslate2's
    TransformersConverter picks for its config (the same spec, validation, quantization and files)."""
    import torch
    from ctranslate2.converters.converter import Converter
    from ctranslate2.converters.transformers import _MODEL_LOADERS

    loader = _MODEL_LOADERS.get(type(loaded.config).__name__)
    if loader is None:
        raise ValueError(f"CTranslate2 has no converter for {type(loaded.config).__name__}")

    class InMemory(Converter):
        def _load(self):
            with torch.no_grad(), _no_collection_between_layers():
                return loader(loaded.model, loaded.tokenizer)

    InMemory().convert(str(output_dir), quantization=quantization, force=True)
