"""Readers that turn each evaluation format into ``Dialogue`` records.

Every format the guard is evaluated on (DECODE, DNLI, the rgm model-generated set, MuTual,
CDConv, SNLI) is read into the one record type the detector judges, so metrics and probes never
care where a dialogue came from. Formats live in a small registry (as in lm-evaluation-harness:
a name maps to a reader), so the command line and benchmarks pick one by name.

Malformed input of any kind (not UTF-8, truncated JSON, wrong types, missing or empty fields)
raises ``guard.files.InputError`` with one line naming the file, the line and the field, because a
traceback from deep inside a reader does not say what to fix. Each format has a ``parse_*_record``
function for one decoded JSON object, so a record can be checked without a file.
"""

from __future__ import annotations

import csv
import json
import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from guard.files import (
    MAX_JSON_DEPTH,
    MAX_LINE_BYTES,
    InputError,
    check_input_file,
    check_json_value,
    first_char,
    iter_text_lines,
    parse_json,
    read_text,
)
from guard.records import Dialogue, Turn

#: CDConv's labels (Zheng et al. 2022): 0 none, 1 intra-sentence, 2 role confusion, 3 history.
CDCONV_CATEGORIES = {0: "none", 1: "intra", 2: "role", 3: "history"}
#: DNLI's labels mean NLI classes: positive = entailment, negative = contradiction.
DNLI_LABELS = {"positive": "entailment", "negative": "contradiction", "neutral": "neutral"}
SNLI_LABELS = ("entailment", "neutral", "contradiction")
#: Speaker tags in MuTual articles and options: "m :" / "f :" (MuTual-plus writes "M:" / "F:").
_MUTUAL_TAG = re.compile(r"(?:^|(?<=\s))([mf])\s?:\s", re.IGNORECASE)
_ANSWER_LETTERS = "ABCD"


#: The data set readers' name for the project's input error (the same class).
DatasetError = InputError

Reader = Callable[[Path], list[Dialogue]]
FORMATS: dict[str, Reader] = {}
FORMAT_HELP: dict[str, str] = {}


def register_format(name: str, help_text: str = "") -> Callable[[Reader], Reader]:
    """Register a reader under ``name`` (decorator)."""

    def wrap(reader: Reader) -> Reader:
        FORMATS[name] = reader
        FORMAT_HELP[name] = help_text or (reader.__doc__ or "").strip().splitlines()[0]
        return reader

    return wrap


def available_formats() -> list[str]:
    return sorted(FORMATS)


def read_dataset(fmt: str, path: str | Path, limit: int | None = None) -> list[Dialogue]:
    """Read ``path`` as format ``fmt``; ``limit`` keeps the first records (for quick runs)."""
    if fmt not in FORMATS:
        raise InputError(path, None, None, f"unknown format {fmt!r}; choose one of {available_formats()}")
    path = check_input_file(path)
    records = FORMATS[fmt](path)
    if not records:
        raise InputError(path, None, None, f"no {fmt} records in the file")
    return records[:limit] if limit is not None else records


# ---------------------------------------------------------------------------- file walking
def iter_jsonl(path: Path) -> Iterator[tuple[int, dict]]:
    """(line number, object) for each non-blank line; a bad line is an InputError."""
    for number, line in iter_text_lines(path):
        if not line.strip():
            continue
        yield number, _expect_object(path, number, parse_json(path, number, line))


def _expect_object(path: Path, line: int, value: Any) -> dict:
    if not isinstance(value, dict):
        raise InputError(path, line, None, f"expected a JSON object, got {_json_type(value)}")
    return value


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "true/false", type(None): "null"}
    return names.get(type(value), "a number")


def iter_json_array(path: Path) -> Iterator[tuple[int, dict]]:
    """(line number where the item starts, object) for each item of a file holding one JSON array.

    Decodes item by item (``raw_decode``) so an error can still name the line of the bad item;
    an item longer than ``MAX_LINE_BYTES`` characters is refused like a long line.
    """
    text = read_text(path)
    decoder = json.JSONDecoder()

    def line_of(pos: int) -> int:
        return text.count("\n", 0, pos) + 1

    pos = _skip_ws(text, 0)
    if pos >= len(text):
        raise InputError(path, line_of(pos), None, "no JSON in the file; expected one JSON array '[...]'")
    if text[pos] != "[":
        value = parse_json(path, 1, text)  # a syntax error is named by its line
        raise InputError(path, line_of(pos), None,
                         f"expected the file to hold one JSON array '[...]', got {_json_type(value)}")
    pos = _skip_ws(text, pos + 1)
    if pos < len(text) and text[pos] == "]":
        return
    while True:
        try:
            obj, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise InputError(path, exc.lineno, None, f"not valid JSON ({exc.msg} at column {exc.colno})") from None
        except RecursionError:
            raise InputError(path, line_of(pos), None, f"JSON nested deeper than {MAX_JSON_DEPTH} levels") from None
        except ValueError as exc:  # e.g. an integer longer than Python converts
            raise InputError(path, line_of(pos), None, f"not usable JSON ({exc})") from None
        if end - pos > MAX_LINE_BYTES:
            raise InputError(path, line_of(pos), None, "array item longer than 1 MiB; refusing it")
        check_json_value(path, line_of(pos), obj, text[pos:end])
        yield line_of(pos), _expect_object(path, line_of(pos), obj)
        pos = _skip_ws(text, end)
        if pos < len(text) and text[pos] == ",":
            pos = _skip_ws(text, pos + 1)
            continue
        if pos < len(text) and text[pos] == "]":
            if _skip_ws(text, pos + 1) != len(text):
                raise InputError(path, line_of(pos + 1), None, "unexpected text after the JSON array")
            return
        if pos >= len(text):
            raise InputError(path, line_of(pos), None, "the file ends before the JSON array is closed with ']'")
        raise InputError(path, line_of(pos), None, "expected ',' or ']' between array items")


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n\ufeff":
        pos += 1
    return pos


def iter_objects(path: Path) -> Iterator[tuple[int, dict]]:
    """JSON lines, or one JSON array when the file starts with '['."""
    return iter_json_array(path) if first_char(path) == "[" else iter_jsonl(path)


# ---------------------------------------------------------------------------- field checks
def _field(path: Path, line: int, obj: dict, name: str, kind: type | tuple[type, ...],
           required: bool = True, default: Any = None) -> Any:
    if name not in obj or obj[name] is None:
        if required:
            raise InputError(path, line, name, "missing")
        return default
    value = obj[name]
    # bool is an int in Python; an int field must not silently accept true/false
    if (kind is int or kind == (int,)) and isinstance(value, bool):
        raise InputError(path, line, name, f"expected an integer, got {_show(value)}")
    if not isinstance(value, kind):
        want = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise InputError(path, line, name, f"expected {want}, got {type(value).__name__} {_show(value)}")
    return value


def _text(path: Path, line: int, value: Any, name: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InputError(path, line, name, f"expected non-empty text, got {_show(value)}")
    return value.strip()


def _record_id(path: Path, line: int, obj: dict, name: str) -> str:
    """The record's id field (text or a number), else FILE_STEM:LINE."""
    value = obj.get(name)
    if value is None:
        return f"{path.stem}:{line}"
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise InputError(path, line, name, f"expected text or a number, got {_show(value)}")
    return str(value)


def _show(value: Any) -> str:
    """A short JSON rendering of a value for an error message."""
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


# ---------------------------------------------------------------------------- DECODE
def parse_decode_record(path: Path, line: int, obj: dict) -> Dialogue:
    """One DECODE-shaped object (the format ``python -m guard score`` reads and probes write)."""
    record_id = _record_id(path, line, obj, "record_id")
    raw_turns = _field(path, line, obj, "turns", list)
    if not raw_turns:
        raise InputError(path, line, "turns", "empty; a record needs at least the turn to judge")
    turns: list[Turn] = []
    for i, raw in enumerate(raw_turns):
        name = f"turns[{i}]"
        if not isinstance(raw, dict):
            raise InputError(path, line, name, f"expected an object with turn_id, agent_id, text, got {type(raw).__name__}")
        turn_id = raw.get("turn_id", i)
        if isinstance(turn_id, bool) or not isinstance(turn_id, int):
            raise InputError(path, line, f"{name}.turn_id", f"expected an integer, got {_show(turn_id)}")
        if "agent_id" not in raw or raw["agent_id"] is None or isinstance(raw["agent_id"], (list, dict, bool)):
            raise InputError(path, line, f"{name}.agent_id", "missing (the speaker: a string or number)")
        turns.append(Turn(turn_id, str(raw["agent_id"]), _text(path, line, raw.get("text"), f"{name}.text")))
    ids = [t.turn_id for t in turns]
    if len(set(ids)) != len(ids):
        repeated = sorted(i for i, n in Counter(ids).items() if n > 1)
        raise InputError(path, line, "turns", f"turn_id values repeat: {repeated}")

    label = obj.get("is_contradiction", obj.get("label"))
    if label is not None and not isinstance(label, bool):
        raise InputError(path, line, "is_contradiction", f"expected true/false, got {_show(label)}")
    evidence = None
    indices = obj.get("aggregated_contradiction_indices", obj.get("evidence"))
    if indices is not None:
        if not isinstance(indices, list) or any(isinstance(i, bool) or not isinstance(i, int) for i in indices):
            raise InputError(path, line, "aggregated_contradiction_indices", f"expected a list of turn ids, got {_show(indices)}")
        unknown = [i for i in indices if i not in ids]
        if unknown:
            raise InputError(path, line, "aggregated_contradiction_indices", f"turn ids {unknown} are not in turns {ids}")
        # DECODE lists the judged (last) turn too; evidence means the earlier turns only
        evidence = sorted({i for i in indices if i != turns[-1].turn_id})
    if label is False and evidence is None:
        evidence = []

    persona = obj.get("persona")
    if persona is None:  # DECODE keeps persona lines per agent
        agents = obj.get("agents") or {}
        agent = agents.get(turns[-1].agent_id) if isinstance(agents, dict) else None
        persona = (agent.get("persona_lines") or []) if isinstance(agent, dict) else []
    if not isinstance(persona, list) or not all(isinstance(p, str) for p in persona):
        raise InputError(path, line, "persona", "expected a list of strings")
    category = obj.get("category")
    if category is not None and category not in CDCONV_CATEGORIES.values():
        raise InputError(path, line, "category", f"expected one of {list(CDCONV_CATEGORIES.values())}, got {_show(category)}")
    meta = _field(path, line, obj, "meta", dict, required=False, default={})
    meta = dict(meta)
    auxiliary = obj.get("auxiliary")
    source = auxiliary.get("source") if isinstance(auxiliary, dict) else None
    if source:
        meta.setdefault("source", source)
    return Dialogue(record_id, turns, label=label, evidence=evidence, persona=list(persona),
                    category=category, meta=meta)


@register_format("decode", "DECODE jsonl: record_id, turns[{turn_id, agent_id, text}], is_contradiction, "
                 "aggregated_contradiction_indices")
def read_decode(path: Path) -> list[Dialogue]:
    """DECODE jsonl (Nie et al. 2021); also the project's probe suite and probe outputs."""
    return [parse_decode_record(path, line, obj) for line, obj in iter_objects(path)]


def decode_record(record_id: str, turns: Sequence[Turn], *, label: bool | None = None,
                  indices: Sequence[int] | None = None, persona: Sequence[str] | None = None,
                  category: str | None = None, meta: Mapping[str, Any] | None = None,
                  turn_fields: Mapping[int, Mapping[str, Any]] | None = None) -> dict:
    """The one writer of DECODE-shaped JSON objects (probes, the probe suite, the chat transcript, the studio's
    export): ``record_id``, ``turns`` (``turn_id``, ``agent_id``, ``text``, plus ``turn_fields[turn_id]``),
    ``is_contradiction``, ``aggregated_contradiction_indices`` and the project's ``persona``, ``category`` and
    ``meta``; a field given as None is left out. ``parse_decode_record`` reads what this writes."""
    extra = turn_fields or {}
    out: dict[str, Any] = {
        "record_id": record_id,
        "turns": [{"turn_id": t.turn_id, "agent_id": t.agent_id, "text": t.text, **extra.get(t.turn_id, {})}
                  for t in turns],
    }
    if label is not None:
        out["is_contradiction"] = label
    if indices is not None:
        out["aggregated_contradiction_indices"] = list(indices)
    if persona is not None:
        out["persona"] = list(persona)
    if category is not None:
        out["category"] = category
    if meta is not None:
        out["meta"] = meta
    return out


def dialogue_to_decode(dialogue: Dialogue) -> dict:
    """A record as a DECODE-shaped object. Its evidence (earlier turns) is written with the judged turn added
    when it contradicts (DECODE's convention); empty persona and meta are left out."""
    indices = None
    if dialogue.evidence is not None:
        indices = list(dialogue.evidence) + ([dialogue.turns[-1].turn_id] if dialogue.label else [])
    return decode_record(dialogue.record_id, dialogue.turns, label=dialogue.label, indices=indices,
                         persona=dialogue.persona or None, category=dialogue.category, meta=dialogue.meta or None)


# ---------------------------------------------------------------------------- DNLI
def _nli_pair_dialogue(record_id: str, premise: str, hypothesis: str, nli_label: str, meta: dict) -> Dialogue:
    """An NLI pair as a 2-turn same-speaker dialogue: the hypothesis is judged against the premise."""
    contradiction = nli_label == "contradiction"
    return Dialogue(
        record_id, [Turn(0, "0", premise), Turn(1, "0", hypothesis)], label=contradiction,
        evidence=[0] if contradiction else [], category="history" if contradiction else "none",
        meta={"nli_label": nli_label, **meta},
    )


def parse_dnli_record(path: Path, line: int, obj: dict) -> Dialogue:
    """One DNLI pair {sentence1, sentence2, label}."""
    label = _field(path, line, obj, "label", str)
    if label not in DNLI_LABELS:
        raise InputError(path, line, "label", f"expected positive, negative or neutral, got {_show(label)}")
    s1 = _text(path, line, obj.get("sentence1"), "sentence1")
    s2 = _text(path, line, obj.get("sentence2"), "sentence2")
    extra = {k: obj[k] for k in ("dtype", "triple1", "triple2") if k in obj}
    return _nli_pair_dialogue(_record_id(path, line, obj, "id"), s1, s2, DNLI_LABELS[label], extra)


@register_format("dnli", "Dialogue NLI: one JSON array of {sentence1, sentence2, label: positive|negative|neutral}")
def read_dnli(path: Path) -> list[Dialogue]:
    """Dialogue NLI (Welleck et al. 2019): a JSON array of labelled (sentence1, sentence2) pairs."""
    return [parse_dnli_record(path, line, obj) for line, obj in iter_objects(path)]


# ---------------------------------------------------------------------------- rgm
def parse_rgm_record(path: Path, line: int, obj: dict) -> Dialogue:
    """One rgm object: the context up to the annotated reply, labelled by the annotator count."""
    utterances = _field(path, line, obj, "utterances", list)
    speakers = _field(path, line, obj, "speakers", list)
    if len(utterances) < 2:
        raise InputError(path, line, "utterances", "needs at least two utterances")
    if len(speakers) != len(utterances):
        raise InputError(path, line, "speakers", f"has {len(speakers)} entries for {len(utterances)} utterances")
    pair = _field(path, line, obj, "annotation_target_pair", list)
    if len(pair) != 2 or any(isinstance(i, bool) or not isinstance(i, int) for i in pair) \
            or not 0 <= pair[0] < pair[1] < len(utterances):
        raise InputError(path, line, "annotation_target_pair", f"expected [i, j] with 0 <= i < j < {len(utterances)}, got {_show(pair)}")
    count = _field(path, line, obj, "contradictory_label_count", int)
    if not 0 <= count <= 3:
        raise InputError(path, line, "contradictory_label_count", f"expected 0..3 annotators, got {count}")
    i, j = pair
    turns = []
    for k, utterance in enumerate(utterances[: j + 1]):  # the judged reply is the last turn
        speaker = speakers[k]
        if speaker is None or isinstance(speaker, (list, dict, bool)):
            raise InputError(path, line, f"speakers[{k}]", f"expected a speaker name, got {_show(speaker)}")
        turns.append(Turn(k, str(speaker), _text(path, line, utterance, f"utterances[{k}]")))
    label = True if count >= 2 else False if count == 0 else None
    rgm_name = obj.get("rgm_name")
    if rgm_name is not None and not isinstance(rgm_name, str):
        raise InputError(path, line, "rgm_name", f"expected the generating model's name, got {_show(rgm_name)}")
    return Dialogue(
        f"{path.stem}:{line}", turns, label=label,
        evidence=[i] if label else ([] if label is False else None),
        category=None,
        meta={"rgm_name": rgm_name, "contradictory_label_count": count, "target_pair": pair},
    )


@register_format("rgm", "Sato et al. model-generated set: utterances, speakers, annotation_target_pair, "
                 "contradictory_label_count")
def read_rgm(path: Path) -> list[Dialogue]:
    """The rgm jsonl (Sato et al. 2024): a context ending in a model-generated reply, judged by 3 annotators.

    Label: contradiction when 2 or 3 annotators saw one, none when 0; a count of 1 (absent from
    the release) is kept unlabelled. Evidence: the earlier utterance of the annotated pair.
    """
    return [parse_rgm_record(path, line, obj) for line, obj in iter_objects(path)]


# ---------------------------------------------------------------------------- MuTual
def split_mutual_speakers(text: str) -> list[tuple[str, str]]:
    """("m"|"f", utterance) pieces of a MuTual article or option tagged "m :" / "f :"."""
    pieces = []
    matches = list(_MUTUAL_TAG.finditer(text))
    for k, m in enumerate(matches):
        end = matches[k + 1].start() if k + 1 < len(matches) else len(text)
        utterance = text[m.end():end].strip()
        if utterance:
            pieces.append((m.group(1).lower(), utterance))
    return pieces


def parse_mutual_record(path: Path, line: int, obj: dict) -> Dialogue:
    """One MuTual item: the context as turns; the four options and the answer in meta."""
    article = _field(path, line, obj, "article", str)
    pieces = split_mutual_speakers(article)
    if not pieces:
        raise InputError(path, line, "article", "no 'm :' / 'f :' speaker tags found")
    options_raw = _field(path, line, obj, "options", list)
    if len(options_raw) != 4:
        raise InputError(path, line, "options", f"expected 4 options, got {len(options_raw)}")
    options, option_speakers = [], []
    for k, opt in enumerate(options_raw):
        opt = _text(path, line, opt, f"options[{k}]")
        tagged = split_mutual_speakers(opt)
        option_speakers.append(tagged[0][0] if tagged else None)
        options.append(" ".join(u for _, u in tagged) if tagged else opt)
    answer = obj.get("answers")
    if answer is not None:
        if not isinstance(answer, str) or answer.strip().upper() not in tuple(_ANSWER_LETTERS):
            raise InputError(path, line, "answers", f"expected one letter A-D, got {_show(answer)}")
        answer = _ANSWER_LETTERS.index(answer.strip().upper())
    speaker = next((s for s in option_speakers if s), None)
    if speaker is None:  # untagged options answer the last speaker
        speaker = "m" if pieces[-1][0] == "f" else "f"
    turns = [Turn(k, s, u) for k, (s, u) in enumerate(pieces)]
    return Dialogue(_record_id(path, line, obj, "id"), turns, label=None,
                    meta={"options": options, "answer": answer, "option_speaker": speaker})


@register_format("mutual", "MuTual / MuTual-plus jsonl: article ('m :'/'f :' tags), options (4), answers (A-D)")
def read_mutual(path: Path) -> list[Dialogue]:
    """MuTual (Cui et al. 2020): the context as turns; the four options and the answer in meta.

    ``meta["options"]`` holds the options without their speaker tag, ``meta["answer"]`` the index
    of the right one (None for the unlabelled test split) and ``meta["option_speaker"]`` who says them.
    """
    return [parse_mutual_record(path, line, obj) for line, obj in iter_objects(path)]


# ---------------------------------------------------------------------------- CDConv
def _iter_cdconv_rows(path: Path) -> Iterator[tuple[int, dict]]:
    suffix = path.suffix.lower()
    if suffix not in (".tsv", ".csv"):
        yield from iter_objects(path)
        return
    lines = (text for _, text in iter_text_lines(path))
    reader = csv.DictReader(lines, delimiter="\t" if suffix == ".tsv" else ",")
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise InputError(path, reader.line_num, None, f"not valid {suffix[1:]} ({exc})") from None
        yield reader.line_num, dict(row)  # the line where the row ends (line 1 is the header)


def parse_cdconv_record(path: Path, line: int, obj: dict) -> Dialogue:
    """One CDConv row: user/bot/user/bot; b2 is judged, labelled with its category."""
    texts = [_text(path, line, obj.get(k), k) for k in ("u1", "b1", "u2", "b2")]
    raw = obj.get("label")
    if isinstance(raw, int) and not isinstance(raw, bool):
        label = raw
    elif isinstance(raw, str) and re.fullmatch(r"\s*[0-9]{1,3}\s*", raw):  # tsv cells are text
        label = int(raw)
    else:
        label = None
    if label not in CDCONV_CATEGORIES:
        raise InputError(path, line, "label", f"expected 0, 1, 2 or 3, got {_show(raw)}")
    category = CDCONV_CATEGORIES[label]
    turns = [Turn(k, "user" if k % 2 == 0 else "bot", t) for k, t in enumerate(texts)]
    evidence = [1] if category == "history" else [] if category == "none" else None
    meta = {k: obj[k] for k in ("method", "persona", "id") if obj.get(k) not in (None, "")}
    return Dialogue(_record_id(path, line, obj, "id"), turns, label=label != 0,
                    evidence=evidence, category=category, meta=meta)


@register_format("cdconv", "CDConv: u1, b1, u2, b2, label 0-3 (none, intra, role, history); jsonl, JSON array or tsv")
def read_cdconv(path: Path) -> list[Dialogue]:
    """CDConv (Zheng et al. 2022): user/bot/user/bot; b2 is judged, labelled with its category.

    Evidence is b1 (turn 1) for history contradictions; intra-sentence contradictions have none
    (the reply contradicts itself) and role confusion has no turn-level evidence in the release.
    """
    return [parse_cdconv_record(path, line, obj) for line, obj in _iter_cdconv_rows(path)]


# ---------------------------------------------------------------------------- SNLI
def parse_snli_record(path: Path, line: int, obj: dict) -> Dialogue | None:
    """One SNLI pair; None for a pair without a gold label ('-'), which is skipped as is standard."""
    gold = _field(path, line, obj, "gold_label", str)
    if gold == "-":
        return None
    if gold not in SNLI_LABELS:
        raise InputError(path, line, "gold_label", f"expected entailment, neutral, contradiction or '-', got {_show(gold)}")
    s1 = _text(path, line, obj.get("sentence1"), "sentence1")
    s2 = _text(path, line, obj.get("sentence2"), "sentence2")
    return _nli_pair_dialogue(_record_id(path, line, obj, "pairID"), s1, s2, gold, {})


@register_format("snli", "SNLI jsonl: sentence1, sentence2, gold_label")
def read_snli(path: Path) -> list[Dialogue]:
    """SNLI jsonl (Bowman et al. 2015); pairs without a gold label ('-') are skipped, as is standard."""
    records = (parse_snli_record(path, line, obj) for line, obj in iter_objects(path))
    return [record for record in records if record is not None]


#: The one-object parser of each format (what a reader applies to every JSON object of a file).
RECORD_PARSERS: dict[str, Callable[[Path, int, dict], Dialogue | None]] = {
    "decode": parse_decode_record, "dnli": parse_dnli_record, "rgm": parse_rgm_record,
    "mutual": parse_mutual_record, "cdconv": parse_cdconv_record, "snli": parse_snli_record,
}
