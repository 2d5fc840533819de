"""Set a detector's operating point on held-out human-written dialogues: ``python -m guard.training calibrate-decode``.

DECODE dev is split by record position: the even-numbered pairs set τ, the odd-numbered ones stay for reporting
(benchmarks/bench_detector_data.py). DECODE's files hold (earlier utterance, last utterance) pairs; the records
that share a last utterance come from one dialogue, so they are grouped back into dialogues here: a contradiction
dialogue (the last utterance against all of its speaker's earlier turns in the half), and its Remove-Contradicting-
Turns version (the evidence taken out, so nothing contradicts). Each is judged by ``ContradictionDetector`` itself
(sentence pairing, the product's scoring), so τ is set for exactly the score the guard compares with it.

The default rule (``--rule false-alarm``): in a live chat most replies are consistent, so τ is the score that at
most 5 % of consistent dialogues reach - the larger of the 95th percentiles over DECODE's consistent dialogues and
over real held-out chit-chat conversations - with recall reported beside it. ``--rule accuracy`` keeps the old
accuracy-best τ on balanced pairs. rgm is never read here.
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from guard.records import Dialogue, Turn
from guard.training import real_data as rd
from guard.training.calibration import best_threshold

#: the share of consistent dialogues the operating point may flag (docs/experiments/2026-11-24-detector-v3.md)
FALSE_ALARM_TARGET = 0.05
#: held-out chit-chat dialogues in the consistent calibration set
CHITCHAT_DIALOGUES = 600


def decode_dev_halves() -> tuple[list[rd.LabelledPair], list[rd.LabelledPair]]:
    """(calibration half, reporting half) of DECODE dev: even- and odd-numbered records."""
    pairs = rd.load_corpus("decode", "dev")
    return pairs[0::2], pairs[1::2]


@dataclass(frozen=True)
class SpeakerDialogue:
    """One speaker's earlier utterances and the last utterance judged against them (DECODE's structured view)."""

    earlier: tuple[str, ...]
    last: str
    evidence: tuple[int, ...] = ()  # positions in ``earlier`` that the last utterance contradicts

    @property
    def contradicts(self) -> bool:
        return bool(self.evidence)

    def without_evidence(self) -> SpeakerDialogue:
        """Remove-Contradicting-Turns: the same dialogue with its evidence taken out (consistent)."""
        kept = tuple(t for i, t in enumerate(self.earlier) if i not in self.evidence)
        return SpeakerDialogue(kept, self.last)

    def as_dialogue(self, dialogue_id: str) -> Dialogue:
        turns = [Turn(i, "speaker", text) for i, text in enumerate((*self.earlier, self.last))]
        return Dialogue(dialogue_id, turns, evidence=list(self.evidence), label=self.contradicts)


def decode_dialogues(pairs: Sequence[rd.LabelledPair]) -> list[SpeakerDialogue]:
    """DECODE pairs grouped back into dialogues by their last utterance (first-seen order, deterministic)."""
    groups: dict[str, list[rd.LabelledPair]] = {}
    for pair in pairs:
        groups.setdefault(pair.hypothesis, []).append(pair)
    return [SpeakerDialogue(tuple(p.premise for p in group), last,
                            tuple(i for i, p in enumerate(group) if p.is_contradiction))
            for last, group in groups.items()]


def rct_dialogues(dialogues: Sequence[SpeakerDialogue]) -> list[SpeakerDialogue]:
    """Contradiction dialogues with their evidence removed, where an earlier turn is left to judge against."""
    return [d.without_evidence() for d in dialogues if d.contradicts and len(d.evidence) < len(d.earlier)]


def consistent_dialogues(dialogues: Sequence[SpeakerDialogue]) -> list[SpeakerDialogue]:
    """RCT versions of the contradiction dialogues plus the dialogues that never contradicted."""
    return rct_dialogues(dialogues) + [d for d in dialogues if not d.contradicts]


def chitchat_dialogues(count: int = CHITCHAT_DIALOGUES, seed: int = 13) -> list[SpeakerDialogue]:
    """Real consistent dialogues: in held-out chit-chat conversations (the intra threshold's held-out side,
    never trained on), a speaker's utterance against that speaker's earlier utterances."""
    from guard.training.calibration import HELDOUT_FRACTION
    from guard.training.sources import load_chitchat, split_conversations, usable_utterance

    _, held = split_conversations(load_chitchat(), HELDOUT_FRACTION, seed=13)
    rng = random.Random(seed)
    made = []
    for conv in rng.sample(held, len(held)):
        positions = [i for i, (speaker, text) in enumerate(zip(conv.speakers, conv.utterances))
                     if usable_utterance(text) and sum(s == speaker for s in conv.speakers[:i]) >= 2]
        if not positions:
            continue
        at = rng.choice(positions)
        speaker = conv.speakers[at]
        earlier = tuple(t for s, t in zip(conv.speakers[:at], conv.utterances[:at]) if s == speaker and t.strip())
        made.append(SpeakerDialogue(earlier, conv.utterances[at]))
        if len(made) >= count:
            break
    return made


def dialogue_scores(scorer, dialogues: Sequence[SpeakerDialogue]) -> np.ndarray:
    """The product detector's score (sentence pairing, no categories) for each dialogue's last utterance."""
    from guard.judge.pipeline import Guard

    guard = Guard.over(scorer)
    settings = guard.settings(mode="flag", threshold=0.5, intra_threshold=0.5, pairing="sentence", checks=False)
    records = [d.as_dialogue(f"d{i}") for i, d in enumerate(dialogues)]
    guard.prepare([t for r in records for t in r.turns], [], settings)
    return np.array([guard.verdict_on_dialogue(r, settings).score for r in records])


def operating_point(scorer, false_alarm: float = FALSE_ALARM_TARGET) -> dict:
    """τ for a false-alarm rate on consistent dialogues (even half of DECODE dev + held-out chit-chat), with the
    recall on the even half's contradiction dialogues reported beside it."""
    calibration, _ = decode_dev_halves()
    dialogues = decode_dialogues(calibration)
    consistent = consistent_dialogues(dialogues)
    contradicting = [d for d in dialogues if d.contradicts]
    chitchat = chitchat_dialogues()
    decode_scores = dialogue_scores(scorer, consistent)
    chat_scores = dialogue_scores(scorer, chitchat)
    contradiction_scores = dialogue_scores(scorer, contradicting)
    quantiles = {"decode": float(np.quantile(decode_scores, 1.0 - false_alarm)),
                 "chitchat": float(np.quantile(chat_scores, 1.0 - false_alarm))}
    threshold = min(max(quantiles.values()), 0.999)
    return {"threshold": round(threshold, 4), "rule": "false-alarm", "false_alarm_target": false_alarm,
            "quantiles": {k: round(v, 4) for k, v in quantiles.items()},
            "fire_rate_decode_consistent": round(float(np.mean(decode_scores >= threshold)), 4),
            "fire_rate_chitchat": round(float(np.mean(chat_scores >= threshold)), 4),
            "recall_decode_contradictions": round(float(np.mean(contradiction_scores >= threshold)), 4),
            "dialogues": {"decode_consistent": len(consistent), "chitchat": len(chitchat),
                          "decode_contradictions": len(contradicting)},
            "calibrated_on": "consistent dialogues: DECODE dev's even half regrouped by last utterance "
                             "(Remove-Contradicting-Turns versions and never-contradicting groups) and held-out "
                             "chit-chat conversations; recall on the even half's contradiction dialogues; never rgm"}


def detector_scores(scorer, pairs: Sequence[rd.LabelledPair], pairing: str = "sentence") -> np.ndarray:
    """The structured detector's history score for each pair read as a same-speaker dialogue."""
    from guard.judge.pipeline import Guard
    from guard.records import Turn

    guard = Guard.over(scorer)
    settings = guard.settings(mode="flag", threshold=0.5, intra_threshold=0.5, pairing=pairing, checks=False)
    scores = []
    for pair in pairs:
        verdict = guard.verdict([Turn(0, "speaker", pair.premise)], pair.hypothesis, speaker="speaker",
                                settings=settings)
        scores.append(verdict.score)
    return np.array(scores)


def accuracy_point(scorer) -> dict:
    """The accuracy-best τ on the even half's pairs, each read as a two-turn dialogue (``--rule accuracy``)."""
    calibration, _ = decode_dev_halves()
    labels = np.array([p.is_contradiction for p in calibration])
    scores = detector_scores(scorer, calibration)
    threshold, accuracy = best_threshold(scores, labels)
    return {"threshold": round(threshold, 4), "rule": "accuracy", "accuracy": round(accuracy, 4),
            "pairs": len(calibration), "accuracy_at_0.5": round(float(np.mean((scores >= 0.5) == labels)), 4),
            "calibrated_on": "the even-numbered half of DECODE dev (human-written dialogue contradictions, "
                             "never trained on), each pair judged by the structured detector; never rgm"}


RULES = {"false-alarm": operating_point, "accuracy": accuracy_point}

#: share of the strong model's firing pairs the fast model must pass up (docs/experiments/2026-11-24-detector-v3.md)
CASCADE_RECALL = 0.98
#: candidates in one guard turn, as the chat page generates them
CANDIDATES_PER_TURN = 4


def product_pairs(pairs: Sequence[rd.LabelledPair]) -> list[tuple[str, str]]:
    """The (premise sentence, reply sentence) pairs the structured detector scores for each DECODE pair."""
    from guard.language import text as textsplit

    textsplit.prepare([t for p in pairs for t in (p.premise, p.hypothesis)])
    return [(a, b) for p in pairs for a in textsplit.sentences(p.premise) for b in textsplit.sentences(p.hypothesis)]


def cascade_point(fast, strong, strong_threshold: float) -> dict:
    """Escalation point and cap of the fast/strong cascade, by the rule written before the results.

    * escalate_at: the largest fast score such that at least ``CASCADE_RECALL`` of the sentence pairs of DECODE dev's
      even half that the strong model scores >= its τ get at least that score from the fast model;
    * max_escalated: the 95th percentile of pairs at or above escalate_at in one guard turn (4 candidates) over the
      probe suite's dialogues, rounded up, at least 4.
    """
    from guard.eval.datasets import read_dataset
    from guard.judge.pipeline import Guard

    calibration, _ = decode_dev_halves()
    pairs = list(dict.fromkeys(product_pairs(calibration)))
    fast_scores, strong_scores = fast.contradiction_proba(pairs), strong.contradiction_proba(pairs)
    firing = fast_scores[strong_scores >= strong_threshold]
    escalate_at = float(np.quantile(firing, 1.0 - CASCADE_RECALL)) if len(firing) else 0.5
    escalate_at = float(np.floor(escalate_at * 1000) / 1000)  # rounded down: never below the recall asked for

    records = read_dataset("decode", Path(__file__).resolve().parents[1] / "data" / "probe_suite.jsonl")
    replies = [r.turns[-1].text for r in records]
    guard = Guard.over(fast)
    settings = guard.settings(mode="flag", threshold=0.5, intra_threshold=0.5, checks=True)
    per_turn = []
    for i, record in enumerate(records):
        candidates = [replies[(i + k) % len(replies)] for k in range(CANDIDATES_PER_TURN)]
        report = guard.judge(record.history, candidates, speaker=record.turns[-1].agent_id, settings=settings)
        verdicts = [c.verdict for c in report.candidates]
        scores = [p.score for v in verdicts for p in v.pair_scores + (v.details.intra.pairs if v.details.intra else ())]
        per_turn.append(sum(s >= escalate_at for s in scores))
    cap = max(4, int(np.ceil(np.quantile(per_turn, 0.95))))
    return {"escalate_at": escalate_at, "max_escalated": cap, "recall_target": CASCADE_RECALL,
            "strong_firing_pairs": int(len(firing)), "pairs": len(pairs),
            "escalated_share_of_pairs": round(float(np.mean(fast_scores >= escalate_at)), 4),
            "escalated_per_turn_p50": float(np.median(per_turn)), "escalated_per_turn_p95": float(np.quantile(per_turn, 0.95)),
            "calibrated_on": "sentence pairs of DECODE dev's even half (escalation point) and guard turns of 4 "
                             "candidates over the probe suite's dialogues (cap); never rgm"}


def calibrate_cascade(strong_folder: Path, write: bool = True) -> dict:
    """Write the cascade's escalation point and cap into the strong detector's guard_config.json."""
    from guard.config import JudgeSettings, edited_guard_config
    from guard.models.loading import load_scorer
    from guard.models.registry import read_config

    result = cascade_point(load_scorer("embedded-minilm"), load_scorer(str(strong_folder)),
                           JudgeSettings.resolve(read_config(strong_folder)).threshold)
    if write:
        with edited_guard_config(strong_folder) as config:
            config["cascade"] = result
    return result


def calibrate(folder: Path, write: bool = True, rule: str = "false-alarm") -> dict:
    """τ for ``folder``'s checkpoint by ``rule``; written with its figures into the folder's guard_config.json."""
    from guard.config import edited_guard_config
    from guard.models.loading import load_scorer

    scorer = load_scorer(str(folder))
    result = RULES[rule](scorer)
    if write:
        with edited_guard_config(folder) as config:
            config["threshold"] = result["threshold"]
            config["pairing"] = "sentence"
            key = "decode_dev" if rule == "accuracy" else "operating_point"
            config.setdefault("calibration", {})[key] = result
            config["calibration"]["chosen"] = key
            config["calibrated_on"] = result["calibrated_on"]
    return result


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m guard.training calibrate-decode", description=__doc__.splitlines()[0])
    parser.add_argument("folder", help="a detector checkpoint folder (its guard_config.json gets the threshold)")
    parser.add_argument("--rule", choices=sorted(RULES), default="false-alarm",
                        help="false-alarm: tau for <= 5%% false alarms on consistent dialogues (default); "
                             "accuracy: the accuracy-best tau on balanced pairs")
    parser.add_argument("--cascade", action="store_true",
                        help="instead of tau: the fast/strong cascade's escalation point and cap, with FOLDER as the "
                             "strong detector (its tau must be set first)")
    parser.add_argument("--dry-run", action="store_true", help="print the result without writing it")
    args = parser.parse_args(argv)
    if args.cascade:
        print(json.dumps(calibrate_cascade(Path(args.folder), write=not args.dry_run), indent=2))
        return
    print(json.dumps(calibrate(Path(args.folder), write=not args.dry_run, rule=args.rule), indent=2))


if __name__ == "__main__":
    main()
