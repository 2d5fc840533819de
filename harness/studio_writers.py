"""Several sessions writing to one studio database at once, each through its own engine (like separate browser
sessions or processes): tests/test_studio.py checks nothing is lost, benchmarks/bench_studio.py times it."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from conversation.records import BOT, USER, ChatSettings, Conversation
from guard.judge.report import BotTurnReport
from studio.storage import SessionInfo, Store


@dataclass
class WriteRun:
    counts: dict[str, int]  # rows per table afterwards (Store.counts)
    seconds: float  # wall time from the first writer's start to the last one's end
    save_seconds: list[float] = field(default_factory=list)  # one Store.save_turns call each
    errors: list[str] = field(default_factory=list)  # "Type: message" per failed writer


def write_sessions_at_once(url: str, sessions: int, turns: int,
                           report: Callable[[int, int], BotTurnReport]) -> WriteRun:
    """``sessions`` writers, released together, each storing ``turns`` user/bot exchanges one save at a time;
    ``report(session, turn)`` is the bot turn's guard report."""
    errors: list[str] = []
    saves: list[float] = []
    start = threading.Barrier(sessions, timeout=120)

    def writer(k: int) -> None:
        try:
            store = Store(url)
            conversation = Conversation()
            store.save_session(SessionInfo(conversation.record_id, ChatSettings(bot=f"bot{k}")))
            start.wait()
            for t in range(turns):
                conversation.add(USER, f"session {k} question {t}")
                conversation.add(BOT, f"session {k} answer {t}", report(k, t))
                t0 = time.perf_counter()
                store.save_turns(conversation.record_id, conversation.turns)
                saves.append(time.perf_counter() - t0)
            store.dispose()
        except BaseException as exc:  # noqa: BLE001 - reported to the caller
            errors.append(f"{type(exc).__name__}: {exc}")
            start.abort()  # the others stop waiting for this writer

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(sessions)]
    t0 = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - t0
    store = Store(url)
    counts = store.counts()
    store.dispose()
    return WriteRun(counts, seconds, saves, errors)
