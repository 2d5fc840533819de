"""What is held rather than done again, in one place: a model loaded once per process (``LoadedOnce``), results
kept by key within a bound (``BoundedCache``), a file or folder built once per cache (``build_once``).

Not ``functools.lru_cache``: two threads asking for a model that is not loaded yet (the app's start-up warm-up and a
page, two server requests) would both load it, and on a 2-core CPU a second conversion or load takes as long again.
Here the second caller waits for the first one's load and gets the same object.

On disk the same holds across processes: two test workers, or two students opening the app on a new server, ask for
the same converted model on an empty cache at once. ``build_once`` lets one of them build it and the others wait and
use what it published (see its docstring for how).

Between the two, what the guard computes per text (a parse, a sentence split, an embedding, a scored pair) is kept by
its key in a ``BoundedCache``: a conversation pairs the same persona lines and earlier sentences every turn, so each
result is kept; thread-safe (the app's sessions and the server's requests share one guard), least recently used first
out when full, so a long chat keeps what it still pairs instead of dropping everything at once.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable
from pathlib import Path
from typing import Any, Generic, TypeVar

logger = logging.getLogger(__name__)


class LoadedOnce:
    """A process-wide cache of loaded models by key; ``get(key, load)`` calls ``load()`` once per key. A load that
    raises leaves nothing behind: the next caller tries again (and sees the error itself)."""

    def __init__(self) -> None:
        self._values: dict[Hashable, Any] = {}
        self._locks: dict[Hashable, threading.Lock] = {}
        self._guard = threading.Lock()

    def get(self, key: Hashable, load: Callable[[], Any]) -> Any:
        with self._guard:
            if key in self._values:
                return self._values[key]
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            if key not in self._values:
                self._values[key] = load()
            return self._values[key]

    def has(self, key: Hashable) -> bool:
        """Whether ``key`` is loaded already (a page shows a progress box only when it is not)."""
        return key in self._values


K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

_MISSING = object()


class BoundedCache(Generic[K, V]):
    """A thread-safe mapping of at most ``limit`` entries, the least recently used leaving first."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"a cache holds at least one entry, got limit {limit}")
        self.limit = limit
        self._data: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def get(self, key: K, default=None):
        with self._lock:
            value = self._data.get(key, _MISSING)
            if value is _MISSING:
                return default
            self._data.move_to_end(key)
            return value

    def found(self, keys: Iterable[K]) -> dict[K, V]:
        """The cached values of ``keys`` (those present), each marked as recently used."""
        with self._lock:
            out = {}
            for key in keys:
                value = self._data.get(key, _MISSING)
                if value is not _MISSING:
                    self._data.move_to_end(key)
                    out[key] = value
            return out

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.limit:
                self._data.popitem(last=False)

    def put_many(self, items: Iterable[tuple[K, V]]) -> None:
        for key, value in items:
            self.put(key, value)

    def get_or_make(self, key: K, make: Callable[[], V]) -> V:
        """The cached value of ``key``, made (outside the lock) and kept when it is missing."""
        value = self.get(key, _MISSING)
        if value is _MISSING:
            value = make()
            self.put(key, value)
        return value

    def clear(self) -> None:
        with self._lock:
            self._data.clear()


#: the name part that marks a build in progress beside its target (``<target>.partial-XXXX``); nothing that holds it
#: is ever read as finished
PARTIAL_MARK = ".partial-"


class BuildError(RuntimeError):
    """A build ran and did not produce a complete result; the message names what was asked for and the fix."""


def lock_path(target: Path) -> Path:
    """The lock file every builder of ``target`` takes (beside it, so it lives on the same cache disk)."""
    return target.with_name(target.name + ".lock")


def build_once(target: Path, build: Callable[[Path], Path | None], complete: Callable[[Path], bool], *,
               fix: str = "") -> Path:
    """``target`` (a file or a folder), built by ``build`` once however many processes and threads ask at once.

    How: a caller that finds ``target`` complete returns it at once. Otherwise it takes the file lock beside it
    (``<target>.lock``; an ``fcntl`` lock through ``filelock``, which the kernel drops when the holder dies, so a
    crashed build never blocks the next one), looks again (another process may have published it while this one
    waited), and only then builds: ``build(staging)`` writes into a new empty folder of its own beside the target
    (``<target>.partial-XXXX``) and returns the path inside it to publish (None: the folder itself). One atomic
    rename puts that in place, so a reader sees the whole result or nothing. A build that raises or is killed
    leaves only a ``.partial-`` folder, which never looks finished and is removed by the next builder (it holds the
    lock, so no live build owns one). ``complete(path)`` says what finished means; a build whose result fails it
    raises ``BuildError`` with ``fix``.
    """
    from filelock import FileLock, Timeout

    target = Path(target)
    if complete(target):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(lock_path(target)))
    try:
        lock.acquire(blocking=False)
    except Timeout:
        logger.info("waiting for another process to build %s", target)
        lock.acquire()
    try:
        if complete(target):  # published by whoever held the lock before
            return target
        for stale in target.parent.glob(target.name + PARTIAL_MARK + "*"):  # left by a build that died
            _remove(stale)
        staging = Path(tempfile.mkdtemp(prefix=target.name + PARTIAL_MARK, dir=target.parent))
        try:
            result = build(staging) or staging
            if not complete(result):
                raise BuildError(f"building {target.name} finished without a complete result"
                                 + (f"; {fix}" if fix else ""))
            if target.exists() or target.is_symlink():  # an unfinished copy from before this lock existed
                _remove(target)
            os.rename(result, target)
        finally:
            _remove(staging)
    finally:
        lock.release()
    return target


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)
