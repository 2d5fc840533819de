"""Consistency guard — Streamlit entry point: `streamlit run app.py`.

Thin: page wiring and the detector settings every page shares. The pages (pages/) call bots/ and
guard/ through ui/ (pure helpers plus cached model loading in ui/resources.py).
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the app never downloads weights
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# OpenMP threads that spin while waiting make torch 6-10x slower when the CPU is shared (other
# sessions, the detector, other programs): measured in docs/app.md. Must be set before torch loads.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import streamlit as st  # noqa: E402

from ui import resources  # noqa: E402

st.set_page_config(page_title="Consistency guard", page_icon="🛡️", layout="wide")
resources.register_scripted_bot()

page = st.navigation([
    st.Page("pages/chat.py", title="Guarded chat", icon="💬", default=True),
    st.Page("pages/playground.py", title="Probe playground", icon="🧪"),
    st.Page("pages/learn.py", title="Learn", icon="🎓"),
])
st.session_state["detector_choice"] = resources.sidebar_detector_settings()
page.run()
