"""The threshold search that calibrates detectors (synthetic dialogues, held-out DECODE pairs)."""

from __future__ import annotations

import numpy as np
import pytest

from guard.training.calibration import best_threshold


@pytest.mark.parametrize(("scores", "labels", "expected_accuracy"), [
    ([0.1, 0.2, 0.8, 0.9], [False, False, True, True], 1.0),
    ([0.1, 0.7, 0.6, 0.9], [False, False, True, True], 0.75),
    ([0.3, 0.4], [True, True], 1.0),
    ([0.3, 0.4], [False, False], 1.0),
])
def test_best_threshold_maximises_accuracy(scores, labels, expected_accuracy):
    scores, labels = np.array(scores), np.array(labels)
    threshold, accuracy = best_threshold(scores, labels)
    assert accuracy == pytest.approx(expected_accuracy)
    assert np.mean((scores >= threshold) == labels) == pytest.approx(accuracy)
    assert 0 < threshold < 1
