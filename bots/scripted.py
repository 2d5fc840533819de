"""A bot that replies from a script, for classes, demos and tests.

Like a real generator, a reply longer than the decoding preset's ``max_new_tokens`` (counted in words here) is cut
there and ends at its last complete sentence (``bots.base.complete_sentences``).

A teacher can plant the candidate that contradicts an earlier turn and show the guard catching it,
with no generator randomness. Without a script the bot plays ``DEFAULT_SCRIPT``: it says it has two
dogs, and two turns later its best-scored candidate is "I don't have any pets." A script is JSON
(a file, or the same structure as a dict):

    {"replies": [
        [{"text": "I have a dog named Max.", "score": -0.4}],
        [{"text": "I have never had a pet.", "score": -0.2}, {"text": "Max is a beagle.", "score": -0.9}]
    ]}

Bot turn k (0-based, counted in the history) gets candidate list k; past the end, the last list is
reused. ``{user}`` in a text is replaced by the user's last message. Scores are the generator
scores the guard sees (mean log-probabilities in a real bot); missing scores count down from -1.

An optional ``"delay": seconds`` makes every reply take that long, like a real generator: the scripted bot answers
at once, so without it a class (or a browser test) never sees the chat page's live view of the guard at work
(ui.turn_widgets.guarded_turn_live) before the finished turn replaces it.

A folder of scripts (``script_files``) offers several by name, each ``<name>.json`` directly in it: the app's
``GUARD_APP_SCRIPTS`` lets each browser session play one of them (a teacher's demos side by side; the browser tests'
one shared server). A name is only ever looked up among the folder's files, never made into a path.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from pathlib import Path

from bots.base import Bot, BotError, Candidate, DecodingConfig, check_history, complete_sentences
from guard.records import Turn

#: The built-in demo: whatever the user says, turn 3's likeliest candidate contradicts turn 1, and a
#: consistent one is there for the guard to pick instead. Try "Hi! Tell me about yourself.",
#: "What do you do in the mornings?", "Would you like another pet?".
DEFAULT_SCRIPT: dict = {"replies": [
    [{"text": "Hi! I'm Sam. I have two dogs, Max and Bella.", "score": -0.5}],
    [{"text": "I walk Max and Bella in the park every morning before work.", "score": -0.6},
     {"text": "I usually go for a run before work.", "score": -0.9}],
    [{"text": "I don't have any pets.", "score": -0.3},
     {"text": "No, my two dogs are plenty for me.", "score": -0.7},
     {"text": "Maybe a cat one day, if Max and Bella agree!", "score": -0.9}],
    [{"text": "That is the end of my script. Reset the conversation to run the demo again.", "score": -1.0}],
]}


#: a script's name in a folder of scripts: its file name without ".json" (letters, digits, "-" and "_")
SCRIPT_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


def script_files(folder: str | Path) -> dict[str, Path]:
    """The scripts a folder offers, name -> file: each ``<name>.json`` directly in it whose name is a
    ``SCRIPT_NAME``, sorted by name. Read when asked (a script added while the app runs is offered from then on)."""
    try:
        entries = sorted(Path(folder).iterdir())
    except OSError as exc:
        raise BotError(f"cannot read the folder of bot scripts {folder}: {exc.strerror or exc}") from exc
    return {p.stem: p for p in entries if p.suffix == ".json" and SCRIPT_NAME.fullmatch(p.stem) and p.is_file()}


def named_script(folder: str | Path, name: str) -> Path:
    """The file of the script called ``name`` in ``folder``, or a BotError that lists the names there."""
    offered = script_files(folder)
    if name not in offered:
        names = ", ".join(offered) or "none"
        raise BotError(f"there is no bot script named {name!r} here; the scripts are: {names}")
    return offered[name]


class ScriptedBot(Bot):
    """Replies turn by turn from a script (a JSON file or a dict); ``None`` plays ``DEFAULT_SCRIPT``."""

    name = "scripted"

    def __init__(self, script: str | Path | dict | None = None) -> None:
        if script is None:
            data, where = DEFAULT_SCRIPT, "the built-in script"
        elif isinstance(script, dict):
            data, where = script, "script"
        else:
            where = str(script)
            try:
                data = json.loads(Path(script).read_text(encoding="utf-8"))
            except OSError as exc:
                raise BotError(f"cannot read the bot script {where}: {exc.strerror or exc}") from exc
            except json.JSONDecodeError as exc:
                raise BotError(f"{where}: not valid JSON (line {exc.lineno}): {exc.msg}") from exc
        self.turns = _parse_turns(data, where)
        self.delay = _parse_delay(data, where)

    def generate(self, history: list[Turn], num_candidates: int, decoding: DecodingConfig | None = None,
                 persona: Sequence[str] = ()) -> list[Candidate]:
        history = check_history(history)
        if num_candidates < 1:
            raise BotError("num_candidates must be at least 1")
        bot_turns = sum(1 for m in history if m.agent_id == "bot")
        options = self.turns[min(bot_turns, len(self.turns) - 1)]
        last_user = next((m.text for m in reversed(history) if m.agent_id == "user"), "")
        chosen = options[:num_candidates]
        if self.delay:
            time.sleep(self.delay)
        limit = (decoding or self.default_decoding).max_new_tokens
        out = [Candidate(text=_within(c.text.replace("{user}", last_user), limit), score=c.score) for c in chosen]
        return sorted(out, key=lambda c: -c.score)


def _within(text: str, max_words: int) -> str:
    """The reply as a generator with a ``max_words`` token limit would return it (cut at a complete sentence)."""
    words = text.split()
    if len(words) <= max_words:
        return text
    return complete_sentences(" ".join(words[:max_words]), cut=True)


#: longest ``delay`` a script may ask for: a typo (60 for 0.6) must not hang a class's chat for minutes
MAX_DELAY_S = 30.0


def _parse_delay(data: object, where: str) -> float:
    """The script's ``delay`` in seconds (0 when absent), with an error that says what is allowed."""
    delay = data.get("delay", 0) if isinstance(data, dict) else 0
    if isinstance(delay, bool) or not isinstance(delay, (int, float)) or not 0 <= delay <= MAX_DELAY_S:
        raise BotError(f"{where}: 'delay' must be a number of seconds from 0 to {MAX_DELAY_S:g}")
    return float(delay)


def _parse_turns(data: object, where: str) -> list[list[Candidate]]:
    """The script's candidate lists, with an error that names the faulty entry."""
    replies = data.get("replies") if isinstance(data, dict) else None
    if not isinstance(replies, list) or not replies:
        raise BotError(f"{where}: needs a non-empty 'replies' list (one list of candidates per bot turn)")
    turns: list[list[Candidate]] = []
    for k, options in enumerate(replies):
        if isinstance(options, (str, dict)):
            options = [options]
        if not isinstance(options, list) or not options:
            raise BotError(f"{where}: replies[{k}] must be a non-empty list of candidates")
        turn = []
        for i, option in enumerate(options):
            text = option if isinstance(option, str) else option.get("text") if isinstance(option, dict) else None
            if not isinstance(text, str) or not text.strip():
                raise BotError(f"{where}: replies[{k}][{i}] needs a non-empty 'text'")
            score = option.get("score", -1.0 - 0.1 * i) if isinstance(option, dict) else -1.0 - 0.1 * i
            if isinstance(score, bool) or not isinstance(score, (int, float)):
                raise BotError(f"{where}: replies[{k}][{i}].score must be a number")
            turn.append(Candidate(text=text, score=float(score)))
        turns.append(turn)
    return turns
