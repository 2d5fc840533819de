import os
import sys

# Idle OpenMP threads sleep instead of spinning: on a shared CPU spinning threads steal the cores the
# generation needs (must be set before torch loads its OpenMP runtime).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from bots.cli import main  # noqa: E402

sys.exit(main())
