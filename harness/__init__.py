"""Drives the app from outside for the browser tests and benchmarks; neither runtime nor library code.

``server`` starts `streamlit run app.py` on a free port and opens it in headless Debian chromium.
"""
