"""The embedded detector's shipped int8 ONNX export (models/detector/onnx-int8): built from these weights, scoring
as a fresh export does, and never used once it is stale (guard.models.onnx_runtime.shipped_int8_model)."""

from __future__ import annotations

import shutil

import numpy as np

from embedded import detector_path
from guard.models.onnx_runtime import SHIPPED, OnnxNLIScorer, cached_int8_model, checkpoint_digest

PAIRS = [("I have two dogs.", "I don't have any pets."), ("I work as a nurse.", "Yes, I am a teacher."),
         ("I love hiking on weekends.", "My favourite food is pizza."), ("I live in Ohio.", "I live in Ohio.")]


def test_the_shipped_export_was_built_from_the_weights_that_ship(tmp_path, monkeypatch):
    """Stale after a retraining or a recipe change: ``python -m guard.training ship-onnx models/detector``."""
    monkeypatch.setenv("GUARD_CACHE_DIR", str(tmp_path / "cache"))
    folder = detector_path()
    assert (folder / SHIPPED / "digest.txt").read_text().strip() == checkpoint_digest(folder)
    assert cached_int8_model(folder) == folder / SHIPPED
    assert not (tmp_path / "cache" / "onnx").exists()  # nothing exported, nothing written to the cache


def test_the_shipped_export_scores_as_a_fresh_export_and_a_stale_one_is_exported_afresh(tmp_path, monkeypatch):
    monkeypatch.setenv("GUARD_CACHE_DIR", str(tmp_path / "cache"))
    copy = tmp_path / "detector"
    shutil.copytree(detector_path(), copy)
    shipped = OnnxNLIScorer.from_checkpoint(copy).predict_proba(PAIRS)

    (copy / SHIPPED / "digest.txt").write_text("0" * 16 + "\n")  # as if the weights had changed since
    fresh = OnnxNLIScorer.from_checkpoint(copy)
    assert (tmp_path / "cache" / "onnx" / f"detector-{checkpoint_digest(copy)}" / "model.int8.onnx").is_file()
    assert np.abs(fresh.predict_proba(PAIRS) - shipped).max() < 1e-5
    assert shipped[0].argmax() == fresh.layout.contradiction  # two dogs / no pets: the detector's own verdict
