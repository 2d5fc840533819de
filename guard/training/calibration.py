"""Choosing the detector's thresholds on held-out data built from our own chit-chat (never rgm).

* The history threshold (and the pairing it goes with): the accuracy-best threshold on balanced
  synthetic dialogues from held-out conversations, where a positive's last turn carries a negated /
  antonym-swapped copy of a sentence its speaker said earlier.
* The intra-utterance threshold: the score only 1% of real held-out human messages reach.

Both score through the guard's own ``ContradictionDetector``, so a threshold is set on exactly the
pairs the product compares.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from guard.config import FALLBACK_THRESHOLD, JudgeSettings
from guard.judge.pipeline import Guard
from guard.language.perturb import Perturb
from guard.models.nli import NLIScorer
from guard.records import Dialogue, Turn
from guard.training.pairs import negate_chat, statement_sentences
from guard.training.sources import (
    ChitchatConversation,
    load_chitchat,
    split_conversations,
    usable_pool,
    usable_utterance,
)

#: Share of the chit-chat conversations held out from training (dev pairs and calibration come from them).
HELDOUT_FRACTION = 0.15


@dataclass
class SyntheticDialogue:
    """A held-out dialogue for calibrating the threshold: does the last turn contradict its speaker?"""

    utterances: list[str]
    speakers: list[str]
    label: bool
    source: str
    meta: dict = field(default_factory=dict)


def calibration_dialogues(convs: Sequence[ChitchatConversation], n: int, nlp, wn, seed: int = 0
                          ) -> list[SyntheticDialogue]:
    """Dialogues whose last turn does / does not contradict an earlier turn of its speaker.

    Negative (label False): a real conversation prefix ending in a real utterance of the speaker.
    Positive (label True): the same prefix, but the last turn is a real later utterance of the speaker with a
    negated / antonym-swapped sentence of one of their earlier turns appended (the contradiction sits in one
    clause of a longer reply, as in model-generated data).
    """
    rng = random.Random(seed)
    out: list[SyntheticDialogue] = []
    candidates = [c for c in convs if len(c.utterances) >= 5]
    rng.shuffle(candidates)
    wanted = {False: n // 2, True: n - n // 2}  # balanced, so the accuracy-best threshold is not skewed
    for conv in candidates * 3:  # a conversation may serve again with another cut point
        if not wanted[False] and not wanted[True]:
            break
        end = rng.randint(4, min(len(conv.utterances), 10)) - 1  # index of the last turn
        utts, spk = conv.utterances[:end + 1], conv.speakers[:end + 1]
        speaker = spk[end]
        earlier = [i for i in range(end) if spk[i] == speaker and usable_utterance(utts[i])]
        if not earlier or not usable_utterance(utts[end]):
            continue
        names = ["A" if s == spk[0] else "B" for s in spk]
        if wanted[False] and (not wanted[True] or rng.random() < 0.5):
            out.append(SyntheticDialogue(list(utts), names, False, "chitchat-real"))
            wanted[False] -= 1
            continue
        source_i = rng.choice(earlier)
        doc = nlp(utts[source_i])
        sents = statement_sentences(doc)
        if not sents:
            continue
        sent = rng.choice(sents)
        changed = negate_chat(sent.as_doc()) if rng.random() < 0.6 else Perturb.antonym(sent.as_doc(), rng, wn)
        if not changed or changed.lower() == sent.text.strip().lower():
            continue
        last = f"{utts[end]} {changed}" if rng.random() < 0.5 else f"{changed} {utts[end]}"
        out.append(SyntheticDialogue(list(utts[:end]) + [last], names, True, "chitchat-perturbed",
                                     {"evidence": source_i}))
        wanted[True] -= 1
    return out


def as_dialogue(synthetic: SyntheticDialogue, index: int) -> Dialogue:
    """The guard's record for a synthetic dialogue: turn ids are positions, the last turn is judged."""
    turns = [Turn(i, speaker, text) for i, (speaker, text) in enumerate(zip(synthetic.speakers, synthetic.utterances))]
    return Dialogue(f"calibration-{index}", turns, label=synthetic.label, meta={"source": synthetic.source})


def best_threshold(scores: np.ndarray, labels: np.ndarray) -> tuple[float, float]:
    """Threshold with the highest accuracy (ties: the one nearest 0.5), and that accuracy."""
    candidates = np.unique(np.concatenate([scores, [0.5]]))
    best = (0.5, -1.0)
    for tau in candidates:
        acc = float(np.mean((scores >= tau) == labels))
        if acc > best[1] + 1e-12 or (abs(acc - best[1]) <= 1e-12 and abs(tau - 0.5) < abs(best[0] - 0.5)):
            best = (float(tau), acc)
    return best


def calibrate(scorer: NLIScorer, calib: Sequence[SyntheticDialogue]) -> dict:
    """Pick pairing and threshold on held-out synthetic dialogues (our own data, never rgm).

    For each pairing the guard's structured detector judges every dialogue's last turn (DECODE's
    structured score: the best contradiction probability against the speaker's earlier turns, no
    intra-utterance check); its decisions at DECODE's default threshold give ``accuracy_at_0.5`` and
    its scores the accuracy-best threshold.
    """
    from sklearn.metrics import roc_auc_score

    labels = np.array([d.label for d in calib])
    dialogues = [as_dialogue(d, i) for i, d in enumerate(calib)]
    result = {}
    for pairing in ("sentence", "utterance"):
        guard = Guard.over(scorer)
        settings = guard.settings(mode="flag", threshold=FALLBACK_THRESHOLD, pairing=pairing, checks=False)
        guard.prepare([t for d in dialogues for t in d.turns], [], settings)  # every text split in one spaCy batch
        verdicts = [guard.verdict_on_dialogue(d, settings) for d in dialogues]
        scores = np.array([v.score for v in verdicts])
        tau, acc = best_threshold(scores, labels)
        result[pairing] = {"threshold": tau, "accuracy": acc, "auc": float(roc_auc_score(labels, scores)),
                           "accuracy_at_0.5": float(np.mean(np.array([v.contradiction for v in verdicts]) == labels))}
    chosen = max(result, key=lambda k: (result[k]["accuracy"], k == "sentence"))
    result["chosen"] = chosen
    return result


def calibrate_intra(scorer: NLIScorer, held_convs: Sequence[ChitchatConversation], threshold: float,
                    n_utterances: int = 1500, false_alarm: float = 0.01, seed: int = 13) -> dict:
    """Threshold for the intra-utterance clause check: the score only ``false_alarm`` of real human replies reach.

    People rarely contradict themselves inside one chat message, yet an NLI model reads many of their
    clause pairs ("I hate tea, I never drink it") as contradictions: on held-out chit-chat the history
    threshold fired on 7.0% of 1,093 multi-clause messages. So the intra check gets the (1 - false_alarm)
    quantile of the max clause-pair score over held-out human messages, never below ``threshold``.
    The scores come from the guard's own detector (same clauses, same pairs), with no history.
    """
    rng = random.Random(seed)
    texts = usable_pool(held_convs)
    texts = rng.sample(texts, min(n_utterances, len(texts)))
    guard = Guard.over(scorer)
    settings = guard.settings(mode="flag", threshold=threshold, pairing="sentence", checks=True)
    verdicts = [c.verdict for c in guard.judge([], texts, speaker="bot", settings=settings).candidates]
    multi = np.array([v.details.intra.score for v in verdicts if len(v.details.intra.clauses) >= 2])
    if not len(multi):
        return {"threshold": threshold, "messages": 0}
    value = max(float(np.quantile(multi, 1.0 - false_alarm)), threshold)
    return {"threshold": value, "false_alarm_target": false_alarm, "messages": len(texts),
            "multi_clause_messages": int(len(multi)),
            "fire_rate_at_history_threshold": float(np.mean(multi >= threshold)),
            "fire_rate_at_intra_threshold": float(np.mean(multi >= value)),
            "calibrated_on": "real multi-clause messages of held-out chit-chat conversations (never trained on)"}


def recalibrate_intra(folder: Path | str, split_seed: int) -> dict:
    """Add an intra threshold to an existing checkpoint's guard_config.json (``--calibrate-intra FOLDER``)."""
    from guard.models.loading import load_scorer
    from guard.models.registry import read_config

    folder = Path(folder)
    config_path = folder / "guard_config.json"
    if not config_path.is_file():
        raise SystemExit(f"--calibrate-intra: {config_path} not found (export the run first)")
    _, held_convs = split_conversations(load_chitchat(), heldout_fraction=HELDOUT_FRACTION, seed=split_seed)
    result = calibrate_intra(load_scorer(str(folder)), held_convs, JudgeSettings.resolve(read_config(folder)).threshold, seed=split_seed)
    config = json.loads(config_path.read_text())
    config["intra_threshold"] = round(result["threshold"], 4)
    config.setdefault("calibration", {})["intra"] = result
    config_path.write_text(json.dumps(config, indent=2) + "\n")
    return result
