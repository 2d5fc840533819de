import sys

# How idle OpenMP threads wait (bounded spin unless OMP_WAIT_POLICY is set): embedded.configure_openmp,
# measured in docs/app.md. Must run before torch loads its OpenMP runtime.
from embedded import configure_openmp  # noqa: E402

configure_openmp()

from bots.cli import main  # noqa: E402

sys.exit(main())
