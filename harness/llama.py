"""llama.cpp's own server (``llama-server``, parallel slots) serving the embedded bot's GGUF, for the remote bot.

Nothing downloads it: it is compiled from the ``llama-cpp-python`` sdist on PyPI with its server tool switched on
(``BUILD_HINT``); the wheel puts the binary in the venv, beside the ``llama_cpp`` package's libraries. Tests and
``benchmarks/bench_llama.py`` start it on a free port of 127.0.0.1 with SmolLM2's GGUF (``embedded.smollm2_gguf_path``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from harness.server import free_port, stop, wait_for_health

#: The pinned build (docs/deploy.md): llama-cpp-python 0.3.36 from source, AVX2 (not this CPU's own instructions),
#: with llama.cpp's server and without its web UI (which it would download).
BUILD_HINT = (
    'CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF -DLLAMA_BUILD_TOOLS=ON -DLLAMA_TOOLS_INSTALL=ON -DLLAMA_BUILD_SERVER=ON '
    '-DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF" '
    "CMAKE_BUILD_PARALLEL_LEVEL=2 .venv/bin/pip install --no-cache-dir --no-binary llama-cpp-python -r requirements-llama.txt (or: make llama)")
SERVER_ENV = "GUARD_LLAMA_SERVER"


def llama_server_path() -> Path | None:
    """The ``llama-server`` binary: ``GUARD_LLAMA_SERVER``, else the one the llama-cpp-python build put in this
    venv, else one on the PATH; None when there is none."""
    named = os.environ.get(SERVER_ENV, "").strip()
    if named:
        return Path(named) if Path(named).is_file() else None
    places = [Path(sys.prefix) / "bin" / "llama-server"]
    try:
        import llama_cpp

        package = Path(llama_cpp.__file__).parent
        places += [package.parent / "bin" / "llama-server", package / "lib" / "llama-server",
                   package / "bin" / "llama-server"]
    except ImportError:
        pass
    for place in places:
        if place.is_file() and os.access(place, os.X_OK):
            return place
    found = shutil.which("llama-server")
    return Path(found) if found else None


def _library_path(binary: Path) -> str:
    """Where the binary's shared libraries are (the build installs them beside ``bin/``, in ``lib/``, and in the
    ``llama_cpp`` package's ``lib/``; the binary carries no search path of its own), ahead of the current path."""
    folders = [str(binary.parent), str(binary.parent.parent / "lib")]
    try:
        import llama_cpp

        folders.append(str(Path(llama_cpp.__file__).parent / "lib"))
    except ImportError:
        pass
    current = os.environ.get("LD_LIBRARY_PATH", "")
    return ":".join(folders + ([current] if current else []))


@contextmanager
def llama_server(gguf: Path, parallel: int = 4, context: int = 4096, threads: int | None = None,
                 log_path: Path | None = None, timeout: float = 120.0) -> Iterator[str]:
    """``llama-server`` serving ``gguf`` with ``parallel`` slots (the context split among them) on a free port;
    yields its OpenAI base URL (``http://127.0.0.1:PORT/v1``) once ``/health`` answers; stops it afterwards."""
    binary = llama_server_path()
    if binary is None:
        raise FileNotFoundError(f"no llama-server: build it with {BUILD_HINT}")
    port = free_port()
    arguments = [str(binary), "-m", str(gguf), "--host", "127.0.0.1", "--port", str(port), "--parallel",
                 str(parallel), "-c", str(context), "--no-webui"]
    if threads:
        arguments += ["-t", str(threads)]
    log = open(log_path, "w") if log_path else subprocess.DEVNULL
    proc = subprocess.Popen(arguments, env={**os.environ, "LD_LIBRARY_PATH": _library_path(binary)},
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_for_health(proc, f"http://127.0.0.1:{port}", time.monotonic() + timeout,
                        str(log_path) if log_path else None, what="llama-server")
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        stop(proc)
        if log_path:
            log.close()
