"""On a server a class shares, the models and paths are the teacher's.

A server started with a teacher password (``GUARD_TEACHER_PASSWORD``, ``ui.ownership``) is a class's: every student's
browser shares its one process, so a model one student loads is loaded for all, and a path one student types is read
on the teacher's machine. There, a student (anyone not signed in as the teacher) chooses only among the bots and
detectors the teacher allowed when starting it, never types a path, and is shown no server path in an error:

* ``GUARD_CLASS_BOTS``: the bots students may pick, comma-separated names of ``bots.registry`` (default: the app's
  default bot: ``embedded``, or ``scripted`` with ``GUARD_APP_SCRIPT``);
* ``GUARD_CLASS_DETECTORS``: the detectors (default: the app's default detector, ``embedded``); a detector the
  teacher names by a path is shown to students by its folder's name.

The signed-in teacher keeps every control (any bot, the detector's box for a path or a model name). Without a
password (one person's machine) everything stays open.
"""

from __future__ import annotations

import os
import re
from collections.abc import MutableMapping
from pathlib import PurePath

from ui import chat_state, ownership

BOTS_ENV = "GUARD_CLASS_BOTS"
DETECTORS_ENV = "GUARD_CLASS_DETECTORS"
#: what stands in an error for a path of the server's (a student is not shown where things are on it)
HIDDEN_PATH = "(a path on the server)"
#: a path of the server's in a text: absolute (POSIX, home-relative or a Windows drive); not the path of a web address
#: ("http://host/a/b") nor a fraction ("3/4")
_PATH = re.compile(r"(?<![\w:/.\-])(?:~|[A-Za-z]:)?[/\\][^\s/\\'\"`,;()<>\[\]]+(?:[/\\][^\s/\\'\"`,;()<>\[\]]*)*")


def restricted() -> bool:
    """Whether this browser is a student's on a class server (a teacher password is set and it is not signed in)."""
    return bool(ownership.teacher_password()) and not ownership.is_teacher()


def _listed(env: str, default: str) -> list[str]:
    names = [n.strip() for n in os.environ.get(env, "").split(",") if n.strip()]
    return list(dict.fromkeys(names)) or [default]


def allowed_bots() -> list[str]:
    """The bots a student may pick (``GUARD_CLASS_BOTS``, else the app's default bot)."""
    from ui.app_defaults import defaults  # not at the top: ui.errors imports this module, and app_defaults ui.errors

    return _listed(BOTS_ENV, defaults().bot)


def unknown_bots() -> list[str]:
    """The names in ``GUARD_CLASS_BOTS`` that are no bot of this app (the sidebar says so: the teacher's typo)."""
    from bots import registry

    return [n for n in allowed_bots() if n not in registry.available_bots()]


def allowed_detectors() -> list[str]:
    """The detectors a student may pick (``GUARD_CLASS_DETECTORS``, else the app's default detector)."""
    from ui.app_defaults import defaults

    return _listed(DETECTORS_ENV, defaults().detector)


def bots_offered() -> list[str]:
    """The bots this browser's controls offer: the teacher's list to a student, every bot otherwise."""
    from bots import registry

    every = registry.available_bots()
    if not restricted():
        return every
    return [n for n in allowed_bots() if n in every] or every[:1]


def shown_name(name: str, everyone: bool = False) -> str:
    """A model's name as a student is shown it: a path by its folder's name, anything else as it is. ``everyone``: for
    a text drawn for every browser of a class server alike (the start-up warm-up's), so its viewer is not asked."""
    hide = bool(ownership.teacher_password()) if everyone else restricted()
    if hide and _PATH.fullmatch(str(name).strip()):
        return PurePath(str(name).strip()).name or HIDDEN_PATH
    return str(name)


def keep_within(state: MutableMapping) -> None:
    """Before the controls are drawn: a student's bot and detector put back within the teacher's lists (a stored
    session, a setting from before the server had a password, or a value sent by hand may hold another)."""
    if not restricted():
        return
    bot, detector = chat_state.key("bot"), chat_state.key("detector")
    bots = bots_offered()
    if state.get(bot) not in bots:
        state[bot] = bots[0]
    if str(state.get(detector) or "").strip() not in allowed_detectors():
        state[detector] = allowed_detectors()[0]


def hide_paths(text: str) -> str:
    """``text`` as this browser may be shown it: a student's with every path of the server's replaced
    (``HIDDEN_PATH``); the teacher's and a one-person machine's as it is."""
    return _PATH.sub(HIDDEN_PATH, str(text)) if restricted() else str(text)
