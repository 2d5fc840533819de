"""``python -m guard``: score dialogues, evaluate on the papers' data sets, make probe sets.

The command line is a stable interface other tools call, so its output shapes are fixed:
``score`` writes one JSON line per record, ``evaluate`` a table or one JSON object, ``probe``
DECODE-shaped JSON lines. Files are written atomically (a temporary file in the same folder,
then ``os.replace``), so a failed run never leaves half a file. Bad input ends with one line on
stderr naming the file, line and field, and exit status 2.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Iterator, Sequence, TextIO

from guard.vocabulary import Method

EXIT_BAD_INPUT = 2
#: guard.vocabulary.Method as plain strings: argparse names the choices with repr() in its errors.
METHODS = tuple(m.value for m in Method)
#: Below this many records a progress bar is noise.
_PROGRESS_MIN = 20


class UsageError(ValueError):
    """A bad argument value the parser cannot check by itself."""


# ---------------------------------------------------------------------------- output helpers
@contextlib.contextmanager
def atomic_writer(path: str | Path) -> Iterator[TextIO]:
    """Write to a temporary file beside ``path`` and move it into place only on success."""
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise UsageError(f"{target}: the output folder {folder} does not exist")
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def output_stream(path: str | Path | None) -> Iterator[TextIO]:
    if path is None or str(path) == "-":
        yield sys.stdout
        sys.stdout.flush()
    else:
        with atomic_writer(path) as handle:
            yield handle


def progress(items: Sequence, desc: str, quiet: bool = False):
    from tqdm import tqdm

    return tqdm(items, desc=desc, file=sys.stderr, unit="rec", mininterval=1.0,
                disable=quiet or len(items) < _PROGRESS_MIN, leave=False)


# ---------------------------------------------------------------------------- detector
def _threshold(value: str) -> float:
    t = float(value)
    if not 0.0 < t < 1.0:
        raise argparse.ArgumentTypeError(f"threshold must lie strictly between 0 and 1, got {value}")
    return t


def build_detector(args: argparse.Namespace):
    """The ContradictionDetector the flags ask for (its threshold: the flag, else the checkpoint's)."""
    from guard.detector import ContradictionDetector
    from guard.loading import default_threshold, load_scorer

    scorer = load_scorer(args.detector)
    threshold = args.threshold if args.threshold is not None else default_threshold(args.detector)
    return ContradictionDetector(scorer, method=args.method, threshold=threshold,
                                 categories=not getattr(args, "no_categories", False))


def verdict_row(record_id: str, verdict) -> dict:
    """The fixed ``score`` output shape; evidence lists earlier turn_ids, persona line i (0-based) as -1-i."""
    ids = list(verdict.evidence_turn_ids)
    persona = [-1 - line for line in verdict.evidence_persona_lines]
    return {"record_id": record_id, "contradiction": bool(verdict.contradiction),
            "score": round(float(verdict.score), 6), "evidence": ids + persona, "category": verdict.category}


# ---------------------------------------------------------------------------- score
def cmd_score(args: argparse.Namespace) -> int:
    from guard.datasets import read_dataset

    records = read_dataset("decode", args.input)
    detector = build_detector(args)
    with output_stream(args.output) as out:
        for d in progress(records, "score", args.quiet):
            out.write(json.dumps(verdict_row(d.record_id, detector.detect(d))) + "\n")
    return 0


# ---------------------------------------------------------------------------- evaluate
def _detect_all(detector, records, quiet: bool) -> list:
    return [detector.detect(d) for d in progress(records, "evaluate", quiet)]


def evaluate_detection(records, verdicts) -> dict:
    """DECODE's metrics for labelled dialogues, plus CDConv category accuracy and group breakdowns."""
    from guard import metrics

    labelled = [(d, v) for d, v in zip(records, verdicts) if d.label is not None]
    if not labelled:
        raise UsageError("none of the records carries a contradiction label to evaluate against")
    y = [bool(d.label) for d, _ in labelled]
    pred = [bool(v.contradiction) for _, v in labelled]
    scores = [float(v.score) for _, v in labelled]
    result: dict = {"overall": metrics.binary_report(y, pred, scores)}
    with_evidence = [(d, v) for d, v in labelled if d.evidence is not None]
    if with_evidence and any(v.details.method == Method.STRUCTURED for _, v in with_evidence):
        gold_ev = [d.evidence for d, _ in with_evidence]
        pred_ev = [v.evidence_turn_ids if v.contradiction else [] for _, v in with_evidence]
        result["overall"]["strict_accuracy"] = metrics.strict_accuracy(
            [bool(d.label) for d, _ in with_evidence], [bool(v.contradiction) for _, v in with_evidence],
            gold_ev, pred_ev)
        contra = [(g, p) for (d, _), g, p in zip(with_evidence, gold_ev, pred_ev) if d.label]
        if contra:
            prf = metrics.evidence_prf([g for g, _ in contra], [p for _, p in contra])
            result["overall"].update({f"evidence_{k}": v for k, v in prf.items() if k != "n"})
    categorised = [(d, v) for d, v in labelled if d.category is not None]
    if categorised:
        result["overall"]["category_accuracy"] = metrics.accuracy(
            [d.category for d, _ in categorised], [v.category for _, v in categorised])
    groups: dict[str, list[int]] = defaultdict(list)
    for i, (d, _) in enumerate(labelled):
        key = d.meta.get("rgm_name") or d.meta.get("probe") or d.meta.get("kind") or d.meta.get("source")
        if key:
            groups[str(key)].append(i)
    if len(groups) > 1:
        result["groups"] = {
            name: metrics.binary_report([y[i] for i in idx], [pred[i] for i in idx], [scores[i] for i in idx])
            for name, idx in sorted(groups.items())
        }
    return result


def evaluate_dnli_ranking(records, verdicts) -> dict:
    """Welleck et al.'s Contradict@1 / Entail@1, on candidate lists built from the pairs themselves.

    DNLI's re-ranking sets need a dialogue model's candidates; from the pairs alone, the
    hypotheses that share a premise (sentence1) form a candidate list, ranked by 1 - P(contradiction).
    """
    from guard import metrics

    lists: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for d, v in zip(records, verdicts):
        lists[d.turns[0].text].append((1.0 - float(v.score), d.meta.get("nli_label", "")))
    ranked = [[label for _, label in sorted(c, key=lambda x: -x[0])]
              for c in lists.values() if len(c) >= 2 and len({label for _, label in c}) >= 2]
    return {"lists": len(ranked), "contradict@1": metrics.contradict_at_k(ranked, 1),
            "entail@1": metrics.entail_at_k(ranked, 1)} if ranked else {"lists": 0}


def evaluate_nli(scorer, records, quiet: bool) -> dict:
    """The NLI model itself on sentence pairs: 3-way accuracy (2-way for a 2-way checkpoint)."""
    from guard import metrics

    layout = scorer.layout
    names = {layout.contradiction: "contradiction"}
    if layout.entailment is not None:
        names[layout.entailment] = "entailment"
    if layout.neutral is not None:
        names[layout.neutral] = "neutral"
    pairs = [(d.turns[0].text, d.turns[1].text) for d in records]
    gold = [d.meta["nli_label"] for d in records]
    probs = []
    step = 512
    for start in progress(range(0, len(pairs), step), "nli", quiet or len(pairs) < 2000):
        probs.extend(scorer.predict_proba(pairs[start:start + step]))
    pred_idx = [int(max(range(len(p)), key=lambda k: p[k])) for p in probs]
    contra_p = [float(p[layout.contradiction]) for p in probs]
    if layout.num_labels == 3:
        out = {"nli_3way_accuracy": metrics.accuracy(gold, [names[i] for i in pred_idx])}
    else:
        out = {}
    y = [g == "contradiction" for g in gold]
    out["nli_contradiction_accuracy"] = metrics.accuracy(y, [i == layout.contradiction for i in pred_idx])
    out["nli_contradiction_auc"] = metrics.roc_auc(y, contra_p)
    out["n"] = len(pairs)
    return out


def mutual_option_scores(scorer, record, method: str) -> list[float]:
    """The ranking signal for MuTual: consistency with the context, then support from it.

    score(option) = (1 - max P(contradiction)) + max P(entailment) over the context. ``structured``
    pairs the option with every context utterance of *either* speaker (MuTual's wrong options
    misstate what the other speaker said, so same-speaker pairing would miss them);
    ``unstructured`` pairs it with the whole speaker-tagged context. 2-way checkpoints have no
    entailment class and use 1 - P(contradiction) alone.
    """
    options = record.meta["options"]
    if method == "unstructured":
        context = "\n".join(f"{t.agent_id}: {t.text}" for t in record.turns)
        premises = [context]
    else:
        premises = [t.text for t in record.turns]
    pairs = [(p, o) for o in options for p in premises]
    probs = scorer.predict_proba(pairs)
    layout = scorer.layout
    n = len(premises)
    scores = []
    for k in range(len(options)):
        block = probs[k * n:(k + 1) * n]
        score = 1.0 - float(block[:, layout.contradiction].max())
        if layout.entailment is not None:
            score += float(block[:, layout.entailment].max())
        scores.append(score)
    return scores


def evaluate_mutual(scorer, records, method: str, quiet: bool) -> dict:
    from guard import metrics

    labelled = [d for d in records if d.meta.get("answer") is not None]
    if not labelled:
        raise UsageError("the MuTual file has no answers (the test split is unlabelled); use train or dev")
    scores = [mutual_option_scores(scorer, d, method) for d in progress(labelled, "mutual", quiet)]
    return {"overall": metrics.response_selection([d.meta["answer"] for d in labelled], scores),
            "signal": "(1 - max P(contradiction)) + max P(entailment) of the option against the context"}


def cmd_evaluate(args: argparse.Namespace) -> int:
    from guard.datasets import read_dataset
    from guard.loading import load_scorer

    records = read_dataset(args.format, args.file, limit=args.limit)
    started = time.perf_counter()
    head = {"format": args.format, "file": str(args.file), "detector": args.detector, "method": args.method}
    if args.format == "mutual":
        result = evaluate_mutual(load_scorer(args.detector), records, args.method, args.quiet)
    elif args.format == "snli":
        result = {"overall": evaluate_nli(load_scorer(args.detector), records, args.quiet)}
    else:
        detector = build_detector(args)
        head["threshold"] = detector.threshold
        verdicts = _detect_all(detector, records, args.quiet)
        result = evaluate_detection(records, verdicts)
        if args.format == "dnli":
            result["overall"].update(evaluate_nli(detector.scorer, records, True))
            result["ranking"] = evaluate_dnli_ranking(records, verdicts)
    result = {**head, **result, "seconds": round(time.perf_counter() - started, 1)}
    text = json.dumps(result, indent=2, default=float) if args.json else render_table(result)
    with output_stream(args.output) as out:
        out.write(text + "\n")
    return 0


def render_table(result: dict) -> str:
    """A plain-text metrics table: one row per group (overall first), one column per metric."""
    from guard.metrics import fmt

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
    from guard.datasets import dialogue_to_decode, read_dataset
    from guard.probes import apply_probe, make_probe

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
    from guard.datasets import available_formats
    from guard.probes import PROBES

    parser = argparse.ArgumentParser(prog="python -m guard", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    def detector_flags(p: argparse.ArgumentParser) -> None:
        p.add_argument("--detector", default="embedded",
                       help="'embedded' (models/detector), or a local NLI checkpoint folder")
        p.add_argument("--method", choices=METHODS, default="structured",
                       help="structured: DECODE's utterance-based pairs (default); unstructured: whole history")
        p.add_argument("--threshold", type=_threshold, default=None,
                       help="decision threshold (default: the checkpoint's guard_config.json, else 0.5)")
        p.add_argument("--no-categories", action="store_true",
                       help="skip the CDConv intra/role checks (history contradiction only; faster)")
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
    from guard.datasets import DatasetError

    errors: list[type[Exception]] = [DatasetError, UsageError, MissingAssetError]
    if "guard.loading" in sys.modules:  # only a command that loaded a model can fail this way
        from guard.loading import ModelLoadError
        from guard.nli import LabelLayoutError

        errors += [ModelLoadError, LabelLayoutError]
    return tuple(errors)
