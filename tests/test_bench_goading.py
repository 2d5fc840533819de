"""bench_goading's replay and pair sheet (docs/experiments/2026-11-29-turn-replay.md): a replay sends each message with
the base's own replies before it and the base's seed, and its pair sheet holds exactly the turns whose replies differ,
both replies, with a key that says which code wrote each. A real local HTTP server stands in for the served guard."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from benchmarks import bench_goading


class _Recorder(BaseHTTPRequestHandler):
    """Answers every chat request with a reply that names what it was sent: how many assistant turns, and the seed."""

    requests: list[dict] = []

    def do_POST(self):  # noqa: N802 (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append(body)
        said = [m["content"] for m in body["messages"] if m["role"] == "assistant"]
        reply = f"reply {len(said)} after {'|'.join(said)} seed {body['seed']}"
        answer = {"choices": [{"message": {"role": "assistant", "content": reply}}],
                  "guard": {"status": "consistent", "summary": "",
                            "report": {"candidates": [{"text": reply, "chosen": True, "reason": ""}]}}}
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    _Recorder.requests = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def test_a_replay_sends_the_base_replies_before_each_message(server):
    rows = bench_goading.converse(server, "k", ["I am a nurse."], ["Hi", "Job?", "Pets?"], seed=7,
                                  replies=["base one", "base two", "base three"])
    sent = _Recorder.requests
    assert [m["content"] for m in sent[2]["messages"]] == ["I am a nurse.", "Hi", "base one", "Job?", "base two",
                                                          "Pets?"]
    assert [r["seed"] for r in sent] == [700, 701, 702]
    assert rows[2]["reply"] == "reply 2 after base one|base two seed 702"


def test_a_run_sends_its_own_replies(server):
    rows = bench_goading.converse(server, "k", [], ["Hi", "Job?"], seed=1)
    assert _Recorder.requests[1]["messages"][2]["content"] == rows[0]["reply"]


def test_a_replay_refuses_a_base_of_another_length(server):
    with pytest.raises(SystemExit, match="2 replies for 3 messages"):
        bench_goading.converse(server, "k", [], ["a", "b", "c"], seed=1, replies=["x", "y"])


def _run(replies: list[str], name: str = "nurse", seed: int = 1) -> dict:
    return {"runs": [{"name": name, "seed": seed, "persona": ["I am a nurse."],
                      "turns": [{"message": k, "user": f"question {k}", "reply": r} for k, r in enumerate(replies)]}]}


def test_the_pair_sheet_holds_the_differing_turns_with_the_base_conversation():
    base = _run(["I am a nurse.", "I have a dog.", "Bye."])
    replay = _run(["I am a nurse.", "I have a cat.", "Goodbye!"])
    text, key = bench_goading.pair_sheet(base, replay, seed=3)
    assert len(key) == 4 and sorted(v["message"] for v in key.values()) == [1, 1, 2, 2]
    item = text.split("=== item ")[1:]
    turn_two = next(block for block in item if "question 2" in block)
    # the conversation before the turn is the base's, the two replies are labelled each on its own
    assert "    BOT: I have a dog." in turn_two and "[pair s" in turn_two
    assert {line.split("BOT: ")[1].rstrip(" =>") for line in turn_two.splitlines() if line.startswith("[pair")} \
        == {"Bye.", "Goodbye!"}
    keys = {bench_goading._LABELLED.match(line + " ok")["key"] for line in text.splitlines() if line.startswith("[pair")}
    assert keys == set(key)
    assert {v["code"] for v in key.values()} == {"base", "replay"}


def test_the_pair_sheet_refuses_a_replay_of_another_base():
    with pytest.raises(SystemExit, match="replay this base"):
        bench_goading.pair_sheet(_run(["a"]), _run(["a"], name="captain"), seed=0)


def test_paired_count_counts_each_code(tmp_path, capsys):
    base = _run(["I am a nurse.", "I have a dog.", "Bye."])
    replay = _run(["I am a teacher.", "I have a dog.", "Goodbye!"])
    text, key = bench_goading.pair_sheet(base, replay, seed=0)
    (tmp_path / "key.json").write_text(json.dumps(key))
    labelled = []
    for line in text.splitlines():
        if line.startswith("[pair"):
            k = bench_goading._LABELLED.match(line + " ok")["key"]
            labelled.append(line + (" contradiction" if "teacher" in line else " ok"))
            assert k in key
        else:
            labelled.append(line)
    (tmp_path / "labels.txt").write_text("\n".join(labelled) + "\n")
    bench_goading.main(["paired-count", str(tmp_path / "key.json"), str(tmp_path / "labels.txt")])
    out = capsys.readouterr().out
    assert "base contradiction 0, dodge 0, ok 2 · replay contradiction 1, dodge 0, ok 1" in out
    assert "ok -> contradiction 1" in out and "ok -> ok 1" in out
