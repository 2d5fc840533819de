"""Files a user hands the project, and files it writes: every problem is one line naming the file.

Input is checked before it is parsed: the path must be a regular file (not a folder, a named pipe
or a device), its bytes UTF-8 text (a UTF-8 byte-order mark is allowed; UTF-16/32 text, compressed
archives and binary data are named as such) and no line longer than ``MAX_LINE_BYTES``, so a
corrupt file is refused before gigabytes are read in search of a newline. JSON is parsed here too,
so a number too long for Python, nesting too deep to copy, or a lone UTF-16 surrogate escape (which
no tokenizer accepts) is reported against its line like any other syntax error.

Output goes through ``atomic_writer``: a failed run leaves no half-written file.
"""

from __future__ import annotations

import codecs
import contextlib
import json
import os
import re
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO, TextIO

#: The longest line (or JSON array item) read; real records are a few kilobytes.
MAX_LINE_BYTES = 1 << 20
#: The largest file read whole (formats that hold one JSON array).
MAX_FILE_BYTES = 1 << 30
#: Deeper JSON than this is refused (records nest 3 levels; copying 300 levels overflows the stack).
MAX_JSON_DEPTH = 64
#: Problems longer than this are cut, so the message stays one readable line.
MAX_PROBLEM_CHARS = 300

# UTF-32 LE before UTF-16 LE: its mark starts with the same two bytes.
_BYTE_ORDER_MARKS = (
    (codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16"),
)
_ARCHIVE_MAGIC = (
    (b"\x1f\x8b", "gzip-compressed"), (b"PK\x03\x04", "a zip archive"),
    (b"BZh", "bzip2-compressed"), (b"\xfd7zXZ\x00", "xz-compressed"),
)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


class InputError(ValueError):
    """Malformed input; the message is one line: ``FILE:LINE: field 'NAME': what is wrong``.

    ``line`` and ``field`` are None when the problem concerns the whole file or whole line.
    """

    def __init__(self, path: str | Path, line: int | None, field: str | None, problem: str) -> None:
        where = f"{path}:{line}" if line is not None else str(path)
        what = f" field '{field}':" if field else ""
        if len(problem) > MAX_PROBLEM_CHARS:
            problem = problem[:MAX_PROBLEM_CHARS] + "..."
        super().__init__(one_line(f"{where}:{what} {problem}"))
        self.path, self.line, self.field, self.problem = str(path), line, field, problem

    @property
    def file(self) -> str:
        return self.path


class OutputError(ValueError):
    """An output path that cannot be written (missing folder, a folder itself, no permission)."""

    def __init__(self, message: str) -> None:
        super().__init__(one_line(message))


def one_line(text: str) -> str:
    """``text`` with every line break and control character escaped (file names and values can hold them)."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape", "backslashreplace").decode("ascii")
                   for c in text)


# ---------------------------------------------------------------------------- input files
def check_input_file(path: str | Path) -> Path:
    """``path`` as a Path if it is a regular file; otherwise an InputError saying what it is."""
    path = Path(path)
    try:
        mode = path.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        raise InputError(path, None, None, "no such file") from None
    except OSError as exc:
        raise InputError(path, None, None, f"cannot read it: {exc.strerror or exc}") from None
    except ValueError:  # a NUL character in the name
        raise InputError(path, None, None, "not a usable file name") from None
    if stat.S_ISDIR(mode):
        raise InputError(path, None, None, "is a folder, not a file")
    if not stat.S_ISREG(mode):
        kind = ("a named pipe (FIFO)" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
                else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a regular file")
        raise InputError(path, None, None, f"is {kind}; give a regular file")
    return path


@contextlib.contextmanager
def open_input(path: str | Path) -> Iterator[BinaryIO]:
    """The checked file opened for binary reading; a failure to open is an InputError."""
    path = check_input_file(path)
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise InputError(path, None, None, f"cannot read it: {exc.strerror or exc}") from None
    with handle:
        yield handle


def _text_start(path: Path, head: bytes) -> int:
    """How many bytes of a UTF-8 byte-order mark to skip; other encodings and archives are refused."""
    if head.startswith(codecs.BOM_UTF8):
        return len(codecs.BOM_UTF8)
    for mark, encoding in _BYTE_ORDER_MARKS:
        if head.startswith(mark):
            marks = " ".join(f"0x{b:02x}" for b in mark)
            raise InputError(path, 1, None, f"not UTF-8 text: it starts with the {encoding} byte-order mark "
                                            f"{marks}; save it as UTF-8")
    for magic, kind in _ARCHIVE_MAGIC:
        if head.startswith(magic):
            raise InputError(path, 1, None, f"not text: the file is {kind}; unpack it first")
    return 0


def _decode(path: Path, first_line: int, raw: bytes) -> str:
    """Strict UTF-8 of ``raw`` (which starts at ``first_line``); NUL bytes mean binary data."""

    def where(pos: int) -> tuple[int, int]:  # (line, 1-based column) of byte ``pos``
        return first_line + raw.count(b"\n", 0, pos), pos - (raw.rfind(b"\n", 0, pos) + 1) + 1

    nul = raw.find(b"\x00")
    if nul >= 0:
        line, column = where(nul)
        raise InputError(path, line, None, f"binary data, not text (a NUL byte at column {column}; "
                                           "UTF-16 text looks like this too: save it as UTF-8)")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, column = where(exc.start)
        raise InputError(path, line, None, f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at column {column}); "
                                           "save it as UTF-8") from None


def iter_text_lines(path: str | Path, max_line_bytes: int = MAX_LINE_BYTES) -> Iterator[tuple[int, str]]:
    """(line number, text with its line ending) for each line of a UTF-8 text file.

    Reads one line at a time and never more than ``max_line_bytes`` + 1 bytes of it.
    """
    with open_input(path) as handle:
        path = Path(path)
        number = 0
        while True:
            raw = handle.readline(max_line_bytes + 1)
            if not raw:
                return
            number += 1
            if number == 1:
                raw = raw[_text_start(path, raw):]
            content = len(raw) - (1 if raw.endswith(b"\n") else 0)
            if content > max_line_bytes:
                raise InputError(path, number, None, f"line longer than {_size(max_line_bytes)}; "
                                                     "refusing to read it (is this the right file?)")
            yield number, _decode(path, number, raw)


def read_text(path: str | Path, max_bytes: int = MAX_FILE_BYTES) -> str:
    """The whole of a UTF-8 text file (byte-order mark removed), refused above ``max_bytes``."""
    with open_input(path) as handle:
        path = Path(path)
        raw = handle.read(max_bytes + 1)
    if len(raw) > max_bytes:
        raise InputError(path, None, None, f"larger than {_size(max_bytes)}; refusing to read it")
    start = _text_start(path, raw[:8])
    return _decode(path, 1, raw[start:])


def first_char(path: str | Path) -> str:
    """The first character that is not whitespace (or a byte-order mark), '' if none in the first 4 KiB."""
    with open_input(path) as handle:
        head = handle.read(4096)
    head = head[_text_start(Path(path), head):].lstrip(b" \t\r\n")
    return chr(head[0]) if head and head[0] < 0x80 else ""


def _size(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 else f"{n} bytes"


# ---------------------------------------------------------------------------- JSON
def parse_json(path: str | Path, line: int, text: str) -> Any:
    """One JSON value from ``text`` (a line or an item), every failure an InputError naming ``line``."""
    text = text.rstrip("\r\n")  # an error at the line's end is on that line, not the next
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        problem = f"not valid JSON ({exc.msg} at column {exc.colno})"
        raise InputError(path, line + exc.lineno - 1, None, problem) from None
    except RecursionError:
        raise InputError(path, line, None, f"JSON nested deeper than {MAX_JSON_DEPTH} levels") from None
    except ValueError as exc:  # e.g. an integer longer than Python converts
        raise InputError(path, line, None, f"not usable JSON ({exc})") from None
    check_json_value(path, line, value, text)
    return value


def check_json_value(path: str | Path, line: int, value: Any, text: str) -> None:
    """Refuse what json accepts but the rest of the project cannot use: deep nesting, lone surrogates.

    ``text`` is the JSON the value came from; cheap counts on it skip the walk for ordinary records.
    """
    deep = text.count("[") + text.count("{") > MAX_JSON_DEPTH
    surrogates = _SURROGATE_ESCAPE.search(text) is not None
    if not deep and not surrogates:
        return
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth > MAX_JSON_DEPTH:
                raise InputError(path, line, None, f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
            children = [*item.keys(), *item.values()] if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
        elif isinstance(item, str) and surrogates:
            problem = text_problem(item)
            if problem:
                raise InputError(path, line, None, problem)


def text_problem(text: str) -> str | None:
    """Why ``text`` cannot be used as text, or None: a lone surrogate (from a JSON ``\\udXXX`` escape)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"holds a lone UTF-16 surrogate escape \\u{ord(text[exc.start]):04x}, which is not text"
    return None


# ---------------------------------------------------------------------------- output files
def check_output_path(path: str | Path) -> Path:
    """``path`` if a file can be written there (its folder exists, it is not a folder); checked before any work."""
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise OutputError(f"{target}: the output folder {folder} does not exist")
    if target.is_dir():
        raise OutputError(f"{target}: is a folder; give a file name to write")
    return target


@contextlib.contextmanager
def atomic_writer(path: str | Path) -> Iterator[TextIO]:
    """Write to a temporary file beside ``path`` and move it into place only on success."""
    target = check_output_path(path)
    folder = target.parent
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:
        raise OutputError(f"{target}: cannot write in {folder}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
