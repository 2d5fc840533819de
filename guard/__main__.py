"""``python -m guard``: see guard/cli.py and docs/cli.md."""
from __future__ import annotations

from guard.cli import main

raise SystemExit(main())
