"""How the app words a failure a user can act on: one short red line that says what to do, the full text a click
away, and what the page keeps meanwhile."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from bots.base import BotError, first_line
from embedded import MissingAssetError
from ui.class_models import hide_paths, restricted

# Errors a user can act on (wrong name, missing package, server down, a broken guard_config.json); anything else is a
# bug and propagates so Streamlit shows the traceback.
LOAD_ERRORS = (BotError, MissingAssetError, OSError, ValueError, RuntimeError)
#: Longest error text shown in the red box; the rest is one click away.
SHORT_ERROR = 180


def short_error(exc: BaseException, limit: int = SHORT_ERROR) -> str:
    """The first line of an error, cut at a word boundary (loaders' messages run to many lines)."""
    text = first_line(exc)
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0].rstrip(",;:") + " …"


def show_error(message: str, detail: str = "") -> None:
    """A short st.error that says what to do; a longer ``detail`` goes under a "Full error" expander. A student on a
    class server (``ui.class_models``) is shown no path of the server's and no full error (it names files there)."""
    st.error(hide_paths(message), icon="⚠️")
    if detail and detail.strip() not in message and not restricted():
        with st.expander("Full error"):
            st.code(detail, language=None, wrap_lines=True)


def kept_note(kept: str) -> str:
    """What the calling page keeps after a failure, said in brackets at the end of the error ("" when nothing)."""
    return f" ({kept})" if kept else ""


def detector_problem(name: str, exc: BaseException) -> str:
    """Why a detector name did not load, in a few words."""
    from guard.models.registry import available_detectors

    if name not in available_detectors() and not Path(name).expanduser().exists():
        return "no such folder, and no downloaded model of that name (the app runs offline)"
    return short_error(exc)
