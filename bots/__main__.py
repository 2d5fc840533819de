import sys

from bots.cli import main

sys.exit(main())
