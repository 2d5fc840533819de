"""Tiny random models built from configs (no hub, no real weights) for the bot tests: BlenderBot, OPT, Llama.

Each is saved into a temporary folder with a byte-level BPE tokenizer trained in milliseconds, so the
real loading code (from_pretrained, the CTranslate2 converter) runs on it. conftest.py makes the
fixtures available to every test module.
"""

from __future__ import annotations

import pytest
import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import (
    BlenderbotConfig,
    BlenderbotForConditionalGeneration,
    LlamaConfig,
    LlamaForCausalLM,
    OPTConfig,
    OPTForCausalLM,
    PreTrainedTokenizerFast,
)

from guard.records import Turn

#: A short conversation every bot test answers.
HISTORY = [
    Turn(0, "user", "hi, do you have any pets?"),
    Turn(0, "bot", "i have two dogs."),
    Turn(0, "user", "what is your favourite food?"),
]
CORPUS = [
    "hello how are you today", "i like dogs and cats", "my favourite food is pizza",
    "Person 1: hi\nPerson 2: hello there\n", "do you have any pets? i have two dogs.",
    "your persona: i am a teacher", "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n",
] * 5
SPECIALS = ["<s>", "<pad>", "</s>", "<unk>", "<|im_start|>", "<|im_end|>"]
CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def byte_level_tokenizer() -> PreTrainedTokenizerFast:
    """A GPT-2-style byte-level BPE (like OPT's and BlenderBot's), trained in milliseconds on CORPUS."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=SPECIALS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tokenizer.train_from_iterator(CORPUS, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer, bos_token="<s>", pad_token="<pad>",
                                   eos_token="</s>", unk_token="<unk>",
                                   additional_special_tokens=["<|im_start|>", "<|im_end|>"])


@pytest.fixture(scope="module")
def tokenizer():
    return byte_level_tokenizer()


def _ids(tokenizer) -> dict:
    return dict(vocab_size=len(tokenizer), bos_token_id=tokenizer.bos_token_id,
                eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)


@pytest.fixture(scope="module")
def opt_dir(tmp_path_factory, tokenizer):
    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("tiny-opt")
    # OPT's vocabulary is padded to a multiple of 8 (fairseq's convention, which CTranslate2's converter follows)
    ids = {**_ids(tokenizer), "vocab_size": -(-len(tokenizer) // 8) * 8}
    config = OPTConfig(hidden_size=32, num_hidden_layers=1, ffn_dim=64, num_attention_heads=2,
                       word_embed_proj_dim=32, max_position_embeddings=512, **ids)
    OPTForCausalLM(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def blenderbot_dir(tmp_path_factory, tokenizer):
    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("tiny-blenderbot")
    config = BlenderbotConfig(d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
                              decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64,
                              max_position_embeddings=128, decoder_start_token_id=tokenizer.bos_token_id,
                              **_ids(tokenizer))
    BlenderbotForConditionalGeneration(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def llama_dir(tmp_path_factory, tokenizer):
    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("tiny-llama")
    config = LlamaConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
                         num_key_value_heads=2, max_position_embeddings=512, **_ids(tokenizer))
    LlamaForCausalLM(config).save_pretrained(path)
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.save_pretrained(path)
    tokenizer.chat_template = None
    return path
