"""`python -m uir`: the same command line as the `uir` script."""

import sys

from uir._src.cli import main

sys.exit(main())
