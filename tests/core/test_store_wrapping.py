"""WrappingStore: a real store around another whose hooks observe commits, opens and closes, and fault them."""

from __future__ import annotations

import errno
from pathlib import Path
from typing import Any

import pytest

from strands_durable import LocalStore, MemoryStore, RunOptions, resume, run_workflow
from strands_durable.errors import StorageIOError
from strands_durable.store import WrappingStore
from strands_durable.store.wrapping import CommitCall, WrappedSession
from tests.cli.support import make_session
from tests.core.test_store_io_errors import SHORT_SPEC


def test_hooks_see_every_open_commit_and_close_in_order() -> None:
    seen: list[str] = []
    store = WrappingStore(
        MemoryStore(),
        on_open=lambda s, created: seen.append(f"open created={created}"),
        on_commit=lambda s, call: seen.append(f"before {call.path} seq={s.state.seq}"),
        after_commit=lambda s, call: seen.append(f"after {call.path} seq={s.state.seq}"),
        on_close=lambda s, abandoned: seen.append(f"close abandoned={abandoned}"),
        record=True,
    )
    session = make_session(store, session_id="hooked")  # type: ignore[arg-type]
    session.commit([{"type": "status", "status": "paused"}], path="pause", durable=False)
    session.close()
    store.open("hooked").abandon()
    assert seen == [
        "open created=True",
        "before pause seq=0",
        "after pause seq=1",
        "close abandoned=False",
        "open created=False",
        "close abandoned=True",
    ]
    assert [(c.path, c.durable, c.synced, c.seq) for c in store.commits] == [("pause", False, False, 1)]
    assert len(store.sessions) == 2 and store.session is store.sessions[-1]


def test_a_hook_that_raises_before_a_commit_keeps_it_out_of_the_record(tmp_path: Path) -> None:
    def refuse(session: WrappedSession, call: CommitCall) -> None:
        if call.path == "refused":
            raise StorageIOError("injected")

    store = WrappingStore(LocalStore(tmp_path), on_commit=refuse)
    session = make_session(store, session_id="faulted")  # type: ignore[arg-type]
    with pytest.raises(StorageIOError):
        session.commit([{"type": "status", "status": "failed"}], path="refused")
    session.close()
    assert LocalStore(tmp_path).load("faulted").status == "running"


def test_an_open_hook_that_raises_releases_the_lease(tmp_path: Path) -> None:
    make_session(LocalStore(tmp_path), session_id="opened").close()

    def refuse(session: WrappedSession, created: bool) -> None:
        raise RuntimeError("no")

    with pytest.raises(RuntimeError):
        WrappingStore(LocalStore(tmp_path), on_open=refuse).open("opened")
    assert LocalStore(tmp_path).holder("opened") is None


def test_a_disk_fault_injected_through_the_wrapper_fails_a_real_run_that_then_resumes(tmp_path: Path) -> None:
    spec = tmp_path / "short.strands.yaml"
    spec.write_text(SHORT_SPEC)
    commits: list[Any] = []

    def disk_full_at_the_fifth_commit(session: WrappedSession, call: CommitCall) -> None:
        commits.append(call)
        if len(commits) == 5:
            raise OSError(errno.ENOSPC, "No space left on device")

    store = WrappingStore(LocalStore(tmp_path / "sessions"), on_commit=disk_full_at_the_fifth_commit)
    options = RunOptions(provider="synthetic", out_dir=tmp_path / "out")
    with pytest.raises(StorageIOError, match="cannot commit to session wrapped-run: No space left on device"):
        run_workflow(spec, options, store=store, session_id="wrapped-run")
    plain = LocalStore(tmp_path / "sessions")
    failed = plain.load("wrapped-run")
    assert failed.status == "failed" and "(ENOSPC)" in str(failed.reason)
    # records 1-4 are the first four commits; the fifth never happened: record 5 is the failure, 6 the close
    assert plain.load("wrapped-run", upto_seq=5).status == "failed" and failed.seq == 6
    outcome = resume("wrapped-run", RunOptions(provider="synthetic", out_dir=tmp_path / "out"), store=plain)
    assert outcome.status == "completed"
