"""`python -m bots generate` (and `prepare`) as a subprocess: JSON on success, one stderr line and exit 2 on any failure."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SERVER = Path(__file__).with_name("openai_server.py")
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO)}


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bots", *args], capture_output=True, text=True, cwd=REPO,
                          env=ENV, timeout=300)


@pytest.fixture
def history_file(tmp_path):
    path = tmp_path / "history.json"
    path.write_text(json.dumps([{"speaker": "user", "text": "hi"}, {"speaker": "bot", "text": "hello"},
                                {"speaker": "user", "text": "do you like tea?"}]))
    return path


@pytest.fixture
def server_url():
    process = subprocess.Popen([sys.executable, str(SERVER)], stdout=subprocess.PIPE, text=True)
    line = process.stdout.readline()
    yield f"http://127.0.0.1:{int(line.split()[1])}/v1"
    process.terminate()
    process.wait(timeout=10)


def _assert_one_line_error(result: subprocess.CompletedProcess, fragment: str) -> None:
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and fragment in lines[0], result.stderr
    assert result.stdout == ""


def test_remote_candidates_as_json(history_file, server_url, tmp_path):
    persona = tmp_path / "persona.txt"
    persona.write_text("I love tea.\n\nI live in Leeds.\n")
    result = run_cli("generate", "--bot", "remote", "--base-url", server_url, "--model", "m",
                     "--num-candidates", "2", "--history", str(history_file), "--persona", str(persona))
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out == {"candidates": [{"text": "reply 0 to do you like tea?", "score": pytest.approx(-0.1)},
                                  {"text": "reply 1 to do you like tea?", "score": pytest.approx(-0.2)}]}


def test_unknown_bot(history_file):
    _assert_one_line_error(run_cli("generate", "--bot", "nope", "--history", str(history_file)), "unknown bot 'nope'")


def test_unreadable_history(tmp_path):
    _assert_one_line_error(run_cli("generate", "--history", str(tmp_path / "missing.json")), "cannot read history")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    _assert_one_line_error(run_cli("generate", "--history", str(bad)), "not valid JSON")
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps([{"speaker": "alice", "text": "hi"}]))
    _assert_one_line_error(run_cli("generate", "--history", str(wrong)), "history item 0")


def test_failing_backend(history_file):
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = run_cli("generate", "--bot", "remote", "--base-url", f"http://127.0.0.1:{port}/v1", "--model", "m",
                     "--history", str(history_file))
    _assert_one_line_error(result, "cannot reach a chat server")
    missing = run_cli("generate", "--bot", "causal", "--model", str(history_file.parent / "no-model"),
                      "--history", str(history_file))
    _assert_one_line_error(missing, "could not load causal LM")


def test_bad_preset_and_count(history_file):
    _assert_one_line_error(run_cli("generate", "--decoding", "wild", "--history", str(history_file)),
                           "unknown decoding preset")
    _assert_one_line_error(run_cli("generate", "--num-candidates", "0", "--history", str(history_file)),
                           "--num-candidates must be >= 1")


def test_prepare_converts_once_and_says_which_engine(llama_dir, tmp_path):
    """`prepare` (what the app's start-up runs in a process of its own) fills the cache; a second run finds it."""
    import ctranslate2

    env = {**ENV, "GUARD_CACHE_DIR": str(tmp_path / "cache")}
    runs = [subprocess.run([sys.executable, "-m", "bots", "prepare", "--bot", "chat", "--model", str(llama_dir),
                            "--engine", "ctranslate2"], capture_output=True, text=True, cwd=REPO, env=env,
                           timeout=300) for _ in range(2)]
    assert [r.returncode for r in runs] == [0, 0], runs[0].stderr
    assert runs[0].stdout == runs[1].stdout == f"chat: ready (CTranslate2 {ctranslate2.__version__} int8)\n"
    assert "Converting tiny-llama" in runs[0].stderr and "Converting" not in runs[1].stderr
    assert len(list((tmp_path / "cache" / "ct2").glob("tiny-llama*-int8"))) == 1
    _assert_one_line_error(run_cli("prepare", "--bot", "nope"), "unknown bot 'nope'")


def test_list_names_the_bots():
    result = run_cli("list")
    assert result.returncode == 0
    names = {line.split("\t")[0] for line in result.stdout.splitlines()}
    assert {"embedded", "blenderbot", "causal", "gemma3", "plato", "remote"} <= names


def test_engine_option_and_the_engine_in_the_output(history_file, llama_dir, tmp_path):
    """--engine picks the engine; the JSON says which ran; the first CTranslate2 use converts with a message."""
    import ctranslate2

    env = {**ENV, "GUARD_CACHE_DIR": str(tmp_path / "cache")}
    outputs = {}
    for engine in ("ctranslate2", "transformers"):
        result = subprocess.run([sys.executable, "-m", "bots", "generate", "--bot", "chat", "--model", str(llama_dir),
                                 "--engine", engine, "--decoding", "greedy", "--max-new-tokens", "4",
                                 "--history", str(history_file)], capture_output=True, text=True, cwd=REPO, env=env,
                                timeout=300)
        assert result.returncode == 0, result.stderr
        outputs[engine] = (json.loads(result.stdout), result.stderr)
    assert outputs["ctranslate2"][0]["engine"] == f"CTranslate2 {ctranslate2.__version__} int8"
    assert "Converting tiny-llama" in outputs["ctranslate2"][1] and "first use only" in outputs["ctranslate2"][1]
    assert outputs["transformers"][0]["engine"].startswith("transformers ")
    assert len(outputs["transformers"][0]["candidates"]) == 1
