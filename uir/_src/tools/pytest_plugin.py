"""uir's pytest plugin (registered as `uir` through the package's pytest11
entry point; it does nothing a test does not ask for):

- `uir_backend`: a test that takes this fixture runs once per backend uir
  runs here ("cpu", "eval", and "gpu" where the CUDA driver finds a GPU),
  with the name as the fixture's value.
- `uir_report`: a callable `uir_report(f, *args)` (or a module) naming what
  the test compiles; when the test fails, the whole compile's HTML report
  (uir.report) is written under the test's temporary directory and its
  path added to the failure's report.
- `--uir-dump=DIR`: each test's compiles dump their stages (as
  UIR_FLAGS=--dump_to) into DIR/<test name>/."""

from __future__ import annotations

import os
import re

import pytest

from uir._src.core.compile_options import BACKENDS


def pytest_addoption(parser):
    group = parser.getgroup("uir")
    group.addoption(
        "--uir-dump",
        metavar="DIR",
        default=None,
        help="dump every stage of each test's compiles into DIR/<test name>/",
    )


def pytest_generate_tests(metafunc):
    if "uir_backend" in metafunc.fixturenames:
        metafunc.parametrize("uir_backend", runnable_backends())


def runnable_backends() -> list[str]:
    """The backends that run here: "gpu" only where the CUDA driver finds
    a GPU."""
    from uir._src.core.gpu import cuda_driver

    return [b for b in BACKENDS if b != "gpu" or cuda_driver()["available"]]


@pytest.fixture(autouse=True)
def _uir_dump(request, monkeypatch):
    directory = request.config.getoption("--uir-dump")
    if directory:
        name = re.sub(r"[^\w.-]+", "_", request.node.nodeid)
        flags = os.environ.get("UIR_FLAGS", "")
        target = os.path.join(directory, name)
        monkeypatch.setenv("UIR_FLAGS", f"{flags} --dump_to={target}".strip())
    yield


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.when == "call":
        item.stash[_OUTCOME] = report
    return report


_OUTCOME = pytest.StashKey()


@pytest.fixture
def uir_report(request, tmp_path):
    """Call it with what the test compiles: uir_report(f, *args) or
    uir_report(module). On failure the HTML report lands in tmp_path."""
    noted: list[tuple] = []

    def record(f, *args, **kwargs):
        noted.append((f, args, kwargs))

    yield record
    outcome = request.node.stash.get(_OUTCOME, None)
    if outcome is None or not outcome.failed or not noted:
        return
    from uir._src.tools.report import report

    for k, (f, args, kwargs) in enumerate(noted):
        path = tmp_path / f"uir-report-{k}.html"
        try:
            report(f, *args, **kwargs).save(path)
            text = f"uir report: {path}"
        except Exception as e:  # the test's failure is the news, not this
            text = f"uir report not written: {type(e).__name__}: {e}"
        outcome.sections.append(("uir report", text))
