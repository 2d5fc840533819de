"""The chat page's sidebar: the bot and guard controls, drawn over the chat settings' own keys (``ui.chat_state``).

Every control's key is its settings field's key, so the sidebar returns the settings record it shows; a stored
session's settings are put under those keys before the controls exist (``ui.chat_session.resume``).
"""

from __future__ import annotations

import json

import streamlit as st

from bots import registry
from bots.base import PRESETS
from conversation.records import ChatSettings, Conversation
from guard.policies import REPAIR_FALLBACKS
from guard.vocabulary import GUARD_MODES, GuardMode
from ui import chat_session, chat_state, studio_store
from ui.app_defaults import current_settings, defaults
from ui.models import engine_caption
from ui.render import escape_markdown
from ui.transcript import MODE_HELP

SHOW_REJECTED_KEY = chat_state.VIEW_PREFIX + "show_rejected_evidence"


def draw(conversation: Conversation) -> ChatSettings:
    """The bot and guard controls, Reset, the transcript download and the studio box; the settings they hold."""
    key = chat_state.key
    chat_state.restore_missing(st.session_state)  # what a visit to another page made Streamlit forget
    chat_state.ensure_defaults(defaults(), st.session_state)
    st.subheader("Bot")
    bots = registry.available_bots()
    if st.session_state.get(key("bot")) not in bots:
        st.session_state[key("bot")] = bots[0]
    bot_name = st.selectbox("Generator", bots, key=key("bot"),
                            help="bots.registry; 'embedded' is SmolLM2-135M-Instruct on CPU; 'scripted' plays a "
                                 "demo script whose third reply contradicts its first")
    engine_caption(bot_name)
    if st.session_state.get(key("preset")) not in PRESETS:
        st.session_state[key("preset")] = "fast"
    st.selectbox("Decoding preset", list(PRESETS), key=key("preset"))
    st.number_input("Candidates per turn", *chat_state.CANDIDATES_RANGE, key=key("num_candidates"))
    st.text_area("Bot persona (one fact a line)", key=key("persona"),
                 help="Given to the bot, and checked by the guard like earlier bot turns.")
    st.subheader("Guard")
    modes = [str(m) for m in GUARD_MODES]
    if st.session_state.get(key("guard_mode")) not in modes:
        st.session_state[key("guard_mode")] = str(GuardMode.RERANK)
    mode = GuardMode(st.radio(
        "Mode", modes, key=key("guard_mode"), format_func=lambda m: {GuardMode.RERANK: "re-rank"}.get(m, m),
        help="\n".join(f"- **{m}**: {escape_markdown(h)}" for m, h in MODE_HELP.items())))
    st.caption(escape_markdown(MODE_HELP[mode]))
    if mode == GuardMode.REPAIR:
        fallbacks = [str(m) for m in REPAIR_FALLBACKS]
        if st.session_state.get(key("repair_fallback")) not in fallbacks:
            st.session_state[key("repair_fallback")] = str(GuardMode.RERANK)
        st.selectbox("When the generator's best cannot be repaired", fallbacks, key=key("repair_fallback"),
                     format_func=lambda m: {GuardMode.RERANK: "re-rank"}.get(m, m),
                     help="The policy that picks the reply when the generator's best contradicts through more "
                          "than one sentence, or only a question or small talk would remain without it.")
    if mode == GuardMode.PENALTY or (mode == GuardMode.REPAIR
                                     and st.session_state.get(key("repair_fallback")) == GuardMode.PENALTY):
        st.slider("Penalty λ", *chat_state.LAMBDA_RANGE, step=0.1, key=key("penalty_lambda"))
    st.toggle("Ask the bot again when no reply is consistent", key=key("remind"),
              help="The bot's reply is started for it with what it said before (\"No, I work as a nurse.\") and it "
                   "writes on; if it still contradicts, that opening alone is sent (marked as written by the guard). "
                   "Technical: guard.reminders; a bot that cannot continue a reply gets the fact in its persona.")
    st.toggle("Prefilter long histories (top 8 similar sentences)", key=key("prefilter"))
    st.session_state.setdefault(SHOW_REJECTED_KEY, False)
    st.toggle("Mark unsent candidates' evidence in the transcript", key=SHOW_REJECTED_KEY,
              help="By default the transcript marks only what the sent replies contradict; each unsent "
                   "candidate's evidence is in its turn's candidate panel.")
    settings = current_settings()
    chat_state.remember(settings, st.session_state)
    st.divider()
    if st.button("Reset conversation", icon="🗑️", width="stretch"):
        conversation = chat_session.reset(settings.persona)
    st.download_button(
        "Download transcript (JSON)", icon="⬇️", width="stretch",
        # made when clicked, so a reply added after the sidebar was drawn (this very run) is in the file
        data=lambda kept=conversation: json.dumps(kept.to_decode_record(), indent=2, ensure_ascii=False),
        file_name=f"{conversation.record_id}.json", mime="application/json",
        help="DECODE-shaped record (record_id, turns with turn_id/agent_id/text) with each bot turn's guard report.",
    )
    studio_store.sidebar()
    return settings
