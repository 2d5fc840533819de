"""The prefilter's embedder loads at its first use, not with the guard (guard.models.loading.DeferredEmbedder): a new
user's first reply does not wait for sentence-transformers, and a long conversation is judged as with it loaded."""

from __future__ import annotations

import json
import subprocess
import sys

CODE = r"""
import json, sys
from guard.judge.pipeline import load_guard
from guard.records import Turn

guard = load_guard("embedded")
loaded_with_guard = "sentence_transformers" in sys.modules
facts = ["I have two dogs.", "I work as a nurse.", "I live in Ohio.", "I love hiking.", "I am 34 years old.",
         "My sister is a chef.", "I drive a red truck.", "I grew up on a farm.", "I play the violin.",
         "I never learned to swim."]
turns = []
for i, fact in enumerate(facts):
    turns += [Turn(2 * i, "user", "Tell me more."), Turn(2 * i + 1, "bot", fact)]
turns.append(Turn(len(turns), "user", "Any pets?"))
short = guard.verdict(turns[:3], "I have no pets.", speaker="bot", settings=guard.settings())
after_short = "sentence_transformers" in sys.modules
long = guard.verdict(turns, "I have no pets.", speaker="bot", settings=guard.settings())
print(json.dumps({"with_guard": loaded_with_guard, "after_short": after_short,
                  "after_long": "sentence_transformers" in sys.modules, "k": guard.settings().prefilter_k,
                  "short": [short.contradiction, short.score], "long": [long.contradiction, long.score,
                  sorted(long.evidence_turn_ids)]}))
"""


def test_a_guard_loads_without_the_embedder_and_a_long_conversation_loads_it(tmp_path):
    done = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, timeout=300,
                          env={**__import__("os").environ, "HF_HUB_OFFLINE": "1"})
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["k"] == 8
    assert not seen["with_guard"] and not seen["after_short"]  # 1 earlier sentence: every pair scored, no embedder
    assert seen["after_long"]  # 10 earlier sentences > k: the prefilter embedded them
    assert seen["short"][0] and seen["long"][0]  # "I have no pets." against "I have two dogs." both times
    assert 1 in seen["long"][2]


def test_the_app_warm_up_loads_the_embedder_after_the_language_tools_and_the_first_reply(monkeypatch):
    """On a new server the embedder's load (Python-bound, about 3.5 s of CPU) would share the CPU with spaCy's and
    with the first reply's generation: it waits for both (ui.startup._load_the_embedder)."""
    import threading

    import guard.models.loading as loading
    import ui.suggestions as suggestions
    from ui import startup

    events: list[str] = []
    monkeypatch.setattr(startup, "_FIRST_REPLY", threading.Event())
    monkeypatch.setattr(suggestions, "language_tools_ready", lambda wait: events.append(f"tools {wait:g}") or True)
    monkeypatch.setattr(loading, "load_embedder", lambda: events.append("embedder"))
    worker = threading.Thread(target=startup._load_the_embedder)
    worker.start()
    worker.join(0.5)
    assert worker.is_alive() and events == [f"tools {startup.EMBEDDER_WAIT_S:g}"]  # waiting for the first reply
    startup.reply_shown()
    worker.join(5)
    assert not worker.is_alive() and events[-1] == "embedder"
