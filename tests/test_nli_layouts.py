"""NLIScorer must find the contradiction column by label *name*, whatever order a checkpoint uses.

Each test builds a tiny random BERT classifier locally, names its labels like a real checkpoint does,
and sets the classifier bias so that exactly one label dominates; the scorer must then report a high
P(contradiction) exactly when the dominant label is the contradiction one.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

from guard.models.nli import LabelLayout, LabelLayoutError, NLIScorer

PAIRS = [("i have a dog.", "i do not have a dog."), ("i like tea.", "the sky is blue today.")]
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "i", "have", "a", "dog", "do", "not", "like", "tea",
         "the", "sky", "is", "blue", "today", "."]


def build_checkpoint(path: Path, id2label: dict[int, str], dominant: int) -> Path:
    """Save a 1-layer BERT whose logits are dominated by label id ``dominant``."""
    path.mkdir(parents=True, exist_ok=True)
    (path / "vocab.txt").write_text("\n".join(VOCAB) + "\n")
    tokenizer = BertTokenizerFast(vocab_file=str(path / "vocab.txt"), do_lower_case=True)
    config = BertConfig(vocab_size=len(VOCAB), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=64, num_labels=len(id2label),
                        id2label=id2label, label2id={v: k for k, v in id2label.items()})
    torch.manual_seed(0)
    model = BertForSequenceClassification(config)
    with torch.no_grad():
        model.classifier.weight.zero_()
        model.classifier.bias.fill_(-4.0)
        model.classifier.bias[dominant] = 4.0
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def set_dominant(scorer: NLIScorer, dominant: int) -> None:
    """Make label id ``dominant`` win every prediction (same effect as saving another checkpoint)."""
    with torch.no_grad():
        scorer.model.classifier.bias.fill_(-4.0)
        scorer.model.classifier.bias[dominant] = 4.0


@pytest.mark.parametrize(
    "id2label, contradiction_id, entailment_id, neutral_id",
    [
        ({0: "contradiction", 1: "entailment", 2: "neutral"}, 0, 1, 2),  # cross-encoder/nli-deberta-v3-base
        ({0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"}, 0, 2, 1),  # roberta-large-mnli
        ({0: "entailment", 1: "neutral", 2: "contradiction"}, 2, 0, 1),  # MNLI dataset order
        ({0: "Neutral", 1: "Contradiction", 2: "Entailment"}, 1, 2, 0),  # contradiction in the middle
    ],
)
def test_three_way_layouts_pick_the_named_column(tmp_path, id2label, contradiction_id, entailment_id, neutral_id):
    scorer = NLIScorer.from_pretrained(build_checkpoint(tmp_path, id2label, dominant=contradiction_id))
    assert scorer.layout == LabelLayout(contradiction_id, 3, entailment_id, neutral_id)
    assert np.all(scorer.contradiction_proba(PAIRS) > 0.99)  # as saved: the contradiction label dominates
    for dominant in range(3):
        set_dominant(scorer, dominant)
        contra = scorer.contradiction_proba(PAIRS)
        entail = scorer.entailment_proba(PAIRS)
        assert contra.shape == (2,)
        assert np.all((contra > 0.99) == (dominant == contradiction_id))
        assert np.all((contra < 0.01) == (dominant != contradiction_id))
        assert np.all((entail > 0.99) == (dominant == entailment_id))
        np.testing.assert_allclose(scorer.predict_proba(PAIRS).sum(axis=1), 1.0, rtol=1e-5)


@pytest.mark.parametrize("id2label, contradiction_id", [
    ({0: "non_contradiction", 1: "contradiction"}, 1),  # DECODE-style 2-way detector
    ({0: "contradiction", 1: "non-contradiction"}, 0),
])
def test_two_way_layouts(tmp_path, id2label, contradiction_id):
    scorer = NLIScorer.from_pretrained(build_checkpoint(tmp_path, id2label, dominant=0))
    assert scorer.layout.num_labels == 2
    assert scorer.layout.contradiction == contradiction_id
    assert scorer.entailment_proba(PAIRS) is None  # 2-way detectors have no entailment class
    for dominant in range(2):
        set_dominant(scorer, dominant)
        contra = scorer.contradiction_proba(PAIRS)
        assert np.all((contra > 0.99) == (dominant == contradiction_id))


def test_unnamed_labels_are_refused_with_a_clear_message(tmp_path):
    folder = build_checkpoint(tmp_path, {0: "LABEL_0", 1: "LABEL_1"}, dominant=1)
    with pytest.raises(LabelLayoutError, match="contradiction_label"):
        NLIScorer.from_pretrained(folder)


@pytest.mark.parametrize("override", ["LABEL_1", 1, "1"])
def test_unnamed_labels_work_with_an_override(tmp_path, override):
    folder = build_checkpoint(tmp_path, {0: "LABEL_0", 1: "LABEL_1"}, dominant=1)
    scorer = NLIScorer.from_pretrained(folder, contradiction_label=override)
    assert scorer.layout.contradiction == 1
    assert np.all(scorer.contradiction_proba(PAIRS) > 0.99)


def test_override_naming_a_missing_label_is_refused():
    with pytest.raises(LabelLayoutError, match="LABEL_7"):
        LabelLayout.from_id2label({0: "LABEL_0", 1: "LABEL_1"}, contradiction_label="LABEL_7")
    with pytest.raises(LabelLayoutError, match="5"):
        LabelLayout.from_id2label({0: "LABEL_0", 1: "LABEL_1"}, contradiction_label=5)


def test_wrong_label_counts_and_incomplete_three_way_are_refused():
    with pytest.raises(LabelLayoutError, match="2 or 3 labels"):
        LabelLayout.from_id2label({0: "contradiction"})
    with pytest.raises(LabelLayoutError, match="entailment, neutral and contradiction"):
        LabelLayout.from_id2label({0: "contradiction", 1: "LABEL_1", 2: "LABEL_2"})


def test_shipped_detector_names_its_labels():
    """The project's own checkpoint (when present) maps without any override."""
    import embedded

    try:
        path = embedded.detector_path()
    except embedded.MissingAssetError:
        pytest.skip("models/detector not trained yet")
    from transformers import AutoConfig

    layout = LabelLayout.from_id2label(AutoConfig.from_pretrained(path).id2label)
    assert layout.num_labels == 3 and layout.entailment is not None and layout.neutral is not None
