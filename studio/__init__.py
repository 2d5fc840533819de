"""The goading studio: help people make a bot contradict itself, count it, annotate it, keep it.

* ``studio.goading``: suggested next messages after each bot turn, each labelled with the CDConv
  trigger method it applies (Zheng et al. 2022, §4.2) or as a follow-up question ranked by FQness
  (Sato et al. 2024, §3.1.1).
* ``studio.lm``: log-probabilities of a message under the bot's own language model (for FQness).
* ``studio.storage``: sessions, turns, candidates with their guard verdicts, suggestions and
  annotations in SQLite (default) or PostgreSQL, through SQLAlchemy, with a versioned schema.
* ``studio.scores``: per-session scores, the scoreboard across sessions, annotator agreement.
* ``studio.export`` / ``studio.transcripts``: DECODE-shaped export, transcript import.
* ``studio.redteam``: self-play (the assistant's suggestions talk to the bot through the guard).

No Streamlit here: the pages call these modules through ``ui/studio_widgets.py``.
"""
