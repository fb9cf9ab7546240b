"""A resume writes where the session recorded its output directory: an absolute path as recorded (it was resolved
when the session was created), a relative one (an older session's) resolved, an S3 location as its URL text."""

from __future__ import annotations

from pathlib import Path

import pytest

from strands_durable.runner.artifacts import recorded_out, resolve_out


def test_an_absolute_recorded_out_is_used_as_recorded(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    recorded = str(resolve_out(tmp_path / "link"))  # what create_run records
    assert recorded == str((tmp_path / "real").resolve())
    assert recorded_out(recorded) == Path(recorded)
    assert recorded_out(str(tmp_path / "link")) == tmp_path / "link"  # no system call walks it again


def test_a_relative_recorded_out_is_resolved(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert recorded_out("out") == (tmp_path / "out").resolve()


def test_an_s3_recorded_out_stays_a_url() -> None:
    assert recorded_out("s3://bucket/prefix/") == resolve_out("s3://bucket/prefix/")
    assert isinstance(recorded_out("s3://bucket/prefix"), str)
