"""The shipped SmolLM2 GGUF converted to CTranslate2 int8 in one pass (bots.gguf_ct2) is the two-pass conversion byte
for byte: the model, its config and vocabulary, and the tokenizer kept beside them. Both run into a folder of this
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
