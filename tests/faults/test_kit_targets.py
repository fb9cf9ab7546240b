"""Every fault class runs what the in-process explorer runs: a spec with network tools is explored offline from its
cassette (recorded once against a loopback server, then replayed with the server stopped), a spec whose network
tools have no cassette is not explorable in every class, and each run of a file-writing tool works on its own copy of
the tools' workspace, judged against the golden run's (shown here under the kill class)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from strands import tool

from strands_durable import non_idempotent, tool_workspace
from strands_durable.faults.classes.registry import FAULT_CLASSES, explore_fault, find_faults
from strands_durable.faults.kit.runs import record_cassette
from strands_durable.faults.kit.target import ChaosTarget, NotExplorable, spec_target
from strands_durable.faults.soak import soak
from tests.faults.conftest import describe, rules
from tests.plugin.test_plugin_network_cassette import SCRIPT, SECRET, SPEC, LoopbackServer
from tests.plugin.test_plugin_network_cassette import server as server

KILL_BOUNDS = {"signals": ("SIGKILL",), "random_moments": 0}


def _http_spec(directory: Path, base_url: str) -> Path:
    script = directory / "script.json"
    script.write_text(json.dumps(SCRIPT))
    spec = directory / "net.strands.yaml"
    spec.write_text(SPEC.format(base_url=base_url, script=script))
    return spec


def test_the_kill_class_explores_an_http_executor_spec_offline_from_its_cassette(
    tmp_path: Path, server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NET_CASSETTE_TOKEN", SECRET)
    spec = _http_spec(tmp_path, server.base_url)
    record_cassette(spec_target(spec, recording=True), tmp_path / "record")  # one golden run against the server
    assert [r[:2] for r in server.recorder.requests] == [("GET", "/items?kind=bolts"), ("PUT", "/orders/7")]
    server.stop()  # from here only the cassette can answer

    run = explore_fault("kill", spec_target(spec), tmp_path / "work", max_points=10, **KILL_BOUNDS)
    assert run.explored == 10 and run.outcomes["resumed"] == 10, run.summary()
    assert not run.findings, describe(run.findings)
    assert len(server.recorder.requests) == 2  # nothing reached the network


def test_a_spec_whose_network_tools_have_no_cassette_is_not_explorable_in_every_class(
    tmp_path: Path, server: LoopbackServer
) -> None:
    spec = _http_spec(tmp_path, server.base_url)
    for fault in FAULT_CLASSES:
        with pytest.raises(NotExplorable, match="record one with: pytest --strands-chaos --strands-record"):
            find_faults(fault, spec, tmp_path / fault)
    result = soak([spec], faults=["kill", "power"], workdir=tmp_path / "soak", progress=False, max_rounds=1)
    assert not result.passed and result.not_explorable and not result.runs
    assert any(line.startswith("Not explorable: ") for line in result.summary_lines())
    assert not server.recorder.requests


SPEC_WITH_LEDGER = """
version: 0
name: payments
runtime: {{provider: synthetic, model_id: synthetic-1}}
agents:
  clerk: {{prompt: You record every payment in the ledger., tools: [{tool}]}}
pattern:
  type: chain
  config:
    steps:
      - {{agent: clerk, input: Record the payments of this week.}}
      - {{agent: clerk, input: "Record the refunds: {{{{ last_response }}}}"}}
"""


def _ledger_tool(name: str, *, marked: bool) -> Any:
    """A tool appending a payment to the ledger in the tools' workspace; `marked` non-idempotent (done once) or
    not (re-run after a crash mid-call)."""

    @tool(name=name, context=True)
    def record(amount: str, tool_context: Any) -> str:
        """Append a payment to the ledger.

        Args:
            amount: The amount paid.
        """
        path = tool_workspace(tool_context) / "books" / "ledger.txt"
        with open(path, "a", encoding="utf-8") as ledger:
            ledger.write(f"paid {amount}\n")
        return "recorded"

    return non_idempotent(record) if marked else record


record_payment = _ledger_tool("record_payment", marked=True)
record_unmarked = _ledger_tool("record_unmarked", marked=False)


def _ledger_target(tmp_path: Path, name: str, function: Any) -> tuple[ChaosTarget, Path]:
    state = tmp_path / "state"
    (state / "books").mkdir(parents=True)
    (state / "books" / "ledger.txt").write_text("opening balance\n")
    spec = tmp_path / "payments.strands.yaml"
    spec.write_text(SPEC_WITH_LEDGER.format(tool=name))
    return ChaosTarget(spec, tools={name: function}, workspace=state), state


def test_each_killed_run_writes_its_own_copy_of_the_workspace_and_it_is_judged(tmp_path: Path) -> None:
    target, state = _ledger_target(tmp_path, "record_payment", record_payment)
    run = explore_fault("kill", target, tmp_path / "work", max_points=24, **KILL_BOUNDS)
    assert run.explored == 24 and not run.findings, describe(run.findings)
    golden_ledger = (tmp_path / "work" / "golden" / "golden" / "workspace" / "books" / "ledger.txt").read_text()
    assert golden_ledger.startswith("opening balance\npaid ") and golden_ledger.count("paid ") >= 2
    assert (state / "books" / "ledger.txt").read_text() == "opening balance\n"  # no run wrote to the original


def test_the_kill_class_sees_an_effect_that_happened_twice_in_the_workspace(tmp_path: Path) -> None:
    target, _ = _ledger_target(tmp_path, "record_unmarked", record_unmarked)
    run = explore_fault("kill", target, tmp_path / "work", **KILL_BOUNDS)
    assert "workspace" in rules(run.findings), describe(run.findings)
    twice = [f for f in run.findings if f.rule == "workspace"]
    # a kill after the append and before its result is committed: the resume appends again
    assert any(f.point.endswith("tool.executed") for f in twice), describe(twice)
