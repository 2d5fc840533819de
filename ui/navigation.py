"""The app's four pages, defined once: app.py builds its ``st.navigation`` from them, and a page that links to another
(``st.page_link``) links to the same page object.

The page scripts live in ``pages/``, as the design card names it. Streamlit treats a folder named ``pages`` next to
the main script as an old-style multipage app until ``st.navigation`` runs once in the process: on a fresh server whose
first visitor opens a page's own URL (``/review``), it runs that page alone, without app.py.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st


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
