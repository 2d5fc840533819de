"""Models loaded once per process, each by one thread while the others wait for it.

Not ``functools.lru_cache``: two threads asking for a model that is not loaded yet (the app's start-up warm-up and a
page, two server requests) would both load it, and on a 2-core CPU a second conversion or load takes as long again.
Here the second caller waits for the first one's load and gets the same object.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Any


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
