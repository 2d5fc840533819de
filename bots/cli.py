"""Command line: ``python -m bots generate --bot NAME --num-candidates N --history FILE.json ...``.

Prints {"candidates": [{"text": ..., "score": ...}, ...], "engine": "CTranslate2 4.8.5 int8"} on stdout
("engine" only for local models). Any failure (unknown bot,
a history or persona file that is missing, not UTF-8, not JSON or of the wrong shape, a backend
that cannot answer) is one line on stderr naming what to fix, and exit status 2.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from bots.base import PRESETS, SPEAKERS, BotError, preset
from bots.registry import available_bots, describe_bot, make_bot
from guard.eval.datasets import iter_json_array
from guard.files import InputError, iter_text_lines
from guard.records import Turn


def read_history(path: str | Path) -> list[Turn]:
    """A JSON list of {"speaker": "user"|"bot", "text": ...}; anything else is an InputError naming the item."""
    path = Path(path)
    try:
        items = list(iter_json_array(path))
    except InputError as exc:
        raise InputError(exc.path, exc.line, exc.field, f"cannot read history: {exc.problem}") from None
    return [parse_history_item(path, line, index, item) for index, (line, item) in enumerate(items)]


def parse_history_item(path: Path, line: int, index: int, item: dict) -> Turn:
    """History item ``index`` (a JSON object starting on ``line``) as a turn; its speaker is ``speaker`` (or
    ``agent_id``, as in DECODE-shaped records)."""
    speaker, text = item.get("speaker", item.get("agent_id")), item.get("text")
    if speaker not in SPEAKERS:
        raise InputError(path, line, f"[{index}].speaker",
                         f'history item {index} needs "speaker": "user" or "bot", got {_show(speaker)}')
    if not isinstance(text, str):
        raise InputError(path, line, f"[{index}].text",
                         f'history item {index} needs "text": a string, got {_show(text)}')
    return Turn(index, speaker, text)


def read_persona(path: str | Path | None) -> list[str]:
    """Persona lines of a UTF-8 text file, one a line (blank lines skipped)."""
    if not path:
        return []
    try:
        return [text.strip() for _, text in iter_text_lines(path) if text.strip()]
    except InputError as exc:
        raise InputError(exc.path, exc.line, exc.field, f"cannot read persona: {exc.problem}") from None


def _show(value: object) -> str:
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


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
    gen.add_argument("--dtype", choices=("float32", "bfloat16"), help="local models: weight dtype (transformers engine)")
    gen.add_argument("--engine", choices=("auto", "ctranslate2", "transformers"),
                     help="local models: auto (CTranslate2 int8 where it converts the model, default), ctranslate2, "
                          "or transformers (the reference engine)")
    commands.add_parser("list", help="list the available bots")
    prep = commands.add_parser("prepare", help="load a bot once, so its first-use conversion (GGUF de-quantization, "
                                               "CTranslate2 int8) is cached; prints where it stands")
    prep.add_argument("--bot", default="embedded", help=f"one of: {', '.join(available_bots())}")
    prep.add_argument("--model", help="as for generate")
    prep.add_argument("--engine", choices=("auto", "ctranslate2", "transformers"), help="as for generate")
    return parser


def _bot_options(args: argparse.Namespace) -> dict:
    names = {"model": "model", "base_url": "base_url", "timeout": "timeout", "base": "base", "dtype": "dtype",
             "engine": "engine"}
    # getattr's default: `prepare` takes only some of these options
    return {key: getattr(args, attr, None) for attr, key in names.items() if getattr(args, attr, None) is not None}


def _prepare(args: argparse.Namespace) -> int:
    """Load the bot and say which engine it runs on. The app's start-up runs this in a process of its own, so a new
    machine's conversion (about 25 s for the embedded bot, mostly Python) uses the second core instead of sharing the
    app process's interpreter lock with the detector, spaCy and the page."""
    try:
        bot = make_bot(args.bot, **_bot_options(args))
    except BotError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{args.bot}: ready ({bot.engine_label or 'no local engine'})")
    return 0


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach for a model hub unless the user opts in
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # stdout is JSON, stderr stays for errors
    args = build_parser().parse_args(argv)
    if args.command == "list":
        for name in available_bots():
            print(f"{name}\t{describe_bot(name)}")
        return 0
    if args.command == "prepare":
        return _prepare(args)
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
    except (BotError, InputError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # a backend failing in a way it did not foresee still gets one line
        print(f"error: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}", file=sys.stderr)
        return 2
    output: dict = {"candidates": [{"text": c.text, "score": c.score} for c in candidates]}
    if bot.engine_label:
        output["engine"] = bot.engine_label
    json.dump(output, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0
