"""Malformed input never crashes a reader or a command line: it is one InputError naming file and line.

Property-based part (Hypothesis, derandomized so every run draws the same >= 10,000 inputs): every
reader (the six data set formats, CDConv's tsv, ``bots.cli``'s history and persona files and
``bots.mutual``'s item reader) gets random bytes, valid files with broken UTF-8 put into one line,
JSON values of the wrong type, valid records with one field removed, emptied or retyped, and valid
lines cut short. Nothing but ``guard.files.InputError`` may escape, and its one-line message must
start with the file and, for a problem inside the file, the line it is on.

End-to-end part: ``python -m guard score|evaluate|probe`` and ``python -m bots generate`` (in
process, through their ``main``) answer each kind of malformed input with exit status 2, one line
on stderr and no output file.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bots.cli
import guard.cli
from guard.eval.datasets import read_dataset
from guard.files import MAX_LINE_BYTES, InputError

SETTINGS = dict(derandomize=True, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# ---------------------------------------------------------------------------- the readers
@dataclass(frozen=True)
class Reader:
    """A reader, the layout of its files and valid records to build them from."""

    name: str
    read: Callable[[Path], object]
    layout: str  # "lines": a JSON object a line; "array": one JSON array; "tsv": header + rows; "text"
    valid: tuple[Any, ...]
    suffix: str = ".jsonl"

    def content(self, items: list[Any]) -> str:
        """File text with item k on line ``self.line_of(k)``."""
        if self.layout == "lines":
            return "".join(dumps(item) + "\n" for item in items)
        if self.layout == "array":
            return "[\n" + ",\n".join(dumps(item) for item in items) + "\n]\n"
        if self.layout == "tsv":
            return "".join("\t".join(row) + "\n" for row in [list(TSV_COLUMNS), *items])
        return "".join(f"{item}\n" for item in items)

    def line_of(self, index: int) -> int:
        return index + (2 if self.layout in ("array", "tsv") else 1)


def dumps(item: Any) -> str:
    """JSON with non-ASCII text as UTF-8; a lone surrogate (not UTF-8) stays a \\udXXX escape."""
    text = json.dumps(item, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(item)
    return text


def dataset(fmt: str) -> Callable[[Path], object]:
    return lambda path: read_dataset(fmt, path)


def read_mutual_items(path: Path) -> object:
    from bots.mutual import read_mutual  # imports scikit-learn: only when this reader runs

    return read_mutual(path)


DECODE = {"record_id": "r1", "turns": [
    {"turn_id": 0, "agent_id": 0, "text": "i love dogs"},
    {"turn_id": 1, "agent_id": 1, "text": "café ?"},
    {"turn_id": 2, "agent_id": 0, "text": "i hate dogs"}],
    "is_contradiction": True, "aggregated_contradiction_indices": [0, 2],
    "agents": {"0": {"persona_lines": ["i have a dog ."]}}, "auxiliary": {"source": "BST"}, "meta": {"kind": "x"}}
DNLI = {"id": "d1", "label": "negative", "sentence1": "i have a dog .", "sentence2": "je n'ai pas de chien ."}
RGM = {"utterances": ["hi", "i love tea", "do you?", "i hate tea"], "speakers": ["A", "B", "A", "B"],
       "annotation_target_pair": [1, 3], "contradictory_label_count": 3, "rgm_name": "opt"}
MUTUAL = {"id": "m1", "answers": "B", "article": "m : do you like dogs ? f : no , i like cats .",
          "options": ["m : you like dogs .", "m : so you like cats .", "m : you hate cats .", "m : a dog ."]}
CDCONV = {"u1": "你喜欢狗吗？", "b1": "i love dogs", "u2": "really?", "b2": "i hate dogs", "label": 3}
SNLI = {"sentence1": "a man sleeps", "sentence2": "a man is awake", "gold_label": "contradiction", "pairID": "p"}
TSV_COLUMNS = ("u1", "b1", "u2", "b2", "label")
TSV_ROW = ("你好", "hello", "pets?", "no pets", "2")

READERS = [
    Reader("decode", dataset("decode"), "lines", (DECODE, {**DECODE, "record_id": "r2"})),
    Reader("dnli", dataset("dnli"), "array", (DNLI, {**DNLI, "label": "positive"}), ".json"),
    Reader("rgm", dataset("rgm"), "lines", (RGM, {**RGM, "contradictory_label_count": 0})),
    Reader("mutual", dataset("mutual"), "lines", (MUTUAL, {**MUTUAL, "id": "m2"})),
    Reader("cdconv", dataset("cdconv"), "lines", (CDCONV, {**CDCONV, "label": 0})),
    Reader("cdconv-tsv", dataset("cdconv"), "tsv", (TSV_ROW, TSV_ROW[:4] + ("3",)), ".tsv"),
    Reader("snli", dataset("snli"), "lines", (SNLI, {**SNLI, "gold_label": "neutral"})),
    Reader("mutual-items", read_mutual_items, "lines", (MUTUAL, {**MUTUAL, "answers": "A"})),
    Reader("history", bots.cli.read_history, "array",
           ({"speaker": "user", "text": "hi"}, {"speaker": "bot", "text": "héllo"}), ".json"),
    Reader("persona", bots.cli.read_persona, "text", ("i love tea .", "j'habite à lyon ."), ".txt"),
]
JSON_READERS = [r for r in READERS if r.layout in ("lines", "array")]
BY_NAME = {r.name: r for r in READERS}


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Iterator[Path]:
    """One folder for all examples, each overwriting its reader's file; in memory (/dev/shm) where there is
    one, because thousands of file writes on a busy disk take most of the run's time."""
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        yield tmp_path_factory.mktemp("malformed")
        return
    path = Path(tempfile.mkdtemp(prefix="malformed-inputs-", dir=shm))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def write(folder: Path, reader: Reader, data: bytes | str) -> Path:
    path = folder / f"{reader.name}{reader.suffix}"
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def read_or_input_error(reader: Reader, path: Path) -> InputError | None:
    """Run the reader; only an InputError with a one-line message naming the file may come out."""
    try:
        reader.read(path)
    except InputError as exc:  # the one error allowed out: checked below
        message = str(exc)
        assert len(message.splitlines()) == 1 and "\n" not in message, message
        assert message.startswith(f"{path}:"), message
        if exc.line is not None:
            assert message.startswith(f"{path}:{exc.line}:"), message
        return exc
    except Exception as exc:
        raise AssertionError(f"{reader.name} let {type(exc).__name__} escape: {exc}") from exc
    return None


def assert_error_on_line(reader: Reader, path: Path, line: int, fragment: str = "") -> InputError:
    error = read_or_input_error(reader, path)
    assert error is not None, f"{reader.name} accepted {path.read_bytes()[:200]!r}"
    assert error.line == line, (reader.name, str(error))
    assert fragment in str(error), (reader.name, str(error))
    return error


def test_the_valid_files_read(folder):
    for reader in READERS:
        assert read_or_input_error(reader, write(folder, reader, reader.content(list(reader.valid)))) is None


# ---------------------------------------------------------------------------- strategies
# Each example is applied to every reader it fits, so Hypothesis draws once per several inputs
# (drawing costs more than reading here). Inputs per run: 400 x 10 random byte strings,
# 250 x 10 broken UTF-8 files, 250 x 8 wrong-type values, 300 x 9 mutated records and 150 x 9
# truncated files: 12,550, in about 15 s of CPU.
TEXT = st.text(st.one_of(st.characters(), st.characters(categories=["Cs"])), max_size=8)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=6,
)
EMPTY_VALUES = st.sampled_from([None, "", " ", [], {}, 0, False])
BROKEN_UTF8 = st.sampled_from([b"\xff", b"\xfe", b"\x80", b"\xc3(", b"\xe2\x82", b"\xed\xa0\x80",
                               b"\xc0\xaf", b"\xf8\x88\x80\x80\x80", b"\xf4\x90\x80\x80"])
#: Picks an element of a list of any length (index = pick % length), so one draw serves every reader.
PICK = st.integers(0, 10**6)
TSV_CELL = st.text(st.characters(exclude_characters='\t\n\r"', exclude_categories=["Cs"]), max_size=8)


def field_paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every key / index path inside a JSON value (where a mutation can land)."""
    paths = []
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in children:
        paths.append(prefix + (key,))
        paths.extend(field_paths(child, prefix + (key,)))
    return paths


def mutate(record: Any, path: tuple, action: str, replacement: Any) -> Any:
    """A deep copy of ``record`` with the value at ``path`` removed or replaced."""
    record = json.loads(json.dumps(record))
    parent = record
    for key in path[:-1]:
        parent = parent[key]
    if action == "remove":
        del parent[path[-1]]  # a list item removed shifts the rest: also a malformed record
    else:
        parent[path[-1]] = replacement
    return record


@dataclass(frozen=True)
class Mutation:
    """Which valid record, which field, and what happens to it; ``pick``s are taken modulo the choices."""

    record_pick: int
    field_pick: int
    action: str
    empty: Any
    value: Any
    cell: str

    def apply(self, reader: Reader) -> Any:
        template = reader.valid[self.record_pick % len(reader.valid)]
        if reader.layout == "tsv":  # a cell replaced by any text that stays inside its cell
            row = list(template)
            row[self.field_pick % len(row)] = self.cell
            return tuple(row)
        paths = field_paths(template)
        replacement = {"empty": self.empty, "retype": self.value, "retype-text": self.cell}.get(self.action)
        return mutate(template, paths[self.field_pick % len(paths)], self.action, replacement)


MUTATIONS = st.builds(
    Mutation, PICK, PICK, st.sampled_from(["remove", "empty", "retype", "retype-text"]),
    EMPTY_VALUES, JSON_VALUES, TSV_CELL,
)


# ---------------------------------------------------------------------------- properties
@settings(max_examples=400, **SETTINGS)
@given(data=st.one_of(st.binary(max_size=300),
                      st.lists(st.binary(max_size=20) | st.sampled_from([b"\n", b"{", b"[", b"\t", b'"']),
                               max_size=10).map(b"".join)))
def test_random_bytes(folder, data):
    for reader in READERS:
        error = read_or_input_error(reader, write(folder, reader, data))
        if error is not None and error.line is not None:
            assert 1 <= error.line <= data.count(b"\n") + 1, (reader.name, str(error))


@settings(max_examples=250, **SETTINGS)
@given(bad=BROKEN_UTF8, line_pick=PICK, position_pick=PICK)
def test_broken_utf8_is_named_by_its_line(folder, bad, line_pick, position_pick):
    for reader in READERS:
        lines = reader.content(list(reader.valid)).encode("utf-8").split(b"\n")
        index = line_pick % (len(lines) - 1)  # the last piece is the empty one after the final newline
        position = position_pick % (len(lines[index]) + 1)
        lines[index] = lines[index][:position] + bad + lines[index][position:]
        assert_error_on_line(reader, write(folder, reader, b"\n".join(lines)), index + 1, "not UTF-8 text")


@settings(max_examples=250, **SETTINGS)
@given(value=JSON_VALUES)
def test_json_values_of_the_wrong_type(folder, value):
    for reader in JSON_READERS:
        error = read_or_input_error(reader, write(folder, reader, reader.content([reader.valid[0], value])))
        if error is not None or not isinstance(value, dict):  # only an object can be a record
            assert error is not None and error.line == reader.line_of(1), (reader.name, str(error))


@settings(max_examples=300, **SETTINGS)
@given(mutation=MUTATIONS)
def test_records_with_a_field_removed_emptied_or_retyped(folder, mutation):
    for reader in JSON_READERS + [BY_NAME["cdconv-tsv"]]:
        item = mutation.apply(reader)
        error = read_or_input_error(reader, write(folder, reader, reader.content([reader.valid[0], item])))
        if error is not None:
            assert error.line == reader.line_of(1), (reader.name, str(error))


@settings(max_examples=150, **SETTINGS)
@given(record_pick=PICK, cut_pick=PICK)
def test_truncated_lines(folder, record_pick, cut_pick):
    for reader in READERS:
        if reader.layout == "text":  # any prefix of a persona line is a persona line
            continue
        lines = reader.content(list(reader.valid)).split("\n")
        index = reader.line_of(record_pick % len(reader.valid)) - 1
        cut = 1 + cut_pick % (len(lines[index]) - 1)  # at least one character kept, at least one lost
        rest = [] if reader.layout == "array" else lines[index + 1:]  # an array cut there is never closed
        path = write(folder, reader, "\n".join(lines[:index] + [lines[index][:cut]] + rest))
        # a JSON record cut short is not JSON; a tsv row cut short has lost its label (or more)
        assert_error_on_line(reader, path, index + 1, "field '" if reader.layout == "tsv" else "")


# ---------------------------------------------------------------------------- whole-file problems
@pytest.mark.parametrize("reader", READERS, ids=lambda r: r.name)
def test_whole_file_problems(tmp_path, reader):
    cases = {
        "missing": (tmp_path / f"missing{reader.suffix}", "no such file"),
        "folder": (tmp_path, "is a folder"),
    }
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "pipe")
        cases["fifo"] = (tmp_path / "pipe", "named pipe")
    for name, (path, fragment) in cases.items():
        error = read_or_input_error(reader, path)
        assert error is not None and fragment in str(error) and error.line is None, name
    utf16 = write(tmp_path, reader, reader.content(list(reader.valid)).encode("utf-16"))
    assert_error_on_line(reader, utf16, 1, "UTF-16")
    gz = write(tmp_path, reader, b"\x1f\x8b\x08\x00" + bytes(range(256)))
    assert_error_on_line(reader, gz, 1, "gzip")
    if reader.layout == "array":  # read whole; an item over the limit is refused
        huge_item = {**reader.valid[0], "text": "x" * MAX_LINE_BYTES}
        huge = write(tmp_path, reader, reader.content([reader.valid[0], huge_item]))
    else:
        huge = write(tmp_path, reader, reader.content([reader.valid[0]]) + "x" * (MAX_LINE_BYTES + 1) + "\n")
    assert_error_on_line(reader, huge, reader.line_of(1), "longer than 1 MiB")


def test_json_nested_too_deep_and_lone_surrogates_are_named(tmp_path):
    reader = BY_NAME["decode"]
    deep = {**DECODE, "meta": {"x": json.loads("[" * 200 + "]" * 200)}}
    assert_error_on_line(reader, write(tmp_path, reader, reader.content([DECODE, deep])), 2, "nested deeper")
    lone = json.dumps(DECODE).replace("i hate dogs", "i hate \\ud800dogs")
    assert_error_on_line(reader, write(tmp_path, reader, json.dumps(DECODE) + "\n" + lone + "\n"), 2, "surrogate")
    too_long = json.dumps(DECODE).replace('"r1"', "1" * 5000)
    assert_error_on_line(reader, write(tmp_path, reader, too_long + "\n"), 1, "not usable JSON")


# ---------------------------------------------------------------------------- command lines
DECODE_LINE = json.dumps(DECODE)
MALFORMED: dict[str, bytes | None] = {  # None: not a file at all (see input_path)
    "latin-1": '{"turns": [{"agent_id": 1, "text": "café"}]}\n'.encode("latin-1"),
    "utf-16": (DECODE_LINE + "\n").encode("utf-16"),
    "truncated": (DECODE_LINE + "\n" + DECODE_LINE[:40] + "\n").encode(),
    "array-in-lines": b'[1, 2]\n',
    "number-for-text": json.dumps({"turns": [{"agent_id": 1, "text": 5}]}).encode(),
    "missing-field": json.dumps({"record_id": "x"}).encode(),
    "empty-field": json.dumps({"turns": [{"agent_id": 1, "text": ""}]}).encode(),
    "huge-line": b'{"turns": "' + b"x" * (MAX_LINE_BYTES + 10) + b'"}\n',
    "binary": bytes(range(256)),
    "gzip": b"\x1f\x8b\x08\x00\x00\x00\x00\x00",
    "empty": b"",
    "folder": None,
    "missing": None,
    "fifo": None,
}
HISTORY_MALFORMED = {**MALFORMED,
                     "array-in-lines": b'{"speaker": "user", "text": "hi"}',
                     "number-for-text": b'[{"speaker": "user", "text": 5}]',
                     "missing-field": b'[{"text": "hi"}]',
                     "empty-field": b'[{"speaker": "", "text": "hi"}]',
                     "truncated": b'[{"speaker": "user", "text": "hi"}, {"speak'}
PERSONA_MALFORMED = {k: v for k, v in MALFORMED.items()
                     if k in ("latin-1", "utf-16", "huge-line", "binary", "gzip", "folder", "missing", "fifo")}


def input_path(folder: Path, kind: str, content: bytes | None, suffix: str) -> Path:
    if kind == "folder":
        (folder / "a-folder").mkdir()
        return folder / "a-folder"
    if kind == "fifo":
        if not hasattr(os, "mkfifo"):
            pytest.skip("no named pipes here")
        os.mkfifo(folder / "pipe")
        return folder / "pipe"
    path = folder / f"input{suffix}"
    if kind != "missing":
        path.write_bytes(content)
    return path


def assert_one_error_line(capsys, path: Path) -> None:
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {path}"), captured.err
    assert captured.out == ""


GUARD_COMMANDS = {
    "score": lambda path, out: ["score", str(path), "-o", str(out)],
    "evaluate": lambda path, out: ["evaluate", "--format", "decode", str(path), "-o", str(out), "--json"],
    "probe": lambda path, out: ["probe", "a2t", str(path), "-o", str(out)],
}


@pytest.mark.parametrize("command", GUARD_COMMANDS)
@pytest.mark.parametrize("kind", MALFORMED)
def test_guard_commands_exit_2_with_one_line_and_no_output(tmp_path, capsys, command, kind):
    path = input_path(tmp_path, kind, MALFORMED[kind], ".jsonl")
    out_folder = tmp_path / "out"
    out_folder.mkdir()
    assert guard.cli.main(GUARD_COMMANDS[command](path, out_folder / "result.jsonl")) == 2
    assert_one_error_line(capsys, path)
    assert list(out_folder.iterdir()) == []


@pytest.mark.parametrize("kind", HISTORY_MALFORMED)
def test_bots_generate_history_exits_2_with_one_line(tmp_path, capsys, kind):
    path = input_path(tmp_path, kind, HISTORY_MALFORMED[kind], ".json")
    assert bots.cli.main(["generate", "--history", str(path)]) == 2
    assert_one_error_line(capsys, path)


@pytest.mark.parametrize("kind", PERSONA_MALFORMED)
def test_bots_generate_persona_exits_2_with_one_line(tmp_path, capsys, kind):
    history = tmp_path / "history.json"
    history.write_text(json.dumps([{"speaker": "user", "text": "hi"}]))
    path = input_path(tmp_path, kind, PERSONA_MALFORMED[kind], ".txt")
    assert bots.cli.main(["generate", "--history", str(history), "--persona", str(path)]) == 2
    assert_one_error_line(capsys, path)


def test_output_path_problems_are_found_before_any_work(tmp_path, capsys):
    records = tmp_path / "records.jsonl"
    records.write_text(DECODE_LINE + "\n")
    assert guard.cli.main(["probe", "a2t", str(records), "-o", str(tmp_path)]) == 2
    assert "is a folder" in capsys.readouterr().err
    assert guard.cli.main(["score", str(records), "-o", str(tmp_path / "no" / "x.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "does not exist" in err and len(err.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["records.jsonl"]
