"""The tokenizer of a CTranslate2 bot without transformers: the ``tokenizers`` backend and the chat template.

Why: importing transformers' tokenizer classes loads its model code (about 4 s of a 10 s ``python -m bots
generate`` here, 9 s on a slower laptop), which the int8 engine never runs. What the engine and
the local bots ask of a tokenizer is small: encode a text, render the chat template and encode it, decode
ids, map tokens to ids and back.

When a model is converted to CTranslate2 (bots.ct2), the transformers tokenizer loaded for it is written
next to the conversion (``snapshot``): its backend ``tokenizers.Tokenizer`` exactly as transformers set it up
(normalizer, pre-tokenizer, the post-processor with the special tokens it adds, added tokens), its chat
template, special tokens and decode settings. ``LightTokenizer`` reads that back and does those operations
the way transformers 5 does them (``TokenizersBackend``: ``__call__``, ``decode``, ``apply_chat_template``
through the same Jinja sandbox settings). tests/test_bots_light_path.py compares its ids and texts with
transformers' for the shipped model and the tiny test models.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from datetime import datetime
from functools import cached_property
from pathlib import Path

#: Bumped when what ``snapshot`` writes changes; an older snapshot is ignored (and rewritten on the next load
#: that has transformers at hand).
SNAPSHOT_FORMAT = 1
TOKENIZER_FILE = "guard_tokenizer.json"
META_FILE = "guard_tokenizer_meta.json"


def snapshot(tokenizer, folder: str | Path, extra: Mapping | None = None) -> bool:
    """Write ``tokenizer`` (a transformers fast tokenizer) into ``folder`` for ``LightTokenizer.load``.

    ``extra`` is stored with it (bots.ct2 keeps the few model settings the engine reads there). Each file is
    written under a temporary name and renamed, the metadata last, so a reader sees a whole snapshot or none.
    False (nothing written) for a tokenizer without a ``tokenizers`` backend (a slow, sentencepiece-only one).
    """
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None or not getattr(tokenizer, "is_fast", False):
        return False
    template = None
    if getattr(tokenizer, "chat_template", None):
        template = tokenizer.get_chat_template()
    write_snapshot(
        folder, backend,
        chat_template=template,
        special_tokens_map=dict(tokenizer.special_tokens_map),  # what the chat template sees besides messages
        all_special_ids=[int(i) for i in tokenizer.all_special_ids],
        unk_token_id=tokenizer.unk_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=tokenizer.bos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        split_special_tokens=bool(getattr(tokenizer, "split_special_tokens", False)),
        clean_up_tokenization_spaces=bool(getattr(tokenizer, "clean_up_tokenization_spaces", False)),
        clean_up_for_bpe=bool(getattr(
            tokenizer, "clean_up_tokenization_spaces_for_bpe_even_though_it_will_corrupt_output", False)),
        extra=extra,
    )
    return True


def write_snapshot(folder: str | Path, backend, *, chat_template: str | None, special_tokens_map: Mapping[str, str],
                   all_special_ids: Sequence[int], unk_token_id: int | None, eos_token_id: int | None,
                   bos_token_id: int | None, pad_token_id: int | None, split_special_tokens: bool = False,
                   clean_up_tokenization_spaces: bool = False, clean_up_for_bpe: bool = False,
                   extra: Mapping | None = None) -> None:
    """Write a snapshot of ``backend`` (a ``tokenizers.Tokenizer``) and the settings transformers keeps beside it.

    The one writer of the snapshot's files, whether the settings come from a transformers tokenizer (``snapshot``)
    or were read straight from a GGUF file without transformers (bots.gguf_direct), so both write the same bytes.
    ``clean_up_for_bpe``: transformers skips the decode clean-up for a BPE model unless its tokenizer says
    ``clean_up_tokenization_spaces_for_bpe_even_though_it_will_corrupt_output`` (``_decode``)."""
    folder = Path(folder)
    clean_up = bool(clean_up_tokenization_spaces)
    if clean_up and type(backend.model).__name__ == "BPE":
        clean_up = bool(clean_up_for_bpe)
    meta = {
        "format": SNAPSHOT_FORMAT,
        "transformers_version": _transformers_version(),
        "chat_template": chat_template,
        "special_tokens_map": dict(special_tokens_map),
        "all_special_ids": [int(i) for i in all_special_ids],
        "unk_token_id": unk_token_id,
        "eos_token_id": eos_token_id,
        "bos_token_id": bos_token_id,
        "pad_token_id": pad_token_id,
        "split_special_tokens": bool(split_special_tokens),
        "clean_up_tokenization_spaces": clean_up,
        "extra": dict(extra or {}),
    }
    _write_atomically(folder / TOKENIZER_FILE, backend.to_str())
    _write_atomically(folder / META_FILE, json.dumps(meta, ensure_ascii=False, indent=1))


def _write_atomically(path: Path, text: str) -> None:
    handle, staging = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(staging, path)
    except BaseException:
        Path(staging).unlink(missing_ok=True)
        raise


def _transformers_version() -> str | None:
    """The installed transformers' version, read from its metadata (no import), or None without it."""
    from importlib import metadata

    try:
        return metadata.version("transformers")
    except metadata.PackageNotFoundError:
        return None


def read_meta(folder: str | Path) -> dict | None:
    """The snapshot's metadata in ``folder``, or None when there is no complete snapshot of this format, or it was
    written by another transformers version than the installed one (which may set the tokenizer up differently;
    the next load through transformers writes it again)."""
    folder = Path(folder)
    try:
        meta = json.loads((folder / META_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if meta.get("format") != SNAPSHOT_FORMAT or not (folder / TOKENIZER_FILE).is_file():
        return None
    installed = _transformers_version()
    if installed is not None and meta.get("transformers_version") != installed:
        return None
    return meta


class LightTokenizer:
    """The parts of a transformers fast tokenizer the local bots use, over a ``snapshot`` (no transformers).

    ``source`` is where the transformers tokenizer can be loaded from when a caller needs the whole thing
    (``transformers_tokenizer``: the studio's FQness scorer needs offsets and padding).
    """

    is_light = True

    def __init__(self, backend, meta: Mapping, source: str | Path | None = None):
        self._tokenizer = backend
        # transformers encodes one text at a time without truncation or padding (set_truncation_and_padding)
        self._tokenizer.no_truncation()
        self._tokenizer.no_padding()
        self._tokenizer.encode_special_tokens = bool(meta.get("split_special_tokens", False))
        self.meta = dict(meta)
        self.chat_template: str | None = meta.get("chat_template")
        self.special_tokens_map: dict[str, str] = dict(meta.get("special_tokens_map") or {})
        self.all_special_ids: list[int] = list(meta.get("all_special_ids") or [])
        self.unk_token_id: int | None = meta.get("unk_token_id")
        self.eos_token_id: int | None = meta.get("eos_token_id")
        self.bos_token_id: int | None = meta.get("bos_token_id")
        self.pad_token_id: int | None = meta.get("pad_token_id")
        self.clean_up_tokenization_spaces = bool(meta.get("clean_up_tokenization_spaces", False))
        self.source = source
        self._transformers = None

    @classmethod
    def load(cls, folder: str | Path, source: str | Path | None = None) -> LightTokenizer | None:
        """The tokenizer snapshotted in ``folder``, or None when there is none (of this format)."""
        meta = read_meta(folder)
        if meta is None:
            return None
        from tokenizers import Tokenizer

        return cls(Tokenizer.from_file(str(Path(folder) / TOKENIZER_FILE)), meta, source)

    @property
    def backend_tokenizer(self):
        return self._tokenizer

    @property
    def eos_token(self) -> str | None:
        return self.special_tokens_map.get("eos_token")

    @property
    def bos_token(self) -> str | None:
        return self.special_tokens_map.get("bos_token")

    def __len__(self) -> int:
        return self._tokenizer.get_vocab_size(with_added_tokens=True)

    def __call__(self, text: str, add_special_tokens: bool = True) -> dict[str, list[int]]:
        """``{"input_ids": [...], "attention_mask": [...]}`` for one text, as transformers returns it."""
        if not isinstance(text, str):
            raise TypeError("LightTokenizer encodes one text at a time")
        encoding = self._tokenizer.encode(text, add_special_tokens=add_special_tokens)
        return {"input_ids": list(encoding.ids), "attention_mask": list(encoding.attention_mask)}

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        return self(text, add_special_tokens=add_special_tokens)["input_ids"]

    def decode(self, token_ids: Sequence[int] | int, skip_special_tokens: bool = False) -> str:
        if isinstance(token_ids, int):
            token_ids = [token_ids]
        text = self._tokenizer.decode([int(t) for t in token_ids], skip_special_tokens=skip_special_tokens)
        return _clean_up_tokenization(text) if self.clean_up_tokenization_spaces else text

    def convert_ids_to_tokens(self, ids: Sequence[int] | int, skip_special_tokens: bool = False) -> list[str] | str:
        if isinstance(ids, int):
            return self._tokenizer.id_to_token(ids)
        skip = set(self.all_special_ids) if skip_special_tokens else set()
        return [self._tokenizer.id_to_token(int(i)) for i in ids if int(i) not in skip]

    def convert_tokens_to_ids(self, tokens: str | Sequence[str]) -> int | list[int]:
        if isinstance(tokens, str):
            index = self._tokenizer.token_to_id(tokens)
            return self.unk_token_id if index is None else index
        return [self.convert_tokens_to_ids(t) for t in tokens]

    def get_vocab(self) -> dict[str, int]:
        return self._tokenizer.get_vocab(with_added_tokens=True)

    def apply_chat_template(self, conversation: Sequence[Mapping], add_generation_prompt: bool = False,
                            tokenize: bool = True, return_dict: bool = True, **template_kwargs):
        """The conversation rendered by the model's chat template (a string with ``tokenize=False``), then encoded
        without added special tokens: transformers' ``apply_chat_template`` for one conversation, no tools."""
        if not self.chat_template:
            raise ValueError("this tokenizer has no chat template")
        if not conversation:
            raise ValueError("Cannot apply chat template to an empty conversation. Provide at least one message.")
        messages = [{k: _plain(v) for k, v in m.items() if v is not None} for m in conversation]
        kwargs = {**self.special_tokens_map, **{k: _plain(v) for k, v in template_kwargs.items()}}
        text = self._template.render(messages=messages, tools=None, documents=None,
                                     add_generation_prompt=add_generation_prompt, **kwargs)
        if not tokenize:
            return text
        encoded = self(text, add_special_tokens=False)
        return encoded if return_dict else encoded["input_ids"]

    @cached_property
    def _template(self):
        return compile_chat_template(self.chat_template)

    def transformers_tokenizer(self):
        """The transformers tokenizer of the same model, loaded now (imports transformers)."""
        if self._transformers is None:
            if self.source is None:
                raise ValueError("this tokenizer does not know where its model came from")
            from transformers import AutoTokenizer

            source = Path(self.source)
            if source.suffix == ".gguf" and source.is_file():  # a GGUF converted in one pass (bots.gguf_ct2)
                self._transformers = AutoTokenizer.from_pretrained(source.parent, gguf_file=source.name)
            else:
                self._transformers = AutoTokenizer.from_pretrained(self.source)
        return self._transformers


def _clean_up_tokenization(text: str) -> str:
    """transformers' ``clean_up_tokenization`` (spaces before punctuation and contractions)."""
    for before, after in ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
                          (" 'm", "'m"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re")):
        text = text.replace(before, after)
    return text


def _plain(value):
    """What a template may see: plain JSON-like data (transformers rebuilds template inputs the same way)."""
    if value is None or type(value) in (str, int, float, bool):
        return value
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, Mapping):
        return {_plain(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    return f"<{type(value).__name__}>"


def compile_chat_template(template: str):
    """A chat template compiled in the Jinja environment transformers 5 uses (utils/chat_template_utils.py):
    an immutable sandbox with ``trim_blocks`` and ``lstrip_blocks``, loop controls, the ``{% generation %}`` tag
    (rendered as its body), a ``tojson`` that does not escape HTML, ``raise_exception``, ``strftime_now``, a safe
    ``dict`` and a ``namespace`` that refuses underscore names."""
    import jinja2
    import jinja2.ext
    import jinja2.nodes
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class GenerationTag(jinja2.ext.Extension):
        tags = {"generation"}

        def parse(self, parser):
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
            return jinja2.nodes.CallBlock(self.call_method("_body"), [], [], body).set_lineno(lineno)

        def _body(self, caller):
            return caller()

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(format):
        return datetime.now().strftime(format)

    class TemplateDict:
        def __call__(self, *args, **kwargs):
            return dict(*args, **kwargs)

        def fromkeys(self, *args, **kwargs):
            return dict.fromkeys(*args, **kwargs)

    class TemplateNamespace(jinja2.utils.Namespace):
        def __init__(*args, **kwargs):
            self, args = args[0], args[1:]
            attrs = dict(*args, **kwargs)
            for name in attrs:
                TemplateNamespace._check_name(name)
            jinja2.utils.Namespace.__init__(self, attrs)

        def __setitem__(self, name, value):
            TemplateNamespace._check_name(name)
            jinja2.utils.Namespace.__setitem__(self, name, value)

        @staticmethod
        def _check_name(name):
            if isinstance(name, str) and name.startswith("_"):
                raise jinja2.exceptions.SecurityError(
                    f"Chat templates cannot store underscore-prefixed attributes on a namespace, but got {name!r}.")

    environment = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                                extensions=[GenerationTag, jinja2.ext.loopcontrols])
    environment.filters["tojson"] = tojson
    environment.globals["raise_exception"] = raise_exception
    environment.globals["strftime_now"] = strftime_now
    environment.globals["dict"] = TemplateDict()
    environment.globals["namespace"] = TemplateNamespace
    return environment.from_string(template)
