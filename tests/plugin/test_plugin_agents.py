"""`strands_chaos.run_agent` and agent factories collected like specs: a real Agent crashed at every point.

Ours passes; the SDK's FileSessionManager fails with its points and rules named; four planted manager bugs are
each caught by the rule that names them; the factory collection forms; SIGKILL of a forked child; the example
that opens docs/chaos-plugin.md runs as written.
"""

from __future__ import annotations

import re

import pytest

from tests.plugin.support import REPO, summary

FACTORIES = """
from strands.hooks import MessageAddedEvent

from strands_durable.agent.durable import InvocationHooks
from strands_durable.faults.agents.examples import LEDGER_PROMPTS, ledger_agent
from strands_durable.sdk import DurableSessionManager

PROMPTS = LEDGER_PROMPTS[:1]  # one prompt: a parallel batch of a non-idempotent tool and an idempotent one


def durable(ctx, manager_class=None):
    return ledger_agent(ctx, manager_class or "durable")


def sdk_file(ctx):
    return ledger_agent(ctx, "sdk-file")


class _Forgetful(InvocationHooks):  # re-runs a committed tool: forgets the journal's result
    async def execute_tool(self, context, next_fn):
        if self.conv is not None:
            self.conv.tool_results.pop(context.tool_use["toolUseId"], None)
        async for item in super().execute_tool(context, next_fn):
            yield item


class _SkipsResult(InvocationHooks):  # skips each tool's result commit (emits tool.committed all the same)
    def _commit_result(self, result, tool_path, *, final=False, durable=True):
        if final:
            super()._commit_result(result, tool_path, final=final, durable=durable)


class _Mutant(DurableSessionManager):
    hooks_class = InvocationHooks

    def _hooks(self, *args):
        hooks = super()._hooks(*args)
        hooks.__class__ = self.hooks_class
        return hooks


class RerunsCommittedTool(_Mutant):
    hooks_class = _Forgetful


class SkipsToolResultCommit(_Mutant):
    hooks_class = _SkipsResult


class CommitsPromptTwice(DurableSessionManager):  # finishing a pending invocation commits its prompt again
    async def _before_invocation(self, event):
        prompt = self.pending_prompt(event.agent.agent_id)
        await super()._before_invocation(event)
        slot = self._slots[self._key_of(event.agent)]
        if prompt is not None and slot.hooks is not None:
            again = {"role": "user", "content": prompt}
            slot.hooks.message_added(MessageAddedEvent(agent=event.agent, message=again))


class RequestsCommittedAnswerAgain(DurableSessionManager):  # asks the model for a committed final answer
    def _invoke_model_for(self, slot):
        async def invoke_model(context, next_fn):
            async for item in next_fn(context):
                yield item

        return invoke_model


def requests_committed_answer_again(ctx):
    return durable(ctx, RequestsCommittedAnswerAgain)


def reruns_committed_tool(ctx):
    return durable(ctx, RerunsCommittedTool)


def skips_tool_result_commit(ctx):
    return durable(ctx, SkipsToolResultCommit)


def commits_prompt_twice(ctx):
    return durable(ctx, CommitsPromptTwice)
"""

FIXTURE_TESTS = """
import pytest
import {module} as agents


@pytest.mark.parametrize("factory", [
    "durable", "sdk_file", "reruns_committed_tool", "skips_tool_result_commit", "commits_prompt_twice",
    "requests_committed_answer_again",
])
def test_agent(strands_chaos, factory):
    outcomes = strands_chaos.run_agent(getattr(agents, factory), agents.PROMPTS, max_points={max_points})
    assert all(o.ok for o in outcomes) and len(outcomes) > 10
"""

# What each planted bug's report says (and the SDK's manager's): re-sending the prompt breaks alternation, and
# `agent()` runs the ledger tool twice
FAILS_BY_RULE = {
    "sdk_file": lambda text: (
        "[invalid-request]" in text
        and "two user messages in a row" in text
        and re.search(r"interrupt:hook/\S+:re-send \[invalid-request\]", text)
        and "by rule:" in text
        and "workspace" in text
    ),
    "reruns_committed_tool": lambda text: "[tool-rerun] tool call tooluse_s0_" in text,
    "skips_tool_result_commit": lambda text: (
        re.search(r"tool\[\d\]:(pay|note)/tool.committed", text)
        and ("[tool-rerun]" in text or "[unknown-outcome]" in text)
    ),
    "commits_prompt_twice": lambda text: "[history]" in text or "[resume-failed]" in text,
    "requests_committed_answer_again": lambda text: "[model-rerequest] the model turn stored as message" in text,
}


def _sections(result: pytest.RunResult) -> dict[str, str]:
    """Each failing test's report text by its parameter."""
    text = result.stdout.str()
    parts = re.split(r"^_+ test_agent\[(\w+)\] _+$", text, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def _write(pytester: pytest.Pytester, module: str, body: str) -> None:
    pytester.makepyfile(**{module: FACTORIES})
    pytester.makepyfile(**{f"test_{module}": body})
    pytester.syspathinsert()


# One outer test per factory (each an inner run of its own item): every conversation is crashed at each of its
# points, so the six are spread over the xdist workers instead of running one after another in one test.
@pytest.mark.parametrize("factory", ["durable", *FAILS_BY_RULE])
def test_ours_passes_the_file_session_manager_and_four_planted_bugs_fail_by_rule(
    pytester: pytest.Pytester, factory: str
) -> None:
    _write(pytester, "agents_all_points", FIXTURE_TESTS.format(module="agents_all_points", max_points=None))
    item = f"test_agents_all_points.py::test_agent[{factory}]"
    result = pytester.runpytest_inprocess(item, "--strands-chaos", "-p", "no:cacheprovider", "-q")
    totals = summary(result)
    assert totals["workflows"] == 1
    if factory == "durable":
        result.assert_outcomes(passed=1)
        assert totals["divergences"] == 0 and totals["invalid"] == 0
        return
    result.assert_outcomes(failed=1)
    failed = _sections(result)
    assert set(failed) == {factory}
    assert FAILS_BY_RULE[factory](failed[factory]), failed[factory][-3000:]
    assert totals["divergences"] > 0
    if factory == "sdk_file":
        assert totals["invalid"] > 0  # the requests that break alternation are invalid histories


COLLECTED = """
import pytest
from {module} import PROMPTS, durable, sdk_file

pytestmark = pytest.mark.strands_chaos(prompts=PROMPTS, max_points=4)


def build_agent_durable(ctx):
    return durable(ctx)


@pytest.mark.strands_chaos(max_points=3)
def file_sessions(ctx):
    return sdk_file(ctx)


def helper_not_collected(ctx):
    raise AssertionError("only build_agent* functions and marked ones are factories")
"""


def test_a_file_of_agent_factories_is_collected_like_specs(pytester: pytest.Pytester) -> None:
    _write(pytester, "agents_collected", COLLECTED.format(module="agents_collected"))
    # the golden order only: other completion orders add items of their own (tests/plugin/test_plugin_orders.py)
    result = pytester.runpytest_inprocess(
        "--strands-chaos", "--strands-chaos-orders=golden", "-p", "no:cacheprovider", "-v"
    )
    out = result.stdout.str()
    assert "test_agents_collected.py::build_agent_durable::golden PASSED" in out
    assert re.search(r"::build_agent_durable::\S+/\S+ PASSED", out)
    assert "::file_sessions::golden PASSED" in out and "helper_not_collected" not in out
    result.assert_outcomes(passed=1 + 4 + 1 + (3 - failed_count(result)), failed=failed_count(result))
    assert failed_count(result) >= 1  # FileSessionManager: at least one of its 3 sampled points fails
    assert summary(result)["points"] == 7


def failed_count(result: pytest.RunResult) -> int:
    return result.parseoutcomes().get("failed", 0)


def test_without_the_flag_factories_are_plain_functions(pytester: pytest.Pytester) -> None:
    _write(pytester, "agents_inert", COLLECTED.format(module="agents_inert"))
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-q")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED


KILLED = """
import pytest

pytestmark = pytest.mark.strands_chaos(max_points=4)


def test_spawned_children_killed_at_each_point_resume(strands_chaos):
    outcomes = strands_chaos.run_agent("{module}:durable", ["Pay the taxi, note the hotel."])
    assert {{o.fault for o in outcomes}} == {{"interrupt", "kill"}} and len(outcomes) == 8
    assert {{o.note for o in outcomes if o.fault == "kill"}} == {{"killed by SIGKILL"}}


def test_forked_children_killed_at_each_point_resume(strands_chaos):
    from {module} import durable

    outcomes = strands_chaos.run_agent(durable, ["Pay the taxi, note the hotel."])
    assert {{o.fault for o in outcomes}} == {{"interrupt", "kill"}} and all(o.ok for o in outcomes)
    assert {{o.note for o in outcomes if o.fault == "kill"}} == {{"killed by SIGKILL"}}
"""


def test_sigkill_of_a_spawned_or_forked_child_is_explored(pytester: pytest.Pytester) -> None:
    _write(pytester, "agents_killed", KILLED.format(module="agents_killed"))
    result = pytester.runpytest_inprocess(
        "--strands-chaos", "--strands-chaos-faults=interrupt,kill", "-p", "no:cacheprovider", "-q"
    )
    result.assert_outcomes(passed=2)


def test_the_example_opening_the_chaos_plugin_doc_runs(pytester: pytest.Pytester) -> None:
    doc = (REPO / "docs" / "chaos-plugin.md").read_text()
    opening = doc.split("\n## ", 2)[1]
    assert opening.startswith("Your own Python agent")
    example = re.search(r"```python\n(.*?)```", opening, re.DOTALL)
    assert example, "the section opens with a python example"
    pytester.makepyfile(test_my_agent=example.group(1))
    result = pytester.runpytest_inprocess("--strands-chaos", "-p", "no:cacheprovider", "-q")
    result.assert_outcomes(passed=1)


POINTED = '''
import pytest
from strands import Agent, tool

import pytest_strands
from strands_durable.models.scripted import ScriptedModel
from strands_durable.sdk import DurableSessionManager


def build_agent(ctx):
    @tool
    def note(item: str) -> str:
        """Write a note about an item."""
        (ctx.workspace / f"{item}.txt").write_text(item)
        pytest_strands.point("noted")  # between the effect and the return
        return f"noted {item}"

    model = ScriptedModel([[{"name": "note", "input": {"item": "hotel"}}], "Noted."])
    manager = DurableSessionManager(ctx.session_id, ctx.storage_dir)
    return Agent(model=model, tools=[note], callback_handler=None, session_manager=manager)


def test_a_point_in_a_tool_body_is_crashed_at(strands_chaos):
    outcomes = strands_chaos.run_agent(build_agent, ["Note the hotel."])
    assert [o.point for o in outcomes if o.point.startswith("user:")] == ["user:noted/tool.point"]
    pytest_strands.point("outside")  # no chaos run in progress: nothing happens
'''


def test_a_tool_body_marks_its_own_crash_point(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_pointed=POINTED)
    result = pytester.runpytest_inprocess("--strands-chaos", "-p", "no:cacheprovider", "-q")
    result.assert_outcomes(passed=1)


# The agent runs its two tools concurrently (the SDK's default executor), as its user would: a resume whose
# request follows an "outcome unknown" result the recording never saw is answered off the record
# (tests/plugin/test_plugin_agent_unknown_outcome.py).
CASSETTE = """
import pytest
from strands import Agent

from strands_durable.faults.agents.examples import LEDGER_SCRIPT, ledger_tools
from strands_durable.models.scripted import ScriptedModel
from strands_durable.sdk import DurableSessionManager


class ProviderModel(ScriptedModel):  # stands in for a paid provider: counts the calls that reach it
    calls = 0

    async def stream(self, *args, **kwargs):
        type(self).calls += 1
        async for event in super().stream(*args, **kwargs):
            yield event


def build_agent(ctx):
    manager = DurableSessionManager(ctx.session_id, ctx.storage_dir)
    return Agent(model=ProviderModel(LEDGER_SCRIPT), tools=ledger_tools(ctx), callback_handler=None,
                 session_manager=manager)


@pytest.mark.strands_chaos(max_points=6, cassette="ledger.cassette.json")
def test_recorded_once_then_replayed(strands_chaos, request):
    outcomes = strands_chaos.run_agent(build_agent, [{prompt!r}])
    recording = request.config.getoption("strands_record")
    assert len(outcomes) == 6 and ProviderModel.calls == (2 if recording else 0)
"""


def test_a_cassette_records_the_real_model_once_and_a_missing_request_is_named(pytester: pytest.Pytester) -> None:
    prompt = "Pay the taxi, note the hotel."
    pytester.makepyfile(test_cassette=CASSETTE.format(prompt=prompt))
    recorded = pytester.runpytest_inprocess("--strands-chaos", "--strands-record", "-p", "no:cacheprovider", "-q")
    recorded.assert_outcomes(passed=1)
    assert (pytester.path / "ledger.cassette.json").exists()
    replayed = pytester.runpytest_inprocess("--strands-chaos", "-p", "no:cacheprovider", "-q")
    replayed.assert_outcomes(passed=1)
    pytester.makepyfile(test_cassette=CASSETTE.format(prompt="A prompt the recording never sent."))
    missed = pytester.runpytest_inprocess("--strands-chaos", "-p", "no:cacheprovider", "-q")
    missed.assert_outcomes(failed=1)
    assert re.search(
        r"CassetteMiss: model request [0-9a-f]{12} of agent 'default' is not in the cassette", missed.stdout.str()
    )


TRIP = """
import pytest
from strands.session import FileSessionManager

from strands_durable.faults.agents.trip import PROMPTS, TASK, trip_agent, trip_graph, trip_swarm


def file_sessions(session_id, storage_dir):
    return FileSessionManager(session_id, str(storage_dir))


def trip_agent_on_file_sessions(ctx):
    return trip_agent(ctx, manager=file_sessions)


@pytest.mark.parametrize(("factory", "prompts"), [
    (trip_agent, PROMPTS), (trip_graph, [TASK]), (trip_swarm, [TASK]), (trip_agent_on_file_sessions, PROMPTS),
], ids=["agent", "graph", "swarm", "file"])
def test_trip(strands_chaos, factory, prompts):
    outcomes = strands_chaos.run_agent(factory, prompts, max_points=24)
    assert len(outcomes) == 24 and all(o.fired for o in outcomes)
"""


# One outer test per factory, as above: the four explorations are spread over the xdist workers.
@pytest.mark.parametrize("factory", ["agent", "graph", "swarm", "file"])
def test_run_agent_takes_a_factory_of_an_agent_a_graph_or_a_swarm_and_still_fails_file_sessions(
    pytester: pytest.Pytester, factory: str
) -> None:
    pytester.makepyfile(test_trip=TRIP)
    result = pytester.runpytest_inprocess(
        f"test_trip.py::test_trip[{factory}]", "--strands-chaos", "-p", "no:cacheprovider", "-q"
    )
    assert summary(result)["points"] == 24
    if factory != "file":
        result.assert_outcomes(passed=1)
        return
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert re.search(r"FAILED test_trip.py::test_trip\[file\]", out)
    assert re.search(r"\d+ of 24 crash points of trip_agent_on_file_sessions failed", out)
    assert "[invalid-request]" in out and "two user messages in a row" in out
