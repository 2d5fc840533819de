"""Taking turns on the CPU: the one lock of each loaded model.

A loaded model (the guard's scorer, a bot's engine, the goading assistant's scorer) is shared by every chat
session, self-play run and server request of the process. Two calls that compute on it at once would split two
cores between them and finish no sooner, and an engine keeps state between calls (prefix caches, a process-wide
random seed) that must not be shared mid-call. So whoever computes with a model holds ``cpu_turn(model)`` around
the computation, and nobody else locks: the model is the key, not the caller.

The locks are re-entrant, so a call that holds a model's turn may call another method of the same model.
"""

from __future__ import annotations

import threading

from embedded.once import PerObject

#: one lock per model object, let go with the model; an object that takes no weak reference keeps its lock for the
#: process's life (``PerObject``'s "by id": every caller must get the same lock)
_LOCKS: PerObject[threading.RLock] = PerObject("by id")


def cpu_turn(model: object) -> threading.RLock:
    """The lock every computation on ``model`` holds (one per model object, made on first use)."""
    return _LOCKS.of(model, threading.RLock)
