"""Shared by the transformation tests."""

from __future__ import annotations

import pytest

import uir


@pytest.fixture
def x64():
    """64-bit types on for the test (finite differences in float64)."""
    before = uir.config.read("enable_x64")
    uir.config.update("enable_x64", True)
    yield
    uir.config.update("enable_x64", bool(before))
