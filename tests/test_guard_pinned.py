"""The shipped detectors' verdicts on a handful of probes, pinned after the guard learned to read the conversation
(answers with their question, denials by what they deny, the checks the budget kept; commit of the conversation-reading
change) and checked through ``guard.judge.pipeline.load_guard``, so a later refactor that changes a verdict is seen.

The probes cover every path a setting reaches: a history and a persona contradiction (τ), an intra-sentence clash
(the intra threshold), the own-question situation (the check is off in the chat for ``embedded``, on for the
cascade, whose calibration predates the budget), an answer read with its question, and a long history that the
prefilter (k from the config) cuts down. Scores come from the int8 ONNX runtime, whose kernels differ a little
between CPUs (AVX2, VNNI, AMX), so scores match within ``TOLERANCE``, and what was decided (contradiction, category,
evidence) must match exactly unless a score lies within ``TOLERANCE`` of the threshold that decides it; τ and the
number of pairs always match. Skipped without the weights.
"""

from __future__ import annotations

import pytest
from judging import verdicts_of

from embedded import DETECTOR_DIR
from guard.models.pair_cache import clear_pair_cache
from guard.models.registry import MPNET_DIR
from guard.records import Turn

TOLERANCE = 0.01
PERSONA = ["I have two dogs.", "I live in Paris.", "I work as a nurse."]
LONG = [("user", "Hi! What do you do?"), ("bot", "I'm a nurse at a big hospital. I love my job."),
        ("user", "Nice. Any pets?"), ("bot", "Yes, two dogs. They are both labradors."),
        ("user", "Where do you live?"), ("bot", "In Paris, near the river. I moved here in 2015."),
        ("user", "Do you like music?"), ("bot", "I play the piano every evening. Jazz mostly."),
        ("user", "What about sports?"), ("bot", "I run three times a week. I hate swimming."),
        ("user", "Tell me something else."), ("bot", "I have a sister in Lyon. She is a teacher."),
        ("user", "Cool. Anything you hate?")]
PROBES = {
    "history": ([("user", "Do you have pets?"), ("bot", "Yes, I have a cat named Luna."), ("user", "Nice, tell me more.")],
                ["I don't have any pets.", "Luna is three years old.", "I have never owned a cat, I'm allergic."]),
    "persona": ([("user", "What do you do for a living?")],
                ["I am a teacher at a primary school.", "I work as a nurse in Paris.", "I don't have a job."]),
    "intra": ([("user", "Do you drink tea?")],
              ["I love tea. I never drink tea, I hate it.", "I drink tea every morning."]),
    "answer": ([("user", "Wait, aren't you a teacher?")], ["Yes, I am.", "No, I'm a nurse."]),
    "own_question": ([("user", "How old are you?"), ("bot", "I'm 25. And you?"), ("user", "ok")],
                     ["I am 30 years old.", "Cool. What do you like to do?"]),
    "long": (LONG, ["I hate jazz and I never play music.", "I live in Berlin with my cat.", "I hate swimming."]),
}

#: probe -> per candidate: (score, history score, intra score, contradiction, category, evidence (source, turn), τ, pairs)
PINNED = {
    'embedded': {
        'history': [
            (0.9944, 0.9944, 0.0, True, 'history', [('history', 1), ('persona', 0)], 0.9398, 5),
            (0.0105, 0.0105, 0.0, False, 'none', [], 0.9398, 5),
            (0.9917, 0.9917, 0.0406, True, 'history', [('history', 1)], 0.9398, 6),
        ],
        'persona': [
            (0.9629, 0.9629, 0.0035, True, 'history', [('persona', 2)], 0.9398, 7),
            (0.0267, 0.0267, 0.0025, False, 'none', [], 0.9398, 4),
            (0.8091, 0.8091, 0.0, False, 'none', [], 0.9398, 3),
        ],
        'intra': [
            (0.9934, 0.007, 0.9934, True, 'intra', [('intra', 1)], 0.9398, 9),
            (0.0048, 0.0048, 0.0, False, 'none', [], 0.9398, 3),
        ],
        'answer': [
            (0.9456, 0.9456, 0.0972, True, 'history', [('persona', 2)], 0.9398, 7),
            (0.0544, 0.0544, 0.0138, False, 'none', [], 0.9398, 7),
        ],
        'own_question': [
            (0.9837, 0.9837, 0.0, True, 'history', [('history', 1)], 0.9398, 5),
            (0.0, 0.0, 0.0, False, 'none', [], 0.9398, 0),
        ],
        'long': [
            (0.9918, 0.9918, 0.1753, True, 'history', [('history', 7)], 0.9398, 12),
            # the fact sheet: Berlin against the persona's and turn 5's Paris (issue 41)
            (0.8333, 0.8333, 0.0, True, 'history', [('history', 5), ('persona', 1)], 0.9398, 11),
            (0.0541, 0.0541, 0.0, False, 'none', [], 0.9398, 11),
        ],
    },
    'embedded-cascade': {
        'history': [
            (0.9578, 0.9578, 0.0, True, 'history', [('history', 1), ('persona', 0)], 0.8899, 6),
            (0.0102, 0.0102, 0.0, False, 'none', [], 0.8899, 6),
            (0.9483, 0.9483, 0.0463, True, 'history', [('history', 1)], 0.8899, 7),
        ],
        'persona': [
            (0.9494, 0.9494, 0.0035, True, 'history', [('persona', 2)], 0.8899, 7),
            (0.0267, 0.0267, 0.0025, False, 'none', [], 0.8899, 4),
            (0.8091, 0.8091, 0.0, False, 'none', [], 0.8899, 3),
        ],
        'intra': [
            (0.9545, 0.007, 0.9545, True, 'intra', [('intra', 1)], 0.8899, 9),
            (0.0048, 0.0048, 0.0, False, 'none', [], 0.8899, 3),
        ],
        'answer': [
            (0.9476, 0.9476, 0.0972, True, 'history', [('persona', 2)], 0.8899, 7),
            (0.0524, 0.0524, 0.0518, False, 'none', [], 0.8899, 7),
        ],
        'own_question': [
            (0.9345, 0.9345, 0.0, True, 'role', [('history', 1)], 0.8899, 5),
            (0.0, 0.0, 0.0, False, 'none', [], 0.8899, 0),
        ],
        'long': [
            (0.9574, 0.9574, 0.1754, True, 'history', [('history', 7)], 0.8899, 13),
            (0.9569, 0.9569, 0.0, True, 'history', [('history', 5), ('persona', 1)], 0.8899, 12),
            (0.054, 0.054, 0.0, False, 'none', [], 0.8899, 12),
        ],
    },
}


def _available(name: str) -> bool:
    folders = [DETECTOR_DIR] + ([MPNET_DIR] if name == "embedded-cascade" else [])
    return all(any((f / w).exists() for w in ("model.safetensors", "trained.safetensors")) for f in folders)


@pytest.mark.parametrize("name", sorted(PINNED))
def test_the_shipped_detectors_verdicts_are_the_pinned_ones(name):
    if not _available(name):
        pytest.skip(f"the weights of {name} are not in this checkout")
    from guard.judge.pipeline import load_guard

    guard = load_guard(name)
    settings = guard.settings(mode="flag")  # the chat's settings: calibrated τ, the kept checks, the prefilter
    clear_pair_cache(guard.scorer)  # each probe's pairs scored in its own batch, as when pinned
    for probe, (turns, candidates) in PROBES.items():
        history = [Turn(i, speaker, text) for i, (speaker, text) in enumerate(turns)]
        verdicts = verdicts_of(guard, settings, history, candidates, persona=PERSONA)
        for candidate, verdict, pinned in zip(candidates, verdicts, PINNED[name][probe], strict=True):
            score, history_score, intra, contradiction, category, evidence, tau, pairs = pinned
            where = f"{name} / {probe} / {candidate!r}"
            assert verdict.score == pytest.approx(score, abs=TOLERANCE), where
            assert verdict.details.history_score == pytest.approx(history_score, abs=TOLERANCE), where
            assert verdict.details.intra.score == pytest.approx(intra, abs=TOLERANCE), where
            assert (round(verdict.details.threshold, 4), verdict.details.n_pairs) == (tau, pairs), where
            margins = [abs(history_score - settings.threshold), abs(intra - settings.intra_threshold)]
            if verdict.details.own_question_turn is not None:
                margins.append(abs(history_score - settings.own_question_threshold))
            if min(margins) < TOLERANCE:
                continue  # another CPU's int8 kernels may tip it either way
            assert (bool(verdict.contradiction), str(verdict.category)) == (contradiction, category), where
            assert sorted({(str(e.source), e.turn_id) for e in verdict.evidence}) == evidence, where
