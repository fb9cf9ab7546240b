"""The contract clauses of the lower levels, each a check of the backend itself in a forked child (plus the
racing and killed children two of them need). A repository: `repository-round-trip`, `repository-list-messages`,
`repository-multi-agent` (or declared absent by raising NotImplementedError) and, beyond the SDK's contract (its
docstrings promise neither), `repository-create-exclusive` and `repository-message-ids`. A storage:
`storage-round-trip`, `storage-overwrite`, `storage-list`, `storage-delete-twice`, `storage-write-atomic`."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from strands_durable.faults.backends.context import REPOSITORY, BackendFactory, GateContext
from strands_durable.faults.backends.pool import Job, run_jobs
from strands_durable.faults.kit.scratch import reset_dir, write_scratch

BEYOND = "beyond the SDK's contract: "
REPOSITORY_CLAUSES: dict[str, str] = {
    "repository-round-trip": "sessions, agents and messages read back as created and updated",
    "repository-list-messages": "list_messages returns messages in id order and honours offset and limit",
    "repository-multi-agent": "multi-agent records round-trip (or the methods raise NotImplementedError: absent)",
    "repository-create-exclusive": BEYOND + "creating a session that exists fails, also for two processes at once",
    "repository-message-ids": BEYOND + "creating a message with an id already stored fails",
}
STORAGE_CLAUSES: dict[str, str] = {
    "storage-round-trip": "a written value reads back; a missing key reads None",
    "storage-overwrite": "a second write replaces the value",
    "storage-list": "list returns exactly the keys under a prefix",
    "storage-delete-twice": "a deleted key reads None, and deleting it again does not fail",
    "storage-write-atomic": "a write killed at any moment leaves the old value or the new one, never a mix",
}
RACES = 8  # sessions two processes create at once (`repository-create-exclusive`)
KILLS = 8  # seeded kill times over one write (`storage-write-atomic`)
VALUE_BYTES = 256 * 1024


class Absent(Exception):
    """The backend declares the feature absent (NotImplementedError)."""


Check = Callable[[Any, GateContext], None]


def run_contract(factory: BackendFactory, kind: str, root: Path, prefix: str, limit_s: float) -> dict[str, Any]:
    """clause -> (outcome, detail): "pass", "fail" or "absent"."""
    checks = REPOSITORY_CHECKS if kind == REPOSITORY else STORAGE_CHECKS
    place = root / "contract"
    reset_dir(place)
    answer = place / "contract.json"

    def body() -> int:
        found = {}
        for clause, check in checks.items():
            ctx = GateContext(f"contract-{clause}", place / clause, prefix)
            try:
                check(factory(ctx), ctx)
                found[clause] = ("pass", "")
            except Absent as absent:
                found[clause] = ("absent", str(absent))
            except Exception as exc:
                found[clause] = ("fail", f"{type(exc).__name__}: {' '.join(str(exc).split())[:240]}")
        write_scratch(answer, json.dumps(found).encode())
        return 0

    job = Job("contract", [lambda: body])
    run_jobs([job], workers=1, limit_s=limit_s)
    results = json.loads(answer.read_text()) if answer.exists() else {}
    for clause in checks:
        results.setdefault(clause, ("fail", f"the check did not end ({job.exits[0].describe()})"))
    if kind == REPOSITORY and results["repository-create-exclusive"][0] == "pass":
        results["repository-create-exclusive"] = _racing_creates(factory, place, prefix, limit_s)
    if kind != REPOSITORY and results["storage-round-trip"][0] == "pass":
        results["storage-write-atomic"] = _killed_writes(factory, place, prefix, limit_s)
    return results


class Broken(AssertionError):
    pass


def expect(condition: bool, what: str) -> None:
    if not condition:
        raise Broken(what)


# -- a repository ---------------------------------------------------------------------------------------------
def _session(ctx: GateContext) -> Any:
    from strands.types.session import Session, SessionType

    return Session(session_id=ctx.session_id, session_type=SessionType.AGENT)


def _agent(agent_id: str, state: dict[str, Any]) -> Any:
    from strands.types.session import SessionAgent

    return SessionAgent(agent_id=agent_id, state=state, conversation_manager_state={})


MESSAGES: list[dict[str, Any]] = [
    {"role": "user", "content": [{"text": "Record the taxi."}]},
    {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "add_expense", "input": {"x": 1}}}]},
    {
        "role": "user",
        "content": [{"toolResult": {"toolUseId": "t1", "status": "success", "content": [{"text": "ok"}]}}],
    },
    {"role": "assistant", "content": [{"text": "Recorded."}]},
]


def _messages(repository: Any, ctx: GateContext, agent_id: str = "a1") -> None:
    from strands.types.session import SessionMessage

    repository.create_session(_session(ctx))
    repository.create_agent(ctx.session_id, _agent(agent_id, {"n": 1}))
    for index, message in enumerate(MESSAGES):
        repository.create_message(ctx.session_id, agent_id, SessionMessage.from_message(message, index))


def check_round_trip(repository: Any, ctx: GateContext) -> None:
    expect(repository.read_session(ctx.session_id + "-none") is None, "read_session of a missing session is not None")
    _messages(repository, ctx)
    session = repository.read_session(ctx.session_id)
    expect(session is not None and session.session_id == ctx.session_id, "read_session does not return the session")
    agent = repository.read_agent(ctx.session_id, "a1")
    expect(agent is not None and agent.state == {"n": 1}, f"read_agent returned {agent!r}")
    repository.update_agent(ctx.session_id, _agent("a1", {"n": 2}))
    agent = repository.read_agent(ctx.session_id, "a1")
    expect(agent is not None and agent.state == {"n": 2}, "update_agent is not read back")
    for index, message in enumerate(MESSAGES):
        stored = repository.read_message(ctx.session_id, "a1", index)
        expect(stored is not None and stored.message == message, f"message {index} does not read back as created")
    stored = repository.read_message(ctx.session_id, "a1", 3)
    stored.redact_message = {"role": "assistant", "content": [{"text": "[redacted]"}]}
    repository.update_message(ctx.session_id, "a1", stored)
    again = repository.read_message(ctx.session_id, "a1", 3)
    expect(again is not None and again.redact_message == stored.redact_message, "update_message is not read back")


def check_list_messages(repository: Any, ctx: GateContext) -> None:
    _messages(repository, ctx)

    def ids(**kwargs: Any) -> list[int]:
        return [m.message_id for m in repository.list_messages(ctx.session_id, "a1", **kwargs)]

    for kwargs, want in (
        ({}, [0, 1, 2, 3]),
        ({"limit": 2}, [0, 1]),
        ({"offset": 1, "limit": 2}, [1, 2]),
        ({"offset": 3}, [3]),
    ):
        got = ids(**kwargs)
        expect(got == want, f"list_messages({', '.join(f'{k}={v}' for k, v in kwargs.items())}) gave ids {got}")


class _Orchestrator:
    """What a repository reads of a Graph or Swarm: its id and its serialized state."""

    def __init__(self, state: dict[str, Any]) -> None:
        self.id = "team"
        self.state = state

    def serialize_state(self) -> dict[str, Any]:
        return dict(self.state)


def check_multi_agent(repository: Any, ctx: GateContext) -> None:
    repository.create_session(_session(ctx))
    try:
        repository.create_multi_agent(ctx.session_id, _Orchestrator({"id": "team", "status": "executing"}))
    except NotImplementedError:
        raise Absent("create_multi_agent raises NotImplementedError") from None
    found = repository.read_multi_agent(ctx.session_id, "team")
    expect(found is not None and found.get("status") == "executing", f"read_multi_agent returned {found!r}")
    repository.update_multi_agent(ctx.session_id, _Orchestrator({"id": "team", "status": "completed"}))
    found = repository.read_multi_agent(ctx.session_id, "team")
    expect(found is not None and found.get("status") == "completed", "update_multi_agent is not read back")


def check_create_exclusive(repository: Any, ctx: GateContext) -> None:
    repository.create_session(_session(ctx))
    try:
        repository.create_session(_session(ctx))
    except Exception:
        return
    raise Broken("creating a session that exists succeeded (it is overwritten)")


def check_message_ids(repository: Any, ctx: GateContext) -> None:
    from strands.types.session import SessionMessage

    _messages(repository, ctx)
    other = {"role": "user", "content": [{"text": "another message"}]}
    try:
        repository.create_message(ctx.session_id, "a1", SessionMessage.from_message(other, 2))
    except Exception:
        return
    raise Broken("creating message 2 again succeeded: a stored message id was given to another message")


REPOSITORY_CHECKS: dict[str, Check] = {
    "repository-round-trip": check_round_trip,
    "repository-list-messages": check_list_messages,
    "repository-multi-agent": check_multi_agent,
    "repository-create-exclusive": check_create_exclusive,
    "repository-message-ids": check_message_ids,
}


def _racing_creates(factory: BackendFactory, place: Path, prefix: str, limit_s: float) -> tuple[str, str]:
    """Two processes create each of `RACES` sessions at one instant: exactly one of each pair may succeed."""
    start_at = time.time() + 0.3

    def creator(name: str) -> Callable[[], int]:
        def body() -> int:
            repositories = [factory(GateContext(f"race-{i}", place / "race", prefix)) for i in range(RACES)]
            won = []
            while time.time() < start_at:
                pass
            for i, repository in enumerate(repositories):
                try:
                    repository.create_session(_session(GateContext(f"race-{i}", place / "race", prefix)))
                    won.append(i)
                except Exception:
                    pass
            write_scratch(place / f"race-{name}.json", json.dumps(won).encode())
            return 0

        return body

    jobs = [Job(name, [lambda name=name: creator(name)]) for name in "AB"]
    run_jobs(jobs, workers=2, limit_s=limit_s)
    won = [json.loads((place / f"race-{n}.json").read_text()) for n in "AB" if (place / f"race-{n}.json").exists()]
    if len(won) < 2:
        return ("fail", "a racing creator died")
    both = sorted(set(won[0]) & set(won[1]))
    if both:
        return ("fail", f"two processes both created {len(both)} of {RACES} sessions they raced for")
    return ("pass", "")


# -- a storage ------------------------------------------------------------------------------------------------
def _run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def check_storage_round_trip(storage: Any, ctx: GateContext) -> None:
    key = f"{ctx.prefix}/{ctx.session_id}/value"
    expect(_run(storage.read(key + "-none")) is None, "a missing key does not read None")
    _run(storage.write(key, b"first"))
    expect(_run(storage.read(key)) == b"first", "a written value does not read back")


def check_storage_overwrite(storage: Any, ctx: GateContext) -> None:
    key = f"{ctx.prefix}/{ctx.session_id}/value"
    _run(storage.write(key, b"first"))
    _run(storage.write(key, b"second, longer"))
    expect(_run(storage.read(key)) == b"second, longer", "a second write does not replace the value")


def check_storage_list(storage: Any, ctx: GateContext) -> None:
    base = f"{ctx.prefix}/{ctx.session_id}"
    for name in ("a", "b/c"):
        _run(storage.write(f"{base}/{name}", b"x"))
    _run(storage.write(f"{base}-other/a", b"x"))
    got = sorted(_run(storage.list(base + "/")))
    expect(got == [f"{base}/a", f"{base}/b/c"], f"list({base + '/'!r}) gave {got}")


def check_storage_delete_twice(storage: Any, ctx: GateContext) -> None:
    key = f"{ctx.prefix}/{ctx.session_id}/value"
    _run(storage.write(key, b"x"))
    _run(storage.delete(key))
    expect(_run(storage.read(key)) is None, "a deleted key does not read None")
    _run(storage.delete(key))


STORAGE_CHECKS: dict[str, Check] = {
    "storage-round-trip": check_storage_round_trip,
    "storage-overwrite": check_storage_overwrite,
    "storage-list": check_storage_list,
    "storage-delete-twice": check_storage_delete_twice,
    "storage-write-atomic": lambda storage, ctx: None,  # killed children: `_killed_writes`
}


def _killed_writes(factory: BackendFactory, place: Path, prefix: str, limit_s: float) -> tuple[str, str]:
    """A value written, then a new one whose write is SIGKILLed at `KILLS` seeded moments across its duration
    (measured first): each time, what reads back must be the old value or the new one."""
    ctx = GateContext("atomic", place / "atomic", prefix)
    key = f"{prefix}/atomic/value"
    old, new = b"o" * VALUE_BYTES, b"n" * (VALUE_BYTES + 1024)
    timing = place / "atomic-duration"

    def measure() -> int:
        storage = factory(ctx)
        _run(storage.write(key, new))
        start = time.monotonic()
        _run(storage.write(key, old))
        write_scratch(timing, str(time.monotonic() - start).encode())
        return 0

    run_jobs([Job("measure", [lambda: measure])], workers=1, limit_s=limit_s)
    if not timing.exists():
        return ("fail", "writing a value did not end")
    duration = float(timing.read_text())
    found = []
    for i in range(KILLS):
        after = duration * (i + 0.5) / KILLS

        def killed(after: float = after) -> int:
            storage = factory(ctx)
            signal.signal(signal.SIGALRM, lambda *_: os.kill(os.getpid(), signal.SIGKILL))
            signal.setitimer(signal.ITIMER_REAL, max(after, 1e-5))
            _run(storage.write(key, new))
            signal.setitimer(signal.ITIMER_REAL, 0)
            return 0

        def check(i: int = i) -> int:
            storage = factory(ctx)
            value = _run(storage.read(key))
            if value not in (old, new):
                size = "nothing" if value is None else f"{len(value)} bytes"
                write_scratch(place / f"torn-{i}", size.encode())
            _run(storage.write(key, old))
            return 0

        run_jobs(
            [Job(f"kill {i}", [lambda killed=killed: killed, lambda check=check: check])], workers=1, limit_s=limit_s
        )
        torn = place / f"torn-{i}"
        if torn.exists():
            found.append(f"a write killed after {after * 1000:.2f} ms left {torn.read_text()}")
    if found:
        return ("fail", f"{len(found)} of {KILLS} killed writes left neither value ({found[0]})")
    return ("pass", "")
