"""Set a detector's decision on real bot turns: ``python -m guard.training calibrate-stream FOLDER``.

One false-alarm budget for the whole decision (``guard.eval.dev_streams.budget_operating_point``; the rules are in
docs/experiments/2026-11-27-conversation-reading.md, written before any score): the product detector judges every
bot turn of the **calibration** halves of both dev streams (ConvAI2, labelled by us in two passes; DECODE's human-bot
dev half, the last turn verified), every check on; each flagging check gets its own threshold (≤ 1 % false alarms
alone on each stream), τ is set so the whole decision flags at most 5 % of each stream's consistent turns, and a
check stays on in the chat only where it adds at least 2 caught contradictions; the red badge's band is read off the
DECODE half. The evaluation halves are never read here. Scores may come from files ``benchmarks.bench_bot_stream
score`` wrote (``--scores``), so a detector is not scored twice.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from guard.eval import dev_streams, stream


def calibration_scores(name: str) -> list[dev_streams.ScoredStream]:
    """The product detector's scores for every bot turn of both streams' calibration halves, every check on."""
    from guard.judge.pipeline import load_guard

    guard = load_guard(name)
    settings = guard.settings(mode="flag", checks=True)
    out = []
    for stream_name in dev_streams.STREAMS:
        turns = dev_streams.labelled_turns(stream_name, "calibration")
        scores = stream.score_stream(guard, settings, turns)
        out.append(dev_streams.ScoredStream(stream_name, scores,
                                       [None if t.label is None else bool(t.label.contradiction) for t in turns]))
    return out


def read_scores(paths: list[Path]) -> list[dev_streams.ScoredStream]:
    """Scored calibration halves from ``bench_bot_stream score`` files (one per stream)."""
    out = []
    for path in paths:
        data = json.loads(Path(path).read_text())
        if data.get("split") != "calibration":
            raise SystemExit(f"{path} holds the {data.get('split')!r} half's scores; the decision is set on the "
                             "calibration halves only")
        turns = data["turns"]
        out.append(dev_streams.ScoredStream(data.get("stream", "convai2"),
                                       [stream.TurnScore(**{k: v for k, v in t.items() if k != "label"})
                                        for t in turns], [t.get("label") for t in turns]))
    names = sorted(s.name for s in out)
    if names != sorted(dev_streams.STREAMS):
        raise SystemExit(f"one calibration file per stream ({', '.join(dev_streams.STREAMS)}) is needed, got {names}")
    return out


def calibrate(folder: Path, scored: list[dev_streams.ScoredStream], write: bool = True) -> dict:
    """The budget's decision from the calibration halves; written into ``folder``'s guard_config.json."""
    from guard.config import edited_guard_config

    point = dev_streams.budget_operating_point(scored)
    point["calibrated_on"] = ("every bot turn of the calibration halves of both dev streams (ConvAI2 wild evaluation, "
                              "labelled by two passes, guard/data/bot_stream; DECODE human-bot dev half, last turn "
                              "verified, guard/eval/decode_stream.py), judged against its own history and persona by the "
                              "product detector with every check on; never an evaluation half")
    if write:
        with edited_guard_config(folder) as config:
            config.update({"threshold": point["threshold"], "intra_threshold": point["intra_threshold"],
                           "own_question_threshold": point["own_question_threshold"], "pairing": "sentence",
                           "checks": point["checks"], "badge": point["badge"], "calibrated_on": point["calibrated_on"]})
            if point["facts"]["precision"] is not None:
                config["facts"] = {"precision": point["facts"]["precision"],
                                   "measured_on": "the fact check's flags on the labelled turns of both dev streams' "
                                                  "calibration halves, pooled"}
            if point["rerank"]["band"] is not None:
                config["rerank"] = point["rerank"]
            config.setdefault("calibration", {})["budget"] = point
            config["calibration"]["chosen"] = "budget"
    return point


def calibrate_support(folder: Path, scored: list[dev_streams.ScoredStream], write: bool = True) -> dict:
    """τ_e alone (``guard.eval.dev_streams.persona_support_threshold``), written into ``folder``'s guard_config.json
    as its ``support`` block; the rest of the decision stays as it was set."""
    from guard.config import edited_guard_config

    point = dev_streams.persona_support_threshold(scored)
    point["calibrated_on"] = ("the labelled contradicting bot turns of both dev streams' calibration halves, each "
                              "judged against its history and persona by the product detector; never an evaluation "
                              "half")
    if write:
        with edited_guard_config(folder) as config:
            config["support"] = point
    return point


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m guard.training calibrate-stream",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("folder", help="the detector's folder (its guard_config.json gets the decision)")
    parser.add_argument("--model", default=None,
                        help="the detector name to score with (default: the folder); e.g. embedded-cascade")
    parser.add_argument("--scores", type=Path, nargs="*", default=None,
                        help="calibration-half scores of both streams from benchmarks.bench_bot_stream score")
    parser.add_argument("--dry-run", action="store_true", help="print the result without writing it")
    parser.add_argument("--support-only", action="store_true",
                        help="set τ_e (the persona's support, the choice's rule 4) alone; the decision stays")
    args = parser.parse_args(argv)
    scored = read_scores(args.scores) if args.scores else calibration_scores(args.model or args.folder)
    step = calibrate_support if args.support_only else calibrate
    print(json.dumps(step(Path(args.folder), scored, write=not args.dry_run), indent=2))


if __name__ == "__main__":
    main()
