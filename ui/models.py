"""The models the pages use (and the playground's pool of real chit-chat exchanges), loaded once per server
process, with progress while they load and an error that says what to do when they do not.

Each is loaded once per process (``embedded.once.LoadedOnce``: the bots and the pool here, the guard by
``guard.judge.pipeline.load_guard``), so every page, every browser session and the start-up warm-up (``ui.startup``) share
one copy, and a page that asks for a model the warm-up is still loading waits for that load. Sessions that compute
with a model at once take turns on it inside the model (``embedded.turns``): nothing here locks.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import streamlit as st

from bots import registry
from bots.base import Bot, BotError
from embedded.once import LoadedOnce
from guard.eval.chitchat import a2t_pool as chitchat_a2t_pool
from guard.eval.dialogue_text import parse_dialogue_text
from guard.eval.examples import EXAMPLES
from guard.records import Dialogue
from ui.app_defaults import script_file
from ui.class_models import restricted, shown_name
from ui.errors import LOAD_ERRORS, detector_problem, kept_note, short_error, show_error

if TYPE_CHECKING:  # loads torch
    from guard.judge.pipeline import Guard

#: where ``python -m bots`` runs from (the app's checkout)
REPO_ROOT = Path(__file__).resolve().parents[1]
#: bots that run no local model: nothing to convert, no engine to pick
NO_LOCAL_MODEL = ("scripted", "remote")
#: what a local bot's first load on the default engine does, said while it loads
CONVERTS_ONCE = "its first use on this machine converts it to CTranslate2 int8 once"


_LOADED = LoadedOnce()  # the guards are kept by guard.judge.pipeline.load_guard, loaded once the same way
#: the playground's A2T pool's key in it (the bots' keys: ``_bot_key``)
_A2T_POOL = ("A2T pool", "chit-chat exchanges")


def _bot_key(name: str, engine: str, script: str | None) -> tuple:
    """The bot's key in this process's model cache, shared by every page and the start-up warm-up: the scripted
    bot's is the file of the session's script (``ui.app_defaults.script_file``; a BotError when it has none)."""
    return ("bot", name, script_file(script) if name == "scripted" else None, engine)


def load_bot(name: str, engine: str = "auto", convert_apart: bool = False, script: str | None = None) -> Bot:
    """The bot, loaded once per process. ``convert_apart``: have ``python -m bots prepare`` convert it first, in a
    process of its own (``_convert_bot_apart``). ``script``: the scripted bot's (the session's ``script`` setting;
    other bots ignore it)."""
    key = _bot_key(name, engine, script)

    def load():
        if convert_apart:
            _convert_bot_apart(name)
        if name == "scripted":
            return registry.make_bot(name, script=key[2])
        return registry.make_bot(name, **({"engine": engine} if engine != "auto" else {}))

    return _LOADED.get(key, load)


def _convert_bot_apart(name: str) -> None:
    """Have ``python -m bots prepare`` load the bot once in a process of its own, which converts it on a new machine
    (about 25 s for the embedded bot, mostly Python: de-quantizing its GGUF, then CTranslate2 int8) and caches the
    result. Apart, that work has the second core to itself instead of sharing this process's interpreter lock with
    the detector, spaCy and the page; on a filled cache it takes a fraction of a second. Whatever goes wrong there
    is left to the in-process load that follows, which shows it where the bot is used."""
    if name in NO_LOCAL_MODEL:
        return
    try:
        subprocess.run([sys.executable, "-m", "bots", "prepare", "--bot", name], cwd=REPO_ROOT, capture_output=True,
                       timeout=900, check=False)
    except (OSError, subprocess.SubprocessError):
        pass


def _with_status(loaded: bool, label: str, loader):
    """Call ``loader()``; while its model is not ``loaded`` in this process yet (by a page or the start-up
    warm-up), inside an st.status box with timing."""
    if loaded:
        return loader()
    with st.status(label, expanded=False) as status:
        started = time.perf_counter()
        try:
            value = loader()
        except LOAD_ERRORS:
            status.update(label=f"{label} failed", state="error")
            raise
        status.update(label=f"{label} done in {time.perf_counter() - started:.1f} s", state="complete")
    return value


def get_bot(name: str, engine: str = "auto", kept: str = "", script: str | None = None) -> Bot | None:
    """The bot, or None after an st.error that says what to do. ``engine`` (local bots): auto, ctranslate2 or
    transformers; the first load of a bot on CTranslate2 converts it once (about 20 s) and says so. ``kept``:
    what the calling page keeps meanwhile, said in the error ("the conversation is kept"). ``script``: the scripted
    bot's (the session's ``script`` setting)."""
    try:
        label = f"Loading bot '{name}'…"
        if name not in NO_LOCAL_MODEL and engine != "transformers":
            label = f"Loading bot '{name}' ({CONVERTS_ONCE})…"
        return _with_status(bot_loaded(name, engine, script), label,
                            lambda: load_bot(name, engine, script=script))
    except LOAD_ERRORS as exc:
        show_error(f"Could not load the bot '{name}': {short_error(exc)}. Pick another bot in the "
                   f"sidebar{kept_note(kept)}.", str(exc))  # show_error hides a server path from a student
        return None


def bot_loaded(name: str, engine: str = "auto", script: str | None = None) -> bool:
    """Whether this process has loaded the bot (asking for it returns at once); False for a script the server does
    not have (loading it says why)."""
    try:
        return _LOADED.has(_bot_key(name, engine, script))
    except BotError:
        return False


def guard_loaded(name: str) -> bool:
    """Whether this process has loaded the guard of this detector (asking for it returns at once)."""
    from guard.judge.pipeline import guard_loaded as loaded

    return loaded(name)


def loaded_bot(name: str, engine: str = "auto", script: str | None = None) -> Bot | None:
    """The bot if this process has already loaded it, else None (the goading assistant never loads a model)."""
    if not bot_loaded(name, engine, script):
        return None
    return load_bot(name, engine, script=script)


def engine_text(name: str, engine: str = "auto") -> str:
    """What runs the bot, for the bot's help: its engine once loaded, else what will be chosen ("" for a bot without a
    local model)."""
    bot = loaded_bot(name, engine)
    if bot is not None:
        return f"Engine: {bot.engine_label}." if bot.engine_label else ""
    if name in NO_LOCAL_MODEL:
        return ""
    return ("Engine: CTranslate2 int8 where it converts the model, else transformers (loads on the first reply)."
            if engine == "auto" else f"Engine: {engine} (loads on the first reply).")


def get_guard(name: str, kept: str = "") -> Guard | None:
    """The guard (``guard.judge.pipeline.Guard``), or None after an st.error that says what to do (and what the page keeps:
    ``kept``). Pages judge through it: ``guard.judge`` for a chat turn, ``guard.verdict_on_dialogue`` (``judge``
    with one candidate) for the playground's and Learn's verdicts, each with its ``guard.settings(...)``."""
    try:
        from guard.judge.pipeline import guard_loaded, load_guard

        return _with_status(guard_loaded(name), f"Loading detector '{shown_name(name)}'…", lambda: load_guard(name))
    except LOAD_ERRORS as exc:
        what_to_do = ("Pick another detector in the sidebar, or ask the teacher" if restricted() else
                      "Type 'embedded' in the sidebar's Detector box, or the path of a local checkpoint folder")
        show_error(f"Could not load the detector '{shown_name(name)}': {detector_problem(name, exc)}. {what_to_do}"
                   f"{kept_note(kept)}.", str(exc))
        return None


def a2t_pool() -> list[Dialogue]:
    """Real exchanges for the playground's A2T probe (``guard.eval.chitchat.a2t_pool``; the built-in examples when the
    chit-chat package is not installed), read once per process, with a spinner the first time."""
    def load() -> list[Dialogue]:
        return chitchat_a2t_pool() or [parse_dialogue_text(e.text, e.key) for e in EXAMPLES]

    if _LOADED.has(_A2T_POOL):
        return _LOADED.get(_A2T_POOL, load)
    with st.spinner("Loading real chit-chat turns for A2T…"):
        return _LOADED.get(_A2T_POOL, load)
