"""guard.eval.chitchat: the one reader of the chit-chat package, on a small file in its format."""

from __future__ import annotations

import json

from guard.eval.chitchat import a2t_pool, iter_chitchat, load_chitchat

RAW = {
    "c1": {"messages": [
        [{"sender": "amy", "text": "Hi!"}, {"sender": "amy", "text": "  How are\nyou? "}],
        [{"sender": "bob", "text": "Fine,"}, {"sender": "bob", "text": ""}, {"sender": "bob", "text": "thanks."}],
        [{"sender": "amy", "text": ""}],
        [{"sender": "amy", "text": "I got a new bike."}],
        [{"sender": "bob", "text": "What colour is it?"}],
    ]},
    "c2": {"messages": [[{"sender": "amy", "text": "Too short."}]]},
}


def test_a_turn_is_one_speakers_run_with_white_space_folded(tmp_path):
    path = tmp_path / "dataset.json"
    path.write_text(json.dumps(RAW))
    [conv] = load_chitchat(path)  # c2 has fewer than four turns
    assert conv.conv_id == "c1" and conv.speakers == ["amy", "bob", "amy", "bob"]
    assert conv.utterances == ["Hi! How are you?", "Fine, thanks.", "I got a new bike.", "What colour is it?"]
    assert [(t.turn_id, t.agent_id) for t in conv.turns()] == [(0, "amy"), (1, "bob"), (2, "amy"), (3, "bob")]
    [kept] = iter_chitchat(path, keep_empty=True)  # the probe suite's screening sees the empty run
    assert kept.utterances[2] == "" and len(kept.utterances) == 5


def test_the_a2t_pool_takes_one_exchange_past_the_greetings():
    pool = a2t_pool(limit=5)
    assert len(pool) == 5 and len({d.record_id.split(":")[1] for d in pool}) == 5
    for dialogue in pool:
        first, second = dialogue.turns
        assert dialogue.record_id == f"chitchat:{dialogue.record_id.split(':')[1]}:{first.turn_id}"
        assert first.turn_id >= 2 and second.turn_id == first.turn_id + 1 and first.agent_id != second.agent_id
        assert all(t.text.isascii() and 3 <= len(t.text.split()) <= 30 for t in dialogue.turns)
