"""Shared fixtures: tiny random NLI checkpoints built locally (no hub, no real weights).

They exercise the plumbing (loading, label mapping, batching, evidence bookkeeping); behaviour
that depends on a trained model is tested against the embedded detector and skipped without it.
"""

from __future__ import annotations

import os
import string
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

# tiny BlenderBot / OPT / Llama folders for the bot tests (tests/tiny_models.py)
from tiny_models import blenderbot_dir, llama_dir, opt_dir, tokenizer  # noqa: E402, F401

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
    bert_tokenizer = BertTokenizer(vocab=str(_write_vocab(folder)), do_lower_case=True)
    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=len(bert_tokenizer), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=64, max_position_embeddings=256,
        num_labels=len(id2label), id2label=id2label, label2id={v: k for k, v in id2label.items()},
    )
    model = BertForSequenceClassification(config)
    model.save_pretrained(folder)
    bert_tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="session")
def tiny_nli_model_dir(tmp_path_factory) -> Path:
    """A tiny random 3-way (entailment/neutral/contradiction) BERT NLI checkpoint folder."""
    return build_tiny_nli_model(tmp_path_factory.mktemp("tiny_nli3"))


@pytest.fixture(scope="session")
def tiny_nli2_model_dir(tmp_path_factory) -> Path:
    """A tiny random 2-way (non-contradiction/contradiction) checkpoint, labels in reversed order."""
    return build_tiny_nli_model(
        tmp_path_factory.mktemp("tiny_nli2"), id2label={0: "contradiction", 1: "non_contradiction"}, seed=1
    )


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The shared evaluation data folder (``embedded.shared_data_dir``); tests using it skip without it."""
    from embedded import shared_data_dir

    folder = shared_data_dir()
    if folder is None:
        pytest.skip("needs the shared evaluation data: ../shared/data beside the checkout, or GUARD_SHARED_DATA")
    return folder


@pytest.fixture(autouse=True, scope="session")
def studio_database(tmp_path_factory) -> str:
    """The goading studio's database for the whole test run: a fresh SQLite file, never the user's cache."""
    url = f"sqlite:///{tmp_path_factory.mktemp('studio') / 'studio.db'}"
    os.environ["GUARD_STUDIO_DB"] = url
    return url
