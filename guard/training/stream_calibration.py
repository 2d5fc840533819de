"""Set a detector's operating point on real bot turns: ``python -m guard.training calibrate-stream FOLDER``.

The product detector judges every bot turn of the live-stream dev set's **calibration** half (``guard.stream``:
real ConvAI2 conversations, labelled by two passes) against its own history and persona; the intra-sentence check
gets its own threshold for at most 1 % false alarms on the consistent bot turns, then τ is set so the whole decision
flags at most 5 % of them (``guard.stream.stream_operating_point``; the rule is in
docs/experiments/2026-11-24-detector-v4.md). The evaluation half is never read here. Scores can come from a file
``benchmarks.bench_bot_stream score`` wrote (``--scores``) so a detector is not scored twice.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from guard import stream


def calibration_scores(name: str) -> list[stream.TurnScore]:
    """The product detector's scores for every bot turn of the calibration half."""
    from guard.pipeline import load_guard

    half = set(stream.read_sample().split("calibration"))
    dialogues = [d for d in stream.read_conversations() if d.record_id in half]
    return stream.score_stream(load_guard(name).detector(), stream.stream_turns(dialogues))


def read_scores(path: Path) -> list[stream.TurnScore]:
    data = json.loads(Path(path).read_text())
    if data.get("split") != "calibration":
        raise SystemExit(f"{path} holds the {data.get('split')!r} half's scores; the operating point is set on the "
                         "calibration half only")
    return [stream.TurnScore(**t) for t in data["turns"]]


def calibrate(folder: Path, scores: list[stream.TurnScore], write: bool = True) -> dict:
    """The rule's operating point from the calibration half's scores; written into ``folder``'s guard_config.json."""
    from guard.config import GUARD_CONFIG_NAME

    labels = {(x.record_id, x.turn_id): x.contradiction for x in stream.read_labels()}
    missing = [(s.record_id, s.turn_id) for s in scores if (s.record_id, s.turn_id) not in labels]
    if missing:
        raise SystemExit(f"{len(missing)} scored bot turns have no label, e.g. {missing[:2]}")
    if any(stream.split_of(s.record_id) != "calibration" for s in scores):
        raise SystemExit("scores of the evaluation half were given; the operating point uses the calibration half")
    point = stream.stream_operating_point(scores, [labels[(s.record_id, s.turn_id)] for s in scores])
    if write:
        path = Path(folder) / GUARD_CONFIG_NAME
        config = json.loads(path.read_text()) if path.exists() else {}
        config["threshold"] = point["threshold"]
        config["intra_threshold"] = point["intra_threshold"]
        config["own_question_threshold"] = point["own_question_threshold"]
        config["pairing"] = "sentence"
        config.setdefault("calibration", {})["stream"] = point
        config["calibration"]["chosen"] = "stream"
        config["calibrated_on"] = point["calibrated_on"]
        path.write_text(json.dumps(config, indent=2) + "\n")
    return point


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m guard.training calibrate-stream",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("folder", help="the detector's folder (its guard_config.json gets τ and the intra threshold)")
    parser.add_argument("--model", default=None,
                        help="the detector name to score with (default: the folder); e.g. embedded-cascade")
    parser.add_argument("--scores", type=Path, default=None,
                        help="calibration-half scores from benchmarks.bench_bot_stream score (skips scoring)")
    parser.add_argument("--dry-run", action="store_true", help="print the result without writing it")
    args = parser.parse_args(argv)
    scores = read_scores(args.scores) if args.scores else calibration_scores(args.model or args.folder)
    print(json.dumps(calibrate(Path(args.folder), scores, write=not args.dry_run), indent=2))


if __name__ == "__main__":
    main()
