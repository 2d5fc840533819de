"""What is held rather than done again, in one place, one idiom per kind:

* ``LoadedOnce``: a model (or anything slow to make and shared by the whole process: spaCy, WordNet, a database
  engine, a data set read from its package) loaded once per process by key;
* ``BoundedCache``: results kept by key within a bound (a parse, an embedding, a scored pair, a settings record);
* ``PerObject``: one value kept for each live object and let go with it (a model's lock, a model's scored pairs);
* ``build_once``: a file or folder built once per cache, across processes.

Not ``functools.lru_cache`` and not Streamlit's ``st.cache_resource``: two threads asking for a model that is not
loaded yet (the app's start-up warm-up and a page, two server requests) would both load it under ``lru_cache``, and
on a 2-core CPU a second conversion or load takes as long again; ``st.cache_resource`` does the same job only inside
a Streamlit run, so the code below the UI could not share it. In ``LoadedOnce`` the second caller waits for the first
one's load and gets the same object, whoever asks (a page, the warm-up thread, a test, a benchmark).

On disk the same holds across processes: two test workers, or two students opening the app on a new server, ask for
the same converted model on an empty cache at once. ``build_once`` lets one of them build it and the others wait and
use what it published (see its docstring for how).

Between the two, what the guard computes per text (a parse, a sentence split, an embedding, a scored pair) is kept by
its key in a ``BoundedCache``: a conversation pairs the same persona lines and earlier sentences every turn, so each
result is kept; thread-safe (the app's sessions and the server's requests share one guard), least recently used first
out when full, so a long chat keeps what it still pairs instead of dropping everything at once.

What belongs to one model rather than to the process is a ``PerObject``: keyed by the model itself, a ``LoadedOnce``
or ``BoundedCache`` would keep every model it ever saw alive; keyed by ``id(model)``, it would hand a new model the
value of a dropped one that had the same address. Keyed weakly, a model let go (a detector switched in the sidebar, a
test's tiny checkpoint) frees its lock and its cache with it.
"""

from __future__ import annotations

import errno
import logging
import os
import shutil
import tempfile
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar

logger = logging.getLogger(__name__)


class LoadedOnce:
    """What the process loads once and shares, by key: ``get(key, load)`` calls ``load()`` once per key, and a caller
    that asks while it runs waits for it and gets the same object. A load that raises leaves nothing behind: the next
    caller tries again (and sees the error itself).

    ``limit``: keep at most this many, the least recently asked for let go first, and before the next load rather
    than after it, so a process that goes through many checkpoints (a test run, a sweep of scorers, a benchmark
    switching compute types) holds ``limit`` of them at a time; None keeps every one (one per key for the process's
    life: a bot, a guard, spaCy). A caller that still holds a value let go keeps using it; the next ``get`` of its
    key loads it again.
    """

    def __init__(self, limit: int | None = None) -> None:
        if limit is not None and limit < 1:
            raise ValueError(f"LoadedOnce keeps at least one value, got limit {limit}")
        self.limit = limit
        self._values: OrderedDict[Hashable, Any] = OrderedDict()
        self._locks: dict[Hashable, threading.Lock] = {}
        self._guard = threading.Lock()

    def get(self, key: Hashable, load: Callable[[], Any]) -> Any:
        with self._guard:
            if key in self._values:
                self._values.move_to_end(key)
                return self._values[key]
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:  # one loader per key; other keys load meanwhile
            with self._guard:
                if key in self._values:  # loaded while this caller waited
                    self._values.move_to_end(key)
                    return self._values[key]
                self._let_go(keep=None if self.limit is None else self.limit - 1)
            value = load()
            with self._guard:
                self._values[key] = value
                self._let_go(keep=self.limit)  # two keys loaded at once may both have counted on the same room
            return value

    def _let_go(self, keep: int | None) -> None:
        while keep is not None and len(self._values) > keep:
            self._values.popitem(last=False)

    def has(self, key: Hashable) -> bool:
        """Whether ``key`` is loaded already (a page shows a progress box only when it is not)."""
        with self._guard:
            return key in self._values

    def forget(self, key: Hashable) -> Any:
        """Let ``key``'s value go (the next ``get`` loads it again) and return it, or None when it was not loaded:
        a caller that owns what it closes (a database engine) closes it."""
        with self._guard:
            return self._values.pop(key, None)


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


class PerObject(Generic[V]):
    """One value kept for each live object (a model), made by ``of(obj, make)`` on its first use and let go with the
    object: neither a ``LoadedOnce`` nor a ``BoundedCache``, which hold their keys strongly (the module docstring says
    why that matters). No bound: one value per live model, and models are few.

    ``fallback`` says what an object that takes no weak reference (a builtin, a class with ``__slots__``) gets:
    ``"by id"``, one value kept by its id for the process's life, for what every caller must share (a lock: a second
    lock for the same model would let two computations run on it at once; a lock shared with a later object at the
    same address only makes them take turns); ``"per call"``, a new value on every call, for what must never reach
    another object (a cache of scored pairs: another model at the same address would read the first one's scores).
    ``make`` runs under this object's lock, so it should be quick (an empty cache, a lock).
    """

    def __init__(self, fallback: Literal["by id", "per call"]) -> None:
        if fallback not in ("by id", "per call"):
            raise ValueError(f"fallback must be 'by id' or 'per call', not {fallback!r}")
        self.fallback = fallback
        self._weak: weakref.WeakKeyDictionary[Any, V] = weakref.WeakKeyDictionary()
        self._by_id: dict[int, V] = {}
        self._lock = threading.Lock()

    def of(self, obj: object, make: Callable[[], V]) -> V:
        """The value kept for ``obj``, made by ``make()`` when it has none yet."""
        weak = _weakly_referenceable(obj)
        if not weak and self.fallback == "per call":
            return make()
        with self._lock:
            kept = self._weak if weak else self._by_id
            key = obj if weak else id(obj)
            value = kept.get(key, _MISSING)
            if value is _MISSING:
                value = kept[key] = make()
            return value

    def kept(self, obj: object = _MISSING) -> list[V]:
        """What is kept for ``obj`` (an empty list or one value), or, without ``obj``, for every object."""
        with self._lock:
            if obj is _MISSING:
                return [*self._weak.values(), *self._by_id.values()]
            found = self._weak.get(obj, _MISSING) if _weakly_referenceable(obj) else self._by_id.get(id(obj), _MISSING)
            return [] if found is _MISSING else [found]


def _weakly_referenceable(obj: object) -> bool:
    try:
        weakref.ref(obj)
    except TypeError:
        return False
    return True


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
            try:
                result = build(staging) or staging
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
                raise BuildError(_disk_full(target, exc)) from exc
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


def _disk_full(target: Path, exc: OSError) -> str:
    """What a build that ran out of disk says: where, how much is free, and the two ways out. A full disk is the one
    failure a user fixes outside the project, and the bare ``OSError`` names only a file inside a staging folder."""
    free = shutil.disk_usage(target.parent).free
    return (f"no space left on the disk while building {target.name} in {target.parent} ({free / 2**20:.0f} MiB "
            f"free now; the model cache needs about 2 GiB): free some space, or set GUARD_CACHE_DIR to a folder on "
            f"a disk with room ({exc.strerror})")


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)
