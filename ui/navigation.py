"""The app's four pages, defined once: app.py builds its ``st.navigation`` from them, and a page that links to another
(``st.page_link``) links to the same page object.

The page scripts live in ``pages/``, as the design card names it. Streamlit treats a folder named ``pages`` next to
the main script as an old-style multipage app until ``st.navigation`` runs once in the process: on a fresh server whose
first visitor opens a page's own URL (``/review``), it runs that page alone, without app.py (Streamlit's docs: "As
soon as any session of your app executes the st.navigation command, your app will ignore the pages/ directory (across
all sessions)"). So app.py runs the page inside ``app_frame()``, and every page starts with ``only_in_the_app``: run
alone, it draws nothing of its own and offers a link to the app instead, which opens the same page inside the app
(``?open=`` read by ``open_requested``). Once a session has run app.py, Streamlit ignores the folder for every session
and the offer is never seen again in that process.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import streamlit as st

#: True while app.py runs the page: set around ``page.run()`` for this script run only (a context variable: each
#: session's script thread has its own, and a page run alone by Streamlit never sees it set)
_IN_APP: ContextVar[bool] = ContextVar("consistency_guard_in_app", default=False)
#: the query parameter the offer's link carries: the page to open once the app runs
OPEN_PARAM = "open"


@dataclass(frozen=True)
class PageSpec:
    path: str
    title: str
    icon: str
    default: bool = False


CHAT = PageSpec("pages/guarded_chat.py", "Guarded chat", "💬", default=True)
PLAYGROUND = PageSpec("pages/playground.py", "Probe playground", "🧪")
LEARN = PageSpec("pages/learn.py", "Learn", "🎓")
REVIEW = PageSpec("pages/review.py", "Review sessions", "📋")
PAGES = (CHAT, PLAYGROUND, LEARN, REVIEW)


def page(spec: PageSpec) -> st.Page:
    """The ``st.Page`` of ``spec``: what app.py navigates and what ``st.page_link`` and ``st.switch_page`` take."""
    return st.Page(spec.path, title=spec.title, icon=spec.icon, default=spec.default)


@contextmanager
def app_frame() -> Iterator[None]:
    """What app.py runs the page inside: the mark ``only_in_the_app`` looks for."""
    token = _IN_APP.set(True)
    try:
        yield
    finally:
        _IN_APP.reset(token)


def in_the_app() -> bool:
    return _IN_APP.get()


def only_in_the_app(spec: PageSpec) -> None:
    """The first line of every page: run by app.py, nothing; run alone by Streamlit (a fresh server whose first
    visitor opened this page's own address), a short note and a link that opens the page inside the app, then the
    run stops before the page draws anything."""
    if in_the_app():
        return
    st.title(f"{spec.icon} {spec.title}")
    st.info("This page is part of the Consistency guard app and opens inside it. The server was just started and "
            "this page's own address was the first one opened, so the app is not around it yet.", icon="🛡️")
    st.page_link("app.py", label=f"Open “{spec.title}” in the app", icon="➡️",
                 query_params=None if spec.default else {OPEN_PARAM: url_path(spec)})
    st.stop()


def url_path(spec: PageSpec) -> str:
    """The page's own address under the app ("" for the default page): its file name, as ``st.Page`` makes it."""
    return "" if spec.default else spec.path.rsplit("/", 1)[-1].removesuffix(".py")


def open_requested() -> PageSpec | None:
    """The page the offer's link asked for (``?open=``), taken out of the address; None when none was asked for or
    the name is none of the app's pages."""
    if OPEN_PARAM not in st.query_params:
        return None
    wanted = st.query_params[OPEN_PARAM]
    del st.query_params[OPEN_PARAM]
    return next((spec for spec in PAGES if url_path(spec) == wanted and not spec.default), None)


def file_address_target(path: str, base: str = "") -> str | None:
    """Where a visitor who typed a page's file name lands (``/pages/review.py``, ``/pages/review``, ``/review.py``):
    the app under ``base``, asked to open that page ("/?open=review": app.py switches to it, on a fresh server too,
    where the page's own address would run the page alone); "/" for the chat and for any other address under
    ``/pages/``; None for every other address, which the server answers as before.

    Why: Streamlit answers an unknown address with its index.html, whose scripts are linked relative to it
    (``./static/...``); under ``/pages/`` they resolve to ``/pages/static/...``, come back as that HTML again, and the
    tab stays blank for good. A one-part address with ``.py`` loads, but opens the chat instead of the page named."""
    base = "/" + base.strip("/") if base.strip("/") else ""
    if base and not (path == base or path.startswith(base + "/")):
        return None
    parts = path[len(base):].strip("/").split("/")
    if not (parts[0] == "pages" or (len(parts) == 1 and parts[0].endswith(".py"))):
        return None
    name = parts[-1].removesuffix(".py")
    spec = next((spec for spec in PAGES if spec.path.rsplit("/", 1)[-1].removesuffix(".py") == name), None)
    if spec is None or spec.default:
        return f"{base}/"
    return f"{base}/?{OPEN_PARAM}={url_path(spec)}"  # through app.py even on a fresh server (``open_requested``)


class FileAddresses:
    """ASGI middleware of the app's server (app.py's ``st.App``): a GET of a page's file name is redirected to the
    page's own address (``file_address_target``); everything else passes through untouched."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http" and scope["method"] in ("GET", "HEAD"):
            from starlette.responses import RedirectResponse
            from streamlit import config

            target = file_address_target(scope["path"], config.get_option("server.baseUrlPath") or "")
            if target is not None:
                query = scope.get("query_string", b"").decode("latin-1")
                joined = target + ("&" if "?" in target else "?") + query if query else target
                await RedirectResponse(joined, status_code=302)(scope, receive, send)
                return
        await self.app(scope, receive, send)
