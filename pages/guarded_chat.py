"""Guarded chat: the bot proposes N candidates, the guard checks them against the bot's earlier turns and persona.

One pass a turn: the sidebar, then the chat input is read, the transcript's places are set (each turn's bubble, kept
on screen as it was), a new message is answered in place with the guard's steps shown as they happen while the turns
are drawn into their places, the session is saved, and the goading assistant comes last. No rerun after a reply
(docs/app.md).
"""

from __future__ import annotations

import streamlit as st

from bots.base import BotError, ServerBusy
from conversation.records import BOT, USER
from guard.vocabulary import GuardMode, PremiseSource
from ui import chat_session, chat_sidebar, navigation, profiling, suggestions
from ui.annotations import annotation_box
from ui.app_defaults import shown_threshold
from ui.class_models import hide_paths, shown_name
from ui.models import bot_loaded, get_bot, get_guard, guard_loaded, loaded_bot
from ui.render import escape_markdown, tau_words, turn_html
from ui.sheet_widgets import chat_sheet
from ui.startup import reply_shown, warm_up_status
from ui.transcript import transcript_marks
from ui.turn_widgets import guarded_turn_live, rejudge_controls, show_candidates, show_turn_chart, turn_caption

navigation.only_in_the_app(navigation.CHAT)  # run alone by Streamlit: the app is offered instead

#: What a failed bot or detector load leaves in place, said in its error.
KEPT = "the conversation is kept"

conversation = chat_session.current()  # app.py has loaded a ?session= from the URL already
with st.sidebar:
    settings = chat_sidebar.draw(conversation)
profiling.mark("sidebar")
conversation = chat_session.current()  # Reset may have replaced it
prompt = st.chat_input("Message the bot", key="chat_input")
picked = suggestions.take_pending()
if prompt is None and picked is not None:
    prompt = picked.text
# the persona applies from the next turn (earlier turns keep theirs): the box's lines, else the bot's own persona, which
# it plays when given none (shown and checked, not left unsaid)
persona_lines, own_persona = settings.played_persona
conversation.persona = persona_lines

st.title("Guarded chat")
played = f", script {settings.script}" if settings.bot == "scripted" and settings.script else ""
st.caption(escape_markdown(f"Bot: {settings.bot}{played} ({settings.preset}) · guard: {settings.mode} · detector: "
                           f"{shown_name(settings.detector)}, a contradiction from τ = "
                           f"{tau_words(shown_threshold(settings))} on"),
           help="The sidebar's settings; each reply keeps the ones it was made with.")
warm_up_status()
# the bot's fact sheet, above the transcript: its place first, filled once the turn is in, so reading it never delays
# the guard's first step. A container, not st.empty(): Streamlit keeps a block's last drawing on screen until this run
# draws over it, where an empty element would blank the sheet at the start of every run and shift the transcript
sheet_slot = st.container()

# ---------------------------------------------------------------- the transcript: its places first, its turns later
show_rejected = bool(st.session_state.get(chat_sidebar.SHOW_REJECTED_KEY))
marks = transcript_marks(conversation, include_rejected=show_rejected)
slots: dict[tuple[str, int], object] = {}  # each turn's text, redrawn in place when a new reply marks it


def draw_persona() -> None:
    st.markdown("**Bot persona**" + (" (the bot's own)" if own_persona else ""))
    if own_persona:
        st.caption(escape_markdown(chat_sidebar.own_persona_note()))
    for i, line in enumerate(conversation.persona):
        slots[("persona", i)] = st.empty()
        slots[("persona", i)].html(turn_html(BOT, line, marks.persona.get(i, ()), turn_id=i, show_id=True,
                                             source=PremiseSource.PERSONA))


def draw_turn_content(turn) -> None:
    slots[("turn", turn.turn_id)] = st.empty()
    slots[("turn", turn.turn_id)].html(turn_html(turn.agent_id, turn.text, marks.turns.get(turn.turn_id, ()),
                                                 turn_id=turn.turn_id, show_id=True))
    if turn.report is not None:
        turn_caption(turn.report)
        show_candidates(conversation, turn)
        annotation_box(conversation, turn)


def draw_turn(turn) -> None:
    with st.chat_message("user" if turn.agent_id == USER else "assistant"):
        draw_turn_content(turn)


def redraw_marked() -> None:
    """After a new reply: only the earlier turns and persona lines whose highlights changed are drawn again."""
    global marks
    fresh = transcript_marks(conversation, include_rejected=show_rejected)
    for (kind, index), slot in slots.items():
        old = (marks.persona if kind == "persona" else marks.turns).get(index, ())
        new = (fresh.persona if kind == "persona" else fresh.turns).get(index, ())
        if tuple(old) != tuple(new):
            text = conversation.persona[index] if kind == "persona" else conversation.turns[index].text
            speaker = BOT if kind == "persona" else conversation.turns[index].agent_id
            slot.html(turn_html(speaker, text, new, turn_id=index, show_id=True,
                                source=PremiseSource.PERSONA if kind == "persona" else PremiseSource.HISTORY))
    marks = fresh


def place_transcript() -> list[tuple[object, object]]:
    """Every part of the transcript in its place, empty: the persona's box and a chat bubble per turn, an empty slot
    before each bot turn (where its steps were shown: ``answer``). Streamlit keeps what its last run drew inside a
    block of the same kind until this run draws over it, so the transcript stays on screen as it was while the live
    box below it starts at once; ``fill_transcript`` then draws the turns into their places, while the bot writes.
    Returns (what goes in, its place) in order."""
    places: list[tuple[object, object]] = []
    if conversation.persona:
        places.append(("persona", st.container(border=True)))
    for turn in list(conversation.turns):
        if turn.agent_id == BOT:
            st.empty()
        places.append((turn, st.chat_message("user" if turn.agent_id == USER else "assistant")))
    return places


def fill_transcript(between=lambda: None) -> None:
    """Draw the placed transcript's turns (once per run: later calls do nothing), ``between()`` after each (the live
    turn's steps so far)."""
    while placed:
        what, place = placed.pop(0)
        with place:  # statements, not one conditional expression: Streamlit's magic would write its None on the page
            if what == "persona":
                draw_persona()
            else:
                draw_turn_content(what)
        between()


chat_session.save_turns(conversation, settings)  # turns a failed save left behind (a no-op when all are stored)
placed = place_transcript()
profiling.mark("transcript placed")
if not conversation.turns and prompt is None:
    st.info("Say something to the bot. Each reply is chosen from several candidates; when the sent reply "
            "contradicts what the bot said before, both are highlighted. Each turn's candidate panel shows the "
            "candidates that were not sent and what they would have contradicted.")


# ---------------------------------------------------------------- one guarded turn, answered in place
def answer(live=None, slot=None, while_running=None) -> bool:
    """Generate and guard the bot's reply to the last user turn, showing the guard at work; False (with an error
    that says what is kept) on failure. ``live``: where the steps go (a new slot by default); ``slot``: what is
    emptied once the reply is in (``live`` by default; the Retry's slot, with its warning and button, on a retry);
    ``while_running(pump)``: what the page draws while the bot writes (the transcript, and the user's turn saved)."""
    # One slot, right under the user's message, for everything transient: a model's first load, the guard's steps, an
    # error that stops the turn. The finished turn goes under it once it is emptied, and later runs place an empty slot
    # before every bot turn (place_transcript), so each turn keeps its place from one run to the next: Streamlit leaves
    # the last run's elements on screen, faded, until this run draws over them, and a turn drawn lower down last time
    # would show as a second copy while the bot writes, or lend its caption and candidates to the user's new message.
    # (Drawing the turn into the slot itself fails under load: Streamlit then sends the turn's parts before the turn.)
    live = st.empty() if live is None else live
    with live.container():
        if not (settings.mode == GuardMode.OFF or guard_loaded(settings.detector)) \
                or not bot_loaded(settings.bot, script=settings.script):
            fill_transcript()  # a first load takes seconds: the transcript is not left faded meanwhile
        guard = None
        if settings.mode != GuardMode.OFF:
            guard = get_guard(settings.detector, kept=KEPT)
            if guard is None:
                return False
        bot = get_bot(settings.bot, kept=KEPT, script=settings.script)
        if bot is None:
            return False
        try:
            turn = conversation.append(guarded_turn_live(conversation, bot, guard, settings, while_running))
        except ServerBusy as exc:  # too many students wait for the bot (bots.worker): say so, never hang
            st.error(f"{str(exc)[:1].upper()}{str(exc)[1:]}. Your message is kept: press Retry in a minute.",
                     icon="⏳")
            return False
        except BotError as exc:
            st.error(f"The bot could not answer: {hide_paths(exc)}. Your message is kept; press Retry or pick another "
                     "bot.", icon="⚠️")
            return False
        except (RuntimeError, ValueError, OSError) as exc:
            st.error(f"This turn failed: {hide_paths(exc)}. Your message is kept; press Retry.", icon="⚠️")
            return False
    (live if slot is None else slot).empty()
    draw_turn(turn)
    profiling.mark("reply drawn")
    reply_shown()
    chat_session.save_turns(conversation, settings)  # after the reply is on screen
    redraw_marked()
    return True


def save_and_fill(pump) -> None:
    """While the bot writes: the user's message saved (a reload meanwhile keeps it), then the transcript drawn. The
    turn's thread reads the conversation and hands back the reply; this page appends it once it is in."""
    chat_session.save_turns(conversation, settings)
    pump()
    fill_transcript(between=pump)


if prompt is not None:
    if not prompt.strip():
        fill_transcript()
        st.warning("Empty message: type something first.", icon="✍️")
    else:
        conversation.add(USER, prompt.strip())
        is_suggestion = picked is not None and picked.text == prompt
        chat_session.note_user_turn(conversation, picked.method if is_suggestion else "typed",
                                    picked.suggestion_id if is_suggestion else None,
                                    picked.edited if is_suggestion else False)
        draw_turn(conversation.turns[-1])
        answer(while_running=save_and_fill)
        fill_transcript()  # where the turn stopped before the bot wrote (a model that failed to load)
        chat_session.save_turns(conversation, settings)
elif conversation.awaiting_reply:
    fill_transcript()
    # the warning, the button and the retried turn's steps share the one slot a bot turn has before it: a successful
    # retry empties it, so neither stays above the reply, and the turn keeps its place in the next run
    retry_slot = st.empty()
    with retry_slot.container():
        st.warning("The last message has no reply yet (the previous attempt failed or was interrupted).", icon="↩️")
        retry = st.button("Retry reply", icon="🔁")
        retry_live = st.empty() if retry else None
    if retry:
        answer(retry_live, retry_slot)  # a failure leaves the warning and the button above its error
else:
    fill_transcript()


# ---------------------------------------------------------------- after the transcript
with sheet_slot:
    chat_sheet(conversation, settings)
show_turn_chart(conversation, shown_threshold(settings))
rejudged = rejudge_controls(conversation, settings, lambda: get_guard(settings.detector, kept=KEPT))
if rejudged is not None:
    st.session_state[chat_session.CONVERSATION_KEY] = rejudged
    chat_session.save_rejudged(rejudged)
    st.rerun()
suggestions.panel(conversation, loaded_bot(settings.bot, script=settings.script))
