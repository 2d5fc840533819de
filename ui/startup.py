"""What the app does once per server process, before and beside the first page: the pages' drawing libraries
imported one thread at a time, and the default bot and guard loaded in the background (the warm-up)."""

from __future__ import annotations

import gc
import importlib
import threading
from dataclasses import dataclass, field

import streamlit as st

from embedded.once import LoadedOnce
from ui.app_defaults import defaults
from ui.class_models import shown_name
from ui.errors import short_error
from ui.models import CONVERTS_ONCE, load_bot

#: the page modules and the libraries they draw with, imported by one thread at a time (``import_page_modules``)
PAGE_MODULES = ("pandas", "altair", "narwhals.stable.v1", "narwhals.stable.v2", "ui.charts", "ui.widgets",
                "ui.turn_widgets")
_IMPORT_LOCK = threading.Lock()
#: the warm-up, started once per server process and pair of defaults (the pages run in threads of their own: the
#: first ones to ask start it once between them, and every later run reads its progress)
_WARM_UPS = LoadedOnce()
#: how long the embedder's load waits for the language tools and then for the first reply (``_load_the_embedder``)
#: before it starts anyway
EMBEDDER_WAIT_S = 60.0
_FIRST_REPLY = threading.Event()


def import_page_modules() -> None:
    """Import what the pages draw with, one thread at a time. Several tabs opening at once on a fresh server run
    their first page in parallel threads, and two threads importing a package and its submodule (Altair's narwhals)
    each wait for the other's module lock; Python breaks that cycle by handing one of them a half-initialized module,
    and that tab shows an ImportError ("cannot import name ... from ui.turn_widgets") instead of the chat. Once
    imported, this costs a lock and a dictionary look-up per run."""
    with _IMPORT_LOCK:
        for name in PAGE_MODULES:
            importlib.import_module(name)


@dataclass
class WarmUp:
    """The start-up warm-up's progress: what it is loading now, what is done, what failed (one line each)."""

    running: list[str] = field(default_factory=list)
    done: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    finished: bool = False

    @property
    def stage(self) -> str:
        return " and ".join(self.running) or "the models"

    def run(self, label: str, load) -> None:
        self.running.append(label)
        try:
            load()
            settle_loaded()
            self.done.append(label)
        except Exception as exc:  # noqa: BLE001 - the page loads it again and shows the error where it is used
            self.failed.append(f"{label}: {short_error(exc)}")
        finally:
            self.running.remove(label)


def start_warm_up(bot: str, detector: str) -> WarmUp:
    """Load (and on a new machine convert) the default bot and guard in background threads, once per server process,
    as soon as the first page is served: the first reply does not pay for them. The bot converts in a process of its
    own while the guard's detector loads here; the prefilter's sentence embedder loads after both, since no first
    reply needs it."""
    return _WARM_UPS.get(("model warm-up", bot, detector), lambda: _start(bot, detector))


def _start(bot: str, detector: str) -> WarmUp:
    progress = WarmUp()
    bot_label = f"the bot '{bot}' ({CONVERTS_ONCE})"

    def load_the_guard() -> None:
        from guard.judge.pipeline import (
            load_guard,  # torch loads here, in the warm-up's thread, not in the first page run
        )

        load_guard(detector)

    def run() -> None:
        # under the key the page's own get_bot uses: a message sent meanwhile waits for this load, not a second one
        bot_thread = threading.Thread(target=progress.run,
                                      args=(bot_label, lambda: load_bot(bot, convert_apart=True)),
                                      name="model-warm-up-bot", daemon=True)
        bot_thread.start()
        progress.run(f"the detector '{shown_name(detector, everyone=True)}'", load_the_guard)
        bot_thread.join()
        progress.finished = True
        _load_the_embedder()

    threading.Thread(target=run, name="model-warm-up", daemon=True).start()
    return progress


def reply_shown() -> None:
    """The chat page says a reply is on screen: the warm-up's last step may start (``_load_the_embedder``)."""
    _FIRST_REPLY.set()


def settle_loaded() -> None:
    """Move what is loaded so far out of the garbage collector's reach (``gc.freeze``): models and the libraries
    under them live as long as the process, and a full collection walks every object. While the warm-up loads, the
    heap grows fast and full collections come often (0.25-0.38 s each here): the first reply's page run spent 1.7-1.8 s
    in them, 1.1-1.2 s with the loads frozen (``bench_app --empty-cache``, 2026-11-28)."""
    gc.freeze()


def _load_the_embedder() -> None:
    """The prefilter's sentence embedder, last: the guard loads it at its first use
    (``guard.models.loading.DeferredEmbedder``), which a conversation's first turns do not reach; loaded here, that
    use does not wait. It waits for the chat's language tools (spaCy is Python-bound like it, and the guard's fact
    sheet reads with spaCy) and for the first reply (a new user's first turn would share the CPU with it), at most
    ``EMBEDDER_WAIT_S`` each. A failure here is the first use's to report."""
    from guard.models.loading import load_embedder
    from ui.suggestions import language_tools_ready

    try:
        language_tools_ready(wait=EMBEDDER_WAIT_S)
        _FIRST_REPLY.wait(EMBEDDER_WAIT_S)
        load_embedder()
        settle_loaded()
    except Exception:  # noqa: BLE001 - raised again, with its fix, where the prefilter needs it
        pass


def warm_up_status() -> None:
    """While the start-up warm-up runs: one line saying what is being prepared (the chat input works meanwhile;
    a message sent now waits for the model it needs)."""
    app_defaults = defaults()
    progress = start_warm_up(app_defaults.bot, app_defaults.detector)
    slot = st.empty()  # there in every run, so the turns below keep their places when the warm-up ends
    if progress.finished:
        return
    # no clock here: the line is drawn once per run, and a count of seconds would stand still between runs
    slot.info(f"Preparing {progress.stage} in the background. You can type: the first reply waits for it.", icon="⏳")
