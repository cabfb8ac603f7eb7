"""`python -m uir`: the same command line as the `uir` script."""

import sys

from uir._tools.cli import main

sys.exit(main())
