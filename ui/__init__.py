"""The Streamlit app's presentation (app.py and pages/ import it; nothing else does).

Plain Python, unit-tested without Streamlit: ``render`` (escaping, highlights, a turn as HTML), ``tables`` (small
HTML tables, the heatmap's frame), ``transcript`` (the guarded conversation drawn), ``charts`` (Altair
specifications), ``chat_state`` (the settings record in the session state). With Streamlit, one job a module:
``app_defaults``, ``models`` (the bots and the guard loaded once), ``startup`` (the warm-up), ``app_sidebar``,
``errors``, the chat page's pieces (``chat_session``, ``chat_sidebar``, ``turn_widgets``, ``suggestions``,
``annotations``), ``widgets`` (playground and Learn), ``studio_store`` and ``self_play``.
"""
