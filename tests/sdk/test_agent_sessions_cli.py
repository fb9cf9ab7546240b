"""`strands sessions ...` on plain-Python agent sessions, and `strands run --resume` refusing one (exit 2)."""

from __future__ import annotations

import json

from tests.cli.support import strands_command

from .support import PROMPTS, World


def test_sessions_commands_work_on_an_agent_session(tmp_path):
    world = World(tmp_path / "sessions")
    agent = world.agent()
    agent(PROMPTS[0])
    env = {"STRANDS_SESSIONS_DIR": str(world.sessions)}

    listed = strands_command("sessions", "list", "--json", cwd=tmp_path, env=env)
    assert listed.returncode == 0, listed.stderr
    rows = json.loads(listed.stdout)
    row = next(r for r in (rows if isinstance(rows, list) else rows["sessions"]) if r["session_id"] == "expenses-1")
    assert row["pattern"] == "agent" and row["status"] == "idle"

    shown = strands_command("sessions", "show", "expenses-1", cwd=tmp_path, env=env)
    assert shown.returncode == 0 and "idle" in shown.stdout, shown.stderr
    checked = strands_command("sessions", "check", "expenses-1", cwd=tmp_path, env=env)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    exported = json.loads(strands_command("sessions", "export", "expenses-1", cwd=tmp_path, env=env).stdout)
    assert [m["role"] for m in exported["agents"]["default"]["messages"]] == ["user", "assistant", "user", "assistant"]

    resumed = strands_command("run", "--resume", "expenses-1", cwd=tmp_path, env=env)
    assert resumed.returncode == 2
    assert "plain-Python agent session" in resumed.stderr and "Traceback" not in resumed.stderr

    deleted = strands_command("sessions", "delete", "expenses-1", "--force", cwd=tmp_path, env=env)
    assert deleted.returncode == 0, deleted.stderr
    assert not (world.sessions / "session_expenses-1").exists()


def test_cleanup_deletes_an_idle_agent_session_only_when_idle_is_asked_for(tmp_path):
    world = World(tmp_path / "sessions")
    world.agent()(PROMPTS[0])
    env = {"STRANDS_SESSIONS_DIR": str(world.sessions)}
    every = strands_command("sessions", "cleanup", "--older-than", "0s", "--force", cwd=tmp_path, env=env)
    assert every.returncode == 0 and (world.sessions / "session_expenses-1").exists(), every.stdout
    idle = strands_command(
        "sessions", "cleanup", "--older-than", "0s", "--status", "idle", "--force", cwd=tmp_path, env=env
    )
    assert idle.returncode == 0, idle.stderr
    assert not (world.sessions / "session_expenses-1").exists()
