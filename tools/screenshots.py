"""Writes docs/img/report.png and docs/img/pass_trace.png, the pictures the
README opens with: `uir report` of the bundled MLP, and the pipeline trace
of a softmax with priority fusion's row opened, each rendered by headless
Chromium (Debian's `chromium`).

    python tools/screenshots.py
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]


def shoot(page: pathlib.Path, png: pathlib.Path, size: str) -> None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        sys.exit("needs headless Chromium: apt install chromium")
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         f"--screenshot={png}", f"--window-size={size}", page.as_uri()],
        check=True, capture_output=True, env=env,
    )  # fmt: skip
    print(f"wrote {png.relative_to(ROOT)}")


def main() -> None:
    import uir
    import uir.examples
    import uir.numpy as unp

    out = ROOT / "docs" / "img"
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        report = tmp / "report.html"
        uir.report(uir.hlo.load(uir.examples.path("mlp.hlo")), profile=False).save(report)
        shoot(report, out / "report.png", "1000,1100")

        def softmax(x):
            e = unp.exp(x - x.max(axis=-1, keepdims=True))
            return e / e.sum(axis=-1, keepdims=True)

        module = uir.jit(softmax).lower(np.ones((64, 256), np.float32)).module
        _, trace = uir.passes.default_pipeline().run(module, trace=True)
        html = trace._repr_html_()
        # As a reader sees it after opening priority fusion's row.
        at = html.rfind("<details", 0, html.index("<b>priority-fusion</b>"))
        html = html[:at] + "<details open" + html[at + len("<details") :]
        page = tmp / "trace.html"
        page.write_text(
            f'<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>{html}</body></html>',
            encoding="utf-8",
        )
        shoot(page, out / "pass_trace.png", "1000,1300")


if __name__ == "__main__":
    main()
