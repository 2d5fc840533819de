"""Guarded chat: the bot proposes N candidates, the guard checks them against earlier turns."""

from __future__ import annotations

import json

import streamlit as st

from bots import registry
from bots.base import PRESETS, BotError
from conversation.guarding import guarded_reply
from conversation.records import BOT, USER, Conversation, GuardSettings
from guard.vocabulary import GUARD_MODES, GuardMode, PremiseSource
from ui import resources, studio_widgets
from ui.render import escape_markdown, turn_html
from ui.transcript import MODE_HELP, persona_lines, transcript_marks
from ui.turn_widgets import rejudge_controls, show_candidates, show_turn_chart, turn_caption

base = resources.defaults()
detector_name, threshold = resources.detector_choice()
conversation: Conversation = studio_widgets.resume()  # app.py has loaded a ?session= from the URL already
# Streamlit forgets a page's widget values while another page is shown; keep copies so the settings
# (and the persona) survive a visit to the playground.
SETTING_KEYS = ("bot_name", "preset", "num_candidates", "persona_text", "guard_mode", "penalty_lambda", "prefilter",
                "show_rejected_evidence")
for _key in SETTING_KEYS:
    if _key not in st.session_state and f"kept::{_key}" in st.session_state:
        st.session_state[_key] = st.session_state[f"kept::{_key}"]


#: What a failed bot or detector load leaves in place, said in its error.
KEPT = "the conversation is kept"


def initial(key: str, **value) -> dict:
    """The widget's default, unless session state already holds its value (avoids Streamlit's warning)."""
    return {} if key in st.session_state else value

# ---------------------------------------------------------------- sidebar: bot and guard settings
with st.sidebar:
    st.subheader("Bot")
    bots = registry.available_bots()
    bot_name = st.selectbox("Generator", bots, key="bot_name",
                            help="bots.registry; 'embedded' is SmolLM2-135M-Instruct on CPU; 'scripted' plays a "
                                 "demo script whose third reply contradicts its first",
                            **initial("bot_name", index=bots.index(base.bot) if base.bot in bots else 0))
    resources.engine_caption(bot_name)
    presets = list(PRESETS)
    preset_name = st.selectbox("Decoding preset", presets, key="preset",
                               **initial("preset", index=presets.index(base.preset) if base.preset in presets else 0))
    num_candidates = st.number_input("Candidates per turn", 1, 10, key="num_candidates",
                                     **initial("num_candidates", value=base.num_candidates))
    persona_text = st.text_area("Bot persona (one fact a line)", key="persona_text",
                                help="Given to the bot, and checked by the guard like earlier bot turns.")
    st.subheader("Guard")
    modes = [str(m) for m in GUARD_MODES]  # plain strings in the session state
    default_mode = base.mode if base.mode in modes else GuardMode.RERANK
    mode = GuardMode(st.radio(
        "Mode", modes, key="guard_mode", **initial("guard_mode", index=modes.index(default_mode)),
        format_func=lambda m: {GuardMode.RERANK: "re-rank"}.get(m, m),
        help="\n".join(f"- **{m}**: {escape_markdown(h)}" for m, h in MODE_HELP.items())))
    st.caption(escape_markdown(MODE_HELP[mode]))
    penalty_lambda = 1.0
    if mode == GuardMode.PENALTY:
        penalty_lambda = st.slider("Penalty λ", 0.0, 5.0, step=0.1, key="penalty_lambda",
                                   **initial("penalty_lambda", value=1.0))
    prefilter = st.toggle("Prefilter long histories (top 8 similar turns)", key="prefilter",
                          **initial("prefilter", value=True))
    show_rejected = st.toggle("Mark unsent candidates' evidence in the transcript", key="show_rejected_evidence",
                              **initial("show_rejected_evidence", value=False),
                              help="By default the transcript marks only what the sent replies contradict; "
                                   "each unsent candidate's evidence is in its turn's candidate panel.")
    for _key in SETTING_KEYS:
        if _key in st.session_state:
            st.session_state[f"kept::{_key}"] = st.session_state[_key]
    st.divider()
    if st.button("Reset conversation", icon="🗑️", width="stretch"):
        st.session_state["conversation"] = conversation = Conversation(persona=persona_lines(persona_text))
        studio_widgets.forget_url_session()
    st.download_button(
        "Download transcript (JSON)", icon="⬇️", width="stretch",
        data=json.dumps(conversation.to_decode_record(), indent=2, ensure_ascii=False),
        file_name=f"{conversation.record_id}.json", mime="application/json",
        help="DECODE-shaped record (record_id, turns with turn_id/agent_id/text) with each bot turn's guard report.",
    )
    studio_widgets.sidebar()

# The persona applies from the next turn on; earlier turns keep what the guard saw then.
conversation.persona = persona_lines(persona_text)
settings = GuardSettings(mode=mode, threshold=threshold, num_candidates=int(num_candidates),
                         penalty_lambda=float(penalty_lambda))

st.title("Guarded chat")
st.caption(escape_markdown(
    f"bot: {bot_name} · decoding: {preset_name} · guard: {mode} · detector: {detector_name} · τ = {threshold:.2f}"
))


# ---------------------------------------------------------------- transcript
marks = transcript_marks(conversation, include_rejected=show_rejected)
if conversation.persona:
    with st.container(border=True):
        st.markdown("**Bot persona**")
        for i, line in enumerate(conversation.persona):
            st.html(turn_html(BOT, line, marks.persona.get(i, ()), turn_id=i, show_id=True,
                              source=PremiseSource.PERSONA))

for turn in conversation.turns:
    with st.chat_message("user" if turn.speaker == USER else "assistant"):
        st.html(turn_html(turn.speaker, turn.text, marks.turns.get(turn.turn_id, ()), turn_id=turn.turn_id,
                          show_id=True))
        if turn.report is not None:
            turn_caption(turn.report)
            show_candidates(conversation, turn)
            studio_widgets.annotation_box(conversation, turn)


def save_session() -> bool:
    return studio_widgets.save(conversation, bot_name, preset_name, mode, detector_name, threshold, num_candidates,
                               float(st.session_state.get("kept::penalty_lambda", penalty_lambda)), bool(prefilter))


save_session()
studio_widgets.suggestions(conversation, resources.loaded_bot(bot_name), resources.model_lock("bot", bot_name))
if not conversation.turns:
    st.info("Say something to the bot. Each reply is chosen from several candidates; when the sent reply "
            "contradicts what the bot said before, both are highlighted. Each turn's candidate panel shows the "
            "candidates that were not sent and what they would have contradicted.")


def guard_detector():
    """The detector the sidebar names, at its τ (None after an error)."""
    return resources.make_detector(detector_name, threshold, prefilter_k=8 if prefilter else None, kept=KEPT)


show_turn_chart(conversation, threshold)
rejudged = rejudge_controls(conversation, settings, detector_name, guard_detector)
if rejudged is not None:
    st.session_state["conversation"] = rejudged
    studio_widgets.save_rejudged(rejudged)
    st.rerun()


# ---------------------------------------------------------------- one guarded turn
def reply_now() -> bool:
    """Generate and guard the bot's reply to the last user turn; False (with an error shown) on failure."""
    bot = resources.get_bot(bot_name, kept=KEPT)
    detector = None
    if mode != GuardMode.OFF:
        detector = guard_detector()
        if detector is None:
            return False
    if bot is None:
        return False
    try:
        with resources.model_lock("bot", bot_name), st.spinner("The bot is thinking; the guard is checking…"):
            guarded_reply(conversation, bot, detector, settings, PRESETS[preset_name], detector_name=detector_name,
                          bot_name=bot_name, preset=preset_name)
    except BotError as exc:
        st.error(f"The bot could not answer: {exc}. Your message is kept; press Retry or pick another bot.",
                 icon="⚠️")
        return False
    except (RuntimeError, ValueError, OSError) as exc:
        st.error(f"This turn failed: {exc}. Your message is kept; press Retry.", icon="⚠️")
        return False
    return True


prompt = st.chat_input("Message the bot", key="chat_input", submit_mode="disable")
picked = studio_widgets.take_pending()
if prompt is None and picked is not None:
    prompt = picked.text
if prompt is not None:
    if not prompt.strip():
        st.warning("Empty message: type something first.", icon="✍️")
    else:
        conversation.add(USER, prompt.strip())
        studio_widgets.note_user_turn(conversation, picked if picked is not None and picked.text == prompt else None)
        with st.chat_message("user"):
            st.html(turn_html(USER, prompt.strip()))
        replied = reply_now()
        save_session()
        if replied:
            st.rerun()
elif conversation.awaiting_reply:
    st.warning("The last message has no reply yet (the previous attempt failed).", icon="↩️")
    if st.button("Retry reply", icon="🔁"):
        if reply_now():
            save_session()
            st.rerun()
