"""Built once, however many processes ask at once (issue 49): two test workers, or two students opening the app on a
new server, reach every built-once asset on an empty cache together.

The interleaving is forced, not hoped for: the first builder stops in the middle of its build until a second process
has started asking, so the second always finds a half-built result (on main before ``embedded.once.build_once`` it
deleted and rewrote the first one's ``<target>.partial`` folder, and one of them failed or published half a model).
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import textwrap
import threading
import time
import zipfile
from pathlib import Path

import pytest

from embedded.once import BuildError, build_once

REPO = Path(__file__).resolve().parent.parent
WAIT_S = 60


def _run(script: str, cache: Path, **env: str) -> subprocess.Popen:
    """A Python process running ``script`` (dedented) in the repository, with its own cache folder setting."""
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(script)], cwd=REPO, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": str(REPO), "GUARD_CACHE_DIR": str(cache), **env})


def _finish(process: subprocess.Popen) -> str:
    out, err = process.communicate(timeout=300)
    assert process.returncode == 0, f"exit {process.returncode}\n{out}\n{err}"
    return out


#: the first builder: writes half its result, says so, then waits until the second process has started asking
FIRST = """
    import os, sys, time
    from pathlib import Path
    from embedded.once import build_once
    flags = Path(os.environ["FLAGS"])

    def build(staging):
        (staging / "half").write_text("written before the second process asked")
        (flags / "first-building").touch()
        deadline = time.time() + {wait}
        while not (flags / "second-asking").exists():
            assert time.time() < deadline, "the second process never asked"
            time.sleep(0.02)
        time.sleep(0.5)  # the second process is inside build_once by now
        (staging / "whole").write_text("finished")
        (flags / "builds").open("a").write("first\\n")

    target = build_once(Path(os.environ["TARGET"]), build, lambda p: (p / "whole").is_file())
    print((target / "half").read_text(), (target / "whole").read_text(), sep="|")
""".replace("{wait}", str(WAIT_S))

#: the second builder: starts asking once the first is half-way through its build
SECOND = """
    import os, time
    from pathlib import Path
    from embedded.once import build_once
    flags = Path(os.environ["FLAGS"])
    deadline = time.time() + {wait}
    while not (flags / "first-building").exists():
        assert time.time() < deadline, "the first process never started building"
        time.sleep(0.02)
    (flags / "second-asking").touch()

    def build(staging):
        (staging / "whole").write_text("second")
        (flags / "builds").open("a").write("second\\n")

    target = build_once(Path(os.environ["TARGET"]), build, lambda p: (p / "whole").is_file())
    print((target / "half").read_text(), (target / "whole").read_text(), sep="|")
""".replace("{wait}", str(WAIT_S))


def test_a_second_process_waits_for_the_first_build_and_uses_it(tmp_path):
    flags = tmp_path / "flags"
    flags.mkdir()
    env = {"FLAGS": str(flags), "TARGET": str(tmp_path / "cache" / "thing")}
    first = _run(FIRST, tmp_path / "cache", **env)
    second = _run(SECOND, tmp_path / "cache", **env)
    outputs = {_finish(first).strip(), _finish(second).strip()}
    assert outputs == {"written before the second process asked|finished"}
    assert (flags / "builds").read_text() == "first\n"  # built once
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == ["thing", "thing.lock"]


def test_a_build_killed_midway_leaves_nothing_that_looks_finished(tmp_path):
    target = tmp_path / "cache" / "thing"
    killed = _run("""
        import os
        from pathlib import Path
        from embedded.once import build_once

        def build(staging):
            (staging / "whole").write_text("half of it")
            os._exit(9)  # the process dies mid-build (a killed server, a full disk's crash)

        build_once(Path(os.environ["TARGET"]), build, lambda p: (p / "whole").is_file() and (p / "ok").is_file())
    """, tmp_path / "cache", TARGET=str(target))
    killed.communicate(timeout=60)
    assert killed.returncode == 9
    assert not target.exists()  # a .partial- folder is left, never the target
    assert [p.name.startswith("thing.partial-") for p in target.parent.iterdir() if p.is_dir()] == [True]

    def build(staging: Path) -> None:
        (staging / "whole").write_text("all of it")
        (staging / "ok").touch()

    assert (build_once(target, build, lambda p: (p / "ok").is_file()) / "whole").read_text() == "all of it"
    assert sorted(p.name for p in target.parent.iterdir()) == ["thing", "thing.lock"]  # the leftover removed


def test_a_failing_build_raises_its_error_and_publishes_nothing(tmp_path):
    target = tmp_path / "thing"

    def broken(staging: Path) -> None:
        (staging / "whole").write_text("half")
        raise PermissionError(errno.EACCES, "Permission denied")

    with pytest.raises(PermissionError):
        build_once(target, broken, lambda p: (p / "whole").is_file())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["thing.lock"]

    with pytest.raises(BuildError, match="reinstall the parts"):
        build_once(target, lambda staging: None, lambda p: (p / "whole").is_file(), fix="reinstall the parts")
    assert not target.exists()


def test_a_full_disk_says_where_and_how_to_make_room_and_publishes_nothing(tmp_path):
    """CI once failed with a bare ENOSPC from inside a staging folder; a user should read what to do."""
    target = tmp_path / "cache" / "thing"

    def fills_the_disk(staging: Path) -> None:
        (staging / "whole").write_text("half")
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(BuildError) as caught:
        build_once(target, fills_the_disk, lambda p: (p / "whole").is_file())
    message = str(caught.value)
    assert "no space left on the disk while building thing" in message
    assert str(target.parent) in message and "MiB free now" in message and "GUARD_CACHE_DIR" in message
    assert sorted(p.name for p in target.parent.iterdir()) == ["thing.lock"]


def test_a_file_target_is_published_whole(tmp_path):
    target = tmp_path / "model.gguf"

    def build(staging: Path) -> Path:
        (staging / "model.gguf").write_bytes(b"GGUF" + bytes(100))
        return staging / "model.gguf"

    assert build_once(target, build, Path.is_file).read_bytes() == b"GGUF" + bytes(100)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.gguf", "model.gguf.lock"]


def test_threads_of_one_process_build_once(tmp_path):
    target = tmp_path / "thing"
    builds = []

    def build(staging: Path) -> None:
        builds.append(threading.get_ident())
        time.sleep(0.3)
        (staging / "whole").touch()

    results: list[Path] = []
    threads = [threading.Thread(target=lambda: results.append(build_once(target, build, lambda p: (p / "whole")
                                                                         .is_file()))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [target] * 4 and len(builds) == 1


#: each built-once asset's real code path, its slow step made to wait for the second process (the fake sits where the
#: asset's own work would be, so what is tested is the asset's way of publishing, not the fake)
SPLIT_ZIP = """
    import os, sys, time, zipfile
    from pathlib import Path
    import embedded
    flags = Path(os.environ["FLAGS"])
    if sys.argv[-1] == "first":
        real = zipfile.ZipFile.extractall

        def slow_extract(self, path=None, *args, **kwargs):
            real(self, path, *args, **kwargs)
            (flags / "first-building").touch()
            deadline = time.time() + {wait}
            while not (flags / "second-asking").exists():
                assert time.time() < deadline, "the second process never asked"
                time.sleep(0.02)
            time.sleep(0.5)

        zipfile.ZipFile.extractall = slow_extract
    else:
        deadline = time.time() + {wait}
        while not (flags / "first-building").exists():
            assert time.time() < deadline, "the first process never started building"
            time.sleep(0.02)
        (flags / "second-asking").touch()
    pieces = sorted(Path(os.environ["PIECES"]).glob("model.zip.*"))
    target = embedded.unpack_split_zip(pieces, Path(os.environ["TARGET"]), must_hold="model.safetensors")
    print(len((target / "model.safetensors").read_bytes()), (target / "config.json").read_text())
""".replace("{wait}", str(WAIT_S))


def test_two_processes_unpacking_a_split_zip_both_get_it_whole(tmp_path):
    pieces = tmp_path / "pieces"
    pieces.mkdir()
    archive = pieces / "model.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("all-mpnet-base-v2/model.safetensors", b"\x01" * 200_000)
        z.writestr("all-mpnet-base-v2/config.json", "{}")
    data = archive.read_bytes()
    for i in range(3):
        (pieces / f"model.zip.{i + 1:03d}").write_bytes(data[i * len(data) // 3:(i + 1) * len(data) // 3])
    archive.unlink()
    flags = tmp_path / "flags"
    flags.mkdir()
    (tmp_path / "cache").mkdir()  # as embedded.cache_dir() makes it
    env = {"FLAGS": str(flags), "PIECES": str(pieces), "TARGET": str(tmp_path / "cache" / "mpnet")}
    script = textwrap.dedent(SPLIT_ZIP)
    first = subprocess.Popen([sys.executable, "-c", script, "first"], cwd=REPO, text=True, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(REPO), **env})
    second = subprocess.Popen([sys.executable, "-c", script, "second"], cwd=REPO, text=True, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(REPO), **env})
    assert {_finish(first).strip(), _finish(second).strip()} == {"200000 {}"}


def test_processes_on_an_empty_cache_all_get_the_whole_mpnet_base(tmp_path):
    """The shipped all-mpnet-base-v2, for real: three processes ask for it on an empty cache at once (what two test
    workers and a student's server did), and each reads every tensor of one complete file."""
    script = """
        import json
        from safetensors import safe_open
        import embedded
        folder = embedded.mpnet_path()
        with safe_open(str(folder / "model.safetensors"), "np") as weights:
            total = sum(weights.get_tensor(name).size for name in weights.keys())
        print(json.dumps({"folder": str(folder), "parameters": total,
                          "config": json.loads((folder / "config.json").read_text())["model_type"]}))
    """
    from importlib import metadata

    import embedded

    for name in embedded.MPNET_PARTS:
        try:
            metadata.distribution(name)
        except metadata.PackageNotFoundError as exc:
            pytest.fail(f"the mpnet base's part packages are not installed: run `make setup` ({exc})")
    processes = [_run(script, tmp_path / "cache") for _ in range(3)]
    results = [json.loads(_finish(p).strip().splitlines()[-1]) for p in processes]
    assert len({r["folder"] for r in results}) == 1
    assert {r["config"] for r in results} == {"mpnet"}
    assert {r["parameters"] for r in results} == {results[0]["parameters"]} and results[0]["parameters"] > 100e6
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == ["all-mpnet-base-v2", "all-mpnet-base-v2.lock"]
