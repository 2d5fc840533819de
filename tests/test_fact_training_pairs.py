"""The goaded-fact training pairs (guard/training/facts.py) keep out of the frozen probe set and out of each other's
splits: what a detector is measured on was never trained on."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from guard.training import facts

PROBES = Path(__file__).resolve().parents[1] / "guard" / "data" / "probe_facts.jsonl"
WORD = re.compile(r"[a-z0-9']+")


def probe_records() -> list[dict]:
    return [json.loads(line) for line in PROBES.read_text(encoding="utf-8").splitlines()]


def words(text: str) -> list[str]:
    return WORD.findall(text.lower())


def ngrams(text: str, n: int) -> set[tuple[str, ...]]:
    w = words(text)
    return {tuple(w[i:i + n]) for i in range(len(w) - n + 1)}


@pytest.fixture(scope="module")
def train_pairs():
    pytest.importorskip("nltk")
    try:
        return facts.fact_pairs(3000, seed=5, split="train")
    except Exception as exc:  # WordNet not unpacked (no `make setup`): say so rather than fail obscurely
        pytest.skip(f"WordNet not available: {exc}")


def test_probe_values_are_never_training_values():
    listed = facts.PROBE_VALUES
    for record in probe_records():
        for key in ("value", "other_value"):
            value = record["meta"].get(key)
            if value is None:
                continue
            # a count's value is "3 cats": its thing is what is held out (numbers alone are too few to hold out)
            thing = value.split(" ", 1)[1] if value[:1].isdigit() and " " in value else value
            singular = thing[:-1] if thing.endswith("s") and thing[:-1].lower() in listed else thing
            assert (singular.lower() in listed or thing.lower() in listed
                    or any(w in listed for w in words(thing))
                    or record["meta"]["relation"] in ("never", "diet", "siblings", "children", "plays", "likes")), \
                f"{record['record_id']}: probe value {value!r} is not in PROBE_VALUES"


def test_training_pairs_use_no_probe_value_and_no_probe_template(train_pairs):
    probe_sentences = [t["text"] for r in probe_records() for t in r["turns"] if t["agent_id"] == "bot"]
    probe_sentences += [p for r in probe_records() for p in r["persona"]]
    probe_grams = set().union(*(ngrams(s, 5) for s in probe_sentences))
    named = {v for v in facts.PROBE_VALUES if not v.isdigit()}
    for pair in train_pairs:
        for side in (pair.premise, pair.hypothesis):
            side_words = set(words(side))
            assert not {v for v in named if " " not in v} & side_words, f"a probe value in {side!r}"
            assert not ngrams(side, 5) & probe_grams, f"a probe template's 5 words in {side!r}"


def test_values_are_held_out_by_value():
    try:
        train, dev = facts.values_for("train"), facts.values_for("dev")
    except Exception as exc:
        pytest.skip(f"WordNet not available: {exc}")
    for field in ("jobs", "cities", "names", "ages", "pets", "meats"):
        both = set(getattr(train, field)) & set(getattr(dev, field))
        assert not both, f"{field} in both splits: {sorted(both)[:5]}"
        assert getattr(dev, field), f"no dev {field}: the dev split cannot show the relation was learned"


def test_every_kind_is_made_with_its_labels(train_pairs):
    by_kind: dict[str, set[str]] = {}
    for pair in train_pairs:
        by_kind.setdefault(pair.source, set()).add(pair.label)
    assert by_kind["facts-value-swap"] == {"contradiction"}
    assert by_kind["facts-denial"] == {"contradiction"}
    assert by_kind["facts-restated"] == {"entailment"}
    assert by_kind["facts-agreeing-negation"] == {"entailment"}
    assert by_kind["facts-past-or-wish"] == {"neutral"}
    assert by_kind["facts-vague-amount"] == {"neutral"}
    assert by_kind["facts-diet"] == {"contradiction", "neutral"}
    assert by_kind["facts-kind-of"] <= {"entailment", "neutral"}


def test_a_kind_of_a_job_is_never_a_value_swap(train_pairs):
    values = facts.values_for("train")
    kinds = set(values.kinds) | {(b, a) for a, b in values.kinds} | set(values.related)
    for pair in train_pairs:
        if pair.source != "facts-value-swap":
            continue
        jobs = [j for j in values.jobs if re.search(rf"\b{re.escape(j)}\b", pair.premise)]
        others = [j for j in values.jobs if re.search(rf"\b{re.escape(j)}\b", pair.hypothesis)]
        for a in jobs:
            for b in others:
                assert (a, b) not in kinds, f"{a} / {b} are kinds of each other: {pair}"
