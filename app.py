"""Consistency guard — Streamlit entry point: `streamlit run app.py`.

Thin: page wiring and what every page shares (the chat settings kept across pages, the detector and τ in the
sidebar, presentation mode). The pages (pages/) call bots/ and guard/ through ui/.
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the app never downloads weights
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# How idle OpenMP threads wait (bounded spin unless OMP_WAIT_POLICY is set): embedded.configure_openmp,
# measured in docs/app.md. Must run before torch loads its OpenMP runtime.
from embedded import configure_openmp  # noqa: E402

configure_openmp()

import streamlit as st  # noqa: E402

from ui import app_sidebar, chat_session, navigation, ownership, profiling, startup  # noqa: E402
from ui.app_defaults import defaults  # noqa: E402


def run() -> None:
    """One run of the app for one browser session: the page asked for, inside the app's frame."""
    # Presentation mode (the sidebar toggle below, kept in the session) starts with the sidebar collapsed.
    st.set_page_config(page_title="Consistency guard", page_icon="🛡️", layout="wide",
                       initial_sidebar_state="collapsed" if st.session_state.get("presentation") else "auto")

    # A class server (a teacher password): an error the app did not foresee shows its kind only, not its traceback, which
    # names the server's files (a student is shown no path of the server's: ui.class_models); the server's log keeps it
    st.set_option("client.showErrorDetails", "type" if ownership.teacher_password() else "full")

    # GUARD_PROFILE_DIR set: each run of what follows is profiled into that folder (ui/profiling.py)
    with profiling.profiled("run"):
        startup.import_page_modules()  # before the page runs: tabs opening at once must not import Altair in parallel

        chat_page = navigation.page(navigation.CHAT)
        page = st.navigation([chat_page] + [navigation.page(spec) for spec in navigation.PAGES[1:]])
        asked = navigation.open_requested()  # a page run alone offered the app: open that page in it
        if asked is not None:
            st.switch_page(navigation.page(asked))
        chat_session.follow_script_link()  # a link's ?script=: this session's scripted bot plays that script
        if page.url_path == chat_page.url_path:
            # a ?session= in the URL (a reload, a shared link): its conversation, and its settings into the sidebar's
            # controls before they are drawn; a session of another browser is refused (ui.ownership)
            chat_session.resume()
        app_defaults = defaults()
        startup.start_warm_up(app_defaults.bot, app_defaults.detector)  # once per server process
        app_sidebar.presentation_toggle()
        app_sidebar.sidebar_detector_settings()
        with st.sidebar:
            ownership.keep_cookie()  # this browser's token, which its sessions belong to, into its cookie (a first visit)
        with navigation.app_frame():  # each page runs only inside it (navigation.only_in_the_app)
            page.run()


if __name__ == "__main__":  # Streamlit runs this file as the script of every session (and AppTest does)
    run()
else:
    # `streamlit run app.py` finds this st.App and serves the app through it (Streamlit's app discovery), with
    # one thing the plain server lacks: a page's file name typed as an address (/pages/review.py) opens that page
    # instead of a blank tab (ui.navigation.FileAddresses)
    from starlette.middleware import Middleware  # noqa: E402

    app = st.App(__file__, middleware=[Middleware(navigation.FileAddresses)])
