"""The tool ledger: tool executions of every process of one exploration, the judge's evidence that nothing
committed ran again (`judge.tool_reruns`)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from strands_durable.crashpoints import CrashPoint, CrashPoints
from strands_durable.faults.kit.golden import GoldenRun
from strands_durable.faults.kit.judge import Problem, non_idempotent_tools, tool_reruns
from strands_durable.store.fileops import FileOps


class ToolLedger:
    """Tool executions of every process of one exploration, one fsynced line each: (event, tool path, pid).

    `tool.before` means a tool is about to run, `tool.committed` that its result is durable. Nothing committed
    may run again, and a non-idempotent tool (one with a `/started` commit) may run at most once. Lines are
    fsynced when `durable` (processes racing on one machine); a killed process's writes reach the file anyway
    (the kernel still holds them), so the kill explorer skips the fsync.
    """

    def __init__(self, path: Path, *, durable: bool = True) -> None:
        self.path = path
        self.durable = durable
        self._ops = FileOps()

    def subscribe(self, bus: CrashPoints) -> None:
        bus.subscribe(self._record)

    def _record(self, point: CrashPoint) -> None:
        self.record_points([point])

    def record_points(self, points: Iterable[CrashPoint]) -> None:
        """Append the tool points among `points` (also those of a run whose journal prefix an exploration
        starts from: what that prefix committed must not run again either)."""
        lines = [json.dumps([p.site, p.path]) + "\n" for p in points if p.site in ("tool.before", "tool.committed")]
        if not lines:
            return
        handle = self._ops.open_append(self.path)
        try:
            handle.append("".join(lines).encode())
            if self.durable:
                handle.sync()
        finally:
            handle.close()

    def entries(self) -> list[tuple[str, str]]:
        if not self.path.exists():
            return []
        rows = []
        for line in self.path.read_bytes().splitlines():
            try:
                site, path = json.loads(line)
            except ValueError:
                continue  # a line torn by a kill
            rows.append((site, path))
        return rows

    def reruns(self, golden: GoldenRun) -> list[Problem]:
        """(rule, detail): tool paths that ran after their result was committed, or non-idempotent ones of the golden
        run that ran twice (`judge.tool_reruns`)."""
        return tool_reruns(self.entries(), non_idempotent_tools(golden))
