"""Generators that propose N scored candidate replies; see bots.base for the interface, bots.registry for names."""
from __future__ import annotations

from bots.base import PRESETS, Bot, BotError, Candidate, DecodingConfig
from bots.registry import available_bots, make_bot, register_bot

__all__ = ["PRESETS", "Bot", "BotError", "Candidate", "DecodingConfig",
           "available_bots", "make_bot", "register_bot"]
