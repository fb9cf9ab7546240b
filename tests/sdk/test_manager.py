"""DurableSessionManager with a real strands.Agent: restore, commits, pending invocations, ids, the lease."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from typing import Any

import pytest
from strands import Agent, tool
from strands.hooks import AfterToolCallEvent
from strands.tools.executors import SequentialToolExecutor

from strands_durable import LocalStore
from strands_durable.errors import SessionInUse, UsageError
from strands_durable.faults.agents.examples import overlapping
from strands_durable.history import SDK_INTERRUPTED_TEXT, normalize, validate
from strands_durable.sdk import DurableSessionManager, dedup_key, non_idempotent
from strands_durable.sdk.pending import INTERRUPTED_ANSWER, INTERRUPTED_TOOL

from .support import PROMPTS, SCRIPT, World, crash_run


@pytest.fixture
def world(tmp_path) -> World:
    return World(tmp_path / "sessions")


def golden(tmp_path) -> tuple[list[dict[str, Any]], Any]:
    clean = World(tmp_path / "golden")
    agent = clean.agent()
    results = [agent(prompt) for prompt in PROMPTS]
    return list(agent.messages), results[-1]


def stored(world: World) -> Any:
    return LocalStore(world.sessions).load("expenses-1")


def test_a_fresh_agent_restores_the_conversation_and_the_session_is_idle(world):
    world.tool_seconds = 0.25  # long enough that two concurrent calls overlap even on a loaded machine
    agent = world.agent()
    agent.state.set("currency", "EUR")
    for prompt in PROMPTS:
        agent(prompt)
    again = world.agent()
    assert normalize(again.messages) == normalize(agent.messages)
    assert again.state.get("currency") == "EUR"
    state = stored(world)
    assert state.status == "idle" and state.meta["pattern"] == "agent"
    assert overlapping(world.effects), "the two expenses of the first turn did not run concurrently"


def test_a_tools_raw_result_is_committed_before_the_users_after_hook_and_the_final_after_it(world):
    seen_in_store: list[bool] = []

    def rewrite(event: AfterToolCallEvent) -> None:
        conv = stored(world).conversations["default"]
        seen_in_store.append(conv.tool_results.get(event.tool_use["toolUseId"]) == event.result)
        event.result = {**event.result, "content": [{"text": "rewritten by the hook"}]}

    agent = world.agent()
    agent.hooks.add_callback(AfterToolCallEvent, rewrite)
    agent(PROMPTS[0])
    assert seen_in_store == [True, True]
    results = [b["toolResult"] for b in stored(world).conversations["default"].messages[2]["content"]]
    assert [r["content"] for r in results] == [[{"text": "rewritten by the hook"}]] * 2


@pytest.mark.parametrize("style", ["agent()", "re-send"])
def test_a_crash_after_the_tools_is_finished_without_running_them_or_asking_the_model_again(world, tmp_path, style):
    expected, expected_result = golden(tmp_path)
    agent = world.agent(crash_at="default/inv[1]/turn[1]/model.before")
    agent(PROMPTS[0])
    crash_run(agent, PROMPTS[1])
    effects_before, requests_before = len(world.effects), len(world.requests)

    resumed = world.agent()
    assert resumed._session_manager.pending_prompt() == [{"text": PROMPTS[1]}]
    result = resumed() if style == "agent()" else resumed(PROMPTS[1])
    assert normalize(resumed.messages) == normalize(expected)
    assert len(world.effects) == effects_before, "a tool whose result was committed ran again"
    assert len(world.requests) == requests_before + 1  # only the turn that was never answered
    assert str(result) == str(expected_result)
    assert result.stop_reason == expected_result.stop_reason
    usage = result.metrics.agent_invocations[-1].usage
    assert usage == expected_result.metrics.agent_invocations[-1].usage
    assert resumed._session_manager.pending_prompt() is None


def test_a_crash_after_the_final_answer_is_committed_returns_it_without_a_model_call(world, tmp_path):
    expected, expected_result = golden(tmp_path)
    agent = world.agent(crash_at="default/inv[1]/end/store.before_commit")
    agent(PROMPTS[0])
    crash_run(agent, PROMPTS[1])
    requests_before = len(world.requests)
    resumed = world.agent()
    result = resumed()
    assert len(world.requests) == requests_before
    assert str(result) == str(expected_result)
    assert normalize(resumed.messages) == normalize(expected)


def test_a_different_prompt_closes_the_interrupted_turn_honestly(world):
    agent = world.agent(crash_at="default/inv[0]/turn[0]/tool[1]:add_expense/tool.before")
    agent.tool_executor = SequentialToolExecutor()  # an in-process raise inside a concurrent tool task is lost
    crash_run(agent, PROMPTS[0])
    resumed = world.agent(script=[*SCRIPT[:1], "unused", "Something else, done."])
    resumed("Something else.")
    messages = resumed.messages
    assert validate(messages, provider="bedrock", mode="stored") == []
    roles = [m["role"] for m in messages]
    assert roles == ["user", "assistant", "user", "assistant", "user", "assistant"]
    results = {b["toolResult"]["toolUseId"]: b["toolResult"] for b in messages[2]["content"]}
    assert results["tooluse_s0_0"]["status"] == "success"  # committed before the crash: kept
    assert results["tooluse_s0_1"]["content"] == [{"text": INTERRUPTED_TOOL}]
    assert messages[3]["content"] == [{"text": INTERRUPTED_ANSWER}]
    assert [e["item"] for e in world.effects] == ["taxi"]  # nothing ran for the closed turn
    every_text = str(stored(world).conversations["default"].messages)
    assert SDK_INTERRUPTED_TEXT not in every_text


def test_a_non_idempotent_tool_interrupted_before_its_result_is_not_run_again(world):
    sent: list[str] = []

    @tool
    @non_idempotent
    def send_email(to: str) -> str:
        """Send an email."""
        sent.append(to)
        return "sent"

    script = [[{"name": "send_email", "input": {"to": "boss"}}], "Sent."]
    agent = world.agent(
        crash_at="default/inv[0]/turn[0]/tool[0]:send_email/tool.executed", script=script, tools=[send_email]
    )
    agent.tool_executor = SequentialToolExecutor()
    crash_run(agent, "Email the boss.")
    resumed = world.agent(script=script, tools=[send_email])
    resumed()
    assert sent == ["boss"]
    result = resumed.messages[2]["content"][0]["toolResult"]
    assert result["status"] == "error" and "outcome unknown" in result["content"][0]["text"]


def test_dedup_key_is_stable_per_call(world):
    keys: list[str] = []

    @tool(context=True)
    def charge(amount: float, tool_context: Any) -> str:
        """Charge a card."""
        keys.append(dedup_key(tool_context))
        return "charged"

    agent = world.agent(script=[[{"name": "charge", "input": {"amount": 3}}], "Charged."], tools=[charge])
    agent("Charge 3.")
    assert keys == ["expenses-1/default/tooluse_s0_0"]


@pytest.mark.parametrize("bad", ["", "../x", "a/b", "-lead", "a..b", "x" * 129, "spa ce"])
def test_an_invalid_session_id_is_refused_naming_the_rule(world, bad):
    with pytest.raises(UsageError, match="letter or digit"):
        DurableSessionManager(bad, world.sessions)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"storage_dir": 5}, "storage_dir must be a path (str or os.PathLike), not int"),
        ({"lease_timeout": "x"}, "lease_timeout must be None or a number of seconds >= 0, not 'x'"),
        ({"lease_timeout": -1}, "lease_timeout must be None or a number of seconds >= 0, not -1"),
        ({"lease_timeout": float("nan")}, "lease_timeout must be None or a number of seconds >= 0, not nan"),
        ({"lease_timeout": True}, "lease_timeout must be None or a number of seconds >= 0, not True"),
        ({"provider_profile": "bogus"}, "unknown provider_profile 'bogus'; expected one of bedrock, anthropic"),
    ],
)
def test_a_constructor_argument_of_the_wrong_kind_is_refused_at_once_leaving_no_session(world, options, message):
    options = {"storage_dir": world.sessions, **options}
    with pytest.raises(UsageError) as refused:
        DurableSessionManager("expenses-1", **options)
    assert str(refused.value).startswith(message)
    assert not world.sessions.exists() or not any(world.sessions.iterdir()), "a session was written"


def test_storage_dir_and_store_together_are_refused(world):
    with pytest.raises(UsageError, match="storage_dir or store, not both"):
        DurableSessionManager("expenses-1", world.sessions, store=LocalStore(world.sessions))


def test_an_id_differing_only_by_case_from_a_session_is_refused(world):
    world.agent()(PROMPTS[0])
    with pytest.raises(UsageError, match="differs only by case"):
        DurableSessionManager("Expenses-1", world.sessions)


def test_a_second_invocation_of_the_session_at_the_same_time_is_refused_naming_the_holder(world):
    release, started = threading.Event(), threading.Event()

    @tool
    def slow(item: str) -> str:
        """Wait."""
        started.set()
        release.wait(10)
        return "ok"

    first = world.agent(script=[[{"name": "slow", "input": {"item": "x"}}], "Done."], tools=[slow])
    worker = threading.Thread(target=first, args=("go",))
    worker.start()
    try:
        assert started.wait(10)
        second = Agent(
            model=world.model(),
            callback_handler=None,
            session_manager=DurableSessionManager("expenses-1", world.sessions),
        )
        with pytest.raises(SessionInUse, match=r"in use by pid \d+ on host"):
            second("hello")
    finally:
        release.set()
        worker.join()


def test_lease_timeout_waits_on_the_event_loop_so_a_holder_on_the_same_loop_finishes(world):
    """Two agents of one session on one event loop (`asyncio.gather`): the second, with `lease_timeout`, waits for
    the first without blocking the loop the first runs on, then takes its turn."""

    @tool
    async def slow(item: str) -> str:
        """Wait."""
        await asyncio.sleep(0.5)
        return "ok"

    turn = [[{"name": "slow", "input": {"item": "x"}}], "Done."]
    first = world.agent(script=turn, tools=[slow])
    second = world.agent(script=turn + turn, tools=[slow], lease_timeout=20)  # its turn comes after the first's

    async def both() -> list[Any]:
        async def later() -> Any:
            await asyncio.sleep(0.1)  # the first holds the session by now
            return await second.invoke_async("again")

        return await asyncio.gather(first.invoke_async("go"), later(), return_exceptions=True)

    start = time.monotonic()
    results = asyncio.run(both())
    assert [type(result).__name__ for result in results] == ["AgentResult", "AgentResult"], results
    assert time.monotonic() - start < 15, "the wait blocked the loop the holder runs on"
    messages = stored(world).conversations["default"].messages
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"] * 2
    assert validate(messages, provider="bedrock", mode="stored") == []


def test_two_agents_taking_turns_never_extend_a_stale_history(world):
    one, two = world.agent(), world.agent()
    one(PROMPTS[0])
    two(PROMPTS[1])  # two loaded the session before one's turn: it reloads first
    assert [m["role"] for m in two.messages] == ["user", "assistant", "user", "assistant"] * 2
    assert validate(stored(world).conversations["default"].messages, provider="bedrock", mode="stored") == []


def test_calls_whose_final_result_is_committed_are_not_entered_again_but_raw_only_ones_are(world, tmp_path):
    expected, _ = golden(tmp_path)
    calls: list[str] = []

    def approve(event: AfterToolCallEvent) -> None:
        calls.append(event.tool_use["toolUseId"])

    agent = world.agent(crash_at="default/inv[0]/turn[0]/results/store.before_commit")
    agent.hooks.add_callback(AfterToolCallEvent, approve)
    crash_run(agent, PROMPTS[0])
    assert sorted(calls) == ["tooluse_s0_0", "tooluse_s0_1"]
    resumed = world.agent()
    resumed.hooks.add_callback(AfterToolCallEvent, approve)
    resumed()
    resumed(PROMPTS[1])
    assert calls[2:] == ["tooluse_s2_0"], "a hook saw a call whose final result was committed"
    assert normalize(resumed.messages) == normalize(expected)

    raw_only = World(tmp_path / "raw")
    calls.clear()
    agent = raw_only.agent(crash_at="default/inv[0]/turn[0]/final/store.before_commit")
    agent.tool_executor = SequentialToolExecutor()
    agent.hooks.add_callback(AfterToolCallEvent, approve)
    crash_run(agent, PROMPTS[0])
    resumed = raw_only.agent()
    resumed.hooks.add_callback(AfterToolCallEvent, approve)
    resumed()
    assert calls == ["tooluse_s0_0", "tooluse_s0_0", "tooluse_s0_1"]  # the raw-only result went through again
    assert len(raw_only.effects) == 2  # and was replayed, not re-run


def test_a_file_session_manager_directory_of_the_same_id_is_imported_not_overwritten(world):
    from strands.session.file_session_manager import FileSessionManager

    sdk_agent = Agent(
        model=world.model(),
        tools=world.tools(),
        system_prompt="You record expenses.",
        callback_handler=None,
        session_manager=FileSessionManager("expenses-1", storage_dir=str(world.sessions)),
    )
    sdk_agent.state.set("currency", "EUR")
    sdk_agent(PROMPTS[0])
    unanswered = {"role": "user", "content": [{"text": "a prompt the crash left unanswered"}]}
    sdk_agent._session_manager.append_message(unanswered, sdk_agent)  # what a kill after the prompt leaves
    sdk_files = sorted(
        p.name for p in (world.sessions / "session_expenses-1" / "agents" / "agent_default" / "messages").iterdir()
    )

    agent = world.agent()
    assert normalize(agent.messages[:5]) == normalize([*sdk_agent.messages[:4], unanswered])
    assert agent.messages[5] == {"role": "assistant", "content": [{"text": INTERRUPTED_ANSWER}]}
    assert agent.state.get("currency") == "EUR"
    backups = list((world.sessions / "session_expenses-1" / "backups").iterdir())
    assert len(backups) == 1 and backups[0].name.endswith("file-session-manager")
    kept = sorted(p.name for p in (backups[0] / "agents" / "agent_default" / "messages").iterdir())
    assert kept == sdk_files
    agent(PROMPTS[1])
    assert validate(stored(world).conversations["default"].messages, provider="bedrock", mode="stored") == []


def test_every_entry_point_commits_and_finishes_a_pending_invocation(world, tmp_path):
    import asyncio

    expected, _ = golden(tmp_path)
    agent = world.agent(crash_at="default/inv[1]/turn[1]/model.before")
    asyncio.run(agent.invoke_async(PROMPTS[0]))
    crash_run(agent, PROMPTS[1])

    async def stream(agent: Any) -> list[Any]:
        return [event async for event in agent.stream_async()]

    resumed = world.agent()
    events = asyncio.run(stream(resumed))
    assert any("result" in event for event in events)
    assert normalize(resumed.messages) == normalize(expected)


def test_several_agents_share_a_session_each_with_its_own_conversation(world):
    first = world.agent()
    second = Agent(
        agent_id="auditor",
        model=world.model(["Looks fine."]),
        callback_handler=None,
        session_manager=DurableSessionManager("expenses-1", world.sessions),
    )
    first(PROMPTS[0])
    second("Audit the expenses.")
    state = stored(world)
    assert set(state.conversations) == {"default", "auditor"}
    assert [m["role"] for m in state.conversations["auditor"].messages] == ["user", "assistant"]
    with pytest.raises(Exception, match="unique"):
        Agent(agent_id="auditor", model=world.model(), callback_handler=None, session_manager=second._session_manager)


def test_the_sliding_windows_state_is_restored(world):
    from strands.agent.conversation_manager import SlidingWindowConversationManager

    def agent() -> Any:
        return Agent(
            model=world.model(["one", "two", "three"]),
            callback_handler=None,
            conversation_manager=SlidingWindowConversationManager(window_size=2),
            session_manager=DurableSessionManager("expenses-1", world.sessions),
        )

    talk = agent()
    for prompt in ("a", "b"):
        talk(prompt)
    again = agent()
    assert again.conversation_manager.removed_message_count == talk.conversation_manager.removed_message_count > 0
    assert normalize(again.messages) == normalize(talk.messages)


def test_a_window_shorter_than_an_invocation_moves_on_to_a_user_turn_instead_of_refusing_every_request(world, caplog):
    """The SDK's sliding window, with no user message left to cut at, cuts at a toolUse/toolResult pair: the window
    starts with an assistant turn, which Bedrock refuses (V1). The next invocation moves the window on."""
    from strands.agent.conversation_manager import SlidingWindowConversationManager

    from strands_durable.testing import PromptScriptedModel

    taxi, hotel = SCRIPT[0]
    script = {PROMPTS[0]: [[taxi], [hotel], "Recorded both."], PROMPTS[1]: SCRIPT[2:]}

    def agent() -> Any:
        return Agent(
            model=PromptScriptedModel(script),
            tools=world.tools(),
            callback_handler=None,
            conversation_manager=SlidingWindowConversationManager(window_size=4),
            session_manager=DurableSessionManager("expenses-1", world.sessions, provider_profile="bedrock"),
        )

    talk = agent()
    talk(PROMPTS[0])
    assert [m["role"] for m in talk.messages] == ["assistant", "user", "assistant"]  # the SDK's cut at a tool pair
    with caplog.at_level(logging.WARNING, logger="strands_durable.sdk"):
        result = talk(PROMPTS[1])
    assert str(result).strip() == "Recorded the dinner."
    moved = "window started with an assistant turn, which the bedrock request refuses; it now starts empty"
    assert moved in caplog.text
    messages = stored(world).conversations["default"].messages
    assert len(messages) == 10 and validate(messages, provider="bedrock", mode="stored") == []
    again = agent()
    assert again.conversation_manager.removed_message_count == talk.conversation_manager.removed_message_count
    assert normalize(again.messages) == normalize(talk.messages)
    assert validate(again.messages, provider="bedrock", mode="stored") == []


def test_a_human_in_the_loop_interrupt_survives_a_restart(world):
    from strands.hooks import BeforeToolCallEvent

    def approval(event: BeforeToolCallEvent) -> None:
        if event.interrupt("approve", reason="record this expense?") != "yes":
            event.cancel_tool = "not approved"

    script = [[{"name": "add_expense", "input": {"item": "taxi", "amount": 12}}], "Recorded."]
    agent = world.agent(script=script)
    agent.hooks.add_callback(BeforeToolCallEvent, approval)
    result = agent("Record the taxi.")
    assert result.stop_reason == "interrupt"
    assert stored(world).status == "paused"
    interrupt_id = result.interrupts[0].id

    resumed = world.agent(script=script)
    resumed.hooks.add_callback(BeforeToolCallEvent, approval)
    answer = resumed([{"interruptResponse": {"interruptId": interrupt_id, "response": "yes"}}])
    assert str(answer).strip() == "Recorded."
    assert [e["item"] for e in world.effects] == ["taxi"]
    assert stored(world).status == "idle"
    assert validate(stored(world).conversations["default"].messages, provider="bedrock", mode="stored") == []


def test_ctrl_c_inside_an_invocation_leaves_it_pending_and_the_session_paused(world, tmp_path):
    import subprocess
    import sys

    from tests.conftest import REPO

    expected, _ = golden(tmp_path)
    script = (
        "import sys; from pathlib import Path; from strands import tool\n"
        "from tests.sdk.support import World, PROMPTS\n"
        "@tool\n"
        "def add_expense(item: str, amount: float) -> str:\n"
        '    """Record one expense."""\n'
        "    raise KeyboardInterrupt\n"
        "World(Path(sys.argv[1])).agent(tools=[add_expense])(PROMPTS[0])\n"
    )
    child = subprocess.run([sys.executable, "-c", script, str(world.sessions)], cwd=REPO, capture_output=True)
    assert child.returncode != 0 and b"KeyboardInterrupt" in child.stderr
    state = stored(world)
    assert (state.status, state.reason) == ("paused", "interrupted")
    resumed = world.agent()
    resumed()
    resumed(PROMPTS[1])
    assert normalize(resumed.messages) == normalize(expected)
    assert stored(world).status == "idle"


def test_cancel_ends_the_invocation_as_the_sdk_records_it(world):
    from strands.hooks import BeforeToolCallEvent

    agent = world.agent()
    agent.hooks.add_callback(BeforeToolCallEvent, lambda event: agent.cancel())
    result = agent(PROMPTS[0])
    assert result.stop_reason == "cancelled" or "cancel" in str(result).lower()
    state = stored(world)
    assert state.status == "idle"
    assert normalize(world.agent().messages) == normalize(agent.messages)


def test_a_graph_node_that_is_not_an_agent_is_refused_clearly(world):
    from strands.multiagent import GraphBuilder

    from strands_durable.errors import Unsupported

    inner = GraphBuilder()
    inner.add_node(Agent(name="one", model=world.model(["hi"]), callback_handler=None), "one")
    builder = GraphBuilder()
    builder.add_node(inner.build(), "nested")
    builder.set_session_manager(DurableSessionManager("graph-1", world.sessions))
    with pytest.raises(Unsupported, match="node 'nested' runs a Graph"):
        builder.build()


def test_redact_latest_message_replaces_the_stored_message(world):
    from strands.hooks import BeforeModelCallEvent

    agent = world.agent(script=["Noted."])
    redacted = {"role": "user", "content": [{"text": "[redacted]"}]}

    def redact(event: BeforeModelCallEvent) -> None:
        event.agent._session_manager.redact_latest_message(redacted, event.agent)

    agent.hooks.add_callback(BeforeModelCallEvent, redact)
    agent("my card number is 4111")
    stored_messages = stored(world).conversations["default"].messages
    assert stored_messages[0]["content"] == [{"text": "[redacted]"}]
    assert "4111" not in str(stored_messages)
    assert world.agent(script=["Noted."]).messages[0]["content"] == [{"text": "[redacted]"}]


def test_a_direct_tool_call_between_invocations_is_stored_and_restored(world):
    agent = world.agent(script=SCRIPT[:2])
    agent(PROMPTS[0])
    agent.tool.add_expense(item="coffee", amount=3)  # the SDK records the call as four messages
    assert len(agent.messages) == 8
    again = world.agent(script=SCRIPT[:2])
    assert normalize(again.messages) == normalize(agent.messages)
    assert not validate(again.messages, provider="bedrock", mode="stored")
    assert stored(world).status == "idle"


def test_an_invalid_stored_history_is_repaired_on_load_and_the_repair_recorded(world, caplog):
    agent = world.agent()
    agent(PROMPTS[0])
    with LocalStore(world.sessions, strict=False).open("expenses-1") as session:  # an older version's damage:
        conv = session.state.conversations["default"]  # the prompt stored twice (two user messages in a row)
        broken = [conv.messages[0], *conv.messages]
        session.commit([{"type": "generation", "conv": "default", "messages": broken, "units": conv.units[:1] * 5}])
    assert validate(stored(world).conversations["default"].messages, mode="stored")
    with caplog.at_level("WARNING", logger="strands_durable.sdk"):
        again = world.agent()
    assert "the stored history was invalid and was repaired" in caplog.text
    assert not validate(again.messages, provider="bedrock", mode="stored")
    assert [m["role"] for m in again.messages] == ["user", "assistant", "user", "assistant"]
    state = stored(world)
    assert state.conversations["default"].generation == 2  # the damage, then the repair: a new generation
    again(PROMPTS[1])  # the repaired session goes on (every request is validated before it is sent)
    assert not validate(again.messages, provider="bedrock", mode="stored")
