"""What the app does once per server process, before and beside the first page: the pages' drawing libraries
imported one thread at a time, and the default bot and guard loaded in the background (the warm-up)."""

from __future__ import annotations

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
            self.done.append(label)
        except Exception as exc:  # noqa: BLE001 - the page loads it again and shows the error where it is used
            self.failed.append(f"{label}: {short_error(exc)}")
        finally:
            self.running.remove(label)


def start_warm_up(bot: str, detector: str) -> WarmUp:
    """Load (and on a new machine convert) the default bot and guard in background threads, once per server process,
    as soon as the first page is served: the first reply does not pay for them. The bot converts in a process of its
    own while the guard (detector and sentence embedder) loads here."""
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
        progress.run(f"the detector '{shown_name(detector, everyone=True)}' and the sentence embedder",
                     load_the_guard)
        bot_thread.join()
        progress.finished = True

    threading.Thread(target=run, name="model-warm-up", daemon=True).start()
    return progress


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
