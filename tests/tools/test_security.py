"""`security.guardrails` with effect: `deny_network` and `allow_tools` refuse before a session exists (exit 18,
naming the tool and the guardrail), tools an agent gets without naming them are filtered by `allow_tools`, and
`pii_redaction` takes PII out of prompts, answers and tool results before they are committed (so no stored file
holds it and a resumed run matches an uninterrupted one) and out of artifacts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from strands import tool

from strands_durable import CrashPoints, InjectedCrash, LocalStore, RunOptions, resume, run_workflow
from strands_durable.errors import DurableError, HitlPaused, exit_code_for
from strands_durable.faults.kit.oracle import comparable
from tests.tools.support import call, result_text, run_script, scripted_spec, tool_results

GUARD = "security:\n  guardrails: {%s}\n"


def _no_session(tmp_path: Path) -> bool:
    return not (tmp_path / "sessions").exists() or not list((tmp_path / "sessions").iterdir())


def test_deny_network_refuses_network_tools_even_with_network_allowed(tmp_path):
    extra = (
        GUARD % "deny_network: true" + "tools:\n  http_executors:\n    - {id: api, base_url: 'http://127.0.0.1:9'}\n"
    )
    spec = scripted_spec(tmp_path, "[api]", extra)
    with pytest.raises(DurableError) as caught:
        run_script(spec, tmp_path, [call("api", method="GET", path="/")], network=True)
    assert exit_code_for(caught.value) == 18
    assert "'api'" in str(caught.value) and "security.guardrails.deny_network" in str(caught.value)
    assert _no_session(tmp_path)
    # the same spec without the guardrail is accepted with --network (the refusal is the guardrail's)
    plain = scripted_spec(tmp_path, "[api]", extra.replace("deny_network: true", "deny_network: false"), name="b.yaml")
    outcome, _ = run_script(plain, tmp_path, ["No call."], network=True)
    assert outcome.status == "completed"


def test_allow_tools_refuses_a_tool_an_agent_names_on_the_command_line_with_exit_18(tmp_path):
    spec = scripted_spec(tmp_path, "[calculator, current_time]", GUARD % "allow_tools: [calculator]")
    done = subprocess.run(
        [sys.executable, "-m", "strands_durable", "run", str(spec), "--sessions-dir", str(tmp_path / "sessions")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 18, done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        "Error: tool 'current_time' (agents.worker.tools) is not in security.guardrails.allow_tools"
    )
    assert _no_session(tmp_path)


def test_allow_tools_filters_the_tools_an_agent_gets_without_naming_them(tmp_path):
    extra = GUARD % "allow_tools: [calculator]" + "tools:\n  python: [calculator, current_time]\n"
    spec = scripted_spec(tmp_path, None, extra)  # no `tools:` key: every declared tool, filtered by allow_tools
    turns = [call("calculator", expression="6*7"), call("current_time", timezone="UTC")]
    outcome, store = run_script(spec, tmp_path, turns)
    assert outcome.status == "completed"
    product, refused = tool_results(store, outcome.session_id)
    assert product["status"] == "success" and result_text(product) == "42"
    assert refused["status"] == "error" and "current_time" in result_text(refused)  # the agent never had it


CONTACTS = {"bob": "bob@example.com, phone 555-123-4567"}


@tool
def lookup(person: str) -> str:
    """Look a person up.

    Args:
        person: Who.
    """
    return f"{person}: {CONTACTS[person]}"


PII_SPEC = """\
version: 0
name: pii-test
runtime: {provider: scripted}
inputs:
  values: {contact: carol@example.org}
security:
  guardrails: {pii_redaction: true}
agents:
  worker: {prompt: You look people up., tools: [lookup]}
pattern:
  type: chain
  config:
    steps:
      - {agent: worker, input: "My SSN is 123-45-6789; find bob."}
      - {type: hitl, prompt: "Call {{ contact }} next?"}
      - {agent: worker, input: "Thanks; {{ hitl_response }}"}
outputs:
  artifacts:
    - {path: out.txt, from: "{{ steps[0].response }} / {{ contact }}"}
"""
PII_SCRIPT = {"worker": [call("lookup", person="bob"), "Reach bob at bob@example.com.", "Bye."]}
PII = ("123-45-6789", "bob@example.com", "555-123-4567", "carol@example.org", "dave@example.net")
ANSWER = "no, dave@example.net"


def _pii_options(root: Path, points: CrashPoints | None = None, answer: str | None = None) -> RunOptions:
    return RunOptions(
        out_dir=root / "out",
        scripts=PII_SCRIPT,
        extra_tools={"lookup": lookup},
        crash_points=points or CrashPoints(),
        hitl_response=answer,
    )


def _through_the_pause(start: Any, root: Path, store: LocalStore) -> Any:
    """Run `start()` until the HITL pause (its stored question redacted), then answer it with an e-mail address."""
    with pytest.raises(HitlPaused):
        start()
    (session_id,) = store.session_ids()
    assert b"carol@example.org" not in json.dumps(store.load(session_id).pattern_state).encode()
    return resume(session_id, _pii_options(root, answer=ANSWER), store=LocalStore(root / "sessions"))


def _stored_bytes(root: Path) -> bytes:
    """Every stored file but the spec's own snapshot (the user's file, kept as it is)."""
    files = sorted(p for p in (root / "sessions").rglob("*") if p.is_file() and p.name != "spec_snapshot.yaml")
    return b"".join(p.read_bytes() for p in files)


def test_pii_redaction_keeps_pii_out_of_every_stored_file_and_artifact_and_a_resume_matches(tmp_path):
    golden_root = tmp_path / "golden"
    spec = tmp_path / "spec.yaml"
    spec.write_text(PII_SPEC, encoding="utf-8")
    seen: list[str] = []
    points = CrashPoints()
    points.subscribe(lambda point: seen.append(point.id))
    store = LocalStore(golden_root / "sessions")
    outcome = _through_the_pause(
        lambda: run_workflow(spec, _pii_options(golden_root, points), store=store), golden_root, store
    )
    assert outcome.status == "completed"
    stored = _stored_bytes(golden_root)
    session_only = stored.replace(b"carol@example.org", b"")  # variables are kept as given (a resume needs them)
    assert not [value for value in PII if value.encode() in session_only]
    assert b"***REDACTED***" in stored
    (result,) = tool_results(store, outcome.session_id)
    assert result_text(result) == "bob: ***REDACTED***, phone ***REDACTED***"
    artifact = (golden_root / "out" / "out.txt").read_text(encoding="utf-8")
    assert artifact == "Reach bob at ***REDACTED***. / ***REDACTED***"
    golden = comparable(store.load(outcome.session_id))

    # a crash right after the tool's (redacted) result was committed: the resume replays it and ends the same
    target = next(point for point in seen if point.endswith("/tool.committed"))
    crashed_root = tmp_path / "crashed"
    crashed_store = LocalStore(crashed_root / "sessions")

    def crash(point: Any) -> None:
        if point.id == target:
            raise InjectedCrash(point)

    crashing = CrashPoints()
    crashing.subscribe(crash)
    with pytest.raises(InjectedCrash):
        run_workflow(spec, _pii_options(crashed_root, crashing), store=crashed_store)
    (session_id,) = crashed_store.session_ids()
    fresh = LocalStore(crashed_root / "sessions")
    resumed = _through_the_pause(
        lambda: resume(session_id, _pii_options(crashed_root), store=fresh), crashed_root, fresh
    )
    assert resumed.status == "completed"
    assert comparable(LocalStore(crashed_root / "sessions").load(session_id)) == golden
