"""A guarded turn computed in a thread of its own while the page's script thread draws: its steps as they come, and
meanwhile whatever else the page has to draw (the transcript above it).

Why: the bot and the guard used to run in the script thread, so the page drew the whole transcript first and the
guard's first step only then (0.5 s at the start of a chat, 4 s by its 30th turn), and the candidates could not be
shown while the bot wrote them: the script thread was inside the bot's generation until it was over. Here the turn
runs in a worker thread and hands each step to a queue; the script thread, the only one that calls Streamlit, starts
the live box at once, draws the rest of the page (``while_running``, with a ``pump`` to show the steps queued so far
between its parts) and then draws the steps until the turn is done.

A rerun that stops the script (the user sends another message meanwhile) stops the turn too: its next step raises in
the worker, before the turn is added to the conversation, and the script thread waits for that before it goes.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import TypeVar

from conversation.guarding import GuardStep, StepCallback

T = TypeVar("T")


class TurnStopped(Exception):
    """Raised in the worker at its next step once the page's run has stopped."""


def run_live(work: Callable[[StepCallback], T], show: Callable[[GuardStep], None],
             while_running: Callable[[Callable[[], None]], None] | None = None) -> T:
    """``work(on_step)`` in a worker thread; each step it announces is drawn by ``show`` in this (the script) thread.
    ``while_running(pump)`` runs here right after the worker starts, ``pump()`` drawing the steps queued so far.
    Returns what ``work`` returns, or raises what it raised, once it is over."""
    steps: queue.Queue = queue.Queue()
    stopped, over = threading.Event(), threading.Event()
    outcome: dict[str, object] = {}
    done = object()

    def announce(step: GuardStep) -> None:
        if stopped.is_set():
            raise TurnStopped("the page's run stopped")
        steps.put(step)

    def run() -> None:
        try:
            outcome["value"] = work(announce)
        except BaseException as exc:  # noqa: BLE001 - handed to the script thread, which raises it
            outcome["error"] = exc
        finally:
            steps.put(done)

    def draw(block: bool) -> bool:
        """Draw the queued steps (waiting for each when ``block``); False once the worker is over. A streamed text
        with a newer step behind it is skipped: only the newest text is worth drawing."""
        while True:
            try:
                step = steps.get(block=block)
            except queue.Empty:
                return True
            if step is done:
                over.set()
                return False
            if step.kind == "writing" and not steps.empty():
                continue
            show(step)

    worker = threading.Thread(target=run, name="guarded-turn", daemon=True)
    worker.start()
    try:
        if while_running is not None:
            while_running(lambda: draw(block=False))
        while not over.is_set() and draw(block=True):
            pass
    except BaseException:  # Streamlit stopping this run (a new message), or a drawing error: the turn stops too
        stopped.set()
        worker.join()
        raise
    worker.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]
