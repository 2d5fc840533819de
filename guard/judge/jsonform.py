"""The one JSON form of the project's records: out with ``jsonable``, back in with ``from_jsonable``.

The guard's report (``guard.judge.report.BotTurnReport.to_json`` / ``from_json``: the server's ``guard`` field, the
studio's database, the transcript download), the settings record and the studio's self-play judgements all go
through these two functions, so a record written by one of them is read back by any other with its dataclasses,
enums and nested verdict details typed again. It lives in ``guard`` because the report does; everything above
may use it.
"""

from __future__ import annotations

import enum
import functools
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import asdict, fields, is_dataclass
from typing import Any, TypeVar

T = TypeVar("T")


def jsonable(value: Any) -> Any:
    """``value`` as plain JSON values: dataclasses as dicts, enums as their strings, tuples and sets as lists (a set
    sorted, so the form is stable); another
    detector's details may hold numpy numbers; NaN, which JSON has no word for, becomes null."""
    if is_dataclass(value) and not isinstance(value, type):
        return jsonable(asdict(value))
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted(jsonable(v) for v in value)
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if hasattr(value, "item") and callable(value.item):
        value = value.item()
    if isinstance(value, float) and value != value:
        return None
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def from_jsonable(cls: type[T], data: Mapping) -> T:
    """A ``cls`` dataclass from its ``jsonable`` form, typed field by field (nested dataclasses, lists, dicts,
    optionals, enums). Keys the class does not have are ignored, so records written by other versions load;
    a missing required field raises TypeError."""
    hints = _hints(cls)
    names = {f.name for f in fields(cls)}
    return cls(**{k: _typed(hints.get(k, object), v) for k, v in data.items() if k in names})


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    """Field types of a dataclass, resolved in its module (records import the types they name at run time)."""
    return typing.get_type_hints(cls)


def _typed(kind: Any, value: Any) -> Any:
    """``value`` (plain JSON) as the annotated type. An enum value this version does not know is kept as the
    string it was (a report written by a newer detector still loads)."""
    if value is None:
        return None
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in args if a is not type(None)]
        return _typed(options[0], value) if len(options) == 1 else value
    if origin in (list, Sequence) and args:
        return [_typed(args[0], v) for v in value]
    if origin is tuple and args:  # tuple[X, ...] (a frozen record's sequence) or a fixed tuple
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_typed(args[0], v) for v in value)
        return tuple(_typed(a, v) for a, v in zip(args, value))
    if origin is frozenset and args:
        return frozenset(_typed(args[0], v) for v in value)
    if origin in (dict, Mapping) and len(args) == 2:
        return {k: _typed(args[1], v) for k, v in value.items()}
    if is_dataclass(kind) and isinstance(value, Mapping):
        return from_jsonable(kind, value)
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        try:
            return kind(value)
        except ValueError:
            return value
    return value
