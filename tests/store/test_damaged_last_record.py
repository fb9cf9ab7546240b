"""A complete, newline-terminated last journal record that fails its checksum is never dropped silently
(issue 39, item 2). When a record before it was written on this boot of the machine, no power cut can have torn
it: it was committed, so it is corruption (exit 17 naming the journal; `sessions check` an error). Otherwise (the
machine restarted since: a multi-sector append torn in its middle keeps its newline) it is a torn tail that
`sessions check` names and a resume cuts off, unless session.json shows the record (readable files are written
only from durable records) or a later record follows it: either proves it was once whole, on any boot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from strands_durable import CrashPoints, InjectedCrash, LocalStore, RunOptions, resume, run_workflow
from strands_durable.crashpoints import Commit
from strands_durable.errors import CorruptSession, HitlPaused
from strands_durable.operations import check_session
from strands_durable.store import local_session
from strands_durable.store.fileops import FileOps
from strands_durable.store.journal import read_journal
from tests.cli.support import HITL_CHAIN, strands_command

pytestmark = pytest.mark.slow


class _AfterAReboot(FileOps):
    """The real file operations on a machine that has restarted since the journal was written."""

    def boot_id(self) -> str:
        return "a-later-boot-of-this-machine"


def _paused_for_a_human(tmp_path: Path) -> tuple[LocalStore, str]:
    spec = tmp_path / "review.strands.yaml"
    spec.write_text(HITL_CHAIN, encoding="utf-8")
    store = LocalStore(tmp_path / "sessions")
    with pytest.raises(HitlPaused):
        run_workflow(spec, RunOptions(out_dir=tmp_path / "out"), store=store)
    (session_id,) = store.session_ids()
    return store, session_id


def _answered_then_killed(tmp_path: Path, kind: str = "unit") -> tuple[LocalStore, str]:
    """A chain paused for a human, resumed with the answer, and killed the moment the first record with an event
    of `kind` was committed ("unit": the answer; "status": the resume's `running`, which rewrites session.json)."""
    store, session_id = _paused_for_a_human(tmp_path)

    def die_after_the_answer(point: Commit) -> None:
        if point.site == "store.after_commit" and kind in point.kinds:
            raise InjectedCrash(point)

    crash = CrashPoints()
    crash.subscribe(Commit, die_after_the_answer)
    with pytest.raises(InjectedCrash):
        resume(
            session_id, RunOptions(out_dir=tmp_path / "out", hitl_response="ship it", crash_points=crash), store=store
        )
    if kind == "unit":
        last = store.journal_bytes(session_id).splitlines()[-1]
        assert b'"response":"ship it"' in last  # the committed answer is the last record
    return store, session_id


def _flip_a_byte_in_the_last_record(store: LocalStore, session_id: str, word: bytes = b"ship it") -> None:
    journal = store.journal_path(session_id)
    data = bytearray(journal.read_bytes())
    start = data.rstrip(b"\n").rindex(b"\n") + 1
    at = data.index(word, start)
    data[at] ^= 0x20  # "Ship it": the line stays complete and newline-terminated, its checksum no longer holds
    journal.write_bytes(bytes(data))


def test_a_damaged_last_record_written_on_this_boot_is_corruption_not_a_torn_tail(tmp_path: Path) -> None:
    store, session_id = _answered_then_killed(tmp_path)
    _flip_a_byte_in_the_last_record(store, session_id)
    journal = store.journal_path(session_id)
    damaged = journal.read_bytes()

    resumed = strands_command(
        "run", "--resume", session_id, cwd=tmp_path, env={"STRANDS_SESSIONS_DIR": str(store.root)}
    )
    assert resumed.returncode == 17, (resumed.stdout, resumed.stderr)  # before: exit 19, the human asked again
    assert resumed.stderr.startswith(f"Error: Corrupt session file {journal}: the last record (at byte "), (
        resumed.stderr
    )
    assert "is complete but fails its checksum, and record " in resumed.stderr
    assert journal.read_bytes() == damaged  # nothing was cut

    with pytest.raises(CorruptSession, match="fails its checksum"):
        store.load(session_id)
    errors = [p for p in check_session(store, session_id) if p.severity == "error"]
    assert [p.where for p in errors] == ["journal.log"] and "it was committed and is now damaged" in errors[0].detail
    listed = {s.session_id: s.display_status for s in store.list()}
    assert listed[session_id].startswith("corrupt (journal.log: the last record (at byte ")


def test_after_a_reboot_the_same_damage_is_a_torn_tail_that_check_names_and_resume_cuts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # session.json follows unit progress at most every VIEW_INTERVAL_S; a loaded machine could take that long
    # between the resume's status commit and the answer's, and then session.json would prove the answer whole.
    # An hour's interval keeps the view where a fast machine leaves it: at the resume's `running`.
    monkeypatch.setattr(local_session, "VIEW_INTERVAL_S", 3600.0)
    store, session_id = _answered_then_killed(tmp_path)
    view = json.loads((store.root / f"session_{session_id}" / "session.json").read_bytes())
    last_seq = len(store.journal_bytes(session_id).splitlines()) - 1
    assert view["journal_seq"] < last_seq, "session.json shows the answer: nothing here may prove it was whole"
    _flip_a_byte_in_the_last_record(store, session_id)
    rebooted = LocalStore(store.root, fileops=_AfterAReboot())
    problems = check_session(rebooted, session_id)
    assert [(p.severity, p.where) for p in problems if p.where == "journal.log"] == [("warning", "journal.log")]
    (warning,) = [p.detail for p in problems if p.where == "journal.log"]
    assert "is complete but fails its checksum, and nothing proves it was ever written whole" in warning
    assert "step[1]" not in rebooted.load(session_id).units  # the answer is not part of the state
    with pytest.raises(HitlPaused):  # the answer never became durable: the human is asked again
        resume(session_id, RunOptions(out_dir=tmp_path / "out"), store=rebooted)
    records = read_journal(Path("journal.log"), store.journal_bytes(session_id)).records
    assert all(b"hip it" not in json.dumps(r).encode() for r in records[-3:])


def test_a_record_carries_the_boot_it_was_written_on_once_per_process(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "sessions")
    from tests.cli.support import make_session

    session = make_session(store)
    for status in ("paused", "running", "paused"):
        session.commit([{"type": "status", "status": status}])
    session.close()
    records = read_journal(Path("journal.log"), store.journal_bytes(session.state.session_id)).records
    boots = [r.get("boot") for r in records]
    assert boots[1] == FileOps().boot_id() and boots[2:] == [None] * (len(boots) - 2)


def test_after_a_reboot_a_damaged_last_record_that_session_json_shows_is_corruption(tmp_path: Path) -> None:
    store, session_id = _answered_then_killed(tmp_path, kind="status")
    last_seq = len(store.journal_bytes(session_id).splitlines()) - 1
    view = json.loads((store.root / f"session_{session_id}" / "session.json").read_bytes())
    assert view["status"] == "running" and view["journal_seq"] == last_seq  # written from the last record
    _flip_a_byte_in_the_last_record(store, session_id, word=b'"running"')
    damaged = store.journal_bytes(session_id)
    rebooted = LocalStore(store.root, fileops=_AfterAReboot())  # no record of this boot proves anything

    with pytest.raises(CorruptSession, match=f"fails its checksum, and session.json shows record {last_seq}"):
        resume(session_id, RunOptions(out_dir=tmp_path / "out", hitl_response="ship it"), store=rebooted)
    assert store.journal_bytes(session_id) == damaged  # nothing was cut
    errors = [p for p in check_session(rebooted, session_id) if p.severity == "error"]
    assert [p.where for p in errors] == ["journal.log"] and "session.json shows record" in errors[0].detail


def test_a_damaged_record_with_records_after_it_is_corruption_on_any_boot(tmp_path: Path) -> None:
    """A later record (the next unit, the close's mark) proves the damaged one was once whole: never cut."""
    store, session_id = _paused_for_a_human(tmp_path)
    resume(session_id, RunOptions(out_dir=tmp_path / "out", hitl_response="ship it"), store=store)
    journal = store.journal_path(session_id)
    lines = journal.read_bytes().splitlines(keepends=True)
    (answer,) = [n for n, line in enumerate(lines) if b'"response":"ship it"' in line]
    assert answer < len(lines) - 2  # the next unit and the close's mark follow the answer
    lines[answer] = lines[answer].replace(b"ship it", b"Ship it")
    journal.write_bytes(b"".join(lines))

    for reader in (store, LocalStore(store.root, fileops=_AfterAReboot())):
        with pytest.raises(CorruptSession, match=r"bad checksum at byte \d+ followed by more records"):
            reader.load(session_id)
    shown = strands_command("sessions", "show", session_id, cwd=tmp_path, env={"STRANDS_SESSIONS_DIR": str(store.root)})
    assert shown.returncode == 17 and shown.stderr.startswith(f"Error: Corrupt session file {journal}: bad checksum")
