"""One bounded cache for everything the guard computes per text and keeps across turns.

A conversation pairs the same persona lines and earlier sentences every turn and splits, parses and embeds the same
texts again, so each of those results is kept by its key. Every such cache is a ``BoundedCache``: thread-safe (the
app's sessions and the server's requests share one guard), least recently used first out when full, so a long chat
keeps what it still pairs instead of dropping everything at once.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable
from typing import Generic, TypeVar

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
