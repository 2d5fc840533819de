"""The chat page's sidebar: the bot and guard controls, drawn over the chat settings' own keys (``ui.chat_state``).

Every control's key is its settings field's key, so the sidebar returns the settings record it shows; a stored
session's settings are put under those keys before the controls exist (``ui.chat_session.resume``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import streamlit as st

from bots import registry
from bots.base import PRESETS
from conversation.records import ChatSettings, Conversation
from guard.judge.policies import REPAIR_FALLBACKS
from guard.vocabulary import GUARD_MODES, GuardMode
from ui import chat_session, chat_state, class_models, ownership, studio_store
from ui.app_defaults import current_settings
from ui.models import engine_text
from ui.render import escape_markdown

#: What each guard mode does, in a class's words (the sidebar's caption under the mode)
MODE_HELP: dict[GuardMode, str] = {
    GuardMode.OFF: "no checking: the bot's favourite reply is sent",
    GuardMode.FLAG: "the bot's favourite reply is sent; contradictions are shown, not prevented",
    GuardMode.RERANK: "among the replies that contradict nothing and answer, the one the detector suspects least is "
                      "sent; the bot's favourite while the detector is far from suspecting it",
    GuardMode.PENALTY: "each reply loses points the surer the detector is that it contradicts; the best score is sent",
    GuardMode.BLOCK: "like re-rank, but when every reply contradicts, a safe \"I didn't quite catch that\" is sent",
    GuardMode.REPAIR: "the bot's favourite reply is sent without the one sentence that contradicts, when the rest "
                      "still answers; otherwise the fallback below decides",
}
#: The same, with the papers and formulas behind them (the mode's help tooltip)
MODE_TECHNICAL: dict[GuardMode, str] = {
    GuardMode.OFF: "the generator's best candidate; no detection",
    GuardMode.FLAG: "the generator's best candidate; verdicts reported only",
    GuardMode.RERANK: "among the unflagged candidates that answer, the lowest contradiction score; the generator's "
                      "best of them while its score is under the calibrated band (DECODE §5.3 re-ranks by the "
                      "generator alone); all flagged: the reminder, then the generator's best",
    GuardMode.PENALTY: "highest s − λ·(s₁ − s_k)·p(contradiction) (DNLI re-ranking, Welleck et al. 2019)",
    GuardMode.BLOCK: "re-rank, and MuTual-plus's safe response when every candidate is flagged",
    GuardMode.REPAIR: "the generator's best less its one contradicting sentence; else re-rank, penalty or block",
}

SHOW_REJECTED_KEY = chat_state.VIEW_PREFIX + "show_rejected_evidence"
def own_persona_note(own: Sequence[str] = ()) -> str:
    """What the page says when the persona box is empty and the bot plays its own persona: the sidebar names it
    (``own``), the chat's persona box shows it under the note."""
    named = f" ({' '.join(own)})" if own else ""
    return (f"The persona box is empty, so the bot plays its own persona{named}: the guard checks its replies against "
            "it. Type facts in the box to give it another.")


def rerank_band_words(detector: str) -> str:
    """Re-rank's band as measured, when this detector's guard is already loaded (the sidebar never loads one)."""
    from ui.models import get_guard, guard_loaded

    if not guard_loaded(detector):
        return ""
    guard = get_guard(detector)
    config = None if guard is None else guard.config
    if config is None or config.rerank_band is None:
        return "This detector has no measured band: the reply the detector suspects least is always sent."
    share = ("" if config.rerank_band_consistent is None else
             f": {config.rerank_band_consistent:.1%} of the labelled bot turns of both dev streams' calibration "
             "halves scoring under it were consistent")
    return (f"The bot's favourite is sent while its contradiction score is under {config.rerank_band:.3f}{share}. "
            "Above it, the candidate the detector suspects least goes out.")


def draw(conversation: Conversation) -> ChatSettings:
    """The bot and guard controls, Reset, the transcript download and the studio box; the settings they hold."""
    key = chat_state.key
    # every field's value was written this run before any widget (app.py: app_sidebar.sidebar_detector_settings)
    st.subheader("Bot")
    bots = class_models.bots_offered()  # a student on a class server: the teacher's list
    if st.session_state.get(key("bot")) not in bots:
        st.session_state[key("bot")] = bots[0]
    st.selectbox(
        "Which bot", bots, key=key("bot"),
        help=("The teacher chose the bots this class may use.\n\n" if class_models.restricted() else "")
        + "'embedded': a small chatbot that runs on this computer. 'scripted': a demo that contradicts itself on "
             "purpose (its third reply contradicts its first).\n\nTechnical: 'embedded' is SmolLM2-135M-Instruct on "
             "the CPU; the others are BlenderBot, OPT-style, Gemma 3 and PLATO-style bots, or a remote "
             "OpenAI-compatible server. " + engine_text(str(st.session_state.get(key("bot")))))
    unknown = class_models.unknown_bots() if ownership.teacher_password() else []
    if unknown:  # the teacher's list names a bot this app does not have: said, so the typo is found
        st.warning(escape_markdown(f"{class_models.BOTS_ENV} names {', '.join(unknown)}: no bot of this app has that "
                                   "name, so students are not offered it. Start the server with names from: "
                                   f"{', '.join(registry.available_bots())}."), icon="🧑‍🏫")
    if st.session_state.get(key("preset")) not in PRESETS:
        st.session_state[key("preset")] = "fast"
    st.selectbox("How the bot picks its words", list(PRESETS), key=key("preset"),
                 help="'fast' (the default) writes short replies quickly, with some variety; 'greedy' always takes "
                      "the most likely next word.\n\nTechnical: decoding presets (bots.base.PRESETS): 'fast' is top-k "
                      "and nucleus sampling together (k 40, p 0.9, temperature 0.8, 32 tokens); the others greedy, "
                      "and beam search, top-k sampling, sample-and-rank and nucleus sampling as DECODE ran them.")
    st.number_input("Replies the bot drafts per turn", *chat_state.CANDIDATES_RANGE, key=key("num_candidates"),
                    help="The bot writes this many possible replies; the guard checks each one and decides which to "
                         "send.")
    st.text_area("What the bot says about itself (one fact a line)", key=key("persona"),
                 help="Facts the bot is told about itself (its persona): given to the bot, and checked by the guard "
                      "like the bot's earlier turns. Left empty, a bot with a persona of its own plays that one.")
    if not str(st.session_state.get(key("persona")) or "").strip():
        own = registry.default_persona(str(st.session_state.get(key("bot"))))
        st.caption(escape_markdown(own_persona_note(own)) if own else
                   "The persona box is empty, and this bot plays no persona of its own: it is told nothing about "
                   "itself.")
    st.subheader("Guard")
    modes = [str(m) for m in GUARD_MODES]
    if st.session_state.get(key("guard_mode")) not in modes:
        st.session_state[key("guard_mode")] = str(GuardMode.RERANK)
    mode = GuardMode(st.radio(
        "What the guard does", modes, key=key("guard_mode"),
        format_func=lambda m: {GuardMode.RERANK: "re-rank"}.get(m, m),
        help="\n".join(f"- **{m}**: {escape_markdown(h)}" for m, h in MODE_HELP.items())
        + "\n\nTechnical:\n" + "\n".join(f"- **{m}**: {escape_markdown(h)}" for m, h in MODE_TECHNICAL.items())))
    st.caption(escape_markdown(MODE_HELP[mode]), help=rerank_band_words(current_settings().detector) or None
               if mode == GuardMode.RERANK else None)
    if mode == GuardMode.REPAIR:
        fallbacks = [str(m) for m in REPAIR_FALLBACKS]
        if st.session_state.get(key("repair_fallback")) not in fallbacks:
            st.session_state[key("repair_fallback")] = str(GuardMode.RERANK)
        st.selectbox("When the bot's favourite reply cannot be repaired", fallbacks, key=key("repair_fallback"),
                     format_func=lambda m: {GuardMode.RERANK: "re-rank"}.get(m, m),
                     help="What decides when the favourite reply contradicts through more than one sentence, or only "
                          "a question or small talk would remain without it.")
    if mode == GuardMode.PENALTY or (mode == GuardMode.REPAIR
                                     and st.session_state.get(key("repair_fallback")) == GuardMode.PENALTY):
        st.slider("How much a contradiction costs", *chat_state.LAMBDA_RANGE, step=0.1, key=key("penalty_lambda"),
                  help="At 1, a reply the detector is sure contradicts drops to the place of the bot's least "
                       "favourite draft; at 0 contradictions cost nothing.\n\nTechnical: the penalty λ in "
                       "s − λ·(s₁ − s_k)·p(contradiction).")
    st.toggle("Ask the bot again when no reply is consistent", key=key("remind"),
              help="The bot's reply is started for it with what it said before (\"No, I work as a nurse.\") and it "
                   "writes on; if it still contradicts, that opening alone is sent (marked as written by the guard)."
                   "\n\nTechnical: guard.judge.reminders; a bot that cannot continue a reply gets the fact in its persona.")
    st.toggle("Remind the bot of its facts before it writes", key=key("memory"),
              help="Before the bot writes, what it already said about the thing you ask (its job, its home, how many "
                   "pets...) is put right before its reply, so it does not make up another answer. The candidates' "
                   "panel shows what it was reminded of.\n\nTechnical: guard.judge.memory, the fact sheet's facts "
                   "the message asks about or asserts, the persona's first, never a drifted turn's.")
    st.toggle("In long chats, check only the most related earlier sentences", key=key("prefilter"),
              help="Faster in a long chat; an unrelated earlier sentence cannot be contradicted anyway.\n\n"
                   "Technical: the prefilter keeps the 8 earlier sentences most similar to the reply "
                   "(all-MiniLM-L6-v2 embeddings).")
    st.session_state.setdefault(SHOW_REJECTED_KEY, False)
    st.toggle("Also mark what the unsent drafts contradicted", key=SHOW_REJECTED_KEY,
              help="By default the conversation marks only what the sent replies contradict; what each unsent draft "
                   "contradicts is in its turn's panel of drafts.")
    settings = current_settings()
    chat_state.remember(settings, st.session_state)
    st.divider()
    if st.button("Reset conversation", icon="🗑️", width="stretch"):
        conversation = chat_session.reset(settings.persona)
    st.download_button(
        "Download transcript (JSON)", icon="⬇️", width="stretch",
        # made when clicked, so a reply added after the sidebar was drawn (this very run) is in the file
        # a student's copy has the classroom filter's withheld candidates only as the line saying why; the teacher's is whole
        data=lambda kept=conversation, masked=not ownership.is_teacher(): json.dumps(
            kept.to_decode_record(masked=masked), indent=2, ensure_ascii=False),
        file_name=f"{conversation.record_id}.json", mime="application/json",
        # no rerun on the click: a rerun replaces the file this run registered while the browser is asking for it,
        # and the button then waited on a request that never answered (disabled for 90 s in a test under load)
        on_click="ignore",
        help="The conversation with every guard decision, as a JSON file.\n\nTechnical: a DECODE-shaped record "
             "(record_id, turns with turn_id/agent_id/text) with each bot turn's guard report.",
    )
    studio_store.sidebar()
    return settings
