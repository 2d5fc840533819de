"""A throwaway PostgreSQL server for the studio tests and bench_studio: initdb + pg_ctl from Debian's `postgresql` package.

PostgreSQL refuses to run as root, so under root the server runs as the `postgres` system user
that the Debian package creates. Everything lives in a temporary folder removed afterwards.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def postgres_bin() -> Path | None:
    """The folder holding initdb and pg_ctl, or None when PostgreSQL is not installed."""
    found = shutil.which("pg_ctl")
    if found and shutil.which("initdb"):
        return Path(found).resolve().parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    return Path(versions[-1]).parent if versions else None


def why_unavailable() -> str | None:
    """None when a server can be started here, else the reason (for pytest's skip message)."""
    if postgres_bin() is None:
        return "PostgreSQL is not installed (Debian's `postgresql` package; `make postgres` installs it as root)"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no 'postgres' user to run the server as"
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def postgres_server() -> Iterator[str]:
    """Start a server on a free port; yield its SQLAlchemy URL (database "postgres", trust auth)."""
    bindir = postgres_bin()
    if bindir is None:
        raise RuntimeError(why_unavailable())
    folder = Path(tempfile.mkdtemp(prefix="studio-pg-", dir="/tmp"))
    run_as: list[str] = []
    if os.geteuid() == 0:
        user = pwd.getpwnam("postgres")
        os.chown(folder, user.pw_uid, user.pw_gid)
        run_as = ["runuser", "-u", "postgres", "--"]
    data, port = folder / "data", _free_port()
    log = folder / "server.log"

    def run(*args: str) -> None:
        subprocess.run(run_as + list(args), check=True, capture_output=True, cwd=folder, timeout=120)

    try:
        run(str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8")
        run(str(bindir / "pg_ctl"), "-D", str(data), "-l", str(log), "-w", "-t", "60", "-o",
            f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off", "start")
        try:
            yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres"
        finally:
            subprocess.run(run_as + [str(bindir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"],
                           capture_output=True, cwd=folder, timeout=60)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
