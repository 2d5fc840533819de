"""A llama GGUF file to CTranslate2 int8 without torch or transformers: the direct conversion.

Why: a new user's first reply waited for the embedded bot's conversion, and most of that wait was not converting.
The one-pass way (bots.gguf_ct2) has transformers read the GGUF: importing torch and transformers (4-6 s, and
transformers' lazy modules import more while it loads), its tokenizer from the file (4.8 s, with gguf's and
transformers' metadata parses), its model (4 s, of which de-quantizing is 1.5 s); CTranslate2's own conversion
took under a second. ``python -m bots prepare`` on an empty cache took 14.6 s here, about 21 s on a laptop.

What this does instead, for ``general.architecture = llama`` with a byte-level BPE (``gpt2``) tokenizer, which is
what SmolLM2 is:

* the file is read once by gguf's reader (over a plain array, ``bots.gguf_ct2.array_reader_class``), its tensors
  de-quantized by ``gguf.quants.dequantize`` (numpy, as transformers does it) and renamed to the llama modules
  transformers would load them into, Q and K rows un-permuted exactly as transformers' ``LlamaTensorProcessor``
  does (llama.cpp interleaves the rotary halves); no ``output.weight`` means tied embeddings, the embedding matrix
  is then the output projection as well, as transformers ties them;
* CTranslate2's own ``LlamaLoader`` builds the model spec from numpy stand-ins shaped like transformers' module tree
  (``model.model.layers[i].self_attn.q_proj.weight``...), and its own ``Converter`` validates, quantizes and writes
  it: the spec, the int8 quantization and the files are the library's, not a copy of them;
* the tokenizer is built with ``tokenizers`` straight from the metadata, set up as transformers 5 sets up a GGUF's
  byte-level tokenizer (``integrations/gguf/gguf_tokenizer_mapping.py``: ``GPT2Tokenizer``'s model, pre-tokenizer
  and decoder, its ``<|endoftext|>`` default, the control tokens as special added tokens, then ``TokenizersBackend``'s
  post-processor for ``add_bos_token``/``add_eos_token``) and kept with the same settings through the same writer
  (``bots.tokenizer.write_snapshot``).

tests/test_bots_gguf_ct2.py checks that the result is the two-pass conversion byte for byte (model.bin, config.json,
vocabulary.json, the tokenizer snapshot) and that the conversion imports neither torch nor transformers. Anything
this does not reproduce exactly (another architecture, a sentencepiece vocabulary, a pre-tokenizer transformers
splits with a regex of its own, special tokens outside the control ones, tensors beyond a plain llama's) makes
``unsupported`` say why, and ``bots.ct2.CTranslate2Engine.from_gguf`` takes the transformers one-pass way instead.

CTranslate2's spec and converter modules import torch (and transformers) at import when they can; ``_converters``
imports them with those two refused, hands them what they use of transformers (only ``Conv1D``, for an
``isinstance`` check), and forgets them afterwards, so a later conversion through transformers in the same process
imports them again whole.

Measured here (2 shared cores, AVX2 forced, ``python -m bots prepare`` on an empty cache, alternated with the
transformers one-pass way): 8.8-10.3 s before, 3.2-3.5 s with this. Of the direct conversion's 3.3 s: gguf's
metadata parse 0.7 s (its reader slices the 100,000 vocabulary and merge strings one by one), de-quantizing and
un-permuting 0.9 s, CTranslate2's spec, int8 quantization and writing 1.3 s (numpy), the tokenizer 0.2 s, imports
(numpy, gguf, tokenizers, CTranslate2's spec modules) 0.2 s.
"""

from __future__ import annotations

import functools
import logging
import sys
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

logger = logging.getLogger(__name__)

#: GGUF tensor name (after ``blk.N.``) -> the attribute path of transformers' LlamaDecoderLayer it loads into
#: (gguf's tensor-name map for the llama architecture, which transformers uses through get_gguf_hf_weights_map).
LAYER_TENSORS = {
    "attn_norm": ("input_layernorm",),
    "ffn_norm": ("post_attention_layernorm",),
    "attn_q": ("self_attn", "q_proj"),
    "attn_k": ("self_attn", "k_proj"),
    "attn_v": ("self_attn", "v_proj"),
    "attn_output": ("self_attn", "o_proj"),
    "ffn_gate": ("mlp", "gate_proj"),
    "ffn_up": ("mlp", "up_proj"),
    "ffn_down": ("mlp", "down_proj"),
}
#: llama.cpp's pre-tokenizer names that transformers leaves on GPT2Tokenizer's plain ``ByteLevel`` (those it
#: knows a split regex for, like ``llama-bpe`` or ``qwen2``, get a Split first: they go through transformers)
PLAIN_BYTE_LEVEL_PRE = {"default", "gpt-2", "smollm"}
#: The special tokens a GGUF names by id, in transformers' SPECIAL_TOKENS_ATTRIBUTES order
#: (``get_gguf_tokenizer``'s ``_SPECIAL_TOKENS``)
SPECIAL_TOKEN_KEYS = {
    "bos_token": "tokenizer.ggml.bos_token_id",
    "eos_token": "tokenizer.ggml.eos_token_id",
    "unk_token": "tokenizer.ggml.unknown_token_id",
    "pad_token": "tokenizer.ggml.padding_token_id",
}
#: GPT2Tokenizer's default unk/bos/eos token, which its TokenizersBackend adds before the file's own are known
GPT2_DEFAULT_TOKEN = "<|endoftext|>"
#: transformers patches the pre-tokenizer of vocabularies larger than this (``_patch_mistral_regex``)
MISTRAL_PATCH_VOCAB = 100000
#: llama.cpp token types (``gguf.TokenType``)
CONTROL, USER_DEFINED = 3, 4
#: LlamaConfig's default eos_token_id, which the config keeps when the file names none
LLAMA_DEFAULT_EOS = 2


def open_gguf(path: str | Path):
    """gguf's reader of ``path`` over a plain array (bots.gguf_ct2.array_reader_class): tensors and metadata."""
    from bots.gguf_ct2 import array_reader_class

    return array_reader_class()(str(path), "r")


def _value(reader, key: str, default=None):
    """A scalar or string field of the metadata as transformers' ``_gguf_parse_value`` reads it (int, float, bool,
    str), or ``default``."""
    import gguf

    found = reader.fields.get(key)
    if found is None:
        return default
    kind = found.types[0]
    raw = found.parts[found.data[0]]
    if kind == gguf.GGUFValueType.STRING:
        return _text(raw)
    if kind in (gguf.GGUFValueType.FLOAT32, gguf.GGUFValueType.FLOAT64):
        return float(raw[0])
    if kind == gguf.GGUFValueType.BOOL:
        return bool(raw[0])
    if kind == gguf.GGUFValueType.ARRAY:
        raise ValueError(f"{key} is an array")
    return _number(raw)


def _array(reader, key: str, item) -> list | None:
    """An array of the metadata with ``item`` applied to each entry's raw parts (strings decoded as transformers
    decodes them, ``_text``; numbers, ``_number``), or None when the file has no such field."""
    found = reader.fields.get(key)
    if found is None:
        return None
    parts = found.parts
    return [item(parts[i]) for i in found.data]


def _text(raw) -> str:
    return bytes(raw).decode("utf-8")


def _number(raw) -> int:
    return int(raw[0])


@dataclass
class GGUFMetadata:
    """What the direct conversion reads of a GGUF's metadata: the llama settings and the tokenizer's parts."""

    architecture: str
    name: str
    tensor_names: list[str]
    settings: dict
    tokens: list[str]
    token_types: list[int]
    merges: list[str] | None
    tokenizer_model: str | None
    pre_tokenizer: str | None
    special_ids: dict[str, int | None]
    chat_template: str | None
    add_bos_token: bool | None
    add_eos_token: bool | None

    @classmethod
    def read(cls, reader) -> GGUFMetadata:
        architecture = _value(reader, "general.architecture", "")
        prefix = f"{architecture}."
        settings = {key: _value(reader, prefix + key) for key in (
            "block_count", "attention.head_count", "attention.head_count_kv", "rope.freq_base",
            "attention.layer_norm_rms_epsilon", "vocab_size", "rope.scaling.type")}
        return cls(
            architecture=architecture,
            name=_value(reader, "general.name", "") or "",
            tensor_names=[tensor.name for tensor in reader.tensors],
            settings=settings,
            tokens=_array(reader, "tokenizer.ggml.tokens", _text) or [],
            token_types=_array(reader, "tokenizer.ggml.token_type", _number) or [],
            merges=_array(reader, "tokenizer.ggml.merges", _text),
            tokenizer_model=_value(reader, "tokenizer.ggml.model"),
            pre_tokenizer=_value(reader, "tokenizer.ggml.pre"),
            special_ids={name: _value(reader, key) for name, key in SPECIAL_TOKEN_KEYS.items()},
            chat_template=_value(reader, "tokenizer.chat_template"),
            add_bos_token=_value(reader, "tokenizer.ggml.add_bos_token"),
            add_eos_token=_value(reader, "tokenizer.ggml.add_eos_token"),
        )

    @property
    def vocab_size(self) -> int:
        """transformers' config vocab_size: the file's, else the vocabulary's length (load_gguf_checkpoint)."""
        size = self.settings.get("vocab_size")
        return int(size) if size is not None else len(self.tokens)

    @property
    def eos_token_id(self) -> int:
        """The config's (and so the generation config's) eos_token_id: the file's, else LlamaConfig's default."""
        eos = self.special_ids.get("eos_token")
        return LLAMA_DEFAULT_EOS if eos is None else eos


def unsupported(meta: GGUFMetadata) -> str | None:
    """Why the direct conversion would not give the transformers conversion's bytes for this file, or None when it
    does: the plain llama architecture with a byte-level BPE tokenizer set up the way this module sets it up."""
    if meta.architecture != "llama":
        return f"architecture {meta.architecture!r} (the direct conversion reads llama only)"
    if "mistral" in meta.name:  # transformers reads it as a Mistral (load_gguf_checkpoint)
        return "a llama file that transformers reads as Mistral"
    missing = [key for key in ("block_count", "attention.head_count", "rope.freq_base",
                               "attention.layer_norm_rms_epsilon") if meta.settings.get(key) is None]
    if missing:
        return f"no {', '.join(missing)} in the metadata (transformers would use its config defaults)"
    if meta.settings.get("rope.scaling.type") is not None:
        return "RoPE scaling in the metadata"
    expected = {"token_embd.weight", "output_norm.weight", "output.weight"}
    expected |= {f"blk.{i}.{name}.weight" for i in range(int(meta.settings["block_count"])) for name in LAYER_TENSORS}
    unknown = sorted(set(meta.tensor_names) - expected)
    if unknown:
        return f"tensors a plain llama has not ({', '.join(unknown[:3])}...)"
    needed = expected - {"output.weight"}
    if not needed <= set(meta.tensor_names):
        return "tensors missing from the file"
    if meta.tokenizer_model != "gpt2":
        return f"tokenizer {meta.tokenizer_model!r} (the direct conversion builds byte-level BPE only)"
    if meta.pre_tokenizer not in PLAIN_BYTE_LEVEL_PRE:
        return f"pre-tokenizer {meta.pre_tokenizer!r} (transformers may split it with a regex of its own)"
    if meta.merges is None:
        return "no merges in the file (transformers derives them from the vocabulary)"
    if len(meta.tokens) > MISTRAL_PATCH_VOCAB:
        return "a vocabulary large enough for transformers' Mistral regex patch"
    vocab = set(meta.tokens)
    if GPT2_DEFAULT_TOKEN not in vocab:
        return f"no {GPT2_DEFAULT_TOKEN} in the vocabulary (transformers would add one)"
    if len(meta.token_types) != len(meta.tokens):
        return "no token type for every token"
    if any(kind == USER_DEFINED for kind in meta.token_types):
        return "user-defined tokens"
    control = set(_control_tokens(meta))
    for name, token_id in meta.special_ids.items():
        if token_id is not None and (not 0 <= token_id < len(meta.tokens) or meta.tokens[token_id] not in control):
            return f"the {name} is not one of the file's control tokens"
    if GPT2_DEFAULT_TOKEN not in control:
        return f"{GPT2_DEFAULT_TOKEN} is not a control token"
    return None


@functools.cache
def _byte_spelling() -> dict[int, str]:
    """GPT-2's byte -> printable character table (``bytes_to_unicode``), in which a byte-level vocabulary is spelled."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    codes = printable[:]
    extra = 0
    for byte in range(2**8):
        if byte not in printable:
            printable.append(byte)
            codes.append(2**8 + extra)
            extra += 1
    return dict(zip(printable, (chr(code) for code in codes)))


def _control_tokens(meta: GGUFMetadata) -> list[str]:
    """The tokens transformers adds as special: those marked CONTROL that are spelled in the byte alphabet (one
    that is not is a llama.cpp mislabel, skipped by ``add_gguf_special_tokens``)."""
    alphabet = set(_byte_spelling().values())
    return [token for token, kind in zip(meta.tokens, meta.token_types) if kind == CONTROL and set(token) <= alphabet]


@dataclass
class GGUFTokenizer:
    """The file's tokenizer as transformers would set it up: the ``tokenizers`` backend and the settings the
    snapshot keeps; also what CTranslate2's loader asks of a tokenizer (``get_vocab``, the special tokens)."""

    backend: object
    chat_template: str | None
    special_tokens: dict[str, str] = field(default_factory=dict)

    @classmethod
    def build(cls, meta: GGUFMetadata) -> GGUFTokenizer:
        from tokenizers import AddedToken, Tokenizer, decoders, pre_tokenizers, processors
        from tokenizers.models import BPE

        spelling = _byte_spelling()
        alphabet = set(spelling.values())
        # byte_level_tokenizer: tokens outside the byte alphabet are respelled in it; GPT2Tokenizer's model
        vocab = {token if set(token) <= alphabet else "".join(spelling[b] for b in token.encode("utf-8")): index
                 for index, token in enumerate(meta.tokens)}
        merges = [tuple(merge.split(" ")) for merge in meta.merges or ()]
        backend = Tokenizer(BPE(vocab=vocab, merges=merges, dropout=None, continuing_subword_prefix="",
                                end_of_word_suffix="", fuse_unk=False))
        backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        backend.decoder = decoders.ByteLevel()
        # GPT2Tokenizer's TokenizersBackend adds its default special token (<|endoftext|>), then
        # add_gguf_special_tokens the control ones, all special and not normalized: <|endoftext|> is one of them
        # (``unsupported`` makes sure), so adding the control tokens adds both
        backend.add_special_tokens([AddedToken(token, normalized=False, special=True)
                                    for token in _control_tokens(meta)])
        special = {name: meta.tokens[token_id] for name, token_id in meta.special_ids.items() if token_id is not None}
        # TokenizersBackend.update_post_processor, for the file's add_bos_token/add_eos_token
        add_bos = bool(meta.add_bos_token) and "bos_token" in special
        add_eos = bool(meta.add_eos_token) and "eos_token" in special
        bos, eos = special.get("bos_token"), special.get("eos_token")
        single = f"{(bos + ':0 ') if add_bos else ''}$A:0{(' ' + eos + ':0') if add_eos else ''}"
        pair = f"{single}{(' ' + bos + ':1') if add_bos else ''} $B:1{(' ' + eos + ':1') if add_eos else ''}"
        pieces = [(bos, backend.token_to_id(bos))] if add_bos else []
        pieces += [(eos, backend.token_to_id(eos))] if add_eos else []
        backend.post_processor = processors.TemplateProcessing(single=single, pair=pair, special_tokens=pieces)
        return cls(backend, meta.chat_template, special)

    # what CTranslate2's loaders read of a transformers tokenizer
    def get_vocab(self) -> dict[str, int]:
        return self.backend.get_vocab(with_added_tokens=True)

    @property
    def bos_token(self) -> str | None:
        return self.special_tokens.get("bos_token")

    @property
    def eos_token(self) -> str | None:
        return self.special_tokens.get("eos_token")

    @property
    def unk_token(self) -> str | None:
        return self.special_tokens.get("unk_token")

    def write_snapshot(self, folder: str | Path, extra: Mapping | None = None) -> None:
        """The snapshot ``bots.tokenizer.snapshot`` writes of the transformers tokenizer of this file."""
        from bots.tokenizer import write_snapshot

        ids = {name: self.backend.token_to_id(token) for name, token in self.special_tokens.items()}
        unique = list(dict.fromkeys(self.special_tokens.values()))  # all_special_tokens: named ones, de-duplicated
        write_snapshot(folder, self.backend, chat_template=self.chat_template,
                       special_tokens_map=dict(self.special_tokens),
                       all_special_ids=[self.backend.token_to_id(token) for token in unique],
                       unk_token_id=ids.get("unk_token"), eos_token_id=ids.get("eos_token"),
                       bos_token_id=ids.get("bos_token"), pad_token_id=ids.get("pad_token"),
                       extra=extra)


def _reverse_permute(weights, heads: int):
    """Undo llama.cpp's Q/K row permutation (transformers' ``LlamaTensorProcessor._reverse_permute_weights``)."""
    dim = weights.shape[0] // heads // 2
    return weights.reshape(heads, dim, 2, *weights.shape[1:]).swapaxes(2, 1).reshape(weights.shape)


def llama_modules(reader, meta: GGUFMetadata) -> SimpleNamespace:
    """The de-quantized float32 weights as numpy arrays, in stand-ins shaped like transformers'
    ``LlamaForCausalLM`` (``config``, ``model.embed_tokens``, ``model.layers[i].self_attn.q_proj``, ``lm_head``...),
    which is all CTranslate2's LlamaLoader reads of a model."""
    import numpy as np
    from gguf.quants import dequantize

    heads = int(meta.settings["attention.head_count"])
    kv_heads = meta.settings.get("attention.head_count_kv")
    kv_heads = heads if kv_heads is None else int(kv_heads)
    layers = [SimpleNamespace(self_attn=SimpleNamespace(), mlp=SimpleNamespace())
              for _ in range(int(meta.settings["block_count"]))]
    model = SimpleNamespace(embed_tokens=None, norm=None, layers=layers)
    lm_head = None
    for tensor in reader.tensors:
        weights = dequantize(tensor.data, tensor.tensor_type)
        if not weights.flags.writeable:  # a float32 tensor is a view of the file: CTranslate2 works in place
            weights = np.copy(weights)
        name = tensor.name.removesuffix(".weight")
        if name == "token_embd":
            model.embed_tokens = SimpleNamespace(weight=weights)
        elif name == "output_norm":
            model.norm = SimpleNamespace(weight=weights)
        elif name == "output":
            lm_head = SimpleNamespace(weight=weights, bias=None)
        else:
            _, block, kind = name.split(".")
            if kind == "attn_q":
                weights = _reverse_permute(weights, heads)
            elif kind == "attn_k":
                weights = _reverse_permute(weights, kv_heads)
            owner = layers[int(block)]
            *path, leaf = LAYER_TENSORS[kind]
            for step in path:
                owner = getattr(owner, step)
            setattr(owner, leaf, SimpleNamespace(weight=weights, bias=None))
    # no output.weight: tied embeddings (load_gguf_checkpoint's tie_word_embeddings), one matrix for both
    lm_head = lm_head or SimpleNamespace(weight=model.embed_tokens.weight, bias=None)
    config = SimpleNamespace(
        num_hidden_layers=len(layers), num_attention_heads=heads, num_key_value_heads=kv_heads,
        # transformers 5's LlamaConfig answers ``rope_scaling`` with its rope parameters
        rope_scaling={"rope_theta": meta.settings["rope.freq_base"], "rope_type": "default"},
        rms_norm_eps=meta.settings["attention.layer_norm_rms_epsilon"], vocab_size=meta.vocab_size,
        model_type="llama", is_encoder_decoder=False, eos_token_id=meta.eos_token_id)
    return SimpleNamespace(config=config, model=model, lm_head=lm_head)


class _Refuse:
    """An import hook that refuses some top-level packages to the thread that installed it (others import freely)."""

    def __init__(self, names: set[str]):
        self.names = names
        self.thread = threading.get_ident()

    def find_spec(self, fullname: str, path=None, target=None):
        if threading.get_ident() == self.thread and fullname.split(".")[0] in self.names:
            raise ImportError(f"{fullname} is not imported by the direct GGUF conversion")
        return None


_LAZY_CT2 = ("ctranslate2.specs", "ctranslate2.converters")


@contextmanager
def _converters() -> Iterator[SimpleNamespace]:
    """CTranslate2's Converter and LlamaLoader without torch and transformers (see the module docstring). Inside,
    this thread cannot import either; the CTranslate2 modules imported without them are forgotten afterwards."""
    refused = {name for name in ("torch", "transformers") if name not in sys.modules}
    before = {name for name in sys.modules if name.startswith(_LAZY_CT2)}
    hook = _Refuse(refused)
    sys.meta_path.insert(0, hook)
    try:
        from ctranslate2.converters import transformers as loaders
        from ctranslate2.converters.converter import Converter

        if not hasattr(loaders, "transformers"):  # set_linear's isinstance(module, transformers.Conv1D)
            loaders.transformers = SimpleNamespace(Conv1D=type("Conv1D", (), {}))
        yield SimpleNamespace(Converter=Converter, loader=loaders._MODEL_LOADERS["LlamaConfig"], loaders=loaders)
    finally:
        sys.meta_path.remove(hook)
        if refused:
            for name in [name for name in sys.modules if name.startswith(_LAZY_CT2) and name not in before]:
                del sys.modules[name]
                parent, _, child = name.rpartition(".")
                if parent in sys.modules and getattr(sys.modules[parent], child, None) is not None:
                    delattr(sys.modules[parent], child)


@dataclass
class DirectConversion:
    """What the conversion made besides the model files: the tokenizer and the settings the snapshot keeps."""

    tokenizer: GGUFTokenizer
    config: SimpleNamespace
    generation_config: SimpleNamespace


def read(path: str | Path) -> tuple[object, GGUFMetadata]:
    """The file's reader and its metadata (one parse)."""
    reader = open_gguf(path)
    return reader, GGUFMetadata.read(reader)


def convert(reader, meta: GGUFMetadata, output_dir: str | Path, quantization: str) -> DirectConversion:
    """Write the file's model in CTranslate2's format to ``output_dir`` (CTranslate2's LlamaLoader and Converter) and
    return its tokenizer and settings. ``unsupported(meta)`` must be None."""
    reason = unsupported(meta)
    if reason is not None:
        raise ValueError(f"the direct GGUF conversion does not handle this file: {reason}")
    from bots.gguf_ct2 import _no_collection_between_layers

    tokenizer = GGUFTokenizer.build(meta)
    model = llama_modules(reader, meta)
    with _converters() as ct2:

        class Direct(ct2.Converter):
            def _load(self):
                with _no_collection_between_layers():
                    return ct2.loader(model, tokenizer)

        Direct().convert(str(output_dir), quantization=quantization, force=True)
    generation = SimpleNamespace(eos_token_id=model.config.eos_token_id)  # GenerationConfig.from_model_config
    return DirectConversion(tokenizer, model.config, generation)
