"""Command line of the goading studio.

    python -m studio redteam --bot NAME --sessions N --turns T --guard off|flag|rerank|block
                             [--methods M ...] [--db URL] [--json] [--judge DETECTOR[:METHOD]]
    python -m studio export --db URL --format decode -o OUT.jsonl [--annotated-only]
    python -m studio import TRANSCRIPT [--db URL]

Bad input (an unreadable database, an unknown bot or method, a broken transcript) prints one
``error:`` line and exits with status 2; Ctrl-C during a red-team run keeps the turns played so far.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from studio.redteam import SELF_PLAY_MODES

EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130


class UsageError(ValueError):
    """A bad argument value; the message says what to fix."""


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr (and exit status 2)."""

    def error(self, message: str):  # noqa: D401 - argparse's signature
        self.exit(EXIT_BAD_INPUT, f"error: {self.prog}: {message}\n")


def _positive(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {value!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {number}")
    return number


def _make_bot(name: str, script: Path | None, engine: str | None = None):
    from bots import registry

    if script is not None:
        if name != "scripted":
            raise UsageError("--script is for the scripted bot only")
        return registry.make_bot(name, script=str(script))
    return registry.make_bot(name, **({"engine": engine} if engine else {}))




def _judge_spec(text: str, default_detector: str) -> tuple[str, str]:
    name, _, method = text.partition(":") if not Path(text).exists() else (text, "", "")
    method = method or "structured"
    if method not in ("structured", "unstructured"):
        raise UsageError(f"--judge {text!r}: the method after ':' must be structured or unstructured")
    return (name or default_detector), method


def cmd_redteam(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from bots.base import preset
    from conversation.records import ChatSettings
    from guard.judge.pipeline import load_guard
    from studio.export import decode_records
    from studio.redteam import Judge, RedteamSettings, judged_sample, run_redteam
    from studio.storage import open_store

    store = open_store(args.db)
    judge_name, judge_method = _judge_spec(args.judge or f"{args.detector}:unstructured", args.detector)
    persona = [line.strip() for line in (args.persona or "").split("|") if line.strip()]
    bot = _make_bot(args.bot, args.script, args.engine)
    decoding = preset(args.preset)  # a bad name is refused here, before any model loads
    guard = load_guard(args.detector)
    own = Judge(f"{args.detector}:structured (the guard's own detector)", guard,
                guard.settings(mode="flag", threshold=args.threshold))
    if (judge_name, judge_method) == (args.detector, "structured"):
        other = Judge(f"{judge_name}:{judge_method}", guard, own.settings)
    else:
        judge_guard = load_guard(judge_name, prefilter=False)
        other = Judge(f"{judge_name}:{judge_method}", judge_guard,
                      judge_guard.settings(mode="flag", method=judge_method, prefilter=False))
    chat = ChatSettings(bot=args.bot, preset=args.preset, decoding=decoding, guard_mode=args.guard,
                        detector=args.detector, threshold=own.settings.threshold, num_candidates=args.candidates,
                        persona=persona)
    settings = RedteamSettings(chat=chat, methods=list(args.methods), sessions=args.sessions, turns=args.turns,
                               seed=args.seed, use_lm=not args.no_lm)
    with tqdm(total=args.sessions * args.turns, desc="self-play", unit="turn", file=sys.stderr,
              disable=args.quiet) as bar:
        run = run_redteam(settings, store, bot, guard, own, other, on_turn=bar.update)
    report = run.report()
    report["db"] = store.display_url
    if args.sample and run.judgements:
        wanted = set(judged_sample(run, args.sample, seed=args.seed))
        out = args.sample_out or Path("runs") / f"redteam-{run.run_id}-sample.jsonl"
        out.parent.mkdir(parents=True, exist_ok=True)
        records = [r for r in decode_records(store, session_ids=run.session_ids)
                   if (r["meta"]["session_id"], r["turns"][-1]["turn_id"]) in wanted]
        _write_jsonl(out, records)
        report["sample"] = {"path": str(out), "records": len(records)}
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(render_report(report))
    if run.interrupted:
        print(f"interrupted: {len(run.judgements)} bot replies kept in {store.display_url}", file=sys.stderr)
        return EXIT_INTERRUPTED
    return 0


def render_report(report: dict) -> str:
    lines = [f"run {report['run_id']}: bot {report['bot']}, guard {report['guard_mode']}, preset {report['preset']}, "
             f"{report['sessions']} sessions, {report['bot_replies']} bot replies, {report['seconds']} s",
             f"judges: guard's detector = {report['guard_judge']}; second judge = {report['judge']}",
             "",
             f"{'method':<18} {'replies':>7} {'guard flagged a candidate':>26} {'guard detector: reply':>22} "
             f"{'judge: reply':>13}"]
    for row in report["per_method"]:
        lines.append(f"{row['method']:<18} {row['replies']:>7} {row['guard_flag_rate']:>26.1%} "
                     f"{row['guard_judge_rate']:>22.1%} {row['judge_rate']:>13.1%}")
    if "sample" in report:
        lines += ["", f"sample for human checking: {report['sample']['records']} records in {report['sample']['path']}"]
    lines.append(f"stored in {report['db']}")
    return "\n".join(lines)


def _write_jsonl(path: Path, records) -> int:
    from guard.files import atomic_writer

    count = 0
    with atomic_writer(path) as out:
        for record in records:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
            count += 1
    return count


def cmd_export(args: argparse.Namespace) -> int:
    from studio.export import decode_records
    from studio.storage import open_store

    store = open_store(args.db)
    count = _write_jsonl(args.output, decode_records(store, annotated_only=args.annotated_only,
                                                     session_ids=args.session or None))
    print(f"{count} records written to {args.output} from {store.display_url}", file=sys.stderr)
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from studio.storage import open_store
    from studio.transcripts import import_transcript, read_transcripts

    try:
        data = args.transcript.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {args.transcript}: {exc.strerror or exc}") from None
    transcripts = read_transcripts(data, str(args.transcript))
    store = open_store(args.db)
    for transcript in transcripts:
        print(import_transcript(store, transcript))
    return 0


def cmd_stream_labels(args: argparse.Namespace) -> int:
    """The live-stream dev set as studio annotations: import, record a pass, agreement, settle, export."""
    from guard.eval import stream
    from studio import stream_labels as sl
    from studio.scores import agreement
    from studio.storage import open_store

    store = open_store(args.db)
    sample = stream.read_sample()
    wanted = set(sample.record_ids)
    dialogues = [d for d in stream.read_conversations() if d.record_id in wanted]
    sessions = sl.import_conversations(store, dialogues)
    if args.action == "import":
        print(f"{len(sessions)} conversations in {store.display_url}", file=sys.stderr)
    elif args.action == "record":
        if not args.annotator or not args.files:
            raise UsageError("record needs --annotator NAME and one or more label files")
        count = sum(sl.record_pass(store, sessions, sl.read_pass_file(f), args.annotator) for f in args.files)
        print(f"{count} labels recorded for {args.annotator}", file=sys.stderr)
    elif args.action == "agree":
        first, second = args.passes
        keep = set(sessions.values())
        report = agreement([a for a in store.annotations() if a.session_id in keep and a.annotator in (first, second)])
        out = {"cohen_kappa_contradiction": [k.as_dict() for k in report.cohen_contradiction],
               "cohen_kappa_category": [k.as_dict() for k in report.cohen_category],
               "disagreements": [{"record_id": d.record_id, "turn_id": d.turn_id,
                                  first: {"contradiction": d.first.contradiction, "note": d.first.note},
                                  second: {"contradiction": d.second.contradiction, "note": d.second.note}}
                                 for d in sl.disagreements(store, sessions, first, second)]}
        counts = {p: sum(x.contradiction for x in sl.labels_of(store, sessions, p).values()) for p in (first, second)}
        out["contradictions"] = counts
        print(json.dumps(out, indent=2))
    elif args.action == "settle":
        if not args.files:
            raise UsageError("settle needs the decisions file (one label a line for each disagreement)")
        decisions = {(x.record_id, x.turn_id): x for f in args.files for x in sl.read_pass_file(f)}
        count = sl.settle(store, sessions, *args.passes, decisions)
        print(f"{count} settled labels written ({len(decisions)} decided by hand)", file=sys.stderr)
    elif args.action == "export":
        labels = list(sl.labels_of(store, sessions, sl.SETTLED).values())
        turns = sum(stream.bot_turn_count(d) for d in dialogues)
        if len(labels) != turns:
            raise UsageError(f"{len(labels)} settled labels for {turns} bot turns: settle every pass first")
        stream.write_labels(labels, args.output or stream.LABELS_FILE)
        print(f"{len(labels)} labels written to {args.output or stream.LABELS_FILE}", file=sys.stderr)
    return 0


def build_parser() -> argparse.ArgumentParser:
    from bots.base import PRESETS
    from studio.goading import METHODS

    parser = OneLineParser(prog="python -m studio", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    db_help = "database URL (default: $GUARD_STUDIO_DB, else sqlite in the app's cache folder)"

    red = sub.add_parser("redteam", help="self-play: the goading assistant talks to a bot through the guard")
    red.add_argument("--bot", required=True, help="a bot name (bots.registry), e.g. embedded")
    red.add_argument("--script", type=Path, default=None,
                     help="script file for the scripted bot (default: its built-in demo)")
    red.add_argument("--sessions", type=_positive, required=True)
    red.add_argument("--turns", type=_positive, required=True, help="bot turns per session")
    red.add_argument("--guard", choices=[str(m) for m in SELF_PLAY_MODES], required=True)
    red.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS),
                     help="trigger methods; session k uses methods[k mod len] throughout (default: all)")
    red.add_argument("--db", default=None, help=db_help)
    red.add_argument("--json", action="store_true", help="print the report as JSON")
    red.add_argument("--detector", default="embedded", help="the guard's detector (default: embedded)")
    red.add_argument("--threshold", type=float, default=None, help="the guard's τ (default: the checkpoint's)")
    red.add_argument("--judge", default=None,
                     help="second judge DETECTOR[:structured|unstructured] (default: the guard's checkpoint, "
                          "unstructured method)")
    red.add_argument("--preset", default="fast", choices=list(PRESETS))
    red.add_argument("--engine", choices=("auto", "ctranslate2", "transformers"), default=None,
                     help="local bots: the inference engine (default: $GUARD_ENGINE, else auto = CTranslate2 int8 "
                          "where it converts the model)")
    red.add_argument("--candidates", type=_positive, default=4)
    red.add_argument("--persona", default="", help="bot persona facts separated by '|'")
    red.add_argument("--sample", type=int, default=20, help="bot replies exported for human checking (0: none)")
    red.add_argument("--sample-out", type=Path, default=None, help="where (default runs/redteam-RUN-sample.jsonl)")
    red.add_argument("--seed", type=int, default=0)
    red.add_argument("--no-lm", action="store_true", help="rank follow-ups by template, not FQness")
    red.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    red.set_defaults(func=cmd_redteam)

    export = sub.add_parser("export", help="stored sessions as DECODE-shaped jsonl, one record per bot turn")
    export.add_argument("--db", default=None, help=db_help)
    export.add_argument("--format", choices=["decode"], default="decode")
    export.add_argument("-o", "--output", type=Path, required=True)
    export.add_argument("--annotated-only", action="store_true", help="only bot turns someone annotated")
    export.add_argument("--session", action="append", help="only this session (repeatable)")
    export.set_defaults(func=cmd_export)

    imp = sub.add_parser("import", help="store a downloaded chat transcript or playground dialogue as a session")
    imp.add_argument("transcript", type=Path)
    imp.add_argument("--db", default=None, help=db_help)
    imp.set_defaults(func=cmd_import)

    labels = sub.add_parser("stream-labels", help="the live-stream dev set (guard.eval.stream) as studio annotations")
    labels.add_argument("action", choices=["import", "record", "agree", "settle", "export"])
    labels.add_argument("--files", nargs="+", type=Path, default=[],
                        help="label files, one JSON label a line (record: a pass; settle: the decisions)")
    labels.add_argument("--annotator", default=None, help="record: the pass's annotator name")
    labels.add_argument("--passes", nargs=2, default=["pass-a", "pass-b"], help="agree/settle: the two passes")
    labels.add_argument("-o", "--output", type=Path, default=None, help="export: where (default: guard/data/...)")
    labels.add_argument("--db", default=None, help=db_help)
    labels.set_defaults(func=cmd_stream_labels)
    return parser


def _user_errors() -> tuple[type[Exception], ...]:
    from bots.base import BotError
    from embedded import MissingAssetError
    from guard.files import InputError, OutputError
    from studio.storage import StoreError
    from studio.stream_labels import LabelFileError
    from studio.transcripts import TranscriptError

    errors: list[type[Exception]] = [UsageError, StoreError, TranscriptError, BotError, MissingAssetError,
                                     InputError, OutputError, LabelFileError]
    if "guard.models.loading" in sys.modules:
        from guard.models.loading import ModelLoadError

        errors.append(ModelLoadError)
    if "guard.cli" in sys.modules:
        from guard.cli import UsageError as GuardUsageError

        errors.append(GuardUsageError)
    return tuple(errors)


def main(argv: Sequence[str] | None = None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    from embedded import configure_openmp

    configure_openmp()
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:
        if not isinstance(exc, _user_errors()):
            raise
        message = " ".join(str(exc).split())
        print(f"error: {message}", file=sys.stderr)
        return EXIT_BAD_INPUT
