"""The int8 ONNX runtime under the NLI scorer (guard.models.onnx_runtime): same labels, close probabilities, one export."""

from __future__ import annotations

import numpy as np
import pytest

from guard.models import onnx_runtime
from guard.models.loading import ModelLoadError, choose_runtime, load_scorer
from guard.models.nli import NLIScorer
from guard.models.onnx_runtime import OnnxNLIScorer, OnnxRuntimeError, cached_int8_model

PAIRS = [("I have two dogs.", "I have no pets."), ("The sky is blue.", "I like tea."),
         ("She plays the violin every evening.", "She never touches an instrument."), ("a", "b")]


def test_int8_scorer_agrees_with_torch_and_reads_labels_by_name(tiny_nli_model_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("GUARD_CACHE_DIR", str(tmp_path / "cache"))
    torch_scorer = NLIScorer.from_pretrained(tiny_nli_model_dir)
    int8 = OnnxNLIScorer.from_checkpoint(tiny_nli_model_dir, batch_size=3)  # two batches: 3 + 1
    assert int8.layout == torch_scorer.layout and int8.runtime == "onnx-int8"
    expected, got = torch_scorer.predict_proba(PAIRS), int8.predict_proba(PAIRS)
    assert got.shape == expected.shape and np.allclose(got.sum(axis=1), 1.0, atol=1e-5)
    assert np.abs(got - expected).max() < 0.05  # int8 weights: close, not equal
    assert int8.predict_proba([]).shape == (0, torch_scorer.layout.num_labels)


def test_export_runs_once_per_checkpoint_and_a_failed_export_leaves_no_cache(tiny_nli_model_dir, tmp_path,
                                                                              monkeypatch):
    monkeypatch.setenv("GUARD_CACHE_DIR", str(tmp_path / "cache"))
    first = cached_int8_model(tiny_nli_model_dir)
    stamp = (first / "model.int8.onnx").stat().st_mtime_ns
    assert cached_int8_model(tiny_nli_model_dir) == first
    assert (first / "model.int8.onnx").stat().st_mtime_ns == stamp

    monkeypatch.setenv("GUARD_CACHE_DIR", str(tmp_path / "other-cache"))

    def broken(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr("onnxruntime.quantization.quantize_dynamic", broken)
    with pytest.raises(OnnxRuntimeError, match="runtime='torch'"):
        cached_int8_model(tiny_nli_model_dir)
    # no half-written folder left behind (the lock file the exports take turns on stays)
    assert [p.name for p in (tmp_path / "other-cache" / "onnx").iterdir()] == [f"{first.name}.lock"]


def test_two_processes_exporting_at_once_take_turns(tiny_nli_model_dir, tmp_path):
    """Two processes that need the same export at the same time (two scorers started in parallel) both get a whole
    model: the second waits for the first's export instead of writing the same temporary folder."""
    import subprocess
    import sys

    code = ("import sys; from guard.models.onnx_runtime import OnnxNLIScorer; "
            "s = OnnxNLIScorer.from_checkpoint(sys.argv[1]); print(s.predict_proba([('a b', 'c d')]).shape)")
    env = {**__import__("os").environ, "GUARD_CACHE_DIR": str(tmp_path / "cache")}
    procs = [subprocess.Popen([sys.executable, "-c", code, str(tiny_nli_model_dir)], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outputs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err[-500:] for _, err in outputs]
    assert all(out.strip().endswith("(1, 3)") for out, _ in outputs)


def test_runtime_choice(tiny_nli_model_dir, monkeypatch):
    monkeypatch.delenv("GUARD_RUNTIME", raising=False)
    assert choose_runtime("auto", str(tiny_nli_model_dir)) == "onnx-int8"
    assert choose_runtime("auto", "cross-encoder/nli-deberta-v3-base") == "torch"  # hub names: torch
    monkeypatch.setenv("GUARD_RUNTIME", "torch")
    assert choose_runtime("auto", str(tiny_nli_model_dir)) == "torch"
    assert isinstance(load_scorer(str(tiny_nli_model_dir)), NLIScorer)
    with pytest.raises(ModelLoadError, match="runtime must be one of"):
        choose_runtime("tensorrt", str(tiny_nli_model_dir))
    assert onnx_runtime.RUNTIMES == ("torch", "onnx-int8")


def test_a_hub_name_is_refused_by_the_int8_runtime_with_what_to_do(tmp_path):
    with pytest.raises(OnnxRuntimeError, match="runtime='torch'"):
        OnnxNLIScorer.from_checkpoint(tmp_path / "not-a-checkpoint")
