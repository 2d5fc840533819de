"""Speed and accuracy benchmarks, each run from the repository root as ``python -m benchmarks.NAME``.

Importing the package keeps every benchmark offline: the hub settings are read once, when
``huggingface_hub`` is first imported, so they are set here, before any benchmark module loads.
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
