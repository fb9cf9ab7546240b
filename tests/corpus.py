"""Where the strands-cli corpus lives: `$STRANDS_CORPUS`, else `../shared/corpus` beside the checkout (as in CI).

A missing corpus skips the module saying why, except in CI (`CI=true`), where it fails: a gate that silently
skipped its corpus would pass without testing anything.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def corpus_dir() -> Path:
    """The strands-cli v0 corpus (holding `examples/`), or skip / fail the calling test module."""
    configured = os.environ.get("STRANDS_CORPUS")
    root = Path(configured) if configured else REPO.parent / "shared" / "corpus"
    corpus = root / "strands-cli-v0"
    if (corpus / "examples").is_dir():
        return corpus
    reason = f"the strands-cli corpus is missing: {corpus} (set STRANDS_CORPUS or check it out at ../shared/corpus)"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason, allow_module_level=True)
