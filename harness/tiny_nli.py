"""Tiny random NLI checkpoints built locally (no hub, no real weights) for the tests and the browser harness.

They exercise the plumbing (loading, label mapping, batching, evidence bookkeeping); behaviour that
depends on a trained model is tested against the embedded detector.
"""

from __future__ import annotations

import json
import string
from pathlib import Path

_WORDS = (
    "i you he she it we they the a an and but or not no yes do don't like love hate have has "
    "am is are was were dog dogs cat cats animal animals my your live in work as teacher nurse "
    "never always two three kids children years old vegetarian meat eat ohio texas hiking hike"
).split()


def _write_vocab(folder: Path) -> Path:
    """A WordPiece vocab that can spell any lower-case ASCII text (letters as ##pieces)."""
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    chars = list(string.ascii_lowercase + string.digits + string.punctuation)
    tokens = specials + chars + [f"##{c}" for c in string.ascii_lowercase + string.digits] + _WORDS
    vocab = folder / "vocab.txt"
    vocab.write_text("\n".join(dict.fromkeys(tokens)) + "\n")
    return vocab


def build_tiny_nli_model(folder: Path, id2label: dict[int, str] | None = None, seed: int = 0) -> Path:
    """Save a 1-layer random BERT sequence classifier plus a locally built tokenizer to ``folder``."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    id2label = id2label or {0: "entailment", 1: "neutral", 2: "contradiction"}
    tokenizer = BertTokenizer(vocab=str(_write_vocab(folder)), do_lower_case=True)
    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=64, max_position_embeddings=256,
        num_labels=len(id2label), id2label=id2label, label2id={v: k for k, v in id2label.items()},
    )
    model = BertForSequenceClassification(config)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def build_flagging_detector(folder: Path) -> Path:
    """A tiny random 3-way checkpoint whose guard_config.json sets τ = 0.1: its ~1/3 contradiction
    probabilities all fire, so every candidate is flagged (the app's plumbing without a trained model)."""
    build_tiny_nli_model(folder)
    (folder / "guard_config.json").write_text(json.dumps({"threshold": 0.1}))
    return folder
