"""Run a module as ``python -m`` does, then end the process without the interpreter's final clean-up:
``python -m harness.quick_exit streamlit run app.py ...`` (harness.server.streamlit_server).

Why: an app server that has loaded the models holds about a million Python objects. After Streamlit has stopped on
SIGTERM (a tenth of a second), the interpreter's finalization garbage-collects and tears them down: 2.5 s of one
core on an idle machine, more under load, which every test module with a server of its own waited for at its end
(docs/experiments/2026-11-28-suite-time.md). Here the atexit handlers run (Streamlit's own clean-up is one) and the
output is flushed as at a normal exit; only the collection of the heap the operating system frees anyway is skipped.
"""

from __future__ import annotations

import atexit
import os
import runpy
import sys


def exit_code(exc: SystemExit) -> int:
    """The status a process ends with after ``sys.exit(value)``: 0 for None, the number, else 1 (the interpreter
    prints a message given)."""
    if exc.code is None:
        return 0
    return exc.code if isinstance(exc.code, int) else 1


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit("usage: python -m harness.quick_exit MODULE [ARGUMENTS...]")
    module = sys.argv[1]
    sys.argv = [module, *sys.argv[2:]]  # as `python -m MODULE ARGUMENTS` sees them (argv[0] is set by runpy)
    status = [1]  # an uncaught exception: the interpreter prints it, the process ends with 1

    def end_now() -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status[0])

    atexit.register(end_now)  # registered first, so it runs after every other atexit handler
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
        status[0] = 0
    except SystemExit as exc:
        status[0] = exit_code(exc)
        raise


if __name__ == "__main__":
    main()
