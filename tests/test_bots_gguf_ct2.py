"""The shipped SmolLM2 GGUF converted to CTranslate2 int8 directly (bots.gguf_direct: no torch, no transformers)
is the two-pass conversion byte for byte, and so is the transformers one-pass way (bots.gguf_ct2) kept for other
files: the model, its config and vocabulary, and the tokenizer kept beside them. Each runs into a folder of this
test's own (the float32 folder of the two-pass way is taken from the user's cache when there, as the app made it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bots import ct2
from bots.gguf_ct2 import MODEL_FILES
from bots.tokenizer import META_FILE, TOKENIZER_FILE


@pytest.fixture(scope="module")
def smollm2() -> Path:
    import embedded

    try:
        return embedded.smollm2_gguf_path()
    except embedded.MissingAssetError as exc:
        pytest.skip(str(exc))


def test_one_pass_conversion_is_the_two_pass_one_byte_for_byte(smollm2, tmp_path, monkeypatch):
    import gguf
    from transformers import AutoConfig, AutoTokenizer
    from transformers import modeling_gguf_pytorch_utils as hf_gguf

    from embedded.gguf import ensure_converted

    readers = (gguf.GGUFReader, hf_gguf.load_gguf_checkpoint, gguf.get_tensor_name_map)
    float32 = ensure_converted(smollm2, "float32")  # the two-pass way's first pass (cached by the app's first use)
    monkeypatch.setenv("GUARD_CACHE_DIR", str(tmp_path))
    engine = ct2.CTranslate2Engine.from_gguf(smollm2, "embedded")
    assert (gguf.GGUFReader, hf_gguf.load_gguf_checkpoint, gguf.get_tensor_name_map) == readers  # put back
    assert engine.model_dir == ct2.converted_dir(smollm2, "embedded") and ct2.is_complete(engine.model_dir)
    two_pass = ct2.CTranslate2Engine.from_source(float32, AutoTokenizer.from_pretrained(float32),
                                                 AutoConfig.from_pretrained(float32), "embedded")
    assert two_pass.model_dir != engine.model_dir
    for name in (*MODEL_FILES, TOKENIZER_FILE, META_FILE):
        assert (engine.model_dir / name).read_bytes() == (two_pass.model_dir / name).read_bytes(), name
    # a later load reads the cache alone: no conversion, the light tokenizer (no transformers)
    monkeypatch.setattr(ct2, "convert", lambda *args, **kwargs: pytest.fail("converted again"))
    again = ct2.CTranslate2Engine.from_gguf(smollm2, "embedded")
    assert again.model_dir == engine.model_dir and getattr(again.tokenizer, "is_light", False)


_DIRECT_ONLY = """
import sys
from pathlib import Path

import embedded
from bots import ct2

engine = ct2.CTranslate2Engine.from_gguf(embedded.smollm2_gguf_path(), "embedded")
assert ct2.is_complete(engine.model_dir) and getattr(engine.tokenizer, "is_light", False)
print(sorted(name for name in ("torch", "transformers") if name in sys.modules))
"""


def test_direct_conversion_imports_neither_torch_nor_transformers(smollm2, tmp_path):
    """A new machine's first conversion (an empty cache, a process of its own, as ``python -m bots prepare``)."""
    import os
    import subprocess
    import sys

    repo = Path(__file__).resolve().parent.parent
    env = {**os.environ, "GUARD_CACHE_DIR": str(tmp_path), "PYTHONPATH": str(repo)}
    done = subprocess.run([sys.executable, "-c", _DIRECT_ONLY], cwd=repo, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
    assert list((tmp_path / "ct2").glob("embedded-*-int8/model.bin"))


def test_files_the_direct_way_does_not_handle_go_through_transformers(smollm2, tmp_path, monkeypatch):
    """The transformers one-pass way is kept for what the direct conversion does not read (forced here on the
    SmolLM2 file), and gives the direct conversion's bytes."""
    from bots import gguf_direct

    monkeypatch.setenv("GUARD_CACHE_DIR", str(tmp_path / "direct"))
    direct = ct2.CTranslate2Engine.from_gguf(smollm2, "embedded")
    monkeypatch.setenv("GUARD_CACHE_DIR", str(tmp_path / "transformers"))
    monkeypatch.setattr(gguf_direct, "unsupported", lambda meta: "forced by the test")
    monkeypatch.setattr(gguf_direct, "convert", lambda *args: pytest.fail("converted directly"))
    fallback = ct2.CTranslate2Engine.from_gguf(smollm2, "embedded")
    assert fallback.model_dir != direct.model_dir and ct2.is_complete(fallback.model_dir)
    for name in (*MODEL_FILES, TOKENIZER_FILE, META_FILE):
        assert (fallback.model_dir / name).read_bytes() == (direct.model_dir / name).read_bytes(), name


def test_what_the_direct_way_leaves_to_transformers(smollm2):
    """``unsupported`` names why a file is not converted directly: the SmolLM2 file is; another architecture, a
    sentencepiece vocabulary, a pre-tokenizer transformers splits by a regex, or extra tensors are not."""
    import dataclasses

    from bots import gguf_direct

    _, meta = gguf_direct.read(smollm2)
    assert gguf_direct.unsupported(meta) is None
    changes = [{"architecture": "gemma3"}, {"tokenizer_model": "llama"}, {"pre_tokenizer": "llama-bpe"},
               {"tensor_names": [*meta.tensor_names, "rope_freqs.weight"]}, {"name": "mistral 7b"},
               {"special_ids": {**meta.special_ids, "bos_token": 100}}]
    for change in changes:
        assert gguf_direct.unsupported(dataclasses.replace(meta, **change)), change


def test_a_gguf_rewritten_within_the_second_gets_a_new_cache_folder(tmp_path, monkeypatch):
    """The two-pass way's cache key reads the file's mtime to the nanosecond: the same name and size written again
    within one second is another file (whole seconds kept the stale conversion)."""
    import os

    from embedded import gguf as embedded_gguf

    monkeypatch.setenv("GUARD_CACHE_DIR", str(tmp_path / "cache"))
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF one")
    os.utime(model, ns=(1_700_000_000_100_000_000, 1_700_000_000_100_000_000))
    first = embedded_gguf.converted_dir(model)
    model.write_bytes(b"GGUF two")  # the same size
    os.utime(model, ns=(1_700_000_000_900_000_000, 1_700_000_000_900_000_000))  # the same whole second
    assert embedded_gguf.converted_dir(model) != first
    assert embedded_gguf.converted_dir(model).parent == first.parent  # one cache folder for GGUF conversions
