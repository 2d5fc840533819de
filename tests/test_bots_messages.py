"""The one chat-message builder (bots.base.chat_messages) and the backends that send its messages."""

from __future__ import annotations

from bots.base import PRESETS, SYSTEM_PROMPT, chat_messages, persona_lines
from bots.remote import RemoteChatBot
from guard.records import Turn

HISTORY = [Turn(0, "user", "Do you have pets?"), Turn(0, "bot", "I have two dogs."), Turn(0, "user", "Names?")]


def test_roles_follow_the_speakers_after_one_system_message():
    messages = chat_messages(HISTORY)
    assert messages[0] == {"role": "system", "content": SYSTEM_PROMPT}
    assert [(m["role"], m["content"]) for m in messages[1:]] == [
        ("user", "Do you have pets?"), ("assistant", "I have two dogs."), ("user", "Names?")]


def test_persona_joins_the_system_prompt_without_blank_lines():
    messages = chat_messages(HISTORY[:1], ["  I am a nurse. ", "", "   ", "I live in Ohio."], "Be brief.")
    assert messages[0]["content"] == "Be brief. Your persona: I am a nurse. I live in Ohio."
    assert persona_lines(["  a ", "", " b"]) == ["a", "b"]
    assert chat_messages([], ["   "], "Be brief.") == [{"role": "system", "content": "Be brief."}]


def test_without_a_system_prompt_the_persona_lines_are_the_system_message():
    assert chat_messages(HISTORY[:1], [" I am a nurse. ", "", "I live in Ohio."], None) == [
        {"role": "system", "content": "I am a nurse.\nI live in Ohio."}, {"role": "user", "content": "Do you have pets?"}]
    assert chat_messages(HISTORY[:1], [], None) == [{"role": "user", "content": "Do you have pets?"}]
    assert RemoteChatBot(model="any", system_prompt=None).payload(HISTORY, [], PRESETS["fast"], 1)["messages"][0] == \
        {"role": "user", "content": "Do you have pets?"}


def test_remote_bot_sends_the_shared_messages():
    bot = RemoteChatBot(model="any", system_prompt="Be brief.")
    payload = bot.payload(HISTORY, ["I am a nurse."], PRESETS["fast"], 2)
    assert payload["messages"] == chat_messages(HISTORY, ["I am a nurse."], "Be brief.")
