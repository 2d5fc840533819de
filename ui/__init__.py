"""UI helpers for the Streamlit app (app.py, pages/).

``render``, ``chat`` and ``examples`` are plain Python (no Streamlit) so they can be
unit-tested; ``resources`` is the only module here that imports Streamlit (cached model loading).
"""
