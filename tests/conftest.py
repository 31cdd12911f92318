"""Shared fixtures for the whole suite."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED = REPO_ROOT.parent / "shared"


@pytest.fixture
def shared_dir() -> Path:
    """The shared reference data beside the checkout; skips where it is absent."""
    if not SHARED.is_dir():
        pytest.skip(f"reference data folder {SHARED} is absent on this machine")
    return SHARED
