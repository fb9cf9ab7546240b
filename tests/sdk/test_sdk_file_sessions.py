"""`strands sessions check|repair --strands-sdk DIR ID` on the Strands SDK's own FileSessionManager sessions."""

from __future__ import annotations

import contextlib
import shutil

from strands import Agent
from strands.hooks import BeforeToolCallEvent
from strands.session.file_session_manager import FileSessionManager

from strands_durable.history import validate
from strands_durable.models.request import normalise_messages
from tests.cli.support import strands_command

from .support import PROMPTS, World


def _crashed_sdk_session(world: World) -> None:
    """A FileSessionManager session left as a crash inside a tool batch leaves it: a trailing toolUse."""

    def crash(event: BeforeToolCallEvent) -> None:
        raise KeyboardInterrupt  # propagates out of the concurrent executor, as a kill would end the process

    agent = Agent(
        model=world.model(),
        tools=world.tools(),
        callback_handler=None,
        session_manager=FileSessionManager("trip", storage_dir=str(world.sessions)),
    )
    agent.hooks.add_callback(BeforeToolCallEvent, crash)
    with contextlib.suppress(KeyboardInterrupt):
        agent(PROMPTS[0])


def test_check_reports_and_repair_fixes_an_interrupted_sdk_session(tmp_path):
    world = World(tmp_path / "sdk")
    _crashed_sdk_session(world)
    root = str(world.sessions)

    checked = strands_command("sessions", "check", "--strands-sdk", root, "trip", cwd=tmp_path)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert "toolUse without its result" in checked.stdout

    refused = strands_command("sessions", "repair", "--strands-sdk", root, "trip", cwd=tmp_path)
    assert refused.returncode == 2 and "--force" in refused.stderr

    repaired = strands_command("sessions", "repair", "--strands-sdk", root, "trip", "--force", cwd=tmp_path)
    assert repaired.returncode == 0, repaired.stdout + repaired.stderr
    backups = list((world.sessions / "session_trip" / "backups").iterdir())
    assert len(backups) == 1 and (backups[0] / "agent_default" / "messages" / "message_1.json").exists()
    assert strands_command("sessions", "check", "--strands-sdk", root, "trip", cwd=tmp_path).returncode == 0

    again = Agent(
        model=world.model(["unused", "unused", "Recorded the dinner."]),
        callback_handler=None,
        session_manager=FileSessionManager("trip", storage_dir=str(world.sessions)),
    )
    again(PROMPTS[1])  # the user's next prompt after the repair: the request the SDK sends is valid
    assert validate(world.requests[-1], provider="bedrock", mode="request", tools_configured=True) == []
    assert validate(normalise_messages(again.messages), provider="bedrock", mode="stored") == []


def test_a_repair_cut_short_mid_swap_is_finished_by_running_it_again(tmp_path):
    world = World(tmp_path / "sdk")
    _crashed_sdk_session(world)
    agents = world.sessions / "session_trip" / "agents"
    shutil.copytree(agents / "agent_default", agents / "agent_default.repairing")
    shutil.move(str(agents / "agent_default"), str(tmp_path / "moved-to-backup"))  # the first rename happened
    checked = strands_command("sessions", "check", "--strands-sdk", str(world.sessions), "trip", cwd=tmp_path)
    assert (agents / "agent_default").is_dir() and not (agents / "agent_default.repairing").exists()
    assert checked.returncode == 1  # the copy still holds the interrupted turn: check reports it
