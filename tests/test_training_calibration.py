"""Calibration scores through the guard's own detector; export writes the guard_config.json the guard reads."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from fake_nli import ScriptedScorer

from guard.config import JudgeSettings
from guard.models.registry import read_config
from guard.training.calibration import SyntheticDialogue, calibrate
from guard.training.run import export

SHIPPED_CONFIG = Path(__file__).resolve().parent.parent / "models" / "detector" / "guard_config.json"


def contra(p: float) -> tuple[float, float, float]:
    """(entailment, neutral, contradiction) probabilities with P(contradiction) = p."""
    return ((1 - p) / 2, (1 - p) / 2, p)


# Two contradictions and two consistent dialogues. The first contradiction sits in one sentence of each turn:
# sentence pairs see it (0.9), the whole-utterance pair barely does (0.2).
DIALOGUES = [
    SyntheticDialogue(["I have a dog. It is brown.", "nice", "I like cats. I have no dog."], ["A", "B", "A"],
                      True, "test"),
    SyntheticDialogue(["I live in Ohio.", "cool", "Ohio is flat."], ["A", "B", "A"], False, "test"),
    SyntheticDialogue(["I am a nurse.", "ok", "I am a teacher."], ["A", "B", "A"], True, "test"),
    SyntheticDialogue(["I love tea.", "I love tea too.", "Tea is great."], ["A", "B", "A"], False, "test"),
]
TABLE = {
    ("I have a dog.", "I have no dog."): contra(0.9),
    ("I have a dog. It is brown.", "I like cats. I have no dog."): contra(0.2),
    ("I live in Ohio.", "Ohio is flat."): contra(0.3),
    ("I am a nurse.", "I am a teacher."): contra(0.6),
    ("I love tea too.", "Tea is great."): contra(0.95),  # the other speaker's turn: never paired
}


def test_calibration_scores_like_the_guard():
    result = calibrate(ScriptedScorer(TABLE), DIALOGUES)
    assert list(result) == ["sentence", "utterance", "chosen"]
    # sentence pairs: scores 0.9, 0.3, 0.6, 0.05 -> every threshold in (0.3, 0.6] separates them; 0.5 is nearest 0.5
    assert result["sentence"] == {"threshold": 0.5, "accuracy": 1.0, "auc": 1.0, "accuracy_at_0.5": 1.0}
    # whole utterances: 0.2, 0.3, 0.6, 0.05 -> the contradiction hidden in a sentence is missed
    assert result["utterance"] == pytest.approx({"threshold": 0.5, "accuracy": 0.75, "auc": 0.75,
                                                 "accuracy_at_0.5": 0.75})
    assert result["chosen"] == "sentence"


def test_export_writes_the_config_keys_the_guard_reads(tmp_path, tiny_nli_model_dir):
    calibration = calibrate(ScriptedScorer(TABLE), DIALOGUES)
    calibration["intra"] = {"threshold": 0.97, "messages": 10}
    run = tmp_path / "run"
    shutil.copytree(tiny_nli_model_dir, run / "checkpoint")
    (run / "metrics.json").write_text(json.dumps({"calibration": calibration}))
    (run / "args.json").write_text(json.dumps({"max_length": 64}))
    (run / "data_counts.json").write_text("{}")
    export(run, tmp_path / "exported")
    config = json.loads((tmp_path / "exported" / "guard_config.json").read_text())
    read_by_the_guard = {"threshold", "pairing", "label_names", "max_length", "calibration", "intra_threshold"}
    assert read_by_the_guard <= set(config)
    assert read_by_the_guard <= set(json.loads(SHIPPED_CONFIG.read_text()))  # the shipped checkpoint has them too
    exported = str(tmp_path / "exported")
    written = read_config(exported)
    assert written.threshold == 0.5 and written.pairing == "sentence"
    assert JudgeSettings.resolve(written, threshold=0.5).intra_threshold == 0.97 and config["max_length"] == 64
