"""Command line: ``python -m bots generate --bot NAME --num-candidates N --history FILE.json ...``.

Prints {"candidates": [{"text": ..., "score": ...}, ...]} on stdout. Any failure (unknown bot,
unreadable history, a backend that cannot answer) is one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from bots.base import PRESETS, BotError, Message, preset
from bots.registry import available_bots, describe_bot, make_bot


def read_history(path: str) -> list[Message]:
    """A JSON list of {"speaker": "user"|"bot", "text": ...}."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise BotError(f"cannot read history file {path}: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise BotError(f"history file {path} is not valid JSON: {exc}") from None
    if not isinstance(data, list):
        raise BotError(f'history file {path} must hold a JSON list of {{"speaker": ..., "text": ...}} objects')
    messages = []
    for index, item in enumerate(data):
        if not isinstance(item, dict) or item.get("speaker") not in ("user", "bot") or not isinstance(item.get("text"), str):
            raise BotError(f'history item {index} in {path} must be {{"speaker": "user"|"bot", "text": "..."}}')
        messages.append(Message(item["speaker"], item["text"]))
    return messages


def read_persona(path: str | None) -> list[str]:
    if not path:
        return []
    try:
        return [line.strip() for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
    except OSError as exc:
        raise BotError(f"cannot read persona file {path}: {exc.strerror or exc}") from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bots", description="Generate scored candidate replies.")
    commands = parser.add_subparsers(dest="command", required=True)
    gen = commands.add_parser("generate", help="propose N candidate replies to a conversation")
    gen.add_argument("--bot", default="embedded", help=f"one of: {', '.join(available_bots())}")
    gen.add_argument("--num-candidates", type=int, default=4)
    gen.add_argument("--history", required=True, help='JSON list of {"speaker": "user"|"bot", "text": ...}')
    gen.add_argument("--persona", help="text file, one persona line per line")
    gen.add_argument("--decoding", default="fast", help=f"preset: {', '.join(PRESETS)}")
    gen.add_argument("--max-new-tokens", type=int, help="override the preset's reply length")
    gen.add_argument("--seed", type=int, help="make sampling reproducible")
    gen.add_argument("--model", help="model name or local folder (blenderbot, causal, chat, remote)")
    gen.add_argument("--base-url", help="remote: OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1")
    gen.add_argument("--timeout", type=float, help="remote: seconds to wait for the server")
    gen.add_argument("--base", help="plato: the bot that draws the samples (default embedded)")
    gen.add_argument("--dtype", choices=("float32", "bfloat16"), help="local models: weight dtype")
    commands.add_parser("list", help="list the available bots")
    return parser


def _bot_options(args: argparse.Namespace) -> dict:
    names = {"model": "model", "base_url": "base_url", "timeout": "timeout", "base": "base", "dtype": "dtype"}
    return {key: getattr(args, attr) for attr, key in names.items() if getattr(args, attr) is not None}


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach for a model hub unless the user opts in
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # stdout is JSON, stderr stays for errors
    args = build_parser().parse_args(argv)
    if args.command == "list":
        for name in available_bots():
            print(f"{name}\t{describe_bot(name)}")
        return 0
    try:
        if args.num_candidates < 1:
            raise BotError("--num-candidates must be >= 1")
        decoding = preset(args.decoding)
        changes = {k: v for k, v in (("max_new_tokens", args.max_new_tokens), ("seed", args.seed)) if v is not None}
        if changes:
            try:
                decoding = decoding.replace(**changes)
            except ValueError as exc:
                raise BotError(str(exc)) from None
        history = read_history(args.history)
        persona = read_persona(args.persona)
        bot = make_bot(args.bot, **_bot_options(args))
        candidates = bot.generate(history, args.num_candidates, decoding, persona)
    except BotError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # a backend failing in a way it did not foresee still gets one line
        print(f"error: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}", file=sys.stderr)
        return 2
    json.dump({"candidates": [{"text": c.text, "score": c.score} for c in candidates]}, sys.stdout,
              ensure_ascii=False)
    sys.stdout.write("\n")
    return 0
