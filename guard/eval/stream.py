"""A detector judged the way a live chat sees it: every bot turn of real human-bot conversations, in order.

A live guard judges every bot turn, and most are consistent, so balanced pair accuracy hides what a class sees: a
badge that is wrong, or a contradiction that passes. This module holds the live-stream dev set's records and its
report:

* which real conversations are labelled (``sample_conversations``: a seeded sample of ConvAI2's wild evaluation,
  ``../shared/data/bots/convai2_wild.jsonl``), and which half each belongs to (``split_of``: calibration, where an
  operating point may be set, or evaluation, where it is only measured). The choice is fixed in
  ``guard/data/bot_stream/sample.json`` before any score is looked at; training never sees these conversations.
* the labels (``BotTurnLabel``, ``read_labels``): one a bot turn, made by people (two passes, then settled) - ids,
  labels and evidence only; the conversations' text stays in the shared data folder.
* ``stream_turns``: each bot turn as the dialogue a live guard would have judged (its history and the persona).
* ``stream_report``: badges per 100 bot turns, precision, recall, false alarms on consistent bot turns, AUC.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from guard.records import Dialogue, Turn
from guard.vocabulary import Category

STREAM_DIR = Path(__file__).resolve().parent.parent / "data" / "bot_stream"  # guard/data/bot_stream
SAMPLE_FILE = STREAM_DIR / "sample.json"
LABELS_FILE = STREAM_DIR / "labels.jsonl"
#: the unlabelled conversations this dev set is drawn from, inside the shared data folder
CONVAI2_RELATIVE = Path("bots") / "convai2_wild.jsonl"
SPLITS = ("calibration", "evaluation")
BOT = "bot"


def convai2_path() -> Path | None:
    """``<shared data>/bots/convai2_wild.jsonl``, or None where the shared data folder is absent."""
    from embedded import shared_data_dir

    base = shared_data_dir()
    path = base / CONVAI2_RELATIVE if base else None
    return path if path is not None and path.is_file() else None


def read_conversations(path: Path | None = None) -> list[Dialogue]:
    """The ConvAI2 wild-evaluation conversations as dialogues (every turn, the bot's persona)."""
    from guard.eval.datasets import read_decode

    path = path or convai2_path()
    if path is None:
        raise FileNotFoundError("the shared data folder has no bots/convai2_wild.jsonl: set GUARD_SHARED_DATA or "
                                "place the data at ../shared/data beside the checkout")
    return read_decode(Path(path))


def bot_turn_count(dialogue: Dialogue) -> int:
    return sum(t.agent_id == BOT for t in dialogue.turns)


def sample_conversations(dialogues: Sequence[Dialogue], count: int, seed: int, min_bot_turns: int,
                         max_bot_turns: int) -> list[str]:
    """A seeded random sample of conversation ids among those with ``min_bot_turns``..``max_bot_turns`` bot turns.

    The bounds keep one 450-turn conversation from being half the set and leave out greetings-only chats.
    """
    eligible = [d for d in dialogues if min_bot_turns <= bot_turn_count(d) <= max_bot_turns]
    if count > len(eligible):
        raise ValueError(f"asked for {count} conversations, only {len(eligible)} have "
                         f"{min_bot_turns}-{max_bot_turns} bot turns")
    return [d.record_id for d in random.Random(seed).sample(eligible, count)]


def split_of(record_id: str) -> str:
    """Calibration or evaluation, by a hash of the conversation id (fixed before any score is seen)."""
    digest = hashlib.sha256(record_id.encode("utf-8")).digest()
    return SPLITS[digest[0] % 2]


@dataclass(frozen=True)
class StreamSample:
    """Which conversations the live-stream dev set holds, and how they were chosen."""

    record_ids: tuple[str, ...]
    seed: int
    min_bot_turns: int
    max_bot_turns: int
    source: str

    def split(self, name: str) -> list[str]:
        if name not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}, got {name!r}")
        return [r for r in self.record_ids if split_of(r) == name]


def read_sample(path: Path = SAMPLE_FILE) -> StreamSample:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return StreamSample(tuple(data["record_ids"]), int(data["seed"]), int(data["min_bot_turns"]),
                        int(data["max_bot_turns"]), str(data["source"]))


def labelled_record_ids(path: Path = SAMPLE_FILE) -> frozenset[str]:
    """Every conversation of the dev set (both halves): training data builders leave these out."""
    return frozenset(read_sample(path).record_ids) if Path(path).exists() else frozenset()


@dataclass
class BotTurnLabel:
    """People's settled judgement of one bot turn: does it contradict the persona or an earlier bot turn?"""

    record_id: str
    turn_id: int
    contradiction: bool
    category: Category = Category.NONE
    evidence_turns: list[int] = field(default_factory=list)  # earlier bot turn ids
    evidence_persona: list[int] = field(default_factory=list)  # 0-based persona line indices
    note: str = ""

    def __post_init__(self) -> None:
        self.category = Category(self.category)
        if self.contradiction and self.category == Category.NONE:
            raise ValueError(f"{self.record_id} turn {self.turn_id}: a contradiction needs its category")
        if not self.contradiction:
            self.category, self.evidence_turns, self.evidence_persona = Category.NONE, [], []

    @property
    def split(self) -> str:
        return split_of(self.record_id)


def read_labels(path: Path = LABELS_FILE) -> list[BotTurnLabel]:
    labels = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            row = json.loads(line)
            try:
                labels.append(BotTurnLabel(**row))
            except (TypeError, ValueError) as exc:
                raise ValueError(f"{path}:{number}: {exc}") from None
    return labels


def write_labels(labels: Sequence[BotTurnLabel], path: Path = LABELS_FILE, notes: bool = False) -> None:
    """The labels as JSON lines; without ``notes`` the annotators' notes (which quote the conversations, whose text
    stays out of the repository) are left out."""
    with open(path, "w", encoding="utf-8") as handle:
        for label in sorted(labels, key=lambda x: (x.record_id, x.turn_id)):
            row = asdict(label)
            row["category"] = str(label.category)
            if not notes:
                del row["note"]
            handle.write(json.dumps(row) + "\n")


@dataclass
class StreamTurn:
    """One bot turn as a live guard judged it: the dialogue up to and including the turn, and its label."""

    dialogue: Dialogue
    label: BotTurnLabel | None


def stream_turns(dialogues: Sequence[Dialogue], labels: Sequence[BotTurnLabel] | None = None,
                 split: str | None = None) -> list[StreamTurn]:
    """Every bot turn of the labelled conversations (or of ``dialogues`` when no labels are given), in order.

    With ``labels``, only labelled conversations are kept, optionally only one ``split``; a bot turn without a label
    in a labelled conversation is an error (the stream must be judged whole).
    """
    by_turn = {(x.record_id, x.turn_id): x for x in labels or ()}
    wanted = {x.record_id for x in labels} if labels is not None else None
    out = []
    for dialogue in dialogues:
        if wanted is not None and dialogue.record_id not in wanted:
            continue
        if split is not None and split_of(dialogue.record_id) != split:
            continue
        for k, turn in enumerate(dialogue.turns):
            if turn.agent_id != BOT:
                continue
            label = by_turn.get((dialogue.record_id, turn.turn_id))
            if labels is not None and label is None:
                raise ValueError(f"{dialogue.record_id} turn {turn.turn_id} is a bot turn without a label")
            out.append(StreamTurn(Dialogue(record_id=f"{dialogue.record_id}#{turn.turn_id}",
                                           turns=[Turn(t.turn_id, t.agent_id, t.text) for t in dialogue.turns[:k + 1]],
                                           label=None if label is None else label.contradiction,
                                           evidence=None if label is None else list(label.evidence_turns),
                                           persona=list(dialogue.persona), meta=dict(dialogue.meta)), label))
    return out


def stream_report(labels: Sequence[bool], scores: Sequence[float], flagged: Sequence[bool]) -> dict:
    """The live-stream figures: badges per 100 bot turns, precision, recall, false alarms on consistent bot turns,
    and AUC over the scores. ``labels`` (True = people found a contradiction), ``scores`` and ``flagged`` (the
    detector's decision) describe the same bot turns."""
    from sklearn.metrics import roc_auc_score

    y = np.asarray(labels, dtype=bool)
    s = np.asarray(scores, dtype=float)
    f = np.asarray(flagged, dtype=bool)
    if not y.shape == s.shape == f.shape:
        raise ValueError(f"{len(y)} labels, {len(s)} scores and {len(f)} decisions")
    n, positives = len(y), int(y.sum())
    true_pos = int((f & y).sum())
    nan = float("nan")
    return {
        "bot_turns": n,
        "contradictions": positives,
        "badges_per_100": round(100.0 * f.mean(), 2) if n else nan,
        "precision": round(true_pos / f.sum(), 4) if f.any() else nan,
        "recall": round(true_pos / positives, 4) if positives else nan,
        "false_alarm_rate": round(float((f & ~y).sum()) / (n - positives), 4) if n > positives else nan,
        "auc": round(float(roc_auc_score(y, s)), 4) if 0 < positives < n else nan,
    }


def false_alarm_threshold(consistent_scores: Sequence[float], rate: float) -> float:
    """The smallest τ (4 decimals) that flags at most ``rate`` of the consistent bot turns' scores."""
    return threshold_allowing(consistent_scores, int(np.floor(rate * len(consistent_scores) + 1e-9)))


def threshold_allowing(consistent_scores: Sequence[float], allowed: int) -> float:
    """The smallest τ (rounded up to 4 decimals) at which at most ``allowed`` of the scores reach τ."""
    s = np.sort(np.asarray(consistent_scores, dtype=float))
    if allowed >= len(s):
        return 0.0001
    above = s[len(s) - max(allowed, 0) - 1]  # the highest score that must stay below τ
    return min(float(np.ceil((above + 1e-6) * 10_000) / 10_000), 0.9999)


# ------------------------------------------------------------------------------------------- judging the stream
@dataclass
class TurnScore:
    """What the product detector found for one bot turn, kept threshold-free so any operating point can be read off.

    ``premises`` holds the best pair score of every earlier bot turn / persona line paired with the turn
    (``"turn:3"``, ``"persona:0"``), so the evidence at any τ is the premises at or above it.
    """

    record_id: str
    turn_id: int
    history_score: float
    intra_score: float
    premises: dict[str, float] = field(default_factory=dict)
    category: str = "none"  # the detector's category at the threshold it was scored with
    n_pairs: int = 0
    #: the best pair against the turn that asked the user back, when only short replies followed (0: not so)
    own_question_score: float = 0.0
    #: 1.0 when the fact sheet found a clash (``guard.language.fact_sheet``), else 0.0 (a check without a score)
    fact_score: float = 0.0
    #: the best P(entailment) from a persona line to one of the turn's sentences (0.0: no persona): what sets τ_e
    persona_entailment: float = 0.0

    def flagged(self, threshold: float, intra_threshold: float, own_question_threshold: float = 1.0,
                fact_threshold: float = 2.0) -> bool:
        return (self.history_score >= threshold or self.intra_score >= intra_threshold
                or self.own_question_score >= own_question_threshold or self.fact_score >= fact_threshold)

    def score(self, intra_threshold: float, own_question_threshold: float = 1.0, fact_threshold: float = 2.0,
              fact_confidence: float = 0.0) -> float:
        """The verdict's score: the history score, or a check's score where that check fires (the fact check's
        is its confidence)."""
        return max(self.history_score, self.intra_score if self.intra_score >= intra_threshold else 0.0,
                   self.own_question_score if self.own_question_score >= own_question_threshold else 0.0,
                   fact_confidence if self.fact_score >= fact_threshold else 0.0)

    def evidence(self, threshold: float) -> tuple[list[int], list[int]]:
        """(earlier turn ids, persona lines) whose pairs reach ``threshold``."""
        turns = sorted(int(k.split(":")[1]) for k, v in self.premises.items() if k.startswith("turn:") and v >= threshold)
        persona = sorted(int(k.split(":")[1]) for k, v in self.premises.items()
                         if k.startswith("persona:") and v >= threshold)
        return turns, persona


def score_stream(guard, settings, turns: Sequence[StreamTurn], progress=None) -> list[TurnScore]:
    """Judge every bot turn against what came before it, as the live guard does (``Guard.judge`` with
    ``settings``). Scored, and the operating point set, with the guard the app judges with
    (``guard.judge.pipeline.load_guard(name)``, its prefilter), so a threshold calibrated here is the one the app applies."""
    from guard.vocabulary import PremiseSource

    guard.prepare([t for st in turns for t in st.dialogue.turns], [p for st in turns for p in st.dialogue.persona],
                  settings)
    out = []
    for st in progress(turns) if progress else turns:
        verdict = guard.verdict_on_dialogue(st.dialogue, settings)
        premises: dict[str, float] = {}
        for pair in verdict.pair_scores:
            key = f"{'persona' if pair.source == PremiseSource.PERSONA else 'turn'}:{pair.turn_id}"
            premises[key] = max(premises.get(key, 0.0), round(float(pair.score), 5))
        intra = verdict.details.intra
        record_id, _, turn_id = st.dialogue.record_id.rpartition("#")
        out.append(TurnScore(record_id, int(turn_id), round(float(verdict.details.history_score), 5),
                             round(float(intra.score), 5) if intra is not None else 0.0, premises,
                             str(verdict.category), verdict.details.n_pairs,
                             round(float(verdict.details.own_question_score or 0.0), 5),
                             1.0 if verdict.details.fact_clashes else 0.0,
                             round(float(verdict.details.persona_entailment or 0.0), 5)))
    return out


#: the share of the calibration half's consistent bot turns the operating point may flag, in all and by the intra
#: check alone (docs/experiments/2026-11-24-detector-v4.md, written before any result)
STREAM_FALSE_ALARM = 0.05
STREAM_INTRA_FALSE_ALARM = 0.01


def stream_operating_point(scores: Sequence[TurnScore], labels: Sequence[bool], false_alarm: float = STREAM_FALSE_ALARM,
                           intra_false_alarm: float = STREAM_INTRA_FALSE_ALARM) -> dict:
    """The operating point on a labelled bot-turn stream (the calibration half).

    The category checks get their own thresholds first: at most ``intra_false_alarm`` of the consistent bot turns
    fire by the intra-sentence check alone, and as many by the own-question role check alone (the bot answering the
    question it asked back). Then τ is the smallest threshold at which the whole decision (history score ≥ τ, or a
    category check) flags at most ``false_alarm`` of the consistent bot turns. The category thresholds are not tied
    to τ: a high τ no longer silences them.
    """
    y = np.asarray(labels, dtype=bool)
    consistent = [s for s, label in zip(scores, y) if not label]
    intra_tau = false_alarm_threshold([s.intra_score for s in consistent], intra_false_alarm)
    own_tau = false_alarm_threshold([s.own_question_score for s in consistent], intra_false_alarm)
    own_tau = max(own_tau, 0.5)  # never below an even chance: most turns are not in the situation (score 0)
    by_category = sum(s.intra_score >= intra_tau or s.own_question_score >= own_tau for s in consistent)
    allowed = int(np.floor(false_alarm * len(consistent) + 1e-9)) - by_category
    rest = [s.history_score for s in consistent if s.intra_score < intra_tau and s.own_question_score < own_tau]
    tau = threshold_allowing(rest, allowed) if rest else 0.5
    flagged = np.array([s.flagged(tau, intra_tau, own_tau) for s in scores])
    return {"threshold": tau, "intra_threshold": intra_tau, "own_question_threshold": own_tau,
            "rule": "bot-stream false-alarm",
            "false_alarm_target": false_alarm, "intra_false_alarm_target": intra_false_alarm,
            "bot_turns": len(scores), "consistent_bot_turns": len(consistent),
            "false_alarm_rate": round(float(flagged[~y].mean()), 4) if (~y).any() else float("nan"),
            "recall": round(float(flagged[y].mean()), 4) if y.any() else float("nan"),
            "calibrated_on": "every bot turn of the calibration half of the live-stream dev set (ConvAI2 wild "
                             "evaluation, labelled by two passes; guard/data/bot_stream), judged against its own "
                             "history and persona by the product detector; never its evaluation half"}
