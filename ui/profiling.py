"""The page's own time, profiled where it runs: ``GUARD_PROFILE_DIR=<folder>`` makes every page run of the app write a
cProfile of its script thread there (``<ns>-<page>.prof``, one file a run), so one guarded turn can be read in the real
server, with a real browser on the other end (``benchmarks/profile_chat.py`` drives the chat and reads them).

Why in the app and not beside it: what a turn costs beyond the bot and the guard (drawing the transcript, the
steps, saving, the sidebar) only exists inside a Streamlit script run, and it grows with the conversation. Unset,
this is one environment look-up per run.
"""

from __future__ import annotations

import cProfile
import gc
import json
import os
import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PROFILE_ENV = "GUARD_PROFILE_DIR"
#: ``GUARD_MARKS_FILE=<path>``: each page run appends one JSON line there, its start (wall clock) and when it reached
#: each ``mark`` (seconds after its start), without profiling it; benchmarks.bench_app reads it to split the first
#: visible step into the server's part (Enter -> the run starts -> the live box is sent) and the browser's.
MARKS_ENV = "GUARD_MARKS_FILE"
_run = threading.local()  # the marks of the page run in this (the script) thread
_append = threading.Lock()
#: the process's garbage collections (wall clock at their start, seconds, generation), kept while marks are asked for:
#: a run's record lists those that overlapped it (a collection stops every thread, the script's and the bot's alike)
_collections: deque = deque(maxlen=2000)
_collection_started: list[float] = []


def _note_collection(phase: str, info: dict) -> None:
    if phase == "start":
        _collection_started[:] = [time.time()]
    elif _collection_started:
        started = _collection_started[0]
        _collections.append((started, time.time() - started, info.get("generation")))


def _watch_collections() -> None:
    if _note_collection not in gc.callbacks:
        gc.callbacks.append(_note_collection)


def mark(name: str) -> None:
    """Note when this page run got to ``name`` (the first time only); nothing unless ``GUARD_MARKS_FILE`` is set."""
    marks = getattr(_run, "marks", None)
    if marks is not None and name not in marks["marks"]:
        marks["marks"][name] = round(time.time() - marks["start"], 4)


@contextmanager
def _marked(label: str) -> Iterator[None]:
    path = os.environ.get(MARKS_ENV)
    if not path:
        yield
        return
    _watch_collections()
    _run.marks = {"label": label, "start": time.time(), "marks": {}}
    try:
        yield
    finally:
        record, _run.marks = _run.marks, None
        start = record["start"]
        during = [(round(t - start, 3), round(d, 4), g) for t, d, g in list(_collections) if t >= start]
        record["collections"] = during  # (seconds after the run's start, seconds it took, generation)
        record["collected_s"] = round(sum(d for _, d, _ in during), 4)
        with _append, open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps(record) + "\n")


@contextmanager
def profiled(label: str) -> Iterator[None]:
    """Profile the enclosed page run into ``$GUARD_PROFILE_DIR/<ns>-<label>.prof`` when that variable is set (the
    file is written however the run ends: a rerun or a stop raises through here); with ``GUARD_MARKS_FILE`` set, its
    marks go there (``mark``)."""
    with _marked(label):
        with _profiled(label):
            yield


@contextmanager
def _profiled(label: str) -> Iterator[None]:
    folder = os.environ.get(PROFILE_ENV)
    if not folder:
        yield
        return
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        yield
    finally:
        profiler.disable()
        target = Path(folder)
        target.mkdir(parents=True, exist_ok=True)
        name = "".join(c if c.isalnum() else "_" for c in label) or "page"
        profiler.dump_stats(target / f"{time.time_ns()}-{name}.prof")
