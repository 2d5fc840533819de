"""Probes: DECODE's A2T/RCT as §3.3 defines them, CDConv perturbations, reports, the probe suite."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from guard.eval.datasets import read_dataset
from guard.eval.probes import A2T, Negation, Synonym, make_probe, rct, report
from guard.language.perturb import antonym, negate, synonym
from guard.records import Dialogue, Turn

SUITE = Path(__file__).resolve().parent.parent / "guard" / "data"


def dialogue(record_id: str, texts: list[str], label=None, evidence=None, meta=None) -> Dialogue:
    speakers = ("user", "bot")
    return Dialogue(record_id, [Turn(i, speakers[i % 2], t) for i, t in enumerate(texts)],
                    label=label, evidence=evidence, meta=meta or {})


CONTRA = dialogue("c1", ["hi", "I love dogs.", "cool", "I live in Ohio.", "nice", "I hate dogs."],
                  label=True, evidence=[1])
POOL = [CONTRA, dialogue("p1", ["what's up", "just cooking", "yum", "pasta tonight"]),
        dialogue("p2", ["hello there", "hey", "how's work", "busy as always"])]


def alternates(d: Dialogue) -> bool:
    return all(a.agent_id != b.agent_id for a, b in zip(d.turns, d.turns[1:]))


def test_a2t_inserts_a_foreign_pair_between_the_contradicting_turns():
    (case,) = A2T(POOL, seed=3)(CONTRA)
    v = case.variant
    assert case.expectation == "invariant" and v.label is True and v.evidence == [1]
    assert len(v.turns) == len(CONTRA.turns) + 2 and alternates(v)
    original_ids = [t.turn_id for t in CONTRA.turns]
    inserted = [t for t in v.turns if t.turn_id not in original_ids]
    assert len(inserted) == 2 and {t.turn_id for t in inserted} == {6, 7}  # fresh ids
    positions = [i for i, t in enumerate(v.turns) if t.turn_id in (6, 7)]
    evidence_pos = next(i for i, t in enumerate(v.turns) if t.turn_id == 1)
    assert evidence_pos < positions[0] and positions[1] < len(v.turns) - 1  # between evidence and last
    pool_texts = {t.text for d in POOL[1:] for t in d.turns}
    assert {t.text for t in inserted} <= pool_texts  # from other dialogues, never its own turns
    assert [t for t in v.turns if t.turn_id in original_ids] == CONTRA.turns  # originals untouched
    assert v.last == CONTRA.last and v.meta["source_record_id"] == "c1"


def test_a2t_is_deterministic_per_seed_and_skips_non_contradictions():
    a = A2T(POOL, seed=1)(CONTRA)[0].variant
    assert A2T(POOL, seed=1)(CONTRA)[0].variant == a
    assert any(A2T(POOL, seed=s)(CONTRA)[0].variant != a for s in range(2, 12))
    assert A2T(POOL)(dialogue("n", ["a", "b", "c", "d"], label=False, evidence=[])) == []
    with pytest.raises(ValueError):
        A2T([dialogue("solo", ["only one"])])


def test_rct_removes_each_evidence_turn_with_its_partner():
    (case,) = rct(CONTRA)
    v = case.variant
    assert case.expectation == "flip" and v.label is False and v.evidence == []
    assert [t.turn_id for t in v.turns] == [2, 3, 4, 5]  # "hi"/"I love dogs." removed as one exchange
    assert alternates(v) and v.last == CONTRA.last
    assert v.meta["removed_turn_ids"] == [0, 1]


def test_rct_pairs_an_opening_evidence_turn_with_its_reply_and_skips_empty_histories():
    d = Dialogue("c2", [Turn(0, "bot", "I love dogs."), Turn(1, "user", "ok"), Turn(2, "bot", "nice day"),
                        Turn(3, "user", "yes"), Turn(4, "bot", "I hate dogs.")], label=True, evidence=[0])
    (case,) = rct(d)
    assert [t.turn_id for t in case.variant.turns] == [2, 3, 4]
    short = dialogue("c3", ["I love dogs.", "I hate dogs."], label=True, evidence=[0])
    assert rct(short) == []  # nothing would be left to judge against


@pytest.mark.parametrize("text, expected", [
    ("I am a nurse.", "I am not a nurse."),
    ("She likes cats.", "She does not like cats."),
    ("I lived in Ohio for ten years.", "I did not live in Ohio for ten years."),
    ("I have been to Paris.", "I have not been to Paris."),
    ("I don't eat meat.", "I do eat meat."),
    ("I can't swim.", "I can swim."),
    ("Do you like dogs?", None),
])
def test_negate(text, expected):
    assert negate(text) == expected


def test_antonym_and_synonym_swaps_use_wordnet(wn):
    assert antonym("I love dogs.") == "I hate dogs."
    assert antonym("I live alone in a small apartment.") == "I live alone in a large apartment."
    assert synonym("I teach math at a middle school.") == "I teach mathematics at a middle school."
    assert synonym("I work as a teacher.") == "I work as an instructor."  # article agrees
    assert synonym("I love dogs.") is None  # no attested synonym for dog's first sense


def test_restatement_probes_flip_or_keep_a_consistent_dialogue(wn):
    base = dialogue("k1", ["do you teach?", "I teach math at a middle school.", "fun", "yes it is"],
                    label=False, evidence=[])
    (neg,) = Negation()(base)
    assert neg.expectation == "flip" and neg.variant.label is True and neg.variant.evidence == [1]
    assert neg.variant.last.text == "I do not teach math at a middle school."
    assert neg.original.last.text == "I teach math at a middle school."  # the restatement it perturbs
    (syn,) = Synonym()(base)
    assert syn.expectation == "invariant" and syn.variant.label is False
    assert Negation()(CONTRA) == []  # a contradiction has no consistent restatement to perturb


def test_report_counts_expected_labels_and_checklist_moves():
    cases = A2T(POOL)(CONTRA) + rct(CONTRA)
    (a2t, rct_report) = report(cases, variant_predictions=[True, True], original_predictions=[True, True])
    assert (a2t.probe, a2t.n, a2t.label_held, a2t.checklist_held) == ("a2t", 1, 1, 1)
    assert (rct_report.label_held, rct_report.checklist_held) == (0, 0)  # still flagged: RCT failed
    assert rct_report.failures == ["c1#rct"]
    with pytest.raises(ValueError):
        report(cases, [True])
    with pytest.raises(ValueError):
        make_probe("nope")


def test_probe_suite_is_balanced_and_its_evidence_points_at_the_planted_fact():
    suite = read_dataset("decode", SUITE / "probe_suite.jsonl")
    assert 100 <= len(suite) <= 200
    assert sum(d.label for d in suite) == len(suite) // 2
    for d in suite:
        fact = d.meta["fact_turn_id"]
        assert d.meta["made_by"] == "benchmarks/make_probe_suite.py"
        assert d.turns[[t.turn_id for t in d.turns].index(fact)].agent_id == d.last.agent_id == "bot"
        assert d.evidence == ([fact] if d.label else [])
        assert alternates(d)
    a2t = read_dataset("decode", SUITE / "probe_suite_a2t.jsonl")
    rct_set = read_dataset("decode", SUITE / "probe_suite_rct.jsonl")
    assert all(d.label for d in a2t) and not any(d.label for d in rct_set)
    assert len(a2t) == len(rct_set) == sum(d.label for d in suite)
    assert all(d.meta["fact_turn_id"] not in [t.turn_id for t in d.turns] for d in rct_set)


def test_probe_suite_is_reproducible_from_its_script(tmp_path):
    """Rebuilding the suite with the recorded seed gives the committed file, byte for byte."""
    from benchmarks.make_probe_suite import build_suite, load_conversations, write_jsonl

    first = json.loads((SUITE / "probe_suite.jsonl").read_text().splitlines()[0])
    write_jsonl(tmp_path / "suite.jsonl", build_suite(first["meta"]["seed"], load_conversations()))
    assert (tmp_path / "suite.jsonl").read_text() == (SUITE / "probe_suite.jsonl").read_text()
