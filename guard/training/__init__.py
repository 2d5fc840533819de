"""Training the embedded contradiction detector (``python -m guard.training --help``).

Kept apart from the runtime modules: nothing the guard imports to detect (``guard.judge.detector``,
``guard.models.nli``, ``guard.models.loading``, ``guard.judge.policies``, ``guard.eval.probes``) imports this package.

* ``sources``: SNLI, the chit-chat conversations and their held-out split, persona entities.
* ``persona``: DNLI-style persona facts and their pairs.
* ``pairs``: chit-chat pairs (perturbation contradictions, counter-shortcut pairs, context noise).
* ``calibration``: held-out calibration dialogues and the history / intra-utterance thresholds.
* ``run``: data assembly, the training loop, evaluation, weight averaging, export.
"""
