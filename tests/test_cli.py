"""``python -m guard`` as other tools call it, on small files in tmp_path.

Each command runs once as a real subprocess (``python -m guard ...``); further flag combinations go
through ``guard.cli.main`` in this process (the same code path, minus a torch import per run, which
costs seconds on a shared machine). The detector is a tiny random NLI checkpoint (conftest's
``tiny_nli_model_dir``): these tests check the plumbing (shapes, flags, errors, atomic output),
not detection quality.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from guard.cli import main

REPO = Path(__file__).resolve().parent.parent


def run_guard(*args: str | Path, timeout: int = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "guard", *map(str, args)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=timeout)


def decode_record(record_id: str, texts: list[str], label: bool, evidence: list[int]) -> dict:
    turns = [{"turn_id": i, "agent_id": "ab"[i % 2], "text": t} for i, t in enumerate(texts)]
    indices = evidence + [len(texts) - 1] if label else []
    return {"record_id": record_id, "turns": turns, "is_contradiction": label,
            "aggregated_contradiction_indices": indices}


RECORDS = [
    decode_record("r1", ["i love dogs", "do you", "yes i have two dogs", "nice", "i hate dogs"], True, [0]),
    decode_record("r2", ["i live in ohio", "cool", "i am a teacher", "and", "i work as a teacher"], False, []),
    decode_record("r3", ["i eat meat", "no", "i am vegetarian"], True, [0]),
    decode_record("r4", ["hi", "hello", "i like cats"], False, []),
]


@pytest.fixture()
def decode_file(tmp_path) -> Path:
    path = tmp_path / "dialogues.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    return path


def test_score_writes_one_line_per_record_and_honours_the_threshold(tmp_path, decode_file, tiny_nli_model_dir):
    low, high = tmp_path / "low.jsonl", tmp_path / "high.jsonl"
    done = run_guard("score", decode_file, "-o", low, "--detector", tiny_nli_model_dir,
                     "--threshold", "0.01", "--no-categories")
    assert done.returncode == 0, done.stderr
    assert main(["score", str(decode_file), "-o", str(high), "--detector", str(tiny_nli_model_dir),
                 "--threshold", "0.99", "--no-categories"]) == 0
    flagged = [json.loads(line) for line in low.read_text().splitlines()]
    cleared = [json.loads(line) for line in high.read_text().splitlines()]
    assert [r["record_id"] for r in flagged] == ["r1", "r2", "r3", "r4"]
    for row in flagged:
        assert set(row) == {"record_id", "contradiction", "score", "evidence", "category"}
        assert 0.0 <= row["score"] <= 1.0
    # threshold 0.01: every record with an earlier same-speaker claim is flagged, with all of them as evidence;
    # r4's only earlier turn of its speaker is "hi", which asserts nothing and is paired with nothing
    assert [r["contradiction"] for r in flagged] == [True, True, True, False]
    assert flagged[0]["evidence"] == [0, 2] and flagged[2]["evidence"] == [0]
    assert flagged[0]["category"] == "history"
    assert not any(r["contradiction"] or r["evidence"] for r in cleared)
    assert [r["score"] for r in cleared] == [r["score"] for r in flagged]  # threshold never moves scores


def test_score_to_stdout_and_unstructured_method(decode_file, tiny_nli_model_dir, capsys):
    assert main(["score", str(decode_file), "--detector", str(tiny_nli_model_dir), "--method", "unstructured"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(rows) == 4 and all(r["evidence"] == [] for r in rows)  # one whole-history pair, no turns


def test_malformed_input_exits_2_with_one_line_and_leaves_the_output_alone(tmp_path, tiny_nli_model_dir):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(RECORDS[0]) + "\n" + json.dumps({"record_id": "x", "turns": [
        {"turn_id": 0, "agent_id": "a", "text": "hi"}, {"turn_id": 1, "agent_id": "b"}]}) + "\n")
    out = tmp_path / "out" / "scores.jsonl"
    out.parent.mkdir()
    out.write_text("previous results\n")
    done = run_guard("score", bad, "-o", out, "--detector", tiny_nli_model_dir)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and f"{bad}:2:" in lines[0] and "field 'turns[1].text'" in lines[0]
    assert out.read_text() == "previous results\n"  # untouched
    assert sorted(p.name for p in out.parent.iterdir()) == ["scores.jsonl"]  # no temp file left



def test_missing_file_and_usage_errors_exit_2(tmp_path, capsys):
    assert main(["evaluate", "--format", "decode", str(tmp_path / "nope.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "nope.jsonl" in err and "no such file" in err and len(err.strip().splitlines()) == 1
    with pytest.raises(SystemExit) as info:
        main(["evaluate", "--format", "nope", str(tmp_path / "x.jsonl")])
    assert info.value.code == 2  # argparse's usage error


def test_failure_after_reading_leaves_no_file(tmp_path, decode_file, capsys):
    out = tmp_path / "scores.jsonl"
    assert main(["score", str(decode_file), "-o", str(out), "--detector", str(tmp_path / "not-a-checkpoint")]) == 2
    err = capsys.readouterr().err
    assert "not-a-checkpoint" in err and len(err.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dialogues.jsonl"]


def test_a_crash_while_writing_removes_the_temporary_file(tmp_path):
    from guard.files import atomic_writer

    target = tmp_path / "out.jsonl"
    with pytest.raises(RuntimeError):
        with atomic_writer(target) as handle:
            handle.write("half a line")
            raise RuntimeError("boom")
    assert list(tmp_path.iterdir()) == []


def test_evaluate_decode_json_and_table(decode_file, tiny_nli_model_dir, tmp_path):
    done = run_guard("evaluate", "--format", "decode", decode_file, "--json",
                     "--detector", tiny_nli_model_dir, "--threshold", "0.01", "--no-categories")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    overall = result["overall"]
    assert overall["n"] == 4 and result["threshold"] == 0.01
    # r4's earlier turn ("hi") asserts nothing, so r4 is not flagged (and is right)
    assert overall["accuracy"] == 0.75 and overall["fire_rate"] == 0.75 and overall["recall"] == 1.0
    # r1 is flagged with evidence [0, 2] (gold [0]), r3 with [0]: strict accuracy counts r3 and r4
    assert overall["strict_accuracy"] == 0.5
    assert overall["evidence_precision"] == pytest.approx(2 / 3) and overall["evidence_recall"] == 1.0
    table = tmp_path / "table.txt"
    assert main(["evaluate", "--format", "decode", str(decode_file), "-o", str(table),
                 "--detector", str(tiny_nli_model_dir)]) == 0
    text = table.read_text()
    assert "accuracy" in text and "strict_accuracy" in text and text.splitlines()[2].startswith("overall")


def test_evaluate_mutual_and_snli(tmp_path, tiny_nli_model_dir, capsys):
    mutual = tmp_path / "mutual.jsonl"
    item = {"id": "m1", "answers": "B", "article": "m : do you like dogs ? f : no , i like cats .",
            "options": ["m : you like dogs .", "m : so you like cats .", "m : you hate cats .", "m : you have a dog ."]}
    mutual.write_text("".join(json.dumps({**item, "id": f"m{i}"}) + "\n" for i in range(3)))
    assert main(["evaluate", "--format", "mutual", str(mutual), "--json", "--detector", str(tiny_nli_model_dir)]) == 0
    result = json.loads(capsys.readouterr().out)["overall"]
    assert result["n"] == 3 and result["R@1"] <= result["R@2"] <= 1.0 and 0.25 <= result["MRR"] <= 1.0
    snli = tmp_path / "snli.jsonl"
    snli.write_text("".join(json.dumps({"sentence1": "a dog eats", "sentence2": s, "gold_label": g}) + "\n"
                            for s, g in (("a cat sleeps", "contradiction"), ("an animal eats", "entailment"),
                                         ("a dog eats meat", "neutral"))))
    assert main(["evaluate", "--format", "snli", str(snli), "--json", "--detector", str(tiny_nli_model_dir)]) == 0
    result = json.loads(capsys.readouterr().out)["overall"]
    assert result["n"] == 3 and result["nli_3way_accuracy"] in (0.0, 1 / 3, 2 / 3, 1.0)


def test_probe_commands_are_deterministic(decode_file, tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    done = run_guard("probe", "a2t", decode_file, "-o", a, "--seed", "5")
    assert done.returncode == 0, done.stderr
    assert main(["probe", "a2t", str(decode_file), "-o", str(b), "--seed", "5"]) == 0
    assert a.read_text() == b.read_text()
    variants = [json.loads(line) for line in a.read_text().splitlines()]
    assert [v["record_id"] for v in variants] == ["r1#a2t", "r3#a2t"]
    assert all(v["is_contradiction"] and len(v["turns"]) == n + 2 for v, n in zip(variants, (5, 3)))
    rct = tmp_path / "rct.jsonl"
    assert main(["probe", "rct", str(decode_file), "-o", str(rct)]) == 0
    (variant,) = [json.loads(line) for line in rct.read_text().splitlines()]  # r3 would be left empty
    assert variant["record_id"] == "r1#rct" and variant["is_contradiction"] is False
    assert [t["text"] for t in variant["turns"]] == ["yes i have two dogs", "nice", "i hate dogs"]
