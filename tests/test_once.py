"""embedded.once's idioms for what is held in memory: a thing loaded once per process (``LoadedOnce``), with its
limit; one value per live object, let go with the object (``PerObject``). (``build_once``: tests/test_build_once.py.)"""

from __future__ import annotations

import gc
import threading
import time
import weakref

import pytest

from embedded.once import BoundedCache, LoadedOnce, PerObject
from embedded.turns import cpu_turn


def test_threads_asking_at_once_get_one_load():
    held, loads = LoadedOnce(), []

    def load():
        loads.append(threading.current_thread().name)
        time.sleep(0.2)  # every other thread asks while this load runs
        return object()

    got = []
    threads = [threading.Thread(target=lambda: got.append(held.get("model", load))) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert len(loads) == 1 and len(got) == 6 and all(value is got[0] for value in got)
    assert held.has("model") and not held.has("other model")


def test_a_failed_load_leaves_nothing_and_the_next_caller_loads_again():
    held = LoadedOnce()

    def broken():
        raise OSError("no weights")

    with pytest.raises(OSError, match="no weights"):
        held.get("model", broken)
    assert not held.has("model")
    assert held.get("model", lambda: "loaded") == "loaded"


def test_a_limit_lets_the_least_recently_asked_go_before_the_next_load():
    held, alive_at_load = LoadedOnce(limit=2), []

    def load(name):
        def make():
            alive_at_load.append(sorted(k for k in "abc" if held.has(k)))
            return name.upper()
        return make

    held.get("a", load("a"))
    held.get("b", load("b"))
    assert held.get("a", load("a")) == "A"  # asked again: now "b" is the oldest
    held.get("c", load("c"))
    assert alive_at_load == [[], ["a"], ["a"]]  # room made before "c" loaded: never three at once
    assert [k for k in "abc" if held.has(k)] == ["a", "c"]
    assert held.get("b", load("b")) == "B" and len(alive_at_load) == 4  # let go: loaded again


def test_forget_returns_what_was_held_and_the_next_get_loads_again():
    held = LoadedOnce()
    first = held.get("store", object)
    assert held.forget("store") is first and held.forget("store") is None
    assert held.get("store", object) is not first
    with pytest.raises(ValueError, match="at least one"):
        LoadedOnce(limit=0)


class _Model:
    """A stand-in for a loaded model (any object that takes a weak reference)."""


def test_a_value_kept_per_object_goes_with_the_object():
    kept: PerObject[BoundedCache] = PerObject("per call")
    model = _Model()
    cache = kept.of(model, lambda: BoundedCache(4))
    assert kept.of(model, lambda: BoundedCache(4)) is cache and kept.kept(model) == [cache]
    assert kept.kept(_Model()) == [] and kept.kept() == [cache]
    del model
    gc.collect()
    assert kept.kept() == []  # the dropped model's cache went with it


def test_objects_that_take_no_weak_reference_share_by_id_or_get_one_per_call():
    builtin = 12345678901234567890  # an int takes no weak reference
    shared: PerObject[threading.RLock] = PerObject("by id")
    assert shared.of(builtin, threading.RLock) is shared.of(builtin, threading.RLock)
    alone: PerObject[BoundedCache] = PerObject("per call")
    assert alone.of(builtin, lambda: BoundedCache(2)) is not alone.of(builtin, lambda: BoundedCache(2))
    assert alone.kept() == []
    with pytest.raises(ValueError, match="fallback"):
        PerObject("forever")


def test_each_model_has_one_cpu_turn_and_a_dropped_model_frees_it():
    model = _Model()
    lock = cpu_turn(model)
    assert cpu_turn(model) is lock and cpu_turn(_Model()) is not lock
    freed = []
    weakref.finalize(lock, lambda: freed.append(True))
    del model, lock
    gc.collect()
    assert freed == [True]
