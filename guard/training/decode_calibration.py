"""Set a detector's threshold on held-out human-labelled dialogue pairs: ``python -m guard.training.decode_calibration``.

DECODE dev is split by record position: the even-numbered pairs set τ, the odd-numbered ones stay for
reporting (benchmarks/bench_detector_data.py). Each pair is read as a two-turn dialogue of one speaker and judged
by ``ContradictionDetector`` itself (sentence pairing, the product's scoring), so τ is calibrated for exactly the
score the guard compares with it. rgm is never read here.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from guard.training import real_data as rd
from guard.training.calibration import best_threshold


def decode_dev_halves() -> tuple[list[rd.LabelledPair], list[rd.LabelledPair]]:
    """(calibration half, reporting half) of DECODE dev: even- and odd-numbered records."""
    pairs = rd.load_corpus("decode", "dev")
    return pairs[0::2], pairs[1::2]


def detector_scores(scorer, pairs: Sequence[rd.LabelledPair], pairing: str = "sentence") -> np.ndarray:
    """The structured detector's history score for each pair read as a same-speaker dialogue."""
    from guard.detector import ContradictionDetector
    from guard.records import Turn

    detector = ContradictionDetector(scorer, threshold=0.5, intra_threshold=0.5, pairing=pairing, categories=False)
    scores = []
    for pair in pairs:
        (verdict,) = detector.detect_candidates([Turn(0, "speaker", pair.premise)], [pair.hypothesis], "speaker")
        scores.append(verdict.score)
    return np.array(scores)


def calibrate(folder: Path, write: bool = True) -> dict:
    """τ for ``folder``'s checkpoint on the DECODE dev calibration half; written into its guard_config.json."""
    from guard.loading import GUARD_CONFIG_NAME, load_scorer

    scorer = load_scorer(str(folder))
    calibration, _ = decode_dev_halves()
    labels = np.array([p.is_contradiction for p in calibration])
    scores = detector_scores(scorer, calibration)
    threshold, accuracy = best_threshold(scores, labels)
    result = {"threshold": round(threshold, 4), "accuracy": round(accuracy, 4), "pairs": len(calibration),
              "accuracy_at_0.5": round(float(np.mean((scores >= 0.5) == labels)), 4),
              "calibrated_on": "the even-numbered half of DECODE dev (human-written dialogue contradictions, "
                               "never trained on), each pair judged by the structured detector; never rgm"}
    if write:
        path = Path(folder) / GUARD_CONFIG_NAME
        config = json.loads(path.read_text()) if path.exists() else {}
        config["threshold"] = result["threshold"]
        config["pairing"] = "sentence"
        config.setdefault("calibration", {})["decode_dev"] = result
        config["calibration"]["chosen"] = "decode_dev"
        config["calibrated_on"] = result["calibrated_on"]
        path.write_text(json.dumps(config, indent=2) + "\n")
    return result


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m guard.training calibrate-decode", description=__doc__.splitlines()[0])
    parser.add_argument("folder", help="a detector checkpoint folder (its guard_config.json gets the threshold)")
    parser.add_argument("--dry-run", action="store_true", help="print the threshold without writing it")
    args = parser.parse_args(argv)
    print(json.dumps(calibrate(Path(args.folder), write=not args.dry_run), indent=2))


if __name__ == "__main__":
    main()
