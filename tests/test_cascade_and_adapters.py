"""The cascade scorer and LoRA adapters merged onto their base, on tiny local BERTs (no hub, no real weights)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
from judging import guard_over, verdicts_of

from embedded import MissingAssetError
from guard.models.loading import ModelLoadError, load_scorer, merged_adapter
from guard.models.nli import CascadeScorer, LabelLayoutError, NLIScorer
from guard.records import Turn
from harness.tiny_nli import build_tiny_nli_model

PAIRS = [("i have two dogs", "i have no dogs"), ("i live in ohio", "i love my cat"),
         ("i am a teacher", "i work as a nurse"), ("i like hiking", "i never hike"),
         ("i eat meat", "i am vegetarian"), ("my kids are two and three", "i have no children")]


@pytest.fixture(scope="module")
def fast_and_strong(tmp_path_factory):
    fast = NLIScorer.from_pretrained(build_tiny_nli_model(tmp_path_factory.mktemp("fast"), seed=3))
    strong = NLIScorer.from_pretrained(build_tiny_nli_model(
        tmp_path_factory.mktemp("strong"), id2label={0: "contradiction", 1: "neutral", 2: "entailment"}, seed=4))
    return fast, strong


def test_cascade_rescores_only_pairs_over_the_escalation_point(fast_and_strong):
    fast, strong = fast_and_strong
    fast_probs = fast.predict_proba(PAIRS)
    contra = fast_probs[:, fast.layout.contradiction]
    escalate_at = float(np.median(contra))
    cascade = CascadeScorer(fast, strong, escalate_at=escalate_at, max_escalated=100)
    mixed = cascade.predict_proba(PAIRS)
    strong_probs = strong.predict_proba(PAIRS)
    for i, score in enumerate(contra):
        if score >= escalate_at:  # the strong model's classes, in the fast model's column order
            assert mixed[i, fast.layout.contradiction] == pytest.approx(strong_probs[i, strong.layout.contradiction])
            assert mixed[i, fast.layout.entailment] == pytest.approx(strong_probs[i, strong.layout.entailment])
            assert mixed[i, fast.layout.neutral] == pytest.approx(strong_probs[i, strong.layout.neutral])
        else:
            assert np.allclose(mixed[i], fast_probs[i])
    assert cascade.last_escalated == int((contra >= escalate_at).sum())


def test_cascade_caps_the_strong_models_pairs_at_the_most_suspicious(fast_and_strong):
    fast, strong = fast_and_strong
    contra = fast.predict_proba(PAIRS)[:, fast.layout.contradiction]
    cascade = CascadeScorer(fast, strong, escalate_at=0.0, max_escalated=2)
    mixed = cascade.predict_proba(PAIRS)
    changed = {i for i in range(len(PAIRS)) if not np.allclose(mixed[i], fast.predict_proba([PAIRS[i]])[0])}
    assert cascade.last_escalated == 2
    assert changed <= set(np.argsort(-contra)[:2].tolist())


def test_cascade_refuses_scorers_with_different_classes(fast_and_strong, tiny_nli2_model_dir):
    fast, _ = fast_and_strong
    with pytest.raises(LabelLayoutError, match="same classes"):
        CascadeScorer(fast, NLIScorer.from_pretrained(tiny_nli2_model_dir))
    with pytest.raises(ValueError, match="max_escalated"):
        CascadeScorer(fast, fast, max_escalated=0)


def test_detector_on_a_cascade_keeps_evidence_and_categories(fast_and_strong):
    fast, strong = fast_and_strong
    guard, settings = guard_over(CascadeScorer(fast, strong, escalate_at=0.0), threshold=0.01, pairing="utterance",
                                 checks=True)
    history = [Turn(0, "bot", "i have two dogs"), Turn(1, "user", "nice"), Turn(2, "bot", "i live in ohio")]
    (verdict,) = verdicts_of(guard, settings, history, ["i have no dogs and i love my cat"])
    assert verdict.contradiction and verdict.category in ("intra", "role", "history")
    assert {p.turn_id for p in verdict.pair_scores} == {0, 2}


def _tiny_adapter(tmp_path, base_dir):
    from peft import LoraConfig, TaskType, get_peft_model
    from transformers import AutoModelForSequenceClassification

    model = AutoModelForSequenceClassification.from_pretrained(base_dir)
    model = get_peft_model(model, LoraConfig(task_type=TaskType.SEQ_CLS, r=4, lora_alpha=8,
                                             target_modules=["query", "value"]))
    torch.manual_seed(0)
    with torch.no_grad():
        for name, param in model.named_parameters():
            if "lora_B" in name or "classifier" in name:
                param.normal_(0, 0.5)  # a trained-looking adapter (LoRA B starts at zero)
    folder = tmp_path / "adapter"
    model.save_pretrained(folder)
    (folder / "training_run.json").write_text(json.dumps({"id2label": {"0": "contradiction", "1": "entailment",
                                                                        "2": "neutral"}}))
    return model.eval(), folder


def test_adapter_is_merged_once_and_scores_like_the_peft_model(tmp_path, monkeypatch):
    monkeypatch.setenv("GUARD_CACHE_DIR", str(tmp_path / "cache"))
    base_dir = build_tiny_nli_model(tmp_path / "base", id2label={0: "contradiction", 1: "entailment", 2: "neutral"})
    peft_model, folder = _tiny_adapter(tmp_path, base_dir)
    scorer = load_scorer(folder, dtype="float32", runtime="torch")  # exact arithmetic: the merge itself
    with torch.inference_mode():
        enc = scorer.tokenizer([p for p, _ in PAIRS], [h for _, h in PAIRS], padding=True, return_tensors="pt")
        expected = torch.softmax(peft_model(**enc).logits, dim=-1).numpy()
    assert np.allclose(scorer.predict_proba(PAIRS), expected, atol=1e-5)
    merged = merged_adapter(folder)
    stamp = (merged / "config.json").stat().st_mtime_ns
    assert merged_adapter(folder) == merged and (merged / "config.json").stat().st_mtime_ns == stamp


def test_adapter_naming_a_hub_base_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("GUARD_CACHE_DIR", str(tmp_path / "cache"))
    base_dir = build_tiny_nli_model(tmp_path / "base", id2label={0: "contradiction", 1: "entailment", 2: "neutral"})
    _, folder = _tiny_adapter(tmp_path, base_dir)
    config = json.loads((folder / "adapter_config.json").read_text())
    config["base_model_name_or_path"] = "microsoft/mpnet-base"
    (folder / "adapter_config.json").write_text(json.dumps(config))
    with pytest.raises(ModelLoadError, match="never load a hub base"):
        merged_adapter(folder)


def test_missing_mpnet_adapter_says_how_to_get_it(monkeypatch, tmp_path):
    from dataclasses import replace

    from guard.models import registry

    moved = replace(registry.entry("embedded-mpnet"), folder=tmp_path / "absent")
    monkeypatch.setitem(registry._ENTRIES, "embedded-mpnet", moved)
    with pytest.raises(MissingAssetError, match="guard.training.finetune"):
        load_scorer("embedded-mpnet")


def test_two_way_rest_loss_is_minus_log_of_not_contradiction():
    from guard.training.finetune import LABEL2ID, pair_loss

    logits = torch.tensor([[2.0, 0.5, -1.0], [0.1, 0.2, 0.3]])
    probs = torch.softmax(logits, dim=-1)
    rest = pair_loss(logits[:1], torch.tensor([-1]))
    assert rest.item() == pytest.approx(-math.log(1 - probs[0, LABEL2ID["contradiction"]].item()), rel=1e-5)
    three_way = pair_loss(logits[1:], torch.tensor([LABEL2ID["neutral"]]))
    assert three_way.item() == pytest.approx(-math.log(probs[1, LABEL2ID["neutral"]].item()), rel=1e-5)


def test_a_partial_checkpoint_is_put_onto_its_base_once_and_refused_on_another_base(tmp_path, monkeypatch):
    """--freeze-layers runs ship only the top blocks and the head; the merge must give the trained model exactly."""
    from safetensors.torch import save_file
    from transformers import AutoModelForSequenceClassification

    from guard.models.loading import PARTIAL_CONFIG_NAME, PARTIAL_WEIGHTS_NAME, merged_model

    monkeypatch.setenv("GUARD_CACHE_DIR", str(tmp_path / "cache"))
    id2label = {0: "contradiction", 1: "entailment", 2: "neutral"}
    base_dir = build_tiny_nli_model(tmp_path / "base", id2label=id2label)
    trained = AutoModelForSequenceClassification.from_pretrained(base_dir).eval()
    top = {k: v for k, v in trained.state_dict().items() if "classifier" in k or "encoder.layer.0." in k}
    torch.manual_seed(1)
    with torch.no_grad():
        for value in top.values():
            value.add_(torch.randn_like(value) * 0.1)  # "trained" top block and head (in place, in the model)
    folder = tmp_path / "partial"
    folder.mkdir()
    save_file({k: v.to(torch.float16).contiguous() for k, v in top.items()}, str(folder / PARTIAL_WEIGHTS_NAME))
    (folder / PARTIAL_CONFIG_NAME).write_text(json.dumps({"base": str(base_dir), "id2label": id2label}))
    scorer = load_scorer(folder, dtype="float32", runtime="torch")
    with torch.no_grad():
        for key, value in top.items():  # what the shipped fp16 file holds
            trained.state_dict()[key].copy_(value.to(torch.float16).float())
        enc = scorer.tokenizer([p for p, _ in PAIRS], [h for _, h in PAIRS], padding=True, return_tensors="pt")
        expected = torch.softmax(trained(**enc).logits, dim=-1).numpy()
    assert np.allclose(scorer.predict_proba(PAIRS), expected, atol=1e-5)
    assert merged_model(folder) == merged_model(folder)  # built once, then found in the cache

    other = tmp_path / "other"
    other.mkdir()
    save_file({"classifier.weight": torch.zeros(5, 7)}, str(other / PARTIAL_WEIGHTS_NAME))
    (other / PARTIAL_CONFIG_NAME).write_text(json.dumps({"base": str(base_dir), "id2label": id2label}))
    with pytest.raises(ModelLoadError, match="trained on another base"):
        merged_model(other)
    left = [p.name for p in (tmp_path / "cache" / "merged").glob("other-*")]
    assert all(name.endswith(".lock") for name in left), left  # nothing half-built: only the builders' lock file
