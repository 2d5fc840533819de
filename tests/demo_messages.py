"""The scripted demo (bots/scripted.py) as a client of the guard server sends it: a persona in the system message
and the first two exchanges; the scripted bot's third reply, to the last message, has candidates that contradict
its first ("I have two dogs, Max and Bella.")."""

from __future__ import annotations

DEMO = [
    {"role": "system", "content": "I love animals.\nI work in an office."},
    {"role": "user", "content": "Hi! Tell me about yourself."},
    {"role": "assistant", "content": "Hi! I'm Sam. I have two dogs, Max and Bella."},
    {"role": "user", "content": "What do you do in the mornings?"},
    {"role": "assistant", "content": "I walk Max and Bella in the park every morning before work."},
    {"role": "user", "content": "Would you like another pet?"},
]
