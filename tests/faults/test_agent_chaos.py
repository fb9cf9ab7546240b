"""run_agent's engine (faults/agents/engine.py) in isolation: the disk is taken at the instant of the crash, the
workspace is compared line by line in any order, and bad input names what is wrong."""

from __future__ import annotations

import pytest

from strands_durable.errors import UsageError
from strands_durable.faults.agents import engine as agent_chaos
from strands_durable.faults.agents.examples import LEDGER_PROMPTS, LEDGER_SCRIPT, ledger_agent, ledger_tools
from strands_durable.faults.agents.run import AgentChaos
from strands_durable.faults.kit.workspace import workspace_difference


def _saves_at_invocation_end(ctx):
    """The ledger agent with a conversation manager that writes into the storage directory when an invocation
    ends: the SDK calls it in a `finally`, so even after an exception inside the invocation."""
    from strands.agent.conversation_manager import NullConversationManager

    class SavesAtEnd(NullConversationManager):
        def apply_management(self, agent, **kwargs):
            (ctx.storage_dir / "saved-at-end").touch()

    from strands import Agent

    from strands_durable.models.scripted import ScriptedModel
    from strands_durable.sdk import DurableSessionManager

    return Agent(
        model=ScriptedModel(LEDGER_SCRIPT),
        tools=ledger_tools(ctx),
        callback_handler=None,
        conversation_manager=SavesAtEnd(),
        session_manager=DurableSessionManager(ctx.session_id, ctx.storage_dir),
    )


def test_a_crash_leaves_the_disk_as_it_was_at_that_instant_not_after_the_sdks_finally_work(tmp_path) -> None:
    chaos = AgentChaos(_saves_at_invocation_end, LEDGER_PROMPTS[:1])
    golden = agent_chaos.run_golden(chaos, tmp_path)
    outcome = agent_chaos.crash_at(golden, "hook/model.before")
    running = outcome.crashed.root.with_name("running")
    assert (running / "storage" / "saved-at-end").exists(), "the SDK ran AfterInvocationEvent after the crash"
    assert not (outcome.crashed.storage / "saved-at-end").exists(), "the resume must start from the crash instant"
    assert outcome.ok, outcome.describe()


def test_workspace_lines_compare_in_any_order_and_at_most_once_for_unknown_outcomes() -> None:
    golden = {"ledger": b"taxi\nhotel\n", "note": b"x"}
    assert workspace_difference(golden, {"ledger": b"hotel\ntaxi\n", "note": b"x"}) is None
    assert "+taxi" in workspace_difference(golden, {"ledger": b"taxi\ntaxi\nhotel\n", "note": b"x"})
    assert "-hotel" in workspace_difference(golden, {"ledger": b"taxi\n", "note": b"x"})
    assert ".note\n" in workspace_difference(golden, {"ledger": b"taxi\nhotel\n"})  # the file is missing
    assert workspace_difference(golden, {"ledger": b"taxi\n"}, at_most=True) is None
    assert "+taxi" in workspace_difference(golden, {"ledger": b"taxi\ntaxi\n"}, at_most=True)


@pytest.mark.parametrize(
    ("factory", "message"),
    [("no_colon", "expected a callable or 'module:function'"), ("os:no_such_function", "no_such_function")],
)
def test_a_factory_that_cannot_be_found_is_named(factory: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        AgentChaos(factory, ["hi"])


def test_prompts_and_faults_are_checked() -> None:
    with pytest.raises(UsageError, match="prompts"):
        AgentChaos(ledger_agent, [])
    with pytest.raises(UsageError, match="power"):
        AgentChaos(ledger_agent, ["hi"], faults=["power"])
