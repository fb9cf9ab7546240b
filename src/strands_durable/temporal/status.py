"""A Temporal run's own status, as its server reports it, for `strands sessions show` and `sessions list --temporal`.

Asked of the server (`describe`), not of a worker, so it answers with no worker running: the workflow's status
(RUNNING, COMPLETED, FAILED, CANCELED, TERMINATED, TIMED_OUT, ...) and, for runs started by workflow release 2 or
later, the progress the workflow keeps in its memo. A server that does not answer within `STATUS_TIMEOUT_S`
gives `unreachable`, never an error: showing a session must work offline.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

STATUS_TIMEOUT_S = 3.0
UNREACHABLE = "unreachable"


@dataclass(frozen=True)
class WorkflowStatus:
    """`status` is Temporal's name (RUNNING, ...), `unreachable`, `not found` or `unknown`; `detail` says why
    for the last three; `progress` is what the run was doing (`running step[1]`, `paused for a human`)."""

    status: str
    progress: str = ""
    units_done: int | None = None
    detail: str = ""

    def display(self) -> str:
        if self.detail:
            return f"{self.status} ({self.detail})"
        if self.progress and self.status == "RUNNING":
            count = self.units_done
            done = f"; {count} unit{'' if count == 1 else 's'} done" if count is not None else ""
            return f"{self.status} ({self.progress}{done})"
        return self.status

    def to_json(self) -> dict[str, Any]:
        return {"status": self.status, "progress": self.progress or None, "units_done": self.units_done,
                "detail": self.detail or None}  # fmt: skip


def temporal_engine(meta: Mapping[str, Any]) -> dict[str, Any] | None:
    """The engine a session's metadata records when it runs on Temporal (address, namespace, task queue)."""
    engine = meta.get("engine") or {}
    return dict(engine) if engine.get("name") == "temporal" and engine.get("address") else None


def workflow_statuses(runs: Iterable[tuple[str, Mapping[str, Any]]]) -> dict[str, WorkflowStatus]:
    """The status of each (session id, engine) run: one connection per server, all asked at once, each server
    given `STATUS_TIMEOUT_S` in all."""
    runs = list(runs)
    if not runs:
        return {}
    try:
        import temporalio  # noqa: F401
    except ImportError:
        missing = WorkflowStatus("unknown", detail="the temporal extra is not installed")
        return {session_id: missing for session_id, _ in runs}
    servers: dict[tuple[str, str], list[str]] = {}
    for session_id, engine in runs:
        key = (str(engine["address"]), str(engine.get("namespace") or "default"))
        servers.setdefault(key, []).append(session_id)

    async def ask_all() -> dict[str, WorkflowStatus]:
        answers = await asyncio.gather(*(_ask_server(address, ns, ids) for (address, ns), ids in servers.items()))
        return {session_id: status for answer in answers for session_id, status in answer.items()}

    return asyncio.run(ask_all())


async def _ask_server(address: str, namespace: str, session_ids: list[str]) -> dict[str, WorkflowStatus]:
    from strands_durable.errors import TemporalUnreachable
    from strands_durable.temporal.engine import connect

    async def ask() -> list[WorkflowStatus]:
        client = await connect(address, namespace)
        return await asyncio.gather(*(_describe(client, session_id) for session_id in session_ids))

    try:
        found = await asyncio.wait_for(ask(), STATUS_TIMEOUT_S)
    except TemporalUnreachable as exc:
        return dict.fromkeys(session_ids, WorkflowStatus(UNREACHABLE, detail=exc.reason))
    except asyncio.TimeoutError:
        gone = WorkflowStatus(UNREACHABLE, detail=f"no answer from {address} within {STATUS_TIMEOUT_S:.0f}s")
        return dict.fromkeys(session_ids, gone)
    return dict(zip(session_ids, found, strict=True))


async def _describe(client: Any, session_id: str) -> WorkflowStatus:
    from temporalio.service import RPCError, RPCStatusCode

    try:
        description = await client.get_workflow_handle(session_id).describe()
    except RPCError as exc:
        if exc.status == RPCStatusCode.NOT_FOUND:
            return WorkflowStatus("not found", detail="the server has no workflow with this id (retention?)")
        return WorkflowStatus(UNREACHABLE, detail=exc.message.splitlines()[0][:200] if exc.message else "")
    status = description.status.name if description.status is not None else "unknown"
    memo = await description.memo()
    from strands_durable.temporal.workflow import PROGRESS_MEMO

    progress = memo.get(PROGRESS_MEMO) or {}
    return WorkflowStatus(status, str(progress.get("status") or ""), progress.get("units_done"))
