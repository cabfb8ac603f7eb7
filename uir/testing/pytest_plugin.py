"""uir's pytest plugin (entry point `uir`): fixtures uir_backend and
uir_report, option --uir-dump=DIR. See uir._src.tools.pytest_plugin."""

from uir._src.tools.pytest_plugin import (
    _uir_dump,
    pytest_addoption,
    pytest_generate_tests,
    pytest_runtest_makereport,
    uir_report,
)

__all__ = [
    "_uir_dump",
    "pytest_addoption",
    "pytest_generate_tests",
    "pytest_runtest_makereport",
    "uir_report",
]
