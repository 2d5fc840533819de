"""Self-play from the Review page: the goading assistant talks to a bot through the guard (logic in studio.redteam)."""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from conversation.records import ChatSettings
from guard.vocabulary import GuardMode
from studio.goading import METHOD_LABELS
from studio.storage import StoreError
from ui import class_models, ownership
from ui.render import escape_markdown
from ui.studio_store import player_name, said, store


def self_play_form(settings: ChatSettings) -> None:
    """Run studio.redteam with the chat's settings (bot and guard mode chosen here); sessions are stored."""
    from studio.goading import METHODS
    from studio.redteam import SELF_PLAY_MODES, Judge, RedteamSettings, run_redteam
    from ui.models import get_bot, get_guard

    bots = class_models.bots_offered()  # a student on a class server: the teacher's list
    with st.form("studio_redteam"):
        left, right = st.columns(2)
        bot_name = left.selectbox("Bot", bots, index=bots.index(settings.bot) if settings.bot in bots else 0)
        mode = right.selectbox("Guard mode", SELF_PLAY_MODES, index=SELF_PLAY_MODES.index(GuardMode.RERANK))
        methods = st.multiselect("How the assistant writes its messages (session k uses the k-th, in turn)",
                                 list(METHODS),
                                 default=list(METHODS), format_func=lambda m: METHOD_LABELS.get(m, m))
        sessions = left.number_input("Sessions", 1, 200, 2)
        turns = right.number_input("Bot turns per session", 1, 10, 2)
        go = st.form_submit_button("Run self-play", icon="🤖")
    if not go:
        return
    if not methods:
        st.warning("Pick at least one way of writing the messages.")
        return
    db = store()
    kept = "the stored sessions are kept; nothing was played"
    chat = replace(settings, bot=bot_name, guard_mode=mode)
    bot = get_bot(bot_name, kept=kept, script=chat.script)
    guard = get_guard(chat.detector, kept=kept)
    if db is None or bot is None or guard is None:
        return
    run_settings = RedteamSettings(chat=chat, methods=list(methods), sessions=int(sessions), turns=int(turns),
                                   player=player_name(), owner=ownership.owner_key())  # this browser's sessions
    bar = st.progress(0.0, text="self-play…")
    done = [0]

    def step() -> None:
        done[0] += 1
        bar.progress(min(1.0, done[0] / (run_settings.sessions * run_settings.turns)), text=f"{done[0]} bot replies")

    try:
        run = run_redteam(run_settings, db, bot, guard,
                          Judge(f"{chat.detector}:structured (the guard's own)", guard,
                                guard.settings(mode="flag", threshold=chat.threshold, prefilter=chat.prefilter)),
                          Judge(f"{chat.detector}:unstructured", guard,
                                guard.settings(mode="flag", threshold=chat.threshold, method="unstructured",
                                               prefilter=False)), on_turn=step)
    except (StoreError, RuntimeError, ValueError) as exc:
        why = said(exc) if isinstance(exc, StoreError) else class_models.hide_paths(exc)
        st.error(f"Self-play stopped: {why}. The turns played so far are stored.", icon="🤖")
        return
    report = run.report()
    st.success(f"{report['bot_replies']} bot replies in {report['sessions']} sessions ({report['seconds']} s), "
               f"stored with source 'redteam'.")
    st.caption(escape_markdown(f"judges: {report['guard_judge']} and {report['judge']}"))
    from ui.review_tables import self_play_rows
    from ui.widgets import show_table

    show_table(self_play_rows(report["per_method"]), interactive=True)
