"""The guard's runtime modules never load the training code (a fresh interpreter, so nothing else imported it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RUNTIME = ["guard.judge.detector", "guard.language.exchange", "guard.judge.planning", "guard.models.pair_cache",
           "guard.judge.building", "guard.judge.pipeline", "guard.models.nli", "guard.models.loading",
           "guard.judge.policies", "guard.eval.probes", "guard.language.perturb"]


def test_runtime_modules_do_not_import_training_code():
    script = (
        "import json, sys\n"
        + "".join(f"import {name}\n" for name in RUNTIME)
        + "print(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(RUNTIME) <= set(loaded)
    assert [m for m in loaded if m.startswith("guard.training")] == []
