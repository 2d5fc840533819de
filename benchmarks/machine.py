"""What a benchmark ran on: CPU model, the instruction-set flags that decide the speed of int8/bf16 kernels,
cores and load. Every latency figure in the docs is read next to this record, and ``write_json`` keeps a run's
record where ``--json`` says.

    .venv/bin/python -m benchmarks.machine     # prints it as JSON
"""

from __future__ import annotations

import json
import os
import platform
from pathlib import Path

#: The flags that change which kernels run: AVX2 (int8 GEMM on every x86-64 laptop of the last decade),
#: AVX-512 and its VNNI int8 / BF16 extensions, and AMX tiles (Sapphire Rapids and later).
FLAGS = ("avx2", "fma", "avx512f", "avx512_vnni", "avx_vnni", "avx512_bf16", "amx_tile", "amx_bf16", "amx_int8")


def cpu_flags(cpuinfo: str | None = None) -> dict[str, bool]:
    """The FLAGS this CPU reports in /proc/cpuinfo (all False where it cannot be read, e.g. not Linux)."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text()
        except OSError:
            cpuinfo = ""
    present: set[str] = set()
    for line in cpuinfo.splitlines():
        if line.startswith("flags"):
            present = set(line.split(":", 1)[1].split())
            break
    return {flag: flag in present for flag in FLAGS}


def cpu_model(cpuinfo: str | None = None) -> str:
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text()
        except OSError:
            return platform.processor() or platform.machine()
    for line in cpuinfo.splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def machine_class(flags: dict[str, bool]) -> str:
    """The docs' machine classes: what decides whether bf16 or int8-VNNI kernels exist."""
    if flags.get("amx_tile"):
        return "AMX (bf16/int8 tiles)"
    if flags.get("avx512_bf16"):
        return "AVX-512 BF16"
    if flags.get("avx512f"):
        return "AVX-512, no BF16"
    if flags.get("avx2"):
        return "AVX2, no AVX-512 / BF16"
    return "no AVX2"


def loadavg() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def machine_info() -> dict:
    """One record for a benchmark's JSON: CPU, flags, class, cores, load now, library versions."""
    flags = cpu_flags()
    info = {"cpu": cpu_model(), "flags": flags, "class": machine_class(flags), "cpu_count": os.cpu_count(),
            "platform": platform.platform(), "loadavg": loadavg()}
    versions = {}
    for package in ("torch", "transformers", "ctranslate2", "onnxruntime"):
        try:
            versions[package] = __import__(package).__version__
        except ImportError:
            pass
    info["versions"] = versions
    return info


REPO_ROOT = Path(__file__).resolve().parent.parent


def portable(record: object) -> object:
    """``record`` with this machine's absolute paths made portable: the repository's own relative to it, the model
    cache as ``$GUARD_CACHE_DIR``, the home folder as ``~``. A committed result then says what was run, not where
    (issue 49: six results held a developer's checkout path)."""
    if isinstance(record, dict):
        return {key: portable(value) for key, value in record.items()}
    if isinstance(record, (list, tuple)):
        return [portable(value) for value in record]
    if not isinstance(record, str) or "/" not in record:
        return record
    from embedded import cache_dir

    text = record.replace(str(REPO_ROOT) + "/", "").replace(str(REPO_ROOT), ".")
    text = text.replace(str(cache_dir()), "$GUARD_CACHE_DIR")
    return text.replace(str(Path.home()) + "/", "~/")


def write_json(path: Path, record: object, indent: int | None = 2, **dumps_options) -> None:
    """Write a benchmark's record as JSON at ``path`` (the ``--json`` option), making its folder; paths portable."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(portable(record), indent=indent, **dumps_options) + "\n")


if __name__ == "__main__":
    print(json.dumps(machine_info(), indent=2))
