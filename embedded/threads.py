"""How many threads a bot computes with: the cores this process may use, less those other processes keep busy.

Why: the bot's decoding is a long chain of small parallel steps, each waiting for its slowest thread. With one
other CPU-bound process on a 2-core machine, a second thread shares a core with it and every step waits for the
time slice it lost (docs/bots.md measures both). So before each generation the bot asks ``ThreadFit.threads``:
the usable cores minus the cores other processes kept busy since the last reading (``/proc/stat``'s busy time
less this process's own, so the app's own work, its detector or the bot itself, never counts against it).
``GUARD_BOT_THREADS=N`` fixes the count instead. Where ``/proc`` cannot be read, every usable core is used.
"""

from __future__ import annotations

import math
import os
import threading
import time
from dataclasses import dataclass, field

THREADS_ENV = "GUARD_BOT_THREADS"
#: A core counts as taken by others once they kept it this busy (chromium drawing the page used about a third of one
#: while the bot wrote, and must not cost the bot a thread)
TAKEN_SHARE = 0.75
#: Readings closer together than this keep the last answer (too short a window to say anything)
MIN_WINDOW_S = 0.5


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity), at least 1."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except (AttributeError, OSError):
        return max(os.cpu_count() or 1, 1)


def forced_threads() -> int | None:
    """``GUARD_BOT_THREADS`` as a positive count, or None when unset (or not a positive number)."""
    value = os.environ.get(THREADS_ENV, "").strip()
    if not value:
        return None
    try:
        count = int(value)
    except ValueError:
        return None
    return count if count > 0 else None


def _cpu_ticks() -> tuple[int, int] | None:
    """(busy ticks of every core, ticks of this process) since boot, or None where /proc cannot be read."""
    try:
        with open("/proc/stat") as stat:
            fields = stat.readline().split()[1:]
        with open("/proc/self/stat") as own:
            after_name = own.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    values = [int(v) for v in fields]
    idle = values[3] + (values[4] if len(values) > 4 else 0)  # idle + iowait
    busy = sum(values[:8]) - idle  # user nice system idle iowait irq softirq steal (guest is inside user)
    mine = int(after_name[11]) + int(after_name[12])  # utime + stime, every thread of this process
    return busy, mine


@dataclass
class ThreadFit:
    """The thread count for the next generation, read from how busy other processes kept the cores lately."""

    cores: int = field(default_factory=usable_cores)
    last: tuple[float, int, int] | None = None  # (monotonic seconds, busy ticks, own ticks) of the last reading
    threads_now: int = 0  # the last answer (0: none yet)
    others: float | None = None  # cores other processes kept busy over the last window
    proposed: int = 0  # what the last window alone called for: a change needs two windows in a row that agree
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        self.threads_now = self.cores
        self._read()

    def _read(self) -> tuple[float, int, int] | None:
        ticks = _cpu_ticks()
        if ticks is None:
            return None
        reading = (time.monotonic(), *ticks)
        if self.last is None:
            self.last = reading
        return reading

    def threads(self) -> int:
        """``GUARD_BOT_THREADS``, else the usable cores less those others kept busy since the last call (at least
        1), once two windows in a row call for the same count (a change reloads the bot's model); the last answer
        again when the window is under ``MIN_WINDOW_S``."""
        forced = forced_threads()
        if forced is not None:
            return forced
        with self._lock:
            reading = self._read()
            if reading is None or self.last is None:
                return self.threads_now
            seconds = reading[0] - self.last[0]
            if seconds < MIN_WINDOW_S:
                return self.threads_now
            ticks = seconds * os.sysconf("SC_CLK_TCK")
            others = ((reading[1] - self.last[1]) - (reading[2] - self.last[2])) / ticks
            self.last = reading
            self.others = max(others, 0.0)
            taken = math.floor(self.others + (1 - TAKEN_SHARE))
            wanted = max(1, min(self.cores, self.cores - taken))
            if wanted == self.proposed:  # two windows agree: a change of load, not a moment's (each change reloads)
                self.threads_now = wanted
            self.proposed = wanted
            return self.threads_now
