"""The app's default chat settings, read from the environment once per process, and this browser session's
settings over them.

Settings the tests (and `make run` users) control come from environment variables:

* ``GUARD_APP_BOT``        default bot name (bots.registry; "embedded" = SmolLM2-135M-Instruct)
* ``GUARD_APP_SCRIPT``     a JSON script for the "scripted" bot (bots/scripted.py) instead of its
                           built-in demo; makes "scripted" the default bot
* ``GUARD_APP_SCRIPTS``    a folder of scripts (``<name>.json``) a browser session can pick one of by name with a
                           link's ``?script=<name>`` (ui.chat_session.follow_script_link); makes "scripted" the default
                           bot too. A session names a script of the folder, never a file
* ``GUARD_APP_DETECTOR``   default detector: "embedded" (models/detector), a local folder or hub name
* ``GUARD_APP_MODE``       default guard mode (off | flag | rerank | penalty | block)
* ``GUARD_APP_CANDIDATES`` default number of candidates
* ``GUARD_APP_PRESET``     default decoding preset (bots.base.PRESETS)
* ``GUARD_APP_REMIND``     "0" to start without reminders (the bot asked again when no reply is consistent)
* ``GUARD_ENGINE``         the local bots' inference engine: auto (default: CTranslate2 int8 where it converts
                           the model, else transformers), ctranslate2 or transformers (bots.engines)
"""

from __future__ import annotations

import copy
import os

import streamlit as st

from bots.base import BotError
from bots.scripted import named_script
from conversation.records import ChatSettings
from embedded.once import BoundedCache
from ui import chat_state
from ui.errors import LOAD_ERRORS

#: the environment variables the defaults are read from (module docstring)
ENVIRONMENT = ("GUARD_APP_BOT", "GUARD_APP_SCRIPT", "GUARD_APP_SCRIPTS", "GUARD_APP_DETECTOR", "GUARD_APP_MODE",
               "GUARD_APP_CANDIDATES", "GUARD_APP_PRESET", "GUARD_APP_REMIND")


def default_script() -> str | None:
    """The scripted bot's script file (``GUARD_APP_SCRIPT``), or None for its built-in demo."""
    return os.environ.get("GUARD_APP_SCRIPT") or None


def scripts_folder() -> str | None:
    """The folder of scripts a session may pick one of by name (``GUARD_APP_SCRIPTS``), or None."""
    return os.environ.get("GUARD_APP_SCRIPTS") or None


def script_file(name: str | None) -> str | None:
    """The file the scripted bot plays for a session whose ``script`` setting is ``name``: the server's own script
    for None (``default_script``), else the script of that name in the server's folder of scripts. A BotError
    (which the page shows) when the server has no script of that name, e.g. a stored session reopened on a server
    started without it."""
    if name is None:
        return default_script()
    folder = scripts_folder()
    if folder is None:
        raise BotError(f"this session plays the bot script {name!r}, and this server offers no scripts by name "
                       "(GUARD_APP_SCRIPTS): pick another bot, or start the app with that folder")
    return str(named_script(folder, name))


def defaults() -> ChatSettings:
    """The app's default chat settings: the settings record, filled from the environment (module docstring). Worked
    out once per process and environment (the sidebar, the warm-up and every page ask for them each run)."""
    environment = tuple(os.environ.get(name) or "" for name in ENVIRONMENT)
    return copy.deepcopy(_DEFAULTS.get_or_make(environment, lambda: _defaults(environment)))


#: the defaults worked out for the last few environments (tests switch between them)
_DEFAULTS: BoundedCache[tuple[str, ...], ChatSettings] = BoundedCache(4)


def _defaults(environment: tuple[str, ...]) -> ChatSettings:
    from bots.base import DEFAULT_PRESET, PRESETS

    env = dict(zip(ENVIRONMENT, environment))
    preset_name = env["GUARD_APP_PRESET"] or DEFAULT_PRESET
    detector = env["GUARD_APP_DETECTOR"] or "embedded"
    decoding = PRESETS.get(preset_name) or {}
    bot = env["GUARD_APP_BOT"] or ("scripted" if env["GUARD_APP_SCRIPT"] or env["GUARD_APP_SCRIPTS"] else "embedded")
    return ChatSettings(
        bot=bot, preset=preset_name, decoding=decoding, guard_mode=env["GUARD_APP_MODE"] or "rerank",
        detector=detector, threshold=None, num_candidates=int(env["GUARD_APP_CANDIDATES"] or 4),
        persona=_default_persona(bot), remind=env["GUARD_APP_REMIND"] != "0")


def _default_persona(bot: str) -> list[str]:
    """The persona the sidebar starts with: the embedded bot's own (it plays one when given none), so the guard
    checks its replies against who it says it is and the page shows it; other bots start without one."""
    if bot != "embedded":
        return []
    from bots.embedded import EMBEDDED_PERSONA  # light: no model code is imported

    return list(EMBEDDED_PERSONA)


def calibrated_threshold(name: str) -> float:
    """The detector's calibrated τ (its guard_config.json), or DECODE's 0.5 for a checkpoint without one.

    A broken guard_config.json raises guard.config.ConfigError: its τ is unknown, and 0.5 in its place would judge
    with a threshold nobody chose.
    """
    from guard.config import JudgeSettings
    from guard.models.registry import read_config

    return JudgeSettings.resolve(read_config(name)).threshold


def shown_threshold(settings: ChatSettings) -> float | None:
    """The τ a page says the guard judges with: the one the user moved the slider to, else the detector's own
    calibrated τ, unrounded (None: its config is unusable, and the sidebar says why). Only for showing: the settings
    carry None when the user moved nothing, so the guard judges with its own value (``guard.judge.pipeline.Guard``)."""
    if settings.threshold is not None:
        return settings.threshold
    try:
        return calibrated_threshold(settings.detector or "embedded")
    except LOAD_ERRORS:
        return None


def current_settings() -> ChatSettings:
    """The chat settings this browser session holds (``ui.chat_state``), the app's defaults for the rest."""
    return chat_state.read_settings(st.session_state, defaults())
