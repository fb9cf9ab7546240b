"""Crash points are typed events: each site has its event type with the fields a subscriber needs, a subscriber
can ask for one type, a commit's state is a live read-only view, and an injected crash cannot be swallowed by the
SDK's concurrent tool executor, cannot abort a pytest session and is never taken for Ctrl+C."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from strands import Agent, tool
from strands.hooks import BeforeModelCallEvent, BeforeToolCallEvent, HookProvider, HookRegistry, MessageAddedEvent
from strands.tools.executors import ConcurrentToolExecutor

from strands_durable import CrashPoints, InjectedCrash, LocalStore, run_workflow
from strands_durable.crashpoints import SITE_TYPES, Commit, CrashPoint, ModelCall, ToolCall, UnitBoundary
from strands_durable.errors import ExitCode, exit_code_for
from strands_durable.faults.kit.oracle import RequestLog
from strands_durable.models.scripted import ScriptedModel
from tests.core.support import ExecutionLog, counted_options

SPEC = Path(__file__).parent / "specs" / "chain-tools.strands.yaml"


def _run_with(bus: CrashPoints, root: Path) -> None:
    log = ExecutionLog(root / "exec.log")
    # seed 1: the synthetic model calls the non-idempotent send_email (at seed 0 it does not)
    options = counted_options(log, RequestLog(), out_dir=root / "out", crash_points=bus, seed=1)
    outcome = run_workflow(SPEC, options, store=LocalStore(root / "sessions"))
    assert outcome.status == "completed"


def test_every_site_emits_its_own_event_type_with_its_fields(tmp_path: Path) -> None:
    bus = CrashPoints()
    seen: list[CrashPoint] = []
    bus.subscribe(seen.append)
    _run_with(bus, tmp_path)
    assert {p.site for p in seen} == set(SITE_TYPES)
    for point in seen:
        assert type(point) is SITE_TYPES[point.site], point.id
    tools = [p for p in seen if isinstance(p, ToolCall)]
    assert tools and all(p.name and p.tool_use_id and p.conversation for p in tools)
    assert all(p.path.endswith(f"/turn[{p.turn}]/tool[{p.index}]:{p.name}") for p in tools)
    assert "send_email" in {p.name for p in tools}
    assert all(p.non_idempotent == (p.name == "send_email") for p in tools)
    models = [p for p in seen if isinstance(p, ModelCall)]
    assert models and all(p.path.endswith(f"/turn[{p.turn}]") and p.agent for p in models)
    units = [p for p in seen if isinstance(p, UnitBoundary)]
    assert units and all(p.path.startswith(f"{p.unit}:") for p in units)
    commits = [p for p in seen if isinstance(p, Commit)]
    assert any(p.kinds == ("tool_started",) for p in commits)
    results = [p for p in commits if p.kinds == ("tool_result",) and p.site == "store.after_commit"]
    assert {key for p in results for key in p.tool_results} == {p.key for p in tools if p.site == "tool.committed"}
    assert any(not p.durable for p in commits) and any(p.durable for p in commits)


def test_subscribing_to_one_type_sees_only_that_type(tmp_path: Path) -> None:
    bus = CrashPoints()
    tools: list[Any] = []
    everything: list[Any] = []
    bus.subscribe(ToolCall, tools.append)
    bus.subscribe(everything.append)
    _run_with(bus, tmp_path)
    assert tools and all(isinstance(p, ToolCall) for p in tools)
    assert tools == [p for p in everything if isinstance(p, ToolCall)]
    bus.unsubscribe(tools.append)
    with pytest.raises(ValueError):
        bus.unsubscribe(tools.append)


def test_a_commit_shows_the_live_state_read_only_at_every_depth(tmp_path: Path) -> None:
    bus = CrashPoints()
    checked: list[str] = []

    def look(point: Commit) -> None:
        if point.site != "store.after_commit" or "message" not in point.kinds:
            return
        state = point.state
        assert state.seq >= 0 and state.status == "running"
        conv = next(iter(state.conversations.values()))
        message = conv.messages[-1]
        with pytest.raises(TypeError):
            message["content"][0]["text"] = "rewritten"  # a nested block of a committed message
        with pytest.raises(AttributeError):
            message["content"].append({"text": "more"})
        with pytest.raises(TypeError):
            conv.messages = []
        with pytest.raises(TypeError):
            state.conversations["x"] = None
        with pytest.raises(AttributeError):
            state.conversation("x")  # methods that may write are not offered
        with pytest.raises(TypeError):
            point.records[0]["type"] = "forged"
        checked.append(point.id)

    bus.subscribe(Commit, look)
    _run_with(bus, tmp_path)
    assert checked


def test_a_commit_view_is_live_not_a_copy(tmp_path: Path) -> None:
    bus = CrashPoints()
    views: list[Any] = []
    seqs: list[int] = []

    def keep(point: Commit) -> None:
        if point.site == "store.after_commit":
            views.append(point.state)
            seqs.append(point.state.seq)

    bus.subscribe(Commit, keep)
    _run_with(bus, tmp_path)
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    assert views[0].seq == views[-1].seq == seqs[-1]  # the first view now shows the last state: nothing was copied


# -- an injected crash cannot be swallowed ----------------------------------------------------------------------


class _Emitting(HookProvider):
    """Crash points at the SDK hooks a durable session emits them at: a model call, a tool's start, each message's
    commit."""

    def __init__(self, bus: CrashPoints) -> None:
        self.bus = bus

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(BeforeModelCallEvent, lambda e: self.bus.emit("model.before", "agent"))
        registry.add_callback(BeforeToolCallEvent, self._tool)
        registry.add_callback(MessageAddedEvent, lambda e: self.bus.emit("store.before_commit", "agent/message"))

    def _tool(self, event: BeforeToolCallEvent) -> None:
        use = event.tool_use
        self.bus.emit("tool.before", f"agent/{use['name']}", name=use["name"], tool_use_id=use["toolUseId"])


def test_a_crash_in_a_concurrent_tool_task_reaches_the_caller_and_nothing_after_it_commits() -> None:
    ran: list[str] = []

    @tool
    def first(x: int) -> int:
        """First tool.

        Args:
            x: A number.
        """
        ran.append("first")
        return x

    @tool
    def second(x: int) -> int:
        """Second tool.

        Args:
            x: A number.
        """
        ran.append("second")
        return x

    script = [
        [
            {"name": "first", "input": {"x": 1}, "toolUseId": "t1"},
            {"name": "second", "input": {"x": 2}, "toolUseId": "t2"},
        ],
        "done",
    ]
    bus = CrashPoints()
    committed: list[str] = []
    bus.subscribe(Commit, lambda p: committed.append(p.id))

    def crash(point: ToolCall) -> None:
        if point.name == "first":
            raise InjectedCrash(point)

    bus.subscribe(ToolCall, crash)
    agent = Agent(
        model=ScriptedModel(script),
        tools=[first, second],
        tool_executor=ConcurrentToolExecutor(),
        hooks=[_Emitting(bus)],
        callback_handler=None,
    )
    with pytest.raises(InjectedCrash) as raised:
        agent("go")
    assert raised.value.point.path == "agent/first"
    assert "first" not in ran
    # the prompt and the toolUse message were committed; the results message never is (the dead run's next
    # crash point, its commit, raised the crash again) and no model call follows
    assert len(committed) == 2


def test_an_injected_crash_is_not_ctrl_c() -> None:
    crash = InjectedCrash(CrashPoint("tool.before", "step[0]:a/turn[0]/tool[0]:calculator"))
    assert not isinstance(crash, (Exception, KeyboardInterrupt, SystemExit))
    assert exit_code_for(crash) != int(ExitCode.SIGINT)


def test_an_escaped_crash_fails_only_its_own_test(tmp_path: Path) -> None:
    (tmp_path / "test_escape.py").write_text(
        textwrap.dedent(
            """
            from strands_durable.crashpoints import CrashPoint, InjectedCrash

            def test_escapes():
                raise InjectedCrash(CrashPoint("unit.before", "step[0]:a"))

            def test_after():
                assert True
            """
        )
    )
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTEST_ADDOPTS": ""},
        timeout=120,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "1 failed, 1 passed" in result.stdout, result.stdout
    assert "injected crash at step[0]:a/unit.before" in result.stdout


def test_a_dead_run_raises_the_injected_type_again_at_every_later_point() -> None:
    class Converged(InjectedCrash):
        pass

    bus = CrashPoints()

    def stop(point: CrashPoint) -> None:
        if point.site == "unit.after":
            raise Converged(point)

    bus.subscribe(stop)
    bus.emit("unit.before", "step[0]:a")
    with pytest.raises(Converged):
        bus.emit("unit.after", "step[0]:a")
    with pytest.raises(Converged) as again:
        bus.emit("model.before", "step[1]:a/turn[0]")  # another thread of the dead run
    assert again.value.point.id == "step[0]:a/unit.after"
    with pytest.raises(Converged):
        bus.raise_if_crashed()


def test_a_crash_inside_an_invocation_carries_no_exception_of_the_runner_as_its_context(tmp_path: Path) -> None:
    """The runner asks whether a loop is running apart from the invocation: an exception it caught around it would
    be the context of every crash and stop the invocation raises, and its traceback would keep the invocation's frame,
    agent and session alive until a collection found the cycle."""
    bus = CrashPoints()

    def crash_at_the_first_model_call(point: CrashPoint) -> None:
        if point.site == "model.before":
            raise InjectedCrash(point)

    bus.subscribe(crash_at_the_first_model_call)
    with pytest.raises(InjectedCrash) as raised:
        _run_with(bus, tmp_path)
    contexts, exc = [], raised.value.__context__
    while exc is not None:
        contexts.append(exc)
        exc = exc.__context__
    assert contexts == [], [f"{type(e).__name__}: {e}" for e in contexts]
