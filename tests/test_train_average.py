"""guard.training.run.average_weights: the weight average behind ``python -m guard.training --average``
(no training)."""

from __future__ import annotations

import pytest
import torch
from transformers import BertConfig, BertForSequenceClassification

from guard.training.run import average_weights

LABELS = {0: "contradiction", 1: "entailment", 2: "neutral"}


def tiny(seed: int, id2label=LABELS, hidden: int = 16) -> BertForSequenceClassification:
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=30, hidden_size=hidden, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, num_labels=len(id2label), id2label=id2label,
                        label2id={v: k for k, v in id2label.items()})
    return BertForSequenceClassification(config).eval()


def test_average_is_the_weighted_mean_of_every_float_tensor():
    a, b = tiny(0), tiny(1)
    wa = {k: v.clone() for k, v in a.state_dict().items()}
    wb = b.state_dict()
    soup = average_weights(a, b, 0.25)
    for name, value in soup.state_dict().items():
        if value.is_floating_point():
            assert torch.allclose(value, 0.25 * wa[name] + 0.75 * wb[name]), name
        else:  # e.g. position ids stay integers
            assert torch.equal(value, wa[name])
    assert not torch.equal(soup.state_dict()["classifier.weight"], wa["classifier.weight"])


def test_average_refuses_what_cannot_be_mixed():
    with pytest.raises(ValueError, match="label layouts differ"):
        average_weights(tiny(0), tiny(1, id2label={0: "entailment", 1: "contradiction", 2: "neutral"}), 0.5)
    with pytest.raises(ValueError, match="different architectures"):
        average_weights(tiny(0), tiny(1, hidden=32), 0.5)
    with pytest.raises(ValueError, match="between 0 and 1"):
        average_weights(tiny(0), tiny(1), 1.5)
