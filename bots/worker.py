"""One line of turns in front of a bot's model: who is ahead, who is refused, and which turns share one batch.

Why (issue 55): a class of 30 opens one server, and every turn of every student needs the same loaded model. The
model takes one generation at a time (``embedded.turns.cpu_turn``), so turns wait; before this line they waited on a
lock that knew nothing of them, the student saw "The bot is writing" for as long as the turns ahead took, and there
was no end to how many could wait. Here a turn's generation is a ``Job`` in one first-come line per model:

* while a job waits, its caller is told how many jobs are ahead of it (``on_wait``: the chat says "2 students ahead
  of you");
* the line has a length (``max_waiting``) and a job a longest wait (``max_wait_s``): beyond either the caller gets
  ``ServerBusy``, a message that says to send again in a moment (the API's 503), never a hang;
* the job at the head of the line runs, together with the jobs behind it that can share its batch (same decoding
  options, ``Job.key``, and a prompt within ``max_spread`` tokens of the head's, ``Job.size``; a job with no key, such
  as one that names a seed, runs alone), up to ``batch_limit``; it waits up to ``gather_s`` for more when the line
  holds fewer, and only when other jobs arrived lately (a lone student never waits for company). The engine says
  how a batch runs (``runner``); whether sharing pays, and for which prompts, is the
  engine's measurement (bots/ct2.py: ``BATCH_LIMIT``, ``BATCH_SPREAD``).

No thread of its own: the caller whose job is at the head of the line runs its batch, then the next head's caller
runs the next one, so a line no one stands in costs nothing and a lone student's turn runs at once, as before.
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field

from bots.base import BotError, ServerBusy

#: Jobs that may wait in one line (being generated not counted); more are refused with ``ServerBusy``.
#: ``GUARD_MAX_WAITING`` sets it (a class of 30 fits in the default).
MAX_WAITING = int(os.environ.get("GUARD_MAX_WAITING", "48"))
#: The longest a job waits for its turn before it is refused (``GUARD_MAX_WAIT_S``): a student is told, not left.
MAX_WAIT_S = float(os.environ.get("GUARD_MAX_WAIT_S", "240"))
#: A job arriving this soon after another counts as part of a class at work (``GenerationWorker.active_s``).
ACTIVE_S = 5.0
#: How often a waiting caller looks at its place in the line (and tells ``on_wait`` when it changed).
POLL_S = 0.25


@dataclass(eq=False)
class Job:
    """One generation in the line: what the engine needs (``payload``), and its outcome once run."""

    payload: object
    key: Hashable | None = None  # jobs with the same key may share a batch; None: this job runs alone
    size: int = 0  # its prompt's length: jobs share a batch only within ``GenerationWorker.max_spread`` of the head's
    result: object = None
    error: BaseException | None = None
    done: bool = False
    arrived: float = 0.0  # when it joined the line (time.monotonic)
    company: bool = False  # whether another job arrived shortly before it (see GenerationWorker.active_s)
    queued_s: float = 0.0  # how long it waited for its batch to start
    #: how many jobs needed the model when its batch started: the batch's and those still in the line behind it
    #: (1: it had the model to itself). The engine may draw fewer candidates for a crowd (bots/ct2.py)
    crowd: int = 0


@dataclass
class GenerationWorker:
    """The line in front of one model: ``run(job)`` waits for the job's turn, runs it (with the jobs that share its
    batch) through ``runner(jobs)``, which sets each job's ``result`` or ``error``, and returns its result."""

    runner: Callable[[list[Job]], None]
    batch_limit: int = 1
    gather_s: float = 0.0
    max_spread: int = 1 << 30  # the most a job's ``size`` may differ from the head's to share its batch
    #: the head waits ``gather_s`` for company only when another job arrived this recently: in a class a burst of
    #: messages reaches the server some milliseconds apart, while a lone student's last message is seconds old
    active_s: float = ACTIVE_S
    _arrivals: deque = field(default_factory=deque, repr=False)
    max_waiting: int = MAX_WAITING
    max_wait_s: float = MAX_WAIT_S
    _line: deque = field(default_factory=deque, repr=False)
    _running: list = field(default_factory=list, repr=False)
    _busy: bool = False
    _cond: threading.Condition = field(default_factory=threading.Condition, repr=False)
    batches: int = 0  # batches run, and the jobs in them: how often sharing happened
    jobs_run: int = 0

    def waiting(self) -> int:
        """Jobs in the line and being generated now."""
        with self._cond:
            return len(self._line) + len(self._running)

    def ahead(self, job: Job) -> int:
        """How many jobs will be generated before ``job``: those running and those before it in the line."""
        with self._cond:
            return self._ahead(job)

    def _ahead(self, job: Job) -> int:
        if job.done or job in self._running:
            return 0
        try:
            return len(self._running) + list(self._line).index(job)
        except ValueError:
            return 0

    def run(self, job: Job, on_wait: Callable[[int], None] | None = None):
        """Put ``job`` in the line, wait for its turn (telling ``on_wait`` how many are ahead whenever that changes),
        run it and return its result, or raise its error. Raises ``ServerBusy`` when the line is full or the wait
        too long; whatever ``on_wait`` raises takes the job out of the line and is raised here."""
        job.arrived = time.monotonic()
        with self._cond:
            while self._arrivals and job.arrived - self._arrivals[0] > self.active_s:
                self._arrivals.popleft()
            job.company = bool(self._arrivals)  # another job arrived lately: worth waiting a moment for more
            self._arrivals.append(job.arrived)
            if len(self._line) >= self.max_waiting:
                raise ServerBusy(f"the server is busy: {len(self._line) + len(self._running)} replies are being "
                                 "written or waiting for the bot; send your message again in a minute",
                                 len(self._line) + len(self._running))
            self._line.append(job)
        told = None
        batch: list[Job] | None = None
        try:
            while True:
                with self._cond:
                    if job.done:
                        break
                    head = not self._busy and bool(self._line) and self._line[0] is job
                    if head and not (on_wait is not None and told):  # its turn (a caller told it waited hears 0 first)
                        batch = self._take(job)
                        break
                    ahead = 0 if head else self._ahead(job)
                    if not head and time.monotonic() - job.arrived > self.max_wait_s:
                        raise ServerBusy(f"the server is busy: this reply waited {self.max_wait_s:.0f} s with "
                                         f"{ahead} replies still ahead of it; send your message again in a minute",
                                         ahead)
                if on_wait is not None and ahead != told:
                    told = ahead
                    on_wait(ahead)
                    continue
                with self._cond:
                    if not job.done and (self._busy or not self._line or self._line[0] is not job):
                        self._cond.wait(POLL_S)
        except BaseException:
            with self._cond:
                if job in self._line:
                    self._line.remove(job)
                    self._cond.notify_all()
            raise
        if batch is not None:
            self._run_batch(batch)
        if job.error is not None:
            raise job.error
        return job.result

    def _take(self, head: Job) -> list[Job]:
        """The head of the line and the jobs that share its batch, out of the line (called holding the lock, the
        head's caller about to run them); waits up to ``gather_s`` for more while fewer than ``batch_limit``."""
        if head.key is not None and self.batch_limit > 1 and self.gather_s > 0 and head.company:
            deadline = time.monotonic() + self.gather_s
            while self._sharing(head) < self.batch_limit and time.monotonic() < deadline:
                self._cond.wait(max(deadline - time.monotonic(), 0.0))
        batch = [head]
        if head.key is not None and self.batch_limit > 1:
            for other in list(self._line)[1:]:
                if len(batch) >= self.batch_limit:
                    break
                if self._shares(head, other):
                    batch.append(other)
        for job in batch:
            self._line.remove(job)
        for job in batch:
            job.crowd = len(batch) + len(self._line)
        self._busy, self._running = True, batch
        return batch

    def _shares(self, head: Job, other: Job) -> bool:
        return other.key is not None and other.key == head.key and abs(other.size - head.size) <= self.max_spread

    def _sharing(self, head: Job) -> int:
        return sum(1 for job in self._line if job is head or self._shares(head, job))

    def _run_batch(self, batch: list[Job]) -> None:
        started = time.monotonic()
        for job in batch:
            job.queued_s = round(started - job.arrived, 4)
        try:
            self.runner(batch)
        except BaseException as exc:  # noqa: BLE001 - every job of the batch learns it; the runner's caller raises it
            for job in batch:
                if job.error is None and job.result is None:
                    job.error = exc
        finally:
            self._finish(batch)

    def _finish(self, batch: list[Job]) -> None:
        """The batch is over (run or not): its jobs are done, the next head of the line may run."""
        with self._cond:
            for job in batch:
                job.done = True
                if job.result is None and job.error is None:
                    job.error = BotError("the generation was given up before it ran")
            self._busy, self._running = False, []
            self.batches += 1
            self.jobs_run += len(batch)
            self._cond.notify_all()
