"""Behavioural probes for contradiction detectors, CheckList style (Ribeiro et al. 2020).

Each probe maps one ``Dialogue`` to zero or more variants, each with an expectation: the label
stays (``"invariant"``, CheckList's INV) or flips (``"flip"``, a directional expectation). The
variant's own ``label`` is the label it should get, so a report can count both how many variants
got the expected label and how many predictions moved as expected relative to the original.

* ``A2T`` and ``rct``: DECODE's checklist sets, exactly as Nie et al. (2021, §3.3) define them.
  A2T inserts a pair of utterances sampled from other dialogues between the contradicting
  utterances (still a contradiction); RCT removes every evidence turn, each with its partner
  utterance so the speakers keep alternating (now no contradiction).
* ``Negation`` / ``Antonym`` / ``Synonym``: CDConv's perturbations (Zheng et al. 2022, §4.1),
  applied to a restatement of something the speaker said earlier: negating it or swapping a word
  for its antonym makes it contradict (flip); a noun swapped for a synonym keeps it consistent.
  The perturbations themselves are ``guard.language.perturb``'s (spaCy finds the clause, WordNet the words).
"""

from __future__ import annotations

import copy
import random
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from guard.language.perturb import antonym, first_statement, negate, synonym
from guard.records import Dialogue, Turn

EXPECTATIONS = ("invariant", "flip")


@dataclass
class ProbeCase:
    """A variant made by ``probe`` from ``original``; ``variant.label`` is the label it should get."""

    probe: str
    expectation: str  # "invariant" | "flip"
    original: Dialogue
    variant: Dialogue


Probe = Callable[[Dialogue], list[ProbeCase]]


def _variant(original: Dialogue, suffix: str, turns: list[Turn], label: bool, evidence: list[int],
             probe: str, expectation: str, **meta) -> ProbeCase:
    dialogue = Dialogue(
        record_id=f"{original.record_id}#{suffix}",
        turns=turns,
        label=label,
        evidence=evidence,
        persona=list(original.persona),
        category=_category(original, label),
        meta={**copy.deepcopy(original.meta), "probe": probe, "expectation": expectation,
              "source_record_id": original.record_id, **meta},
    )
    return ProbeCase(probe, expectation, original, dialogue)


def _category(original: Dialogue, label: bool) -> str:
    """A contradiction keeps the original's category (intra / role stay); otherwise "none"."""
    if not label:
        return "none"
    return original.category if original.category in ("intra", "role", "history") else "history"


def _is_contradiction_with_evidence(d: Dialogue) -> bool:
    return bool(d.label) and bool(d.evidence) and len(d.turns) >= 2


# ---------------------------------------------------------------------------- A2T
class A2T:
    """Add Two Turns: a pair of utterances from other dialogues goes between the contradicting ones.

    The pair is a consecutive (utterance, reply) from another dialogue of ``pool``; it is inserted
    at a random position after the last evidence turn and before the judged turn, its speakers
    renamed so the dialogue keeps alternating. Original turns keep their turn_ids (so the evidence
    still points at them); the inserted ones get fresh ids. The label stays a contradiction.
    """

    name = "a2t"

    def __init__(self, pool: Sequence[Dialogue], seed: int = 0) -> None:
        self.seed = seed
        self.pairs: list[tuple[str, Turn, Turn]] = []
        for d in pool:
            for a, b in zip(d.turns, d.turns[1:]):
                if a.agent_id != b.agent_id:
                    self.pairs.append((d.record_id, a, b))
        if not self.pairs:
            raise ValueError("A2T needs a pool with at least one two-speaker dialogue to sample utterances from")

    def __call__(self, dialogue: Dialogue) -> list[ProbeCase]:
        if not _is_contradiction_with_evidence(dialogue):
            return []
        speakers = list(dict.fromkeys(t.agent_id for t in dialogue.turns))
        if len(speakers) != 2:
            return []  # alternation is only defined for two speakers
        rng = random.Random(f"a2t:{self.seed}:{dialogue.record_id}")
        position = {t.turn_id: i for i, t in enumerate(dialogue.turns)}
        last_index = len(dialogue.turns) - 1
        after = max(position[e] for e in dialogue.evidence if e in position)
        insert_at = rng.randint(after + 1, last_index)  # before turns[insert_at]; always before the last turn
        candidates = [p for p in self.pairs if p[0] != dialogue.record_id]
        if not candidates:
            return []
        source_id, first, second = rng.choice(candidates)
        before = dialogue.turns[insert_at - 1].agent_id
        other = speakers[1] if before == speakers[0] else speakers[0]
        next_id = max(t.turn_id for t in dialogue.turns) + 1
        inserted = [Turn(next_id, other, first.text), Turn(next_id + 1, before, second.text)]
        turns = dialogue.turns[:insert_at] + inserted + dialogue.turns[insert_at:]
        return [_variant(
            dialogue, "a2t", turns, True, list(dialogue.evidence), self.name, "invariant",
            inserted_at=insert_at, inserted_from=[source_id, first.turn_id, second.turn_id],
        )]


# ---------------------------------------------------------------------------- RCT
def rct(dialogue: Dialogue) -> list[ProbeCase]:
    """Remove Contradicting Turns: drop each evidence turn with its partner utterance.

    A turn of conversation is a pair of utterances: each evidence utterance goes together with the
    utterance it answers (the one before it, by the other speaker), or with its reply when it opens
    the dialogue, so the speakers keep alternating. The judged last turn stays. Variants with no
    history left are skipped (nothing would remain to judge against).
    """
    if not _is_contradiction_with_evidence(dialogue):
        return []
    turns = dialogue.turns
    last = len(turns) - 1
    position = {t.turn_id: i for i, t in enumerate(turns)}
    remove: set[int] = set()
    for e in sorted(dialogue.evidence):
        i = position.get(e)
        if i is None or i == last:
            continue
        remove.add(i)
        partner = None
        for j in (i - 1, i + 1):
            if 0 <= j < last and j not in remove and turns[j].agent_id != turns[i].agent_id:
                partner = j
                break
        if partner is not None:
            remove.add(partner)
    kept = [t for i, t in enumerate(turns) if i not in remove]
    if len(kept) < 2:
        return []
    removed_ids = sorted(turns[i].turn_id for i in remove)
    return [_variant(dialogue, "rct", kept, False, [], "rct", "flip", removed_turn_ids=removed_ids)]


# ---------------------------------------------------------------------------- restatement perturbations
def restatement(dialogue: Dialogue) -> tuple[Turn, str] | None:
    """The earlier turn and sentence the last speaker could restate consistently.

    ``meta["restates"]`` (a turn_id) picks the turn; otherwise the speaker's latest earlier turn
    with a declarative sentence. The sentence is the first declarative one of that turn.
    """
    speaker = dialogue.last.agent_id
    earlier = [t for t in dialogue.history if t.agent_id == speaker]
    wanted = dialogue.meta.get("restates")
    if wanted is not None:
        earlier = [t for t in earlier if t.turn_id == wanted]
    for turn in reversed(earlier):
        sentence = first_statement(turn.text)
        if sentence is not None:
            return turn, sentence
    return None


class _RestatementPerturbation:
    """Replace the last turn by a perturbed restatement of an earlier same-speaker sentence."""

    name = ""
    expectation = ""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def perturb(self, sentence: str, rng: random.Random) -> str | None:
        raise NotImplementedError

    def __call__(self, dialogue: Dialogue) -> list[ProbeCase]:
        if dialogue.label or len(dialogue.turns) < 2:
            return []  # the base must be consistent for the expectation to be known
        found = restatement(dialogue)
        if found is None:
            return []
        source, sentence = found
        rng = random.Random(f"{self.name}:{self.seed}:{dialogue.record_id}")
        changed = self.perturb(sentence, rng)
        if not changed or changed.strip().lower() == sentence.lower():
            return []
        last = dialogue.last
        base_turns = dialogue.history + [Turn(last.turn_id, last.agent_id, sentence)]
        base = Dialogue(f"{dialogue.record_id}#restate", base_turns, label=False, evidence=[],
                        persona=list(dialogue.persona), category="none",
                        meta={**dialogue.meta, "restates": source.turn_id})
        flips = self.expectation == "flip"
        turns = dialogue.history + [Turn(last.turn_id, last.agent_id, changed)]
        return [_variant(base, self.name, turns, flips, [source.turn_id] if flips else [],
                         self.name, self.expectation, restates=source.turn_id, restated_text=sentence)]


class Negation(_RestatementPerturbation):
    name, expectation = "negation", "flip"

    def perturb(self, sentence: str, rng: random.Random) -> str | None:
        return negate(sentence)


class Antonym(_RestatementPerturbation):
    name, expectation = "antonym", "flip"

    def perturb(self, sentence: str, rng: random.Random) -> str | None:
        return antonym(sentence, rng)


class Synonym(_RestatementPerturbation):
    name, expectation = "synonym", "invariant"

    def perturb(self, sentence: str, rng: random.Random) -> str | None:
        return synonym(sentence, rng)


def make_probe(name: str, pool: Sequence[Dialogue] = (), seed: int = 0) -> Probe:
    """A probe by name; A2T samples its inserted utterances from ``pool``."""
    if name == "a2t":
        return A2T(pool, seed=seed)
    if name == "rct":
        return rct
    table = {"negation": Negation, "antonym": Antonym, "synonym": Synonym}
    if name not in table:
        raise ValueError(f"unknown probe {name!r}; choose one of {PROBES}")
    return table[name](seed=seed)


PROBES = ("a2t", "rct", "negation", "antonym", "synonym")


def apply_probe(probe: Probe, dialogues: Sequence[Dialogue]) -> list[ProbeCase]:
    return [case for d in dialogues for case in probe(d)]


# ---------------------------------------------------------------------------- report
@dataclass
class ProbeReport:
    """How many variants of one probe held.

    ``label_held``: the prediction on the variant equals its expected label (DECODE's A2T / RCT
    accuracy). ``checklist_held``: relative to the prediction on the original, an invariant
    variant kept it and a flip variant changed it (CheckList INV / DIR).
    """

    probe: str
    expectation: str
    n: int
    label_held: int
    checklist_held: int | None = None
    failures: list[str] = field(default_factory=list)

    @property
    def label_rate(self) -> float:
        return self.label_held / self.n if self.n else float("nan")

    @property
    def checklist_rate(self) -> float | None:
        return None if self.checklist_held is None or not self.n else self.checklist_held / self.n

    def as_dict(self) -> dict:
        return {"probe": self.probe, "expectation": self.expectation, "n": self.n,
                "label_held": self.label_held, "label_rate": self.label_rate,
                "checklist_held": self.checklist_held, "checklist_rate": self.checklist_rate,
                "failures": self.failures}


def report(cases: Sequence[ProbeCase], variant_predictions: Sequence[bool],
           original_predictions: Sequence[bool] | None = None) -> list[ProbeReport]:
    """One ``ProbeReport`` per probe, from predictions on the variants (and on the originals)."""
    if len(variant_predictions) != len(cases):
        raise ValueError("one prediction per probe case is needed")
    if original_predictions is not None and len(original_predictions) != len(cases):
        raise ValueError("one original prediction per probe case is needed")
    grouped: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, case in enumerate(cases):
        grouped[(case.probe, case.expectation)].append(i)
    out = []
    for (probe, expectation), indices in grouped.items():
        label_held = sum(bool(variant_predictions[i]) == bool(cases[i].variant.label) for i in indices)
        checklist = None
        if original_predictions is not None:
            moved = [bool(variant_predictions[i]) != bool(original_predictions[i]) for i in indices]
            checklist = sum(m if expectation == "flip" else not m for m in moved)
        failures = [cases[i].variant.record_id for i in indices
                    if bool(variant_predictions[i]) != bool(cases[i].variant.label)]
        out.append(ProbeReport(probe, expectation, len(indices), label_held, checklist, failures))
    return out
