"""Committed files carry paths relative to the repository, not one machine's (issue 49: six benchmark results held a
developer's checkout path, ``/work/main/...``, and a home cache folder, ``/root/.cache/...``).

Scratch outputs in a documented command (``--json /tmp/x.json``) are a reader's example, not a machine's layout, and
stay; a checkout, a home folder or this machine's cache folder in a committed file does not.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from benchmarks.machine import REPO_ROOT, portable

#: the prefixes of a machine's own folders: a checkout under /work, a home folder (Linux root, users, macOS)
MACHINE_PATH = re.compile(r"(?<![\w.~$/-])/(?:work|root|home/[\w.-]+|Users/[\w.-]+)/")
BINARY = {".png", ".jpg", ".jpeg", ".gif", ".safetensors", ".onnx", ".bin", ".db", ".sqlite", ".gz", ".zip"}


def _committed_files() -> list[Path]:
    try:
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO_ROOT, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: no list of committed files")
    return [REPO_ROOT / name for name in listed.decode().split("\0") if name and Path(name).suffix not in BINARY]


def test_no_committed_file_holds_a_machine_path():
    found = []
    for path in _committed_files():
        if not path.is_file() or path.name == Path(__file__).name:
            continue
        text = path.read_bytes().decode("utf-8", errors="ignore")
        for number, line in enumerate(text.splitlines(), start=1):
            if MACHINE_PATH.search(line):
                found.append(f"{path.relative_to(REPO_ROOT)}:{number}: {line.strip()[:120]}")
    assert not found, "absolute machine paths in committed files:\n" + "\n".join(found[:20])


def test_benchmark_records_are_written_with_portable_paths(monkeypatch, tmp_path):
    monkeypatch.setenv("GUARD_CACHE_DIR", str(tmp_path / "cache"))
    record = {"command": ["benchmarks/bench_x.py", "--json", str(REPO_ROOT / "benchmarks/results/x.json")],
              "model": str(REPO_ROOT / "runs" / "v5-export"), "cache": str(tmp_path / "cache" / "ct2" / "m"),
              "home": str(Path.home() / "notes.txt"), "n": 3, "text": "a/b"}
    assert portable(record) == {"command": ["benchmarks/bench_x.py", "--json", "benchmarks/results/x.json"],
                                "model": "runs/v5-export", "cache": "$GUARD_CACHE_DIR/ct2/m", "home": "~/notes.txt",
                                "n": 3, "text": "a/b"}
    assert MACHINE_PATH.search("/work/main/runs") and MACHINE_PATH.search("see /root/.cache/x")
    assert not MACHINE_PATH.search("--json /tmp/after.json") and not MACHINE_PATH.search("~/.cache/consistency-guard")
