"""What a Python developer is told: `agent()` with nothing pending asks for a prompt, a damaged readable file names
`strands sessions repair`, and (docs/python-agents.md, "Side effects") one crash in a concurrent batch answers every
started non-idempotent sibling "outcome unknown", which `dedup_key` avoids."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from strands import tool

from strands_durable import non_idempotent
from strands_durable.errors import CorruptSession, ExitCode, UsageError
from strands_durable.faults.kit.forking import fork_child, wait_child
from strands_durable.sdk import dedup_key

from .support import PROMPTS, World


@pytest.fixture
def world(tmp_path) -> World:
    return World(tmp_path / "sessions")


@pytest.mark.parametrize("history", ["new", "after a finished turn"])
def test_agent_without_a_prompt_and_nothing_pending_asks_for_a_prompt(world, history):
    agent = world.agent()
    if history != "new":
        agent(PROMPTS[0])
    requests = len(world.requests)
    with pytest.raises(UsageError) as refused:
        agent()
    assert refused.value.exit_code == ExitCode.USAGE
    assert str(refused.value) == (
        "Nothing to finish in session expenses-1 for agent default: no invocation is pending; pass a prompt, "
        'e.g. agent("...")'
    )
    assert len(world.requests) == requests
    agent(PROMPTS[1] if history != "new" else PROMPTS[0])  # the refusal left nothing behind: a prompt works


def test_a_damaged_readable_file_names_the_repair_command(world):
    agent = world.agent()
    agent(PROMPTS[0])
    message_file = world.sessions / "session_expenses-1" / "agents" / "default" / "messages" / "message_0.json"
    message_file.write_text("{}")
    with pytest.raises(CorruptSession) as blocked:
        world.agent()(PROMPTS[1])
    assert str(blocked.value) == (
        f"Corrupt session file {message_file}: does not match the session journal; "
        "`strands sessions repair expenses-1` writes it again from the journal"
    )


def _batch_agent(world: World, ledger: Path, *, dedup: bool, kill_at: str | None = None) -> Any:
    """Two booking tools in one concurrent batch: `hold_seat` acts at once, `charge_card` waits 0.6 s before it
    acts. Each effect is a line in `ledger`; with `dedup` they are idempotent and the ledger (the receiver) keeps
    one line per `dedup_key`, as a payment API does with an idempotency key."""

    def act(what: str, tool_context: Any) -> str:
        key = dedup_key(tool_context)
        lines = ledger.read_text().splitlines() if ledger.exists() else []
        if dedup and any(json.loads(line)["key"] == key for line in lines):
            return f"{what}: already done"
        with ledger.open("a") as out:
            out.write(json.dumps({"what": what, "key": key}) + "\n")
        return f"{what}: done"

    def hold_seat(flight: str, tool_context: Any) -> str:
        """Hold a seat."""
        return act("hold", tool_context)

    def charge_card(amount: float, tool_context: Any) -> str:
        """Charge the card."""
        time.sleep(0.6)
        return act("charge", tool_context)

    tools = [hold_seat, charge_card] if dedup else [non_idempotent(hold_seat), non_idempotent(charge_card)]
    script = [
        [{"name": "hold_seat", "input": {"flight": "LH1"}}, {"name": "charge_card", "input": {"amount": 90}}],
        "Booked.",
    ]
    world.tool_seconds = 0
    return world.agent(script=script, tools=[tool(context=True)(t) for t in tools], kill_at=kill_at)


HOLD = "default/inv[0]/turn[0]/tool[0]:hold_seat"


@pytest.mark.parametrize("dedup", [False, True], ids=["non_idempotent", "dedup_key"])
def test_one_crash_in_a_concurrent_batch_and_what_dedup_key_changes(world, tmp_path, dedup):
    ledger = tmp_path / "ledger.jsonl"

    def booked_then_killed() -> int:  # killed after the seat was held, before its result was committed
        _batch_agent(world, ledger, dedup=dedup, kill_at=f"{HOLD}/tool.executed")("Book LH1.")
        return 0

    assert wait_child(fork_child(booked_then_killed)).signal == signal.SIGKILL
    assert [json.loads(line)["what"] for line in ledger.read_text().splitlines()] == ["hold"]  # charge not yet

    resumed = _batch_agent(world, ledger, dedup=dedup)
    resumed()
    results = {b["toolResult"]["toolUseId"]: b["toolResult"] for b in resumed.messages[2]["content"]}
    texts = sorted(r["content"][0]["text"] for r in results.values())
    effects = sorted(json.loads(line)["what"] for line in ledger.read_text().splitlines())
    if dedup:  # both ran again; the receiver kept one effect per call
        assert texts == ["charge: done", "hold: already done"] and effects == ["charge", "hold"]
    else:  # at most once: the charge that had not acted yet is answered "outcome unknown" too, and never made
        assert len(texts) == 2 and all("outcome unknown" in text for text in texts) and effects == ["hold"]
