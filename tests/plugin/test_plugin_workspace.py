"""Side effects under chaos: every explored run works on its own copy of the tools' workspace (seeded from the
directory `strands_chaos_workspace` names), and the judge compares it with the golden run's, so an effect that
happens twice is caught even when no other rule sees it."""

from __future__ import annotations

import pytest

from tests.plugin.support import summary

SPEC = """
version: 0
name: payments
runtime:
  provider: synthetic
  model_id: synthetic-1
agents:
  clerk:
    prompt: You record every payment in the ledger.
    tools: [{tools}]
pattern:
  type: chain
  config:
    steps:
      - agent: clerk
        input: "Record the payments of this week."
      - agent: clerk
        input: "Record the refunds: {{{{ last_response }}}}"
"""

TOOLS = '''
from strands import tool

from strands_durable import non_idempotent, tool_workspace

LEDGERS_SEEN = []  # the ledger as each call found it


def _append(tool_context, line):
    path = tool_workspace(tool_context) / "books" / "ledger.txt"
    LEDGERS_SEEN.append(path.read_text(encoding="utf-8"))
    with open(path, "a", encoding="utf-8") as ledger:
        ledger.write(line + "\\n")


@non_idempotent
@tool(context=True)
def record_payment(amount: str, tool_context) -> str:
    """Append a payment to the ledger (a side effect that must happen once).

    Args:
        amount: The amount paid.
    """
    _append(tool_context, f"paid {amount}")
    return "recorded"


@tool(context=True)
def record_unmarked(amount: str, tool_context) -> str:
    """Append a payment to the ledger, but not marked non-idempotent (re-run after a crash mid-call).

    Args:
        amount: The amount paid.
    """
    _append(tool_context, f"paid {amount}")
    return "recorded"
'''

TEST = """
import pytest

import ledger_tools


def test_a_ledger_written_exactly_once_passes_every_point(strands_chaos):
    outcomes = strands_chaos.run("payments.yaml", tools={"record_payment": ledger_tools.record_payment})
    assert outcomes and all(o.ok for o in outcomes)
    assert len(ledger_tools.LEDGERS_SEEN) > 10
    assert all(seen.startswith("opening balance\\n") for seen in ledger_tools.LEDGERS_SEEN)  # a copy of state/
    assert max(len(seen.splitlines()) for seen in ledger_tools.LEDGERS_SEEN) > 1  # later calls see earlier ones
    with open("state/books/ledger.txt", encoding="utf-8") as original:
        assert original.read() == "opening balance\\n"  # every run wrote to its own copy, never to the original
"""

UNMARKED_TEST = r"""
import pytest

import ledger_tools


def test_an_unmarked_appending_tool_fails_where_a_crash_reran_it(strands_chaos):
    with pytest.raises(AssertionError, match=r"tool\.executed\n\[workspace\] the tools' workspace differs"):
        strands_chaos.run("payments.yaml", tools={"record_unmarked": ledger_tools.record_unmarked})
"""

# a runtime that replays a committed tool result but runs the tool's body again first, without any crash point
# (the crash-point rules cannot see it): only the workspace shows the effect happened twice
DOUBLE_APPEND = """
from strands_durable.agent import durable

_real = durable._InvocationHooks.execute_tool

async def _runs_committed_again(self, context, next_fn):
    conv = self.conv
    if conv is not None and context.tool_use["toolUseId"] in conv.tool_results:
        async for _ in next_fn(context):
            pass
    async for item in _real(self, context, next_fn):
        yield item

durable._InvocationHooks.execute_tool = _runs_committed_again
"""

INI = "[pytest]\nstrands_chaos_workspace = state\n"


def _project(pytester: pytest.Pytester, tools: str = "record_payment") -> None:
    (pytester.path / "payments.yaml").write_text(SPEC.format(tools=tools))
    (pytester.path / "state" / "books").mkdir(parents=True)
    (pytester.path / "state" / "books" / "ledger.txt").write_text("opening balance\n")
    pytester.makeini(INI)
    pytester.makepyfile(ledger_tools=TOOLS)


@pytest.mark.slow
def test_a_non_idempotent_ledger_tool_passes_with_a_workspace_copy_per_run(pytester: pytest.Pytester) -> None:
    _project(pytester)
    pytester.makepyfile(test_payments=TEST)
    result = pytester.runpytest_subprocess("--strands-chaos", "-p", "no:cacheprovider", "-q")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-3000:]
    assert summary(result)["divergences"] == 0


@pytest.mark.slow
def test_a_runtime_that_appends_twice_is_caught_by_the_workspace_rule(pytester: pytest.Pytester) -> None:
    _project(pytester)
    pytester.makepyfile(test_payments=TEST)
    pytester.makeconftest(DOUBLE_APPEND)
    result = pytester.runpytest_subprocess("--strands-chaos", "-p", "no:cacheprovider", "-q")
    out = result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert "[workspace] the tools' workspace differs from the golden run's at" in out, out[-3000:]
    assert "+paid " in out  # the diff shows the second append
    assert "[tool-rerun]" not in out  # no other rule saw it


@pytest.mark.slow
def test_an_appending_tool_not_marked_non_idempotent_is_named_by_the_workspace_rule(
    pytester: pytest.Pytester,
) -> None:
    _project(pytester, tools="record_unmarked")
    pytester.makepyfile(test_payments=UNMARKED_TEST)
    result = pytester.runpytest_subprocess("--strands-chaos", "-p", "no:cacheprovider", "-q")
    out = result.stdout.str()
    assert result.ret == pytest.ExitCode.OK, out[-3000:]  # the inner test expects the failing points
    assert summary(result)["divergences"] > 0


def test_a_workspace_option_naming_no_directory_is_a_usage_error(pytester: pytest.Pytester) -> None:
    (pytester.path / "payments.yaml").write_text(SPEC.format(tools="calculator"))
    pytester.makeini("[pytest]\nstrands_chaos_workspace = missing\n")
    result = pytester.runpytest_subprocess("--strands-chaos", "-p", "no:cacheprovider", "-q")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "strands_chaos_workspace: not a directory:" in result.stderr.str()


@pytest.mark.slow
def test_a_spec_names_its_own_workspace_directory(pytester: pytest.Pytester) -> None:
    _project(pytester)
    pytester.makeini("[pytest]\n")  # no ini option: the spec's metadata names the directory
    spec = pytester.path / "payments.yaml"
    spec.write_text(
        spec.read_text().replace("name: payments\n", "name: payments\nmetadata:\n  strands_chaos_workspace: state\n")
    )
    pytester.makepyfile(test_payments=TEST)
    result = pytester.runpytest_subprocess("--strands-chaos", "-p", "no:cacheprovider", "-q")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-3000:]
    assert summary(result)["divergences"] == 0
