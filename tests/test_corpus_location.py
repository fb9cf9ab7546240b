"""The corpus is found beside the checkout or through STRANDS_CORPUS; missing, it skips saying why, but fails in
CI, where a silently skipped corpus would let the gate pass without testing it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.corpus import REPO, corpus_dir


def test_the_corpus_is_found_beside_the_checkout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("STRANDS_CORPUS", raising=False)
    expected = REPO.parent / "shared" / "corpus" / "strands-cli-v0"
    if not (expected / "examples").is_dir():
        pytest.skip(f"no corpus at {expected}")
    assert corpus_dir() == expected


def test_strands_corpus_names_another_place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "strands-cli-v0" / "examples").mkdir(parents=True)
    monkeypatch.setenv("STRANDS_CORPUS", str(tmp_path))
    assert corpus_dir() == tmp_path / "strands-cli-v0"


def test_a_missing_corpus_skips_outside_ci_and_fails_in_ci(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRANDS_CORPUS", str(tmp_path / "absent"))
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="the strands-cli corpus is missing"):
        corpus_dir()
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="the strands-cli corpus is missing"):
        corpus_dir()
