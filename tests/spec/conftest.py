"""Shared fixture for the spec tests: write small specs as real files in tmp_path."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest


@pytest.fixture
def write_spec(tmp_path: Path) -> Callable[..., Path]:
    """Write spec text (dedented) to tmp_path/<name> and return the path."""

    def write(text: str, name: str = "spec.yaml") -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path

    return write
