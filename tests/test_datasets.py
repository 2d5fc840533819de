"""Readers for every evaluation format: fields mapped right, malformed input named by file/line/field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from guard.eval.datasets import (
    DatasetError,
    available_formats,
    dialogue_to_decode,
    parse_decode_record,
    read_dataset,
    split_mutual_speakers,
)

DECODE_RECORD = {
    "record_id": "r1",
    "turns": [
        {"turn_id": 0, "agent_id": 0, "text": "i love dogs"},
        {"turn_id": 1, "agent_id": 1, "text": "me too"},
        {"turn_id": 2, "agent_id": 0, "text": "i hate dogs"},
    ],
    "is_contradiction": True,
    "aggregated_contradiction_indices": [0, 2],
    "agents": {"0": {"persona_lines": ["i have a dog ."]}, "1": {"persona_lines": []}},
    "auxiliary": {"source": "BST_test"},
}


def write_lines(path: Path, objects: list) -> Path:
    path.write_text("".join(json.dumps(o) + "\n" for o in objects))
    return path


def test_registry_lists_every_format():
    assert set(available_formats()) >= {"decode", "dnli", "rgm", "mutual", "cdconv", "snli"}


def test_decode_reader_maps_fields_and_drops_the_last_turn_from_evidence(tmp_path):
    path = write_lines(tmp_path / "d.jsonl", [DECODE_RECORD, {**DECODE_RECORD, "record_id": "r2",
                                                              "is_contradiction": False,
                                                              "aggregated_contradiction_indices": []}])
    first, second = read_dataset("decode", path)
    assert first.record_id == "r1" and first.label is True
    assert [t.agent_id for t in first.turns] == ["0", "1", "0"]  # agent ids become strings
    assert first.evidence == [0]  # DECODE lists the judged turn too; evidence is the earlier ones
    assert first.persona == ["i have a dog ."]  # the last speaker's persona lines
    assert first.meta["source"] == "BST_test"
    assert second.label is False and second.evidence == []


def test_decode_round_trip_keeps_decodes_convention(tmp_path):
    d = parse_decode_record(Path("x.jsonl"), 1, DECODE_RECORD)
    out = dialogue_to_decode(d)
    assert out["aggregated_contradiction_indices"] == [0, 2]
    again = parse_decode_record(Path("x.jsonl"), 1, out)
    assert again == d


@pytest.mark.parametrize("record, field", [
    ({"record_id": "x"}, "turns"),
    ({"turns": []}, "turns"),
    ({"turns": [{"turn_id": 0, "agent_id": 0, "text": "  "}]}, "turns[0].text"),
    ({"turns": [{"turn_id": 0, "text": "hi"}]}, "turns[0].agent_id"),
    ({"turns": [{"turn_id": "a", "agent_id": 0, "text": "hi"}]}, "turns[0].turn_id"),
    ({"turns": [{"turn_id": 0, "agent_id": 0, "text": "hi"}], "is_contradiction": "yes"}, "is_contradiction"),
    ({"turns": [{"turn_id": 0, "agent_id": 0, "text": "hi"}], "aggregated_contradiction_indices": [7]},
     "aggregated_contradiction_indices"),
])
def test_decode_malformed_record_names_file_line_and_field(tmp_path, record, field):
    path = write_lines(tmp_path / "bad.jsonl", [DECODE_RECORD, record])
    with pytest.raises(DatasetError) as info:
        read_dataset("decode", path)
    message = str(info.value)
    assert message.startswith(f"{path}:2:") and f"field '{field}'" in message
    assert "\n" not in message


def test_invalid_json_line_is_named(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(DECODE_RECORD) + "\n\n{not json\n")
    with pytest.raises(DatasetError, match=r"bad.jsonl:3: not valid JSON"):
        read_dataset("decode", path)


def test_missing_file_and_unknown_format(tmp_path):
    with pytest.raises(DatasetError, match="no such file"):
        read_dataset("decode", tmp_path / "nope.jsonl")
    with pytest.raises(DatasetError, match="unknown format"):
        read_dataset("nope", tmp_path / "nope.jsonl")


def test_dnli_json_array_pairs_become_two_turn_dialogues(tmp_path):
    items = [
        {"id": "a", "label": "negative", "sentence1": "i have a dog .", "sentence2": "i do not have pets .",
         "dtype": "matchingtriple"},
        {"id": "b", "label": "positive", "sentence1": "i have a dog .", "sentence2": "my dog is cute ."},
        {"id": "c", "label": "neutral", "sentence1": "i have a dog .", "sentence2": "i like tea ."},
    ]
    path = tmp_path / "dnli.json"
    path.write_text(json.dumps(items, indent=1))
    a, b, c = read_dataset("dnli", path)
    assert a.label is True and a.evidence == [0] and a.meta["nli_label"] == "contradiction"
    assert [t.agent_id for t in a.turns] == ["0", "0"] and a.turns[1].text == "i do not have pets ."
    assert b.meta["nli_label"] == "entailment" and b.label is False
    assert c.meta["nli_label"] == "neutral" and a.meta["dtype"] == "matchingtriple"


def test_dnli_bad_label_names_the_items_line(tmp_path):
    path = tmp_path / "dnli.json"
    path.write_text('[\n {"label": "positive", "sentence1": "a b", "sentence2": "c d"},\n'
                    ' {"label": "maybe", "sentence1": "a b", "sentence2": "c d"}\n]\n')
    with pytest.raises(DatasetError, match=r"dnli.json:3: field 'label'"):
        read_dataset("dnli", path)


def test_rgm_labels_from_annotator_counts(tmp_path):
    base = {"utterances": ["hi", "i love tea", "do you?", "i hate tea"], "speakers": ["A", "B", "A", "B"],
            "annotation_target_pair": [1, 3], "rgm_name": "opt-60B"}
    path = write_lines(tmp_path / "rgm.jsonl", [{**base, "contradictory_label_count": 3},
                                               {**base, "contradictory_label_count": 0},
                                               {**base, "contradictory_label_count": 1}])
    yes, no, unsure = read_dataset("rgm", path)
    assert yes.label is True and yes.evidence == [1] and yes.last.text == "i hate tea"
    assert no.label is False and no.evidence == []
    assert unsure.label is None
    assert yes.meta["rgm_name"] == "opt-60B"
    bad = write_lines(tmp_path / "bad.jsonl", [{**base, "contradictory_label_count": 3,
                                               "annotation_target_pair": [3, 1]}])
    with pytest.raises(DatasetError, match=r"bad.jsonl:1: field 'annotation_target_pair'"):
        read_dataset("rgm", bad)


def test_mutual_speaker_tags_both_spellings():
    assert split_mutual_speakers("m : hi , della . f : only 4 days .") == [("m", "hi , della ."), ("f", "only 4 days .")]
    assert split_mutual_speakers("M: Hi, Della. F: Only 4 days.") == [("m", "Hi, Della."), ("f", "Only 4 days.")]


def test_mutual_records_carry_options_and_answer(tmp_path):
    item = {"id": "dev_1", "answers": "C", "article": "m : do you like tea ? f : no , i like coffee .",
            "options": ["m : so you like tea .", "m : you hate coffee .", "m : so you prefer coffee .",
                        "m : you like milk ."]}
    path = write_lines(tmp_path / "mutual.jsonl", [item, {**item, "answers": "E"}][:1])
    (record,) = read_dataset("mutual", path)
    assert [t.agent_id for t in record.turns] == ["m", "f"]
    assert record.meta["answer"] == 2 and record.meta["options"][2] == "so you prefer coffee ."
    assert record.meta["option_speaker"] == "m"
    bad = write_lines(tmp_path / "bad.jsonl", [item, {**item, "answers": "E"}])
    with pytest.raises(DatasetError, match=r"bad.jsonl:2: field 'answers'"):
        read_dataset("mutual", bad)


def test_cdconv_jsonl_and_tsv(tmp_path):
    rows = [{"u1": "do you like dogs?", "b1": "i love dogs", "u2": "really?", "b2": "i hate dogs", "label": 3},
            {"u1": "hi", "b1": "hello", "u2": "how are you?", "b2": "fine", "label": 0},
            {"u1": "hi", "b1": "hello", "u2": "pets?", "b2": "i have a dog but no pets", "label": 1}]
    history, none, intra = read_dataset("cdconv", write_lines(tmp_path / "c.jsonl", rows))
    assert history.category == "history" and history.label is True and history.evidence == [1]
    assert [t.agent_id for t in history.turns] == ["user", "bot", "user", "bot"]
    assert none.category == "none" and none.label is False and none.evidence == []
    assert intra.category == "intra" and intra.evidence is None
    tsv = tmp_path / "c.tsv"
    tsv.write_text("u1\tb1\tu2\tb2\tlabel\nhi\thello\tpets?\tno\t2\nhi\thello\tpets?\tno\tx\n")
    with pytest.raises(DatasetError, match=r"c.tsv:3: field 'label'"):
        read_dataset("cdconv", tsv)
    tsv.write_text("u1\tb1\tu2\tb2\tlabel\nhi\thello\tpets?\tno\t2\n")
    assert read_dataset("cdconv", tsv)[0].category == "role"


def test_snli_skips_unlabelled_pairs(tmp_path):
    rows = [{"sentence1": "a man sleeps", "sentence2": "a man is awake", "gold_label": "contradiction"},
            {"sentence1": "a man sleeps", "sentence2": "a person rests", "gold_label": "-"},
            {"sentence1": "a man sleeps", "sentence2": "a man dreams", "gold_label": "neutral"}]
    records = read_dataset("snli", write_lines(tmp_path / "s.jsonl", rows))
    assert [r.meta["nli_label"] for r in records] == ["contradiction", "neutral"]
    bad = write_lines(tmp_path / "bad.jsonl", [{**rows[0], "gold_label": "yes"}])
    with pytest.raises(DatasetError, match=r"bad.jsonl:1: field 'gold_label'"):
        read_dataset("snli", bad)


def test_shared_rgm_and_mutual_files_read_completely(shared_data: Path):
    rgm = read_dataset("rgm", shared_data / "rgm" / "topical_dev.jsonl")
    assert len(rgm) == 300 and sum(d.label for d in rgm) == 150
    assert all(d.last.agent_id == d.turns[d.evidence[0]].agent_id for d in rgm if d.label)
    for name in ("mutual_dev.jsonl", "mutual_plus_dev.jsonl"):
        mutual = read_dataset("mutual", shared_data / "mutual" / name)
        assert len(mutual) == 886
        assert all(len(d.meta["options"]) == 4 and d.meta["answer"] in range(4) for d in mutual)
        assert all(d.turns and d.meta["option_speaker"] in ("m", "f") for d in mutual)


def test_the_live_stream_labels_ship_with_the_guard():
    """The ConvAI2 stream's sample and labels are committed beside the guard (guard/data/bot_stream), not in the shared
    data: every label names a conversation of the sample, both halves are labelled."""
    from guard.eval.stream import read_labels, read_sample

    labels, sample = read_labels(), read_sample()
    assert len(labels) > 1000 and {label.record_id for label in labels} <= set(sample.record_ids)
    assert {label.split for label in labels} == {"calibration", "evaluation"}
