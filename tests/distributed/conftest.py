"""The helpers beside these tests (the collective cases, the shard_map
programs, the training step) are shared with the ranks mpirun starts
(mpi_worker.py), which import them from this folder: the tests do too."""

from __future__ import annotations

import pathlib
import sys

HERE = str(pathlib.Path(__file__).resolve().parent)
if HERE not in sys.path:
    sys.path.insert(0, HERE)
