"""The page's own time, profiled where it runs: ``GUARD_PROFILE_DIR=<folder>`` makes every page run of the app write a
cProfile of its script thread there (``<ns>-<page>.prof``, one file a run), so one guarded turn can be read in the real
server, with a real browser on the other end (``benchmarks/profile_chat.py`` drives the chat and reads them).

Why in the app and not beside it: what a turn costs beyond the bot and the guard (drawing the transcript, the
steps, saving, the sidebar) only exists inside a Streamlit script run, and it grows with the conversation. Unset,
this is one environment look-up per run.
"""

from __future__ import annotations

import cProfile
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PROFILE_ENV = "GUARD_PROFILE_DIR"


@contextmanager
def profiled(label: str) -> Iterator[None]:
    """Profile the enclosed page run into ``$GUARD_PROFILE_DIR/<ns>-<label>.prof`` when that variable is set (the
    file is written however the run ends: a rerun or a stop raises through here)."""
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
