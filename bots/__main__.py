"""``python -m bots``: the command line of bots.cli, started after OpenMP is configured."""
from __future__ import annotations

import sys

from embedded import configure_openmp

# How idle OpenMP threads wait (bounded spin unless OMP_WAIT_POLICY is set): embedded.configure_openmp,
# measured in docs/app.md. Must run before torch loads its OpenMP runtime.
configure_openmp()


def main() -> int:
    """Run the command line; bots.cli is imported here, so torch loads only after configure_openmp()."""
    from bots.cli import main as cli_main

    return cli_main()


if __name__ == "__main__":
    sys.exit(main())
