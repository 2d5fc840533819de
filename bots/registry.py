"""Bots by name, so the app and the CLI pick a backend with a string and options.

Factories import their backend lazily: listing bots never loads torch models.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path

from bots.base import Bot, BotError

BotFactory = Callable[..., Bot]
_FACTORIES: dict[str, BotFactory] = {}
_DESCRIPTIONS: dict[str, str] = {}
_DEFAULT_PERSONAS: dict[str, Callable[[], tuple[str, ...]]] = {}


def register_bot(name: str, factory: BotFactory, description: str = "",
                 default_persona: Callable[[], tuple[str, ...]] | None = None) -> None:
    """Add (or replace) a bot; tests and the app plug tiny or custom models in this way. ``default_persona``: the
    persona lines the bot plays when a call gives it none (read without loading the bot), for a bot that has one."""
    if not name or not name.strip():
        raise ValueError("a bot needs a non-empty name")
    _FACTORIES[name] = factory
    _DESCRIPTIONS[name] = description or (inspect.getdoc(factory) or "").split("\n")[0]
    _DEFAULT_PERSONAS.pop(name, None)
    if default_persona is not None:
        _DEFAULT_PERSONAS[name] = default_persona


def default_persona(name: str) -> tuple[str, ...]:
    """The persona the bot of this name plays when it is given none (the embedded bot's "My name is Sam. ..."), so a
    page can show it and the guard check against it; () for a bot that plays none of its own."""
    made = _DEFAULT_PERSONAS.get(name)
    return tuple(made()) if made is not None else ()


def available_bots() -> list[str]:
    return sorted(_FACTORIES)


def describe_bot(name: str) -> str:
    return _DESCRIPTIONS.get(name, "")


def make_bot(name: str, **options) -> Bot:
    """Build a bot by name; options go to its factory (model=..., base_url=..., dtype=...)."""
    try:
        factory = _FACTORIES[name]
    except KeyError:
        raise BotError(f"unknown bot {name!r}; choose one of: {', '.join(available_bots())}") from None
    try:
        return factory(**options)
    except TypeError as exc:
        if "unexpected keyword argument" in str(exc):
            raise BotError(f"bot {name!r} does not take that option: {exc}") from exc
        raise


def _embedded(**options) -> Bot:
    from bots.embedded import make_embedded_bot

    return make_embedded_bot(**options)


def _embedded_persona() -> tuple[str, ...]:
    from bots.embedded import EMBEDDED_PERSONA  # light: no model code is imported

    return EMBEDDED_PERSONA


def _chat(**options) -> Bot:
    from bots.embedded import ChatTemplateBot

    return ChatTemplateBot.from_pretrained(**options)


def _blenderbot(**options) -> Bot:
    from bots.blenderbot import BlenderBot

    return BlenderBot.from_pretrained(**options)


def _causal(**options) -> Bot:
    from bots.causal import TranscriptBot

    return TranscriptBot.from_pretrained(**options)


def _gemma3(**options) -> Bot:
    from bots.causal import make_gemma3_bot

    return make_gemma3_bot(**options)


def _plato(base: str = "embedded", **options) -> Bot:
    """The options make_plato_bot names (ranker, num_samples, window) are PLATO's; the rest configure the base bot."""
    from bots.plato import make_plato_bot

    own = set(inspect.signature(make_plato_bot).parameters) - {"base"}
    plato_options = {key: options.pop(key) for key in list(options) if key in own}
    return make_plato_bot(lambda: make_bot(base, **options), **plato_options)


def _remote(**options) -> Bot:
    from bots.remote import RemoteChatBot

    return RemoteChatBot(**options)


def _scripted(script: str | Path | dict | None = None) -> Bot:
    from bots.scripted import ScriptedBot

    return ScriptedBot(script)


register_bot("embedded", _embedded, "SmolLM2-135M-Instruct (shipped GGUF, chat template) — the default",
             default_persona=_embedded_persona)
register_bot("chat", _chat, "any instruct causal LM with a chat template (model=path or hub name)")
register_bot("blenderbot", _blenderbot, "BlenderBot seq2seq (model=facebook/blenderbot-400M-distill, needs the weights)")
register_bot("causal", _causal, "OPT-style base LM on a Person 1/Person 2 transcript (model=facebook/opt-125m ...)")
register_bot("gemma3", _gemma3, "Gemma 3 270M base (shipped GGUF) on a Person 1/Person 2 transcript")
register_bot("plato", _plato, "PLATO-style: K diverse samples ranked by a coherence scorer (base=embedded)",
             default_persona=_embedded_persona)  # its default base is the embedded bot, which plays its persona
register_bot("remote", _remote, "OpenAI-compatible chat server (base_url=..., model=...)")
register_bot("scripted", _scripted, "scripted demo: replies from a script, for classes (script=JSON file)")
