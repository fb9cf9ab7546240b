"""`FileOps.read_bytes` reads a whole file without buffering (a journal is read this way at every open and load):
every byte of files of any size, and the errors the store maps to its own (store/listing.py `file_error`)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from strands_durable.store.fileops import FileOps


@pytest.mark.parametrize("size", [0, 1, 4095, 65536, 65537, 300_001])
def test_every_byte_of_a_file_is_read(tmp_path: Path, size: int) -> None:
    data = os.urandom(size)
    path = tmp_path / "journal.log"
    path.write_bytes(data)
    assert FileOps().read_bytes(path) == data
    assert FileOps().read_bytes(str(path)) == data


def test_a_directory_or_a_missing_file_raises_as_open_does(tmp_path: Path) -> None:
    with pytest.raises(IsADirectoryError):
        FileOps().read_bytes(tmp_path)
    with pytest.raises(FileNotFoundError):
        FileOps().read_bytes(tmp_path / "missing")
