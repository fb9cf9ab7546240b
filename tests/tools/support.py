"""Helpers for the tool suites: small scripted specs run through the real runner, and their committed tool results."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from strands_durable import LocalStore, RunOptions, run_workflow


def scripted_spec(
    tmp_path: Path, tools: str | None, extra: str = "", *, script: list[Any] | None = None, name: str = "spec.yaml"
) -> Path:
    """A one-step chain on the scripted provider whose agent `worker` has `tools` (None: no `tools:` key) and the
    top-level keys in `extra`; with `script`, the agent's turns come from a script file (so a resume finds them)."""
    model = ""
    if script is not None:
        (tmp_path / "script.json").write_text(json.dumps({"worker": [*script, "Done."]}), encoding="utf-8")
        model = f", model_id: {tmp_path / 'script.json'}"
    tools_line = f"\n            tools: {tools}" if tools is not None else ""
    text = textwrap.dedent(
        f"""\
        version: 0
        name: tools-test
        runtime: {{provider: scripted{model}}}
        agents:
          worker:
            prompt: You use tools.{tools_line}
        pattern:
          type: chain
          config:
            steps:
              - agent: worker
                input: Go.
        """
    )
    path = tmp_path / name
    path.write_text(text + textwrap.dedent(extra), encoding="utf-8")
    return path


def http_spec(
    tmp_path: Path,
    base_url: str,
    *,
    script: list[Any] | None = None,
    headers: str = '{Authorization: "Bearer ${API_TOKEN}"}',
    extra: str = "",
) -> Path:
    """`scripted_spec` with one HTTP executor `api` on `base_url` whose `headers` use the secret API_TOKEN (the
    environment variable HTTP_TEST_TOKEN); `extra` is appended under `tools:`."""
    tools = f"""\
env:
  secrets:
    - {{name: API_TOKEN, source: env, key: HTTP_TEST_TOKEN}}
tools:
  http_executors:
    - id: api
      base_url: {base_url}
      headers: {headers}
      timeout: 20
{extra}"""
    return scripted_spec(tmp_path, None, tools, script=script)


def call(name: str, **arguments: Any) -> dict[str, Any]:
    """One scripted turn that calls `name` with `arguments`."""
    return {"tool_calls": [{"name": name, "input": arguments}]}


def run_script(spec: Path, tmp_path: Path, turns: list[Any], **options: Any) -> tuple[Any, LocalStore]:
    store = LocalStore(tmp_path / "sessions")
    run_options = RunOptions(out_dir=tmp_path / "out", scripts={"worker": [*turns, "Done."]}, **options)
    return run_workflow(spec, run_options, store=store), store


def tool_results(store: LocalStore, session_id: str) -> list[dict[str, Any]]:
    """Every committed toolResult block of the session, in conversation order."""
    state = store.load(session_id)
    results = []
    for conversation in state.conversations.values():
        for message in conversation.messages:
            for block in message.get("content", []):
                if "toolResult" in block:
                    results.append(block["toolResult"])
    return results


def result_text(result: dict[str, Any]) -> str:
    parts = []
    for item in result.get("content", []):
        parts.append(item["text"] if "text" in item else str(item.get("json")))
    return "\n".join(parts)


def run_and_kill(command: list[str], ready: Callable[[], bool], *, timeout_s: float = 60) -> None:
    """Start `strands run ...` as a child, SIGKILL it once `ready()` holds (a call is in flight), and reap it."""
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + timeout_s
        while not ready() and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert ready(), child.stderr.read().decode() if child.poll() is not None else "the call never came"  # type: ignore[union-attr]
        os.kill(child.pid, signal.SIGKILL)
        child.wait(30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(30)
