"""guard.models.loading, guard.models.registry and guard.config: scorer/embedder loading, caching, a checkpoint's settings read
from its guard_config.json, and clear errors."""

from __future__ import annotations

import json
import shutil

import pytest

from embedded import DETECTOR_DIR, MissingAssetError
from guard.config import FALLBACK_THRESHOLD, ConfigError, JudgeSettings
from guard.judge.pipeline import load_guard
from guard.models.loading import ModelLoadError, load_embedder, load_scorer
from guard.models.registry import read_config


def test_load_scorer_from_a_local_folder_is_cached(tiny_nli_model_dir):
    scorer = load_scorer(str(tiny_nli_model_dir))
    assert scorer is load_scorer(str(tiny_nli_model_dir))
    assert scorer.layout.contradiction == 2 and scorer.layout.entailment == 0
    probs = scorer.predict_proba([("I have a dog.", "I have no pets.")])
    assert probs.shape == (1, 3) and probs.sum() == pytest.approx(1.0, abs=1e-5)


def test_a_missing_checkpoint_is_a_one_line_error(tmp_path):
    with pytest.raises(ModelLoadError, match="cannot load NLI checkpoint") as info:
        load_scorer(str(tmp_path / "nothing-here"))
    assert "\n" not in str(info.value)
    with pytest.raises(ModelLoadError, match="empty model name"):
        load_scorer("  ")


def test_the_threshold_is_read_from_guard_config(tiny_nli_model_dir, tmp_path):
    folder = tmp_path / "ckpt"
    shutil.copytree(tiny_nli_model_dir, folder)
    assert read_config(str(folder)).threshold == FALLBACK_THRESHOLD == 0.5
    (folder / "guard_config.json").write_text(json.dumps({"threshold": 0.73}))
    assert read_config(str(folder)).threshold == pytest.approx(0.73)
    (folder / "guard_config.json").write_text(json.dumps({"threshold": 1.5}))
    with pytest.raises(ConfigError, match="strictly between"):
        read_config(str(folder))
    (folder / "guard_config.json").write_text(json.dumps({"threshold": "high"}))
    with pytest.raises(ConfigError, match="'threshold' must be a number"):
        read_config(str(folder))
    (folder / "guard_config.json").write_text("[0.5]")
    with pytest.raises(ConfigError, match="must hold a JSON object"):
        read_config(str(folder))
    (folder / "guard_config.json").write_text("{}")
    assert read_config(str(folder)).threshold == 0.5
    assert read_config("some-org/some-hub-model").threshold == 0.5


def test_guard_config_sets_pairing_and_max_length(tiny_nli_model_dir, tmp_path):
    folder = tmp_path / "ckpt"
    shutil.copytree(tiny_nli_model_dir, folder)
    (folder / "guard_config.json").write_text(json.dumps({"threshold": 0.6, "pairing": "utterance", "max_length": 96}))
    assert read_config(str(folder)).pairing == "utterance"
    guard = load_guard(str(folder), prefilter=False)
    assert guard.scorer.max_length == 96
    settings = guard.settings()
    assert (settings.threshold, settings.pairing) == (0.6, "utterance")
    assert guard.settings(threshold=0.4, pairing="sentence").threshold == 0.4
    assert read_config(str(tiny_nli_model_dir)).pairing == "sentence"


def test_threshold_follows_the_pairing_it_was_calibrated_for(tiny_nli_model_dir, tmp_path):
    folder = tmp_path / "ckpt"
    shutil.copytree(tiny_nli_model_dir, folder)
    (folder / "guard_config.json").write_text(json.dumps({
        "threshold": 0.86, "pairing": "sentence",
        "calibration": {"sentence": {"threshold": 0.86}, "utterance": {"threshold": 0.17}}}))
    config = read_config(str(folder))
    assert JudgeSettings.resolve(config, pairing="sentence").threshold == pytest.approx(0.86)
    assert JudgeSettings.resolve(config, pairing="utterance").threshold == pytest.approx(0.17)
    guard = load_guard(str(folder), prefilter=False)
    assert guard.settings(pairing="utterance").threshold == pytest.approx(0.17)
    assert guard.settings().threshold == pytest.approx(0.86)


def test_embedded_threshold_and_scorer_follow_models_detector():
    config = DETECTOR_DIR / "guard_config.json"
    if config.is_file():
        assert read_config("embedded").threshold == pytest.approx(json.loads(config.read_text())["threshold"])
    else:
        assert read_config("embedded").threshold == 0.5
    if not (DETECTOR_DIR / "config.json").exists():
        with pytest.raises(MissingAssetError, match="models/detector"):
            load_scorer("embedded")
    else:
        assert load_scorer("embedded").layout.num_labels in (2, 3)


def test_load_embedder_is_the_offline_minilm_and_cached():
    embedder = load_embedder()
    assert embedder is load_embedder()
    vectors = embedder.encode(["I have two dogs.", "I own a pair of dogs.", "The stock market fell."],
                              normalize_embeddings=True)
    assert vectors.shape == (3, 384)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]
