"""What the shipped detector (models/detector, as the app builds it) decides on the cases issue 23 names.

Behaviour of the real weights, not plumbing: the app's own "22 dogs" reply is flagged with its evidence, the bot's
statements about itself are never role confusion, and the quantity probes (guard/data/probe_quantities.jsonl) are
mostly right. Skipped when the weights are absent (a checkout without models/detector).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from guard.records import Dialogue, Turn
from guard.vocabulary import Category, PremiseSource

pytestmark = pytest.mark.skipif(not (Path(__file__).resolve().parent.parent / "models" / "detector"
                                     / "model.safetensors").exists(), reason="models/detector is not there")

#: the shipped v4 weights get 51 of the 72 quantity probes right (0.708; issue 23 asks for 0.90): a floor against
#: regressions, not the goal
QUANTITY_FLOOR = 0.70
PERSONA = ["I have two dogs.", "I live in Paris.", "I work as a nurse."]


@pytest.fixture(scope="module")
def detect():
    """The app's detector on a dialogue's last turn: the shipped checkpoint at its own thresholds, prefilter k = 8,
    the checks its calibration kept (``Guard.verdict_on_dialogue``)."""
    from guard.judge.pipeline import load_guard

    guard = load_guard("embedded")
    settings = guard.settings(mode="flag")
    return lambda dialogue: guard.verdict_on_dialogue(dialogue, settings)


def _dialogue(turns: list[tuple[str, str]], persona=PERSONA) -> Dialogue:
    return Dialogue("case", [Turn(i, who, text) for i, (who, text) in enumerate(turns)], persona=list(persona))


def test_the_apps_twenty_two_dogs_reply_is_flagged_with_its_evidence(detect):
    """Issue 23: 'I do have 22 dogs. I own 24 of them.' after a persona with two dogs was shown as consistent."""
    verdict = detect(_dialogue([("user", "Tell me again, how many dogs do you have?"),
                                ("bot", "I do have 22 dogs. I own 24 of them.")]))
    assert verdict.contradiction
    sources = {(e.source, e.turn_id) for e in verdict.evidence}
    assert (PremiseSource.PERSONA, 0) in sources  # "I have two dogs."
    assert verdict.category == Category.INTRA  # 22 vs 24 inside the reply is decided first (CDConv's order)


def test_a_consistent_count_restated_is_not_flagged(detect):
    verdict = detect(_dialogue([("user", "Tell me again, how many dogs do you have?"),
                                ("bot", "No, my two dogs are plenty.")]))
    assert not verdict.contradiction, verdict.score


@pytest.mark.parametrize("turns", [
    [("user", "Do you have a pet?"), ("bot", "I don't have a pet, I'm a nurse.")],
    [("user", "I'm a nurse and I have a cat."), ("bot", "I have two dogs."), ("user", "Do you have a pet?"),
     ("bot", "I don't have a pet, I'm a nurse.")],
])
def test_the_bots_statements_about_itself_are_never_role_confusion(detect, turns):
    """Issue 23: 'I don't have a pet, I'm a nurse.' was labelled role confusion in the app; it contradicts the
    bot's own persona (and earlier turn), a history contradiction."""
    verdict = detect(_dialogue(turns))
    assert verdict.contradiction and verdict.category == Category.HISTORY


def test_quantity_probes(detect):
    """Issue 23 asks for >= 0.90 on the quantity probes; this guards the level the shipped weights reach."""
    from guard.eval.datasets import read_dataset

    probes = read_dataset("decode", Path(__file__).resolve().parent.parent / "guard" / "data" / "probe_quantities.jsonl")
    right = sum(bool(detect(d).contradiction) == bool(d.label) for d in probes)
    assert right / len(probes) >= QUANTITY_FLOOR, f"{right} of {len(probes)}"

