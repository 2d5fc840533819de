"""``python -m guard``: score dialogues, evaluate on the papers' data sets, make probe sets.

The command line is a stable interface other tools call, so its output shapes are fixed:
``score`` writes one JSON line per record, ``evaluate`` a table or one JSON object, ``probe``
DECODE-shaped JSON lines. Files are written atomically (a temporary file in the same folder,
then ``os.replace``), so a failed run never leaves half a file. Bad input of any kind (see
``guard.files``) ends with one line on stderr naming the file, line and field, and exit status 2.

This module only parses arguments, reads, writes and prints; the metrics are computed by
``guard.eval.evaluation``, which the benchmarks call too.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TextIO

from guard.eval.evaluation import EvaluationError, evaluate_dataset, make_judge, progress
from guard.files import InputError, OutputError, atomic_writer, check_output_path
from guard.vocabulary import Method

EXIT_BAD_INPUT = 2
#: guard.vocabulary.Method as plain strings: argparse names the choices with repr() in its errors.
METHODS = tuple(m.value for m in Method)


class UsageError(ValueError):
    """A bad argument value the parser cannot check by itself."""


# ---------------------------------------------------------------------------- output
@contextlib.contextmanager
def output_stream(path: str | Path | None) -> Iterator[TextIO]:
    """stdout for None or '-', else ``path`` written atomically (nothing is left if the run fails)."""
    if path is None or str(path) == "-":
        yield sys.stdout
        sys.stdout.flush()
    else:
        with atomic_writer(path) as handle:
            yield handle


# ---------------------------------------------------------------------------- detector
def _threshold(value: str) -> float:
    t = float(value)
    if not 0.0 < t < 1.0:
        raise argparse.ArgumentTypeError(f"threshold must lie strictly between 0 and 1, got {value}")
    return t


def build_judge(args: argparse.Namespace):
    """The guard and settings the flags ask for (τ: the flag, else the checkpoint's)."""
    return make_judge(args.detector, args.method, args.threshold, checks=not getattr(args, "no_checks", False))


def verdict_row(record_id: str, verdict) -> dict:
    """The fixed ``score`` output shape; evidence lists earlier turn_ids, persona line i (0-based) as -1-i."""
    ids = list(verdict.evidence_turn_ids)
    persona = [-1 - line for line in verdict.evidence_persona_lines]
    return {"record_id": record_id, "contradiction": bool(verdict.contradiction),
            "score": round(float(verdict.score), 6), "evidence": ids + persona, "category": verdict.category}


# ---------------------------------------------------------------------------- score
def cmd_score(args: argparse.Namespace) -> int:
    from guard.eval.datasets import read_dataset

    records = read_dataset("decode", args.input)
    guard, settings = build_judge(args)
    with output_stream(args.output) as out:
        for d in progress(records, "score", args.quiet):
            out.write(json.dumps(verdict_row(d.record_id, guard.verdict_on_dialogue(d, settings))) + "\n")
    return 0


# ---------------------------------------------------------------------------- evaluate
def cmd_evaluate(args: argparse.Namespace) -> int:
    from guard.eval.datasets import read_dataset

    records = read_dataset(args.format, args.file, limit=args.limit)
    started = time.perf_counter()
    head = {"format": args.format, "file": str(args.file), "detector": args.detector, "method": args.method}
    try:
        result = evaluate_dataset(args.format, records, args.detector, args.method, args.threshold,
                                  checks=not args.no_checks, quiet=args.quiet)
    except EvaluationError as exc:
        raise UsageError(f"{args.file}: {exc}") from None
    result = {**head, **result, "seconds": round(time.perf_counter() - started, 1)}
    text = json.dumps(result, indent=2, default=float) if args.json else render_table(result)
    with output_stream(args.output) as out:
        out.write(text + "\n")
    return 0


def render_table(result: dict) -> str:
    """A plain-text metrics table: one row per group (overall first), one column per metric."""
    from guard.eval.metrics import fmt

    rows = [("overall", result["overall"])] + list(result.get("groups", {}).items())
    columns = list(dict.fromkeys(k for _, r in rows for k in r if not isinstance(r.get(k), (str, list, dict))))
    header = ["set"] + columns
    table = [header] + [[name] + [fmt(r[c]) if c in r else "" for c in columns] for name, r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    lines = [f"{result['format']} {result['file']}  detector={result['detector']} method={result['method']}"
             + (f" threshold={result['threshold']:.3f}" if "threshold" in result else "")]
    lines += ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in table]
    if result.get("ranking"):
        lines.append("ranking: " + ", ".join(f"{k}={fmt(v)}" for k, v in result["ranking"].items()))
    if result.get("signal"):
        lines.append(f"signal: {result['signal']}")
    lines.append(f"({result['seconds']} s)")
    return "\n".join(lines)


# ---------------------------------------------------------------------------- probe
def cmd_probe(args: argparse.Namespace) -> int:
    from guard.eval.datasets import dialogue_to_decode, read_dataset
    from guard.eval.probes import apply_probe, make_probe

    records = read_dataset("decode", args.input)
    probe = make_probe(args.probe, pool=records, seed=args.seed)
    cases = apply_probe(probe, progress(records, args.probe, args.quiet))
    if not cases:
        raise UsageError(
            f"{args.input}: the {args.probe} probe applies to no record (a2t/rct need contradictions "
            "with evidence; negation/antonym/synonym need consistent dialogues)")
    with output_stream(args.output) as out:
        for case in cases:
            out.write(json.dumps(dialogue_to_decode(case.variant)) + "\n")
    print(f"{args.probe}: {len(cases)} variants from {len(records)} records", file=sys.stderr)
    return 0


# ---------------------------------------------------------------------------- parser
def build_parser() -> argparse.ArgumentParser:
    from guard.eval.datasets import available_formats
    from guard.eval.probes import PROBES

    parser = argparse.ArgumentParser(prog="python -m guard", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    def detector_flags(p: argparse.ArgumentParser) -> None:
        p.add_argument("--detector", default="embedded",
                       help="'embedded' (models/detector), or a local NLI checkpoint folder")
        p.add_argument("--method", choices=METHODS, default="structured",
                       help="structured: DECODE's utterance-based pairs (default); unstructured: whole history")
        p.add_argument("--threshold", type=_threshold, default=None,
                       help="decision threshold (default: the checkpoint's guard_config.json, else 0.5)")
        p.add_argument("--no-checks", "--no-categories", dest="no_checks", action="store_true",
                       help="skip the checks beside the history check (CDConv's intra / own-question / role: "
                            "history contradiction only; faster). --no-categories is its older name")
        p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")

    score = sub.add_parser("score", help="judge the last turn of each DECODE-shaped record")
    score.add_argument("input", type=Path, help="jsonl: record_id, turns [{turn_id, agent_id, text}]")
    score.add_argument("-o", "--output", type=Path, default=None, help="output jsonl (default: stdout)")
    detector_flags(score)
    score.set_defaults(func=cmd_score)

    evaluate = sub.add_parser("evaluate", help="metrics of the detector on a data set")
    evaluate.add_argument("--format", required=True, choices=available_formats())
    evaluate.add_argument("file", type=Path)
    evaluate.add_argument("--json", action="store_true", help="one JSON object instead of a table")
    evaluate.add_argument("--limit", type=int, default=None, help="only the first N records")
    evaluate.add_argument("-o", "--output", type=Path, default=None, help="write the table/JSON here")
    detector_flags(evaluate)
    evaluate.set_defaults(func=cmd_evaluate)

    probe = sub.add_parser("probe", help="make checklist variants (DECODE A2T/RCT, CDConv perturbations)")
    probe.add_argument("probe", choices=PROBES)
    probe.add_argument("input", type=Path, help="DECODE-shaped jsonl with labels and evidence")
    probe.add_argument("-o", "--output", type=Path, required=True)
    probe.add_argument("--seed", type=int, default=0)
    probe.add_argument("-q", "--quiet", action="store_true")
    probe.set_defaults(func=cmd_probe)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    args = build_parser().parse_args(argv)
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # weight-loading bars would bury ours
    if getattr(args, "limit", None) is not None and args.limit < 1:
        print("error: --limit must be a positive number of records", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        if getattr(args, "output", None) is not None and str(args.output) != "-":
            check_output_path(args.output)  # before reading or loading anything
        return args.func(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        if not isinstance(exc, _user_errors()):
            raise
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT


def _user_errors() -> tuple[type[Exception], ...]:
    """Errors whose message says what to fix (bad file, bad model path), imported only when needed."""
    from embedded import MissingAssetError

    errors: list[type[Exception]] = [InputError, OutputError, UsageError, MissingAssetError]
    if "guard.models.loading" in sys.modules:  # only a command that loaded a model can fail this way
        from guard.models.loading import ModelLoadError
        from guard.models.nli import LabelLayoutError

        errors += [ModelLoadError, LabelLayoutError]
    return tuple(errors)
