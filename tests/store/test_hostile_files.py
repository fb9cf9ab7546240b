"""Every hostile-file case (strands_durable.testing.hostile_files) does what it says to a real paused session, beside
a healthy one: a `corrupt` case is listed as corrupt naming its file, every read and the resume exit 17 naming it,
and delete removes it; a `repairable` case is named by check, rewritten by repair, and the session then completes.
The healthy session's row and resume are unchanged either way."""

from __future__ import annotations

from pathlib import Path

import pytest

from strands_durable import LocalStore, RunOptions, resume, run_workflow
from strands_durable.errors import DurableError, HitlPaused, exit_code_for
from strands_durable.operations import check_session, repair_session
from strands_durable.testing.hostile_files import CASES, HostileFile
from tests.cli.support import HITL_CHAIN

pytestmark = pytest.mark.slow


def _paused(spec: Path, store: LocalStore, out: Path) -> str:
    before = set(store.session_ids())
    with pytest.raises(HitlPaused):
        run_workflow(spec, RunOptions(out_dir=out), store=store)
    (session_id,) = set(store.session_ids()) - before
    return session_id


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_a_hostile_file_does_what_its_case_says_and_nothing_to_the_next_session(case: HostileFile, tmp_path) -> None:
    spec = tmp_path / "review.strands.yaml"
    spec.write_text(HITL_CHAIN, encoding="utf-8")
    store = LocalStore(tmp_path / "sessions")
    healthy = _paused(spec, store, tmp_path / "out")
    victim = _paused(spec, store, tmp_path / "out")
    row_before = {s.session_id: s for s in store.list()}[healthy]

    damaged = case.damage(store, victim)

    rows = {s.session_id: s for s in store.list()}
    assert rows[healthy] == row_before
    with pytest.raises(DurableError) as raised:
        resume(victim, RunOptions(out_dir=tmp_path / "out", hitl_response="yes"), store=store)
    assert exit_code_for(raised.value) == 17 and str(damaged) in str(raised.value), raised.value
    assert case.reason in str(raised.value)
    if case.outcome == "corrupt":
        assert rows[victim].status == "corrupt"
        relative = damaged.relative_to(store.directory_of(victim))
        assert rows[victim].reason.startswith(f"{relative}: ") and case.reason in rows[victim].reason
        with pytest.raises(DurableError) as refused:
            store.load(victim)  # what show and export read
        assert exit_code_for(refused.value) == 17 and str(damaged) in str(refused.value)
        assert [p.where for p in check_session(store, victim) if p.severity == "error"]
        store.delete(victim)
        assert set(store.session_ids()) == {healthy}
    else:
        assert rows[victim].status == "paused"
        relative = str(damaged.relative_to(store.directory_of(victim)))
        assert relative in [p.where for p in check_session(store, victim) if p.severity == "error"]
        assert relative in repair_session(store, victim).rewritten
        assert resume(victim, RunOptions(out_dir=tmp_path / "out", hitl_response="yes"), store=store).status == (
            "completed"
        )
    assert resume(healthy, RunOptions(out_dir=tmp_path / "out", hitl_response="yes"), store=store).status == (
        "completed"
    )
