"""Shared fixtures for the spec tests: the strands-cli corpus and a writer for small specs in tmp_path."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus" / "strands-cli-v0"

MINIMAL_SPEC = """\
version: 0
name: demo
runtime:
  provider: synthetic
agents:
  writer:
    prompt: "Write about {{ topic }}"
pattern:
  type: chain
  config:
    steps:
      - agent: writer
        input: "go"
"""


def corpus_examples() -> list[Path]:
    """The corpus's example specs; a missing corpus is a failure, never a skip."""
    examples = CORPUS / "examples"
    if not examples.is_dir():
        raise FileNotFoundError(f"the strands-cli corpus is missing: {examples.resolve()}")
    return sorted(examples.glob("*.yaml"))


@pytest.fixture
def write_spec(tmp_path: Path) -> Callable[..., Path]:
    """Write spec text (dedented) to tmp_path/<name> and return the path."""

    def write(text: str, name: str = "spec.yaml") -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path

    return write
