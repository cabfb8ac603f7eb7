"""Where XLA's corpus lives: ../shared/corpus/xla-hlo beside the checkout,
or $UIR_CORPUS."""

from __future__ import annotations

import csv
import os
import pathlib

CORPUS = pathlib.Path(
    os.environ.get(
        "UIR_CORPUS", pathlib.Path(__file__).resolve().parents[2] / "shared" / "corpus" / "xla-hlo"
    )
)


def manifest_rows() -> list[dict[str, str]]:
    """MANIFEST.tsv's rows; empty when the corpus is missing (the presence
    test then fails with a clear message)."""
    path = CORPUS / "MANIFEST.tsv"
    if not path.exists():
        return []
    with open(path, encoding="utf-8") as f:
        return list(csv.DictReader(f, delimiter="\t"))
