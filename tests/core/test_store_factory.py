"""`open_store`: the default directory, a given directory, s3:// (exit 18 until the S3 store is installed) and
other schemes refused; the CLI takes `--sessions-dir` through it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from strands_durable import LocalStore
from strands_durable.errors import ExitCode, Unsupported
from strands_durable.store import open_store
from tests.cli.support import strands_command


def test_no_value_means_the_environment_then_the_home_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STRANDS_SESSIONS_DIR", str(tmp_path / "from-env"))
    store = open_store(None)
    assert isinstance(store, LocalStore) and store.root == tmp_path / "from-env"
    monkeypatch.delenv("STRANDS_SESSIONS_DIR")
    monkeypatch.setenv("HOME", str(tmp_path))
    store = open_store()
    assert isinstance(store, LocalStore) and store.root == tmp_path / ".strands" / "sessions"


def test_a_directory_opens_a_local_store_with_its_options(tmp_path: Path) -> None:
    for value in (tmp_path / "a", str(tmp_path / "b")):
        store = open_store(value, strict=True)
        assert isinstance(store, LocalStore) and store.root == Path(value) and store.strict


def test_s3_without_the_s3_store_is_unsupported_naming_the_scheme(monkeypatch: pytest.MonkeyPatch) -> None:
    # an installation without the S3 store module (a trimmed build): `import` of it fails as a missing module
    monkeypatch.setitem(sys.modules, "strands_durable.store.s3", None)
    with pytest.raises(Unsupported) as raised:
        open_store("s3://bucket/sessions")
    assert raised.value.exit_code == ExitCode.UNSUPPORTED and "s3://" in str(raised.value)


@pytest.mark.parametrize("value", ["gs://bucket/x", "HTTP://host/x", "file+x://y"])
def test_other_schemes_are_refused_naming_the_scheme(value: str) -> None:
    with pytest.raises(Unsupported) as raised:
        open_store(value)
    assert value.split("://")[0].lower() + "://" in str(raised.value)


def test_the_cli_refuses_an_unknown_scheme_in_one_line_with_exit_18(tmp_path: Path) -> None:
    result = strands_command("sessions", "list", "--sessions-dir", "gs://bucket/sessions", cwd=tmp_path)
    assert result.returncode == 18, result.stderr
    assert result.stderr.strip().splitlines() == [
        "Error: Unsupported sessions location scheme gs:// in gs://bucket/sessions (use a directory or s3://)"
    ]
