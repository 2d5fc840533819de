"""The one settings record (issue 24): every field of ``conversation.records.ChatSettings`` makes the whole trip - into
the sidebar's session state and back (``ui.chat_state``), into the studio database with a session and with a bot turn
and back, and from a stored session into the sidebar again (a reload of ``?session=``) - with no per-field code.

The values are made from each field's type, so a field added to ChatSettings is covered here without touching this
test (a type it cannot make a value for fails, saying so)."""

from __future__ import annotations

import types
import typing
from dataclasses import MISSING, asdict, fields, replace
from pathlib import Path

import pytest

from bots.base import PRESETS
from bots.registry import available_bots
from conversation.records import BOT, USER, ChatSettings, Conversation
from guard.judge.policies import REPAIR_FALLBACKS
from guard.vocabulary import GUARD_MODES, GuardMode
from studio.storage import SessionInfo, Store
from ui import chat_state

REPO = Path(__file__).resolve().parent.parent

#: fields whose control only shows some values (a restored session's other values leave the control as it is)
OFFERED = {
    "bot": lambda default: next(b for b in available_bots() if b != default),
    "preset": lambda default: next(p for p in PRESETS if p != default),
    "repair_fallback": lambda default: next(m for m in REPAIR_FALLBACKS if m != default),
}


def _default(f) -> typing.Any:
    return f.default_factory() if f.default is MISSING else f.default


def _other_value(name: str, hint: typing.Any, default: typing.Any) -> typing.Any:
    """A value of the field's type that is not its default (and that its sidebar control can show)."""
    if name in OFFERED:
        return OFFERED[name](default)
    optional = typing.get_origin(hint) in (typing.Union, types.UnionType)  # "X | None"
    kind = next(k for k in typing.get_args(hint) if k is not type(None)) if optional else hint
    kind = typing.get_origin(kind) or kind  # list[str] -> list
    if kind is GuardMode:
        return next(GuardMode(m) for m in GUARD_MODES if m != default)
    if kind is bool:
        return not default
    if kind is int:
        return (default or 0) + 1
    if kind is float:  # inside τ's slider range, four digits (a stored τ keeps four)
        return round((default or 0.25) + 0.1234, 4)
    if kind is str:
        return f"{default or name} <b>*changed*</b>"
    if kind is list:
        return ["I live in Ohio.", "I have *two* dogs <b>."]
    if kind is dict:
        return {"changed": 1}
    raise AssertionError(f"test_chat_settings cannot make a value for ChatSettings.{name} ({hint}): add its type here")


def changed_settings() -> ChatSettings:
    """Every field away from its default."""
    hints = typing.get_type_hints(ChatSettings)
    values = {f.name: _other_value(f.name, hints[f.name], _default(f)) for f in fields(ChatSettings)}
    values["decoding"] = asdict(PRESETS[values["preset"]])  # the decoding values always follow the preset
    return ChatSettings(**values)


def test_every_field_is_changed_by_the_test():
    changed, default = changed_settings(), ChatSettings()
    same = [f.name for f in fields(ChatSettings) if getattr(changed, f.name) == getattr(default, f.name)]
    assert not same, f"fields left at their default, so not tested: {same}"


def test_every_field_goes_into_the_session_state_and_back():
    settings, state = changed_settings(), {}
    chat_state.write_settings(settings, state)
    assert set(state) == {chat_state.key(name) for name in ChatSettings.field_names()}  # one key a field, no other
    assert chat_state.read_settings(state, ChatSettings()) == settings


def test_every_field_is_stored_and_restored_with_a_session_and_its_turn(tmp_path):
    settings = changed_settings()
    state: dict = {}
    chat_state.write_settings(settings, state)
    shown = chat_state.read_settings(state, ChatSettings())  # what the sidebar gives the chat page
    store = Store(f"sqlite:///{tmp_path / 'studio.db'}")
    try:
        conversation = Conversation(persona=list(shown.persona), record_id="chat-settings01")
        conversation.add(USER, "Do you have pets?")
        conversation.add(BOT, "I have a dog named Max.", settings=replace(shown, bot="scripted"))
        store.save_session(SessionInfo(id=conversation.record_id, settings=shown, player="ann"))
        store.save_turns(conversation.record_id, conversation.turns)
        store.dispose()
        store = Store(f"sqlite:///{tmp_path / 'studio.db'}")  # a new process reading it
        stored = store.load_session(conversation.record_id)
    finally:
        store.dispose()
    assert stored.info.settings == shown
    assert stored.turns[1].turn.settings == replace(shown, bot="scripted")
    assert stored.reply_settings(1) == replace(shown, bot="scripted")
    # a reload of ?session=: the stored settings go into a new tab's sidebar (ui.chat_session.resume)
    fresh: dict = {}
    chat_state.ensure_defaults(ChatSettings(), fresh)
    chat_state.write_settings(stored.info.settings, fresh, only_offered=True)
    assert chat_state.read_settings(fresh, ChatSettings()) == shown


def test_a_stored_value_the_sidebar_cannot_show_leaves_its_control_as_it_was():
    state: dict = {}
    chat_state.ensure_defaults(ChatSettings(), state)
    chat_state.write_settings(replace(changed_settings(), bot="not-on-this-machine", threshold=1.5), state,
                              only_offered=True)
    restored = chat_state.read_settings(state, ChatSettings())
    assert (restored.bot, restored.threshold) == (ChatSettings().bot, ChatSettings().threshold)
    assert restored.preset == changed_settings().preset  # the rest is restored


@pytest.mark.parametrize("name", ChatSettings.field_names())
def test_each_field_has_a_session_state_key(name):
    assert chat_state.key(name) == f"chat::{name}"
