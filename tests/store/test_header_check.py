"""Which folders are sessions (`listing.folder_kind`) is decided by the journal's first line as it is on disk at each
call: a process that has seen a session's header before (the chaos explorer asks it several times per crash point,
and remembers verdicts by the exact bytes) still finds a header damaged since, and a header longer than the first
read is read whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from strands_durable import LocalStore
from strands_durable.errors import CorruptSession
from strands_durable.store.listing import DAMAGED, OURS, folder_kind
from strands_durable.store.local import JOURNAL_NAME

META = {
    "workflow_name": "header",
    "pattern": "chain",
    "spec_path": "/header.yaml",
    "spec_hash": "0" * 64,
    "variables": {},
    "created_at": "2026-01-01T00:00:00+00:00",
    "runtime": {"provider": "synthetic", "seed": 0},
}


def _session(store: LocalStore, variables: dict[str, str]) -> tuple[str, Path]:
    session = store.create({**META, "variables": variables}, b"name: header\n")
    session.close()
    return session.state.session_id, session.directory


def test_a_header_damaged_after_this_process_read_it_is_found_at_the_next_call(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    session_id, directory = _session(store, {})
    for _ in range(3):  # seen, and remembered, several times
        assert folder_kind(directory) == OURS
        store.load(session_id)
    journal = directory / JOURNAL_NAME
    data = bytearray(journal.read_bytes())
    at = data.index(b'"workflow_name":"header"') + len(b'"workflow_name":"')
    data[at] = ord("H")  # same length, same inode size: only the checksum tells
    journal.write_bytes(bytes(data))
    assert folder_kind(directory) == DAMAGED
    with pytest.raises(CorruptSession, match=JOURNAL_NAME):
        store.load(session_id)
    with pytest.raises(CorruptSession, match=JOURNAL_NAME):
        store.open(session_id)


def test_a_header_longer_than_the_first_read_is_read_whole(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    session_id, directory = _session(store, {"long": "x" * 20_000})
    assert (directory / JOURNAL_NAME).read_bytes().index(b"\n") > 20_000
    assert folder_kind(directory) == OURS
    assert store.load(session_id).meta["variables"]["long"] == "x" * 20_000
    assert store.session_ids() == [session_id]
