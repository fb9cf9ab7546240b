"""`strands sessions ...` through real subprocesses: list, show, delete, cleanup, export, check, repair."""

from __future__ import annotations

import json
import re

import pytest

from tests.cli.support import CHAIN, make_session, session_ids_in

pytestmark = pytest.mark.slow


@pytest.fixture
def completed_id(strands, write_spec) -> str:
    result = strands("run", write_spec(CHAIN))
    assert result.returncode == 0, result.stderr
    return session_ids_in(result.stdout)[0]


def _broken_session(store) -> str:
    """A session whose stored history has a tool call answered by a plain user message (what old SDK bugs left).
    Written with strict validation off, as an older tool that wrote it would have."""
    store.strict = False
    session = make_session(store, workflow="broken")
    key = "writer"

    def message(index: int, role: str, content: list) -> dict:
        return {
            "type": "message",
            "conv": key,
            "agent": "writer",
            "unit": "step[0]",
            "index": index,
            "message": {"role": role, "content": content},
        }

    session.commit([message(0, "user", [{"text": "Plan the trip."}])])
    session.commit([message(1, "assistant", [{"toolUse": {"toolUseId": "t1", "name": "calculator", "input": {}}}])])
    session.commit([message(2, "user", [{"text": "Go on."}])])
    session.commit([message(3, "assistant", [{"text": "Done."}])])
    session.commit([{"type": "status", "status": "paused", "reason": "interrupted"}])
    session.close()
    return session.state.session_id


# -- list ---------------------------------------------------------------------------------------------------------
def test_list_without_sessions_says_so(strands):
    result = strands("sessions", "list")
    assert (result.returncode, result.stdout, result.stderr) == (0, "No sessions found.\n", "")


def test_list_is_a_table_newest_first_with_stale_running_shown(strands, store, completed_id):
    stale = make_session(store, workflow="crashed")
    stale.abandon()  # as a killed process leaves it: status running, nobody holds the lease
    live = make_session(store, workflow="busy")
    try:
        result = strands("sessions", "list")
    finally:
        live.close()
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["Session", "ID", "Workflow", "Pattern", "Status", "Updated"]
    rows = [re.split(r"\s{2,}", line.strip()) for line in lines[1:]]
    assert [row[:4] for row in rows] == [
        [live.state.session_id, "busy", "chain", "running"],
        [stale.state.session_id, "crashed", "chain", "running (stale)"],
        [completed_id, "tiny-chain", "chain", "completed"],
    ]
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", row[4]) for row in rows)


def test_list_filters_by_status_and_prints_json(strands, store, completed_id):
    make_session(store).abandon()
    only_completed = json.loads(strands("sessions", "list", "--status", "completed", "--json").stdout)
    assert [s["session_id"] for s in only_completed] == [completed_id]
    assert only_completed[0]["status"] == "completed" and only_completed[0]["workflow_name"] == "tiny-chain"
    assert strands("sessions", "list", "--status", "paused").stdout == "No paused sessions found.\n"
    bad = strands("sessions", "list", "--status", "sleeping")
    assert bad.returncode == 2 and bad.stderr.startswith("Error: --status: unknown status 'sleeping'")


def test_list_status_is_repeatable_like_cleanups(strands, store, completed_id):
    crashed = make_session(store, workflow="crashed")
    crashed.abandon()
    paused = make_session(store, workflow="paused")
    paused.commit([{"type": "status", "status": "paused", "reason": "interrupted"}])
    paused.close()
    both = strands("sessions", "list", "--status", "completed", "--status", "running", "--json")
    assert both.returncode == 0, both.stderr
    assert {s["session_id"] for s in json.loads(both.stdout)} == {completed_id, crashed.state.session_id}
    table = strands("sessions", "list", "--status", "paused", "--status", "completed").stdout
    assert set(session_ids_in(table)) == {completed_id, paused.state.session_id}
    none = strands("sessions", "list", "--status", "failed", "--status", "idle")
    assert none.stdout == "No failed or idle sessions found.\n"
    bad = strands("sessions", "list", "--status", "paused", "--status", "sleeping")
    assert bad.returncode == 2 and bad.stderr.startswith("Error: --status: unknown status 'sleeping'")


def test_show_and_delete_of_a_python_agent_session_name_its_whole_id_and_no_spec(strands, sessions_dir):
    from tests.sdk.support import PROMPTS, World

    World(sessions_dir).agent()(PROMPTS[0])  # session id "expenses-1": ten characters the caller chose
    shown = strands("sessions", "show", "expenses-1")
    assert shown.returncode == 0, shown.stderr
    assert "Session expenses-1" in shown.stdout and "expenses..." not in shown.stdout
    assert "None" not in shown.stdout and "Spec" not in shown.stdout and "Variables" not in shown.stdout
    assert re.search(r"Pattern\s+agent", shown.stdout) and re.search(r"Status\s+idle", shown.stdout)
    declined = strands("sessions", "delete", "expenses-1", stdin="n\n")
    assert declined.stdout.startswith("Delete session expenses-1? [y/N]: "), declined.stdout


# -- show ---------------------------------------------------------------------------------------------------------
def test_show_is_a_panel_with_token_usage(strands, completed_id):
    result = strands("sessions", "show", completed_id[:8])
    assert result.returncode == 0, result.stderr
    text = result.stdout
    for expected in (
        completed_id,
        "tiny-chain",
        "Pattern",
        "chain",
        "completed",
        "Created",
        "Updated",
        "topic=tides",
        "Token usage",
        "current_step",
    ):
        assert expected in text
    assert re.search(r"Total: \d+\s+Input: \d+\s+Output: \d+", text)
    assert text.splitlines()[0].startswith(f"╭─ Session {completed_id[:8]}...")


def test_show_json_holds_the_session_and_pattern_state(strands, completed_id):
    shown = json.loads(strands("sessions", "show", completed_id, "--json").stdout)
    assert shown["session"]["session_id"] == completed_id
    assert shown["session"]["token_usage"]["total"] == (
        shown["session"]["token_usage"]["input"] + shown["session"]["token_usage"]["output"]
    )
    assert shown["pattern_state"]["current_step"] == 3 and shown["lease"] is None


def test_show_names_the_live_holder_and_since_when(strands, store):
    import datetime as dt
    import os
    import socket

    live = make_session(store, workflow="busy")
    try:
        session_id = live.state.session_id
        text = strands("sessions", "show", session_id).stdout
        shown = json.loads(strands("sessions", "show", session_id, "--json").stdout)
    finally:
        live.close()
    lease = shown["lease"]
    assert (lease["pid"], lease["host"], lease["owner"]) == (os.getpid(), socket.gethostname(), None)
    since = dt.datetime.fromisoformat(lease["since"])
    assert abs((dt.datetime.now(dt.timezone.utc) - since).total_seconds()) < 60
    local = since.astimezone().strftime("%Y-%m-%d %H:%M:%S")
    flat = " ".join(text.replace("│", " ").split())  # the panel may wrap a long row
    assert f"In use by pid {os.getpid()} on host {socket.gethostname()} since {local}" in flat


@pytest.mark.parametrize("command", ["show", "export", "check", "repair", "delete"])
def test_session_commands_refuse_unknown_and_short_ids_with_exit_2(strands, command):
    unknown = strands("sessions", command, "deadbeef00")
    assert (unknown.returncode, unknown.stderr) == (2, "Error: Session not found: deadbeef00\n")
    short = strands("sessions", command, "dead")
    assert short.returncode == 2 and short.stderr.startswith("Error: Session id prefix too short: dead")


# -- delete -------------------------------------------------------------------------------------------------------
def test_delete_asks_first_and_keeps_the_session_on_no(strands, completed_id, sessions_dir):
    result = strands("sessions", "delete", completed_id, stdin="n\n")
    assert result.returncode == 0
    assert result.stdout.startswith(f"Delete session {completed_id[:8]}...? [y/N]: ")
    assert "Not deleted." in result.stderr
    assert (sessions_dir / f"session_{completed_id}").is_dir()
    eof = strands("sessions", "delete", completed_id, stdin="")
    assert eof.returncode == 0 and (sessions_dir / f"session_{completed_id}").is_dir()


def test_delete_on_yes_or_force_removes_the_session(strands, write_spec, completed_id, sessions_dir):
    result = strands("sessions", "delete", completed_id[:8], stdin="y\n")
    assert result.returncode == 0, result.stderr
    assert f"✓ Deleted session {completed_id}" in result.stdout
    assert not (sessions_dir / f"session_{completed_id}").exists()
    other = session_ids_in(strands("run", write_spec(CHAIN)).stdout)[0]
    forced = strands("sessions", "delete", other, "--force")
    assert forced.returncode == 0 and forced.stdout == f"✓ Deleted session {other}\n"
    for flag in ("--yes", "-y"):  # the spelling other CLIs use for "do not ask"
        again = session_ids_in(strands("run", write_spec(CHAIN)).stdout)[0]
        answered = strands("sessions", "delete", again, flag)
        assert answered.returncode == 0 and answered.stdout == f"✓ Deleted session {again}\n"


def test_delete_refuses_a_session_held_by_a_live_process(strands, store):
    with make_session(store) as held:
        result = strands("sessions", "delete", held.state.session_id, "--force")
        assert result.returncode == 17
        assert re.fullmatch(
            rf"Error: Session {held.state.session_id} is in use by pid \d+ on host \S+\n", result.stderr
        )
        assert held.state.session_id in [s.session_id for s in store.list()]


# -- cleanup ------------------------------------------------------------------------------------------------------
def test_cleanup_deletes_old_sessions_but_never_a_live_one(strands, store, completed_id):
    recent = strands("sessions", "cleanup", "--older-than", "1h", "-y")
    assert (recent.returncode, recent.stdout) == (0, "No sessions older than 1h to delete.\n")
    stale = make_session(store, workflow="crashed")
    stale.abandon()
    with make_session(store, workflow="busy") as live:
        dry = strands("sessions", "cleanup", "--older-than", "0s", "--dry-run")
        assert dry.returncode == 0
        assert f"Would delete: {completed_id} (tiny-chain, completed)" in dry.stdout
        assert f"Keeping {live.state.session_id} (busy): in use by pid" in dry.stdout
        assert len(store.list()) == 3
        declined = strands("sessions", "cleanup", "--older-than", "0s", stdin="n\n")
        assert "Delete 2 sessions? [y/N]: " in declined.stdout and len(store.list()) == 3
        done = strands("sessions", "cleanup", "--older-than", "0s", "--force")
        assert done.returncode == 0, done.stderr
        assert "✓ Deleted 2 sessions" in done.stdout
        assert [s.session_id for s in store.list()] == [live.state.session_id]


def test_cleanup_filters_by_status_and_rejects_bad_values(strands, store, completed_id):
    make_session(store).abandon()
    result = strands("sessions", "cleanup", "--older-than", "0s", "--status", "running", "--force")
    assert "✓ Deleted 1 session\n" in result.stdout
    assert [s.session_id for s in store.list()] == [completed_id]
    bad_age = strands("sessions", "cleanup", "--older-than", "a week")
    assert bad_age.returncode == 2 and bad_age.stderr.startswith("Error: --older-than: not a duration: 'a week'")
    bad_status = strands("sessions", "cleanup", "--status", "old")
    assert bad_status.returncode == 2 and "unknown status 'old'" in bad_status.stderr


# -- export -------------------------------------------------------------------------------------------------------
def test_export_prints_the_contracts_document(strands, completed_id):
    result = strands("sessions", "export", completed_id[:8])
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert set(document) == {"session", "pattern_state", "outputs", "agents", "journal"}
    assert document["session"]["session_id"] == completed_id
    assert list(document["outputs"]["units"]) == ["step[0]", "step[1]", "step[2]"]
    assert document["outputs"]["last_response"] == document["outputs"]["units"]["step[2]"]
    assert list(document["agents"]) == ["writer"]
    messages = document["agents"]["writer"]["messages"]
    assert len(messages) == 6 and all(set(m) == {"role", "content"} for m in messages)
    assert document["journal"] == {"writer": []}
    assert strands("sessions", "export", completed_id).stdout == result.stdout  # deterministic


# -- check and repair ---------------------------------------------------------------------------------------------
def test_check_passes_a_clean_session_and_fails_a_damaged_one(strands, completed_id, sessions_dir):
    clean = strands("sessions", "check", completed_id)
    assert (clean.returncode, clean.stdout) == (0, f"✓ Session {completed_id}: no violations\n")
    message_file = sessions_dir / f"session_{completed_id}" / "agents" / "writer" / "messages" / "message_1.json"
    message_file.write_text('{"message_id": 1, "message": {"role": "assistant", "content": []}}')
    damaged = strands("sessions", "check", completed_id)
    assert damaged.returncode == 1
    assert "error: agents/writer/messages/message_1.json: does not match the journal" in damaged.stdout
    assert damaged.stdout.splitlines()[-1] == f"✗ Session {completed_id}: 1 violation(s)"


def test_check_reports_a_torn_journal_tail_as_a_warning(strands, completed_id, sessions_dir):
    with open(sessions_dir / f"session_{completed_id}" / "journal.log", "ab") as journal:
        journal.write(b'0000abcd {"seq": 99')
    result = strands("sessions", "check", completed_id)
    assert result.returncode == 0, result.stdout
    assert "warning: journal.log: torn tail of 19 bytes" in result.stdout


def test_check_reports_a_corrupt_journal_as_a_violation(strands, completed_id, sessions_dir):
    journal = sessions_dir / f"session_{completed_id}" / "journal.log"
    lines = journal.read_bytes().split(b"\n")
    lines[1] = lines[1].replace(b'"events"', b'"EVENTS"', 1)  # a flipped byte mid-file: the checksum fails
    journal.write_bytes(b"\n".join(lines))
    result = strands("sessions", "check", completed_id)
    assert result.returncode == 1
    assert result.stdout.startswith("error: journal.log: Corrupt session file")
    assert "bad checksum" in result.stdout


def test_repair_writes_a_new_generation_keeps_a_backup_and_check_then_passes(strands, store, sessions_dir):
    session_id = _broken_session(store)
    before = strands("sessions", "check", session_id)
    assert before.returncode == 1
    assert "error: agents/writer: invalid stored history" in before.stdout

    result = strands("sessions", "repair", session_id)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert re.fullmatch(
        r"agents/writer: generation 1, 4 -> \d+ messages; previous files in .*/backups/\S+/agents/writer", lines[0]
    ), lines[0]
    assert any(line.startswith("  - synthesized_result at messages[") for line in lines)
    assert lines[-1] == f"✓ Session {session_id}: repaired 1 conversation(s)"
    backups = list((sessions_dir / f"session_{session_id}" / "backups").glob("*/agents/writer/messages/*.json"))
    assert len(backups) == 4

    assert strands("sessions", "check", session_id).returncode == 0
    again = strands("sessions", "repair", session_id)
    assert again.stdout == (
        f"✓ Session {session_id}: nothing to repair (histories valid, readable files match the journal)\n"
    )
    messages = json.loads(strands("sessions", "export", session_id).stdout)["agents"]["writer"]["messages"]
    assert messages[2]["content"][0]["toolResult"]["toolUseId"] == "t1"


def test_repair_of_a_healthy_session_writes_nothing(strands, completed_id, sessions_dir):
    directory = sessions_dir / f"session_{completed_id}"
    before = {name: (directory / name).read_bytes() for name in ("journal.log", "session.json")}
    for _ in range(2):  # the first repair after the run too: the run's close left every readable file trusted
        result = strands("sessions", "repair", completed_id)
        assert result.stdout.startswith(f"✓ Session {completed_id}: nothing to repair"), result.stderr
        after = {name: (directory / name).read_bytes() for name in before}
        assert after == before  # no record appended, updated_at (cleanup's age) unchanged


def test_repair_drop_strategy_removes_the_unanswered_call(strands, store):
    session_id = _broken_session(store)
    result = strands("sessions", "repair", session_id, "--strategy", "drop")
    assert result.returncode == 0, result.stderr
    assert "dropped_call" in result.stdout
    messages = json.loads(strands("sessions", "export", session_id).stdout)["agents"]["writer"]["messages"]
    assert not any("toolUse" in block for m in messages for block in m["content"])


def test_repair_refuses_a_bad_strategy_and_a_live_session(strands, store):
    session_id = _broken_session(store)
    bad = strands("sessions", "repair", session_id, "--strategy", "guess")
    assert bad.returncode == 2 and bad.stderr.startswith("Error: --strategy: unknown strategy 'guess'")
    with store.open(session_id, check=False):
        held = strands("sessions", "repair", session_id)
    assert held.returncode == 17 and "is in use by pid" in held.stderr


def test_a_damaged_readable_file_blocks_resume_with_17_until_repair_writes_it_again(strands, write_spec, sessions_dir):
    from tests.cli.support import HITL_CHAIN

    paused = strands("run", write_spec(HITL_CHAIN))
    assert paused.returncode == 19, paused.stderr
    session_id = session_ids_in(paused.stdout)[0]
    message_file = sessions_dir / f"session_{session_id}" / "agents" / "writer" / "messages" / "message_0.json"
    message_file.write_text("{}")
    blocked = strands("run", "--resume", session_id, "--hitl-response", "yes")
    assert blocked.returncode == 17
    assert blocked.stderr == (
        f"Error: Corrupt session file {message_file}: does not match the session journal; "
        f"`strands sessions repair {session_id}` writes it again from the journal\n"
    )
    repaired = strands("sessions", "repair", session_id)
    assert repaired.returncode == 0, repaired.stderr
    assert repaired.stdout.splitlines() == [
        "agents/writer/messages/message_0.json: written again from the journal",
        f"✓ Session {session_id}: rewrote 1 readable file(s)",
    ]
    assert strands("sessions", "check", session_id).returncode == 0
    resumed = strands("run", "--resume", session_id, "--hitl-response", "yes")
    assert resumed.returncode == 0, resumed.stderr
