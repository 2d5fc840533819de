"""``python -m guard``: see guard/cli.py and docs/cli.md."""

from guard.cli import main

raise SystemExit(main())
