"""Ship a detector's int8 ONNX export inside its checkpoint folder: ``python -m guard.training ship-onnx FOLDER``.

The app exports a local checkpoint to int8 ONNX on first use (``guard.models.onnx_runtime``); on a new machine that
export is 5 s of the first reply's wait. A checkpoint that carries it (``FOLDER/onnx-int8``, with the hash of the
weights it was built from) skips it. Run this after every change to the weights, config or quantisation recipe:
``tests/test_onnx_shipped.py`` fails while the shipped export is stale.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m guard.training ship-onnx", description=__doc__.splitlines()[0])
    parser.add_argument("folder", help="a local detector checkpoint folder (config.json and weights)")
    args = parser.parse_args(argv)
    from guard.models.onnx_runtime import ship_int8

    shipped = ship_int8(Path(args.folder))
    size = sum(p.stat().st_size for p in shipped.iterdir()) / 2**20
    print(f"wrote {shipped} ({size:.1f} MiB)")


if __name__ == "__main__":
    main()
