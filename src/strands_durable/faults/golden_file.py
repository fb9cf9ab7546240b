"""Golden runs shared between the processes of one chaos session: each workflow's golden run is computed once, by
whichever pytest-xdist worker locks it first, and read back by the others.

A golden run is written in its file form (`golden_record`): plain values only (its points as their fields, the
journal, the comparable view, the tools' workspace), never the live objects of the run that made it; the reader
rebuilds a `WorkflowGoldenRun` around its own target and scratch directory (`golden_from_record`). A file is named
by a key over everything a golden run depends on (`golden_key`) and holds that key and a checksum of its payload;
one that is torn, corrupt, of another format or for another key is ignored and the golden run computed again.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import fcntl
import hashlib
import io
import json
import os
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import strands_durable
from strands_durable.crashpoints import SITE_TYPES, Commit, CrashPoint
from strands_durable.faults.kit.findings import Finding
from strands_durable.faults.kit.golden import GoldenPoint, WorkflowGoldenRun
from strands_durable.faults.kit.target import ChaosTarget
from strands_durable.faults.kit.workspace import WorkspaceHistory, read_files
from strands_durable.store.fileops import FileOps

FORMAT = b"strands-chaos-golden 3"  # 3: a point says whether an effect was uncommitted (2: no agent fields)
_POINT_TYPES: dict[str, type[CrashPoint]] = {kind.__name__: kind for kind in {CrashPoint, *SITE_TYPES.values()}}
_OPS = FileOps()


class GoldenFileError(ValueError):
    """A golden-run file that cannot be used (torn, corrupt, another format or another key)."""


def golden_key(target: ChaosTarget) -> str | None:
    """What a workflow's golden run depends on, hashed: the spec's bytes, its cassette's, the tools' workspace,
    seed, variables, HITL answer, mode and this code's version. None for a target with Python tools (objects of
    the test that built them: never shared)."""
    from strands_durable.faults.kit.cassette import cassette_path

    if target.tools:
        return None
    cassette = cassette_path(target.spec_path)
    parts = {
        "format": FORMAT.decode(),
        "version": strands_durable.__version__,
        "spec": str(target.spec_path.resolve()),
        "spec_bytes": _digest(target.spec_path.read_bytes()),
        "cassette": _digest(cassette.read_bytes()) if cassette.is_file() else None,
        "workspace": {name: _digest(data) for name, data in read_files(target.workspace).items()},
        "seed": target.seed,
        "variables": target.variables,
        "hitl_answer": target.hitl_answer,
        "full": target.full,
        **({"unit_order": list(target.unit_order)} if target.unit_order else {}),
    }
    return _digest(json.dumps(parts, sort_keys=True).encode())


def golden_record(golden: WorkflowGoldenRun) -> dict[str, Any]:
    """The golden run as plain values: what exploring its points, judging them and reporting it read."""
    return {
        "points": [_point_record(p) for p in golden.points],
        "comparable": golden.comparable,
        "problems": [dataclasses.astuple(p) for p in golden.problems],
        "model_requests": golden.model_requests,
        "tool_executions": golden.tool_executions,
        "journal": golden.journal,
        "spec_snapshot": golden.spec_snapshot,
        "meta": golden.meta,
        "workspace": golden.workspace.changes,
        "failure": golden.failure,
        "untaken_edges": golden.untaken_edges,
        "secret_variables": golden.secret_variables,  # names only: no value of a secret is written
    }


def golden_from_record(record: dict[str, Any], target: ChaosTarget, workdir: Path) -> WorkflowGoldenRun:
    """The `WorkflowGoldenRun` a record was made from, for `target`, exploring under `workdir`."""
    try:
        workspace = WorkspaceHistory(record["workspace"][0][1])
        workspace.changes = [(index, files) for index, files in record["workspace"]]
        return WorkflowGoldenRun(
            target=target,
            workdir=workdir,
            points=[_point_from_record(entry) for entry in record["points"]],
            comparable=record["comparable"],
            problems=[Finding(*fields) for fields in record["problems"]],
            model_requests=record["model_requests"],
            tool_executions=record["tool_executions"],
            journal=record["journal"],
            spec_snapshot=record["spec_snapshot"],
            meta=record["meta"],
            workspace=workspace,
            failure=record["failure"],
            untaken_edges=record["untaken_edges"],
            secret_variables=record["secret_variables"],
        )
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        raise GoldenFileError(f"not a golden run record: {type(exc).__name__}: {exc}") from None


def _point_record(golden_point: GoldenPoint) -> tuple[Any, ...]:
    point = golden_point.point
    fields = {f.name: getattr(point, f.name) for f in dataclasses.fields(point) if f.name != "state"}
    if isinstance(point, Commit):  # read-only views of the live run: copied plain (the state is not kept)
        fields["records"] = copy.deepcopy(point.records)
    g = golden_point
    return (
        type(point).__name__,
        fields,
        g.index,
        g.journal_length,
        g.digest,
        g.completed,
        g.outcome_unknown,
        g.effect_uncommitted,
    )


def _point_from_record(entry: tuple[Any, ...]) -> GoldenPoint:
    kind, fields, *values = entry
    return GoldenPoint(_POINT_TYPES[kind](**fields), *values)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# -- the files ---------------------------------------------------------------------------------------------------


class _PlainUnpickler(pickle.Unpickler):
    """Reads back only what pickle writes without naming a class: dicts, lists, tuples, sets, strings, bytes,
    numbers, None and booleans (a file naming any class is refused, never imported)."""

    def find_class(self, module: str, name: str) -> Any:
        raise GoldenFileError(f"names a class ({module}.{name})")


def dump_golden(key: str, golden: WorkflowGoldenRun) -> bytes:
    """A golden run's file: the format line, the key, the payload's checksum, then the payload."""
    payload = pickle.dumps(golden_record(golden), protocol=pickle.HIGHEST_PROTOCOL)
    return b"\n".join([FORMAT, key.encode(), _digest(payload).encode(), payload])


def load_golden(data: bytes, key: str, target: ChaosTarget, workdir: Path) -> WorkflowGoldenRun:
    """The golden run a file holds for `key`; `GoldenFileError` when the file is not exactly that."""
    parts = data.split(b"\n", 3)
    if len(parts) != 4 or parts[0] != FORMAT:
        raise GoldenFileError("not a golden-run file of this format")
    if parts[1] != key.encode():
        raise GoldenFileError("a golden run of other inputs (spec, seed, options or code version)")
    if parts[2] != _digest(parts[3]).encode():
        raise GoldenFileError("its checksum does not match (torn or corrupt)")
    try:
        record = _PlainUnpickler(io.BytesIO(parts[3])).load()
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError) as exc:
        raise GoldenFileError(f"unreadable: {exc}") from None
    if not isinstance(record, dict):
        raise GoldenFileError("not a golden run record")
    return golden_from_record(record, target, workdir)


class SharedGoldens:
    """The golden-run files of one chaos session, in a directory every worker of the session can reach. Sharing
    only saves work: where the directory cannot be made or written (another host, no room), each process
    computes its own golden runs."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def golden(self, target: ChaosTarget, workdir: Path, run: Callable[[], WorkflowGoldenRun]) -> WorkflowGoldenRun:
        """The target's golden run: read from its file when a valid one exists, else `run()` and written for
        the others. Holds the workflow's lock meanwhile, so another process asking waits for it and reads it."""
        key = golden_key(target)
        if key is None:
            return run()
        try:
            lock = self._lock(key)
        except OSError:
            return run()
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)
            path = self.directory / f"{key}.golden"
            if path.is_file():
                try:
                    golden = load_golden(_OPS.read_bytes(path), key, target, workdir)
                    _OPS.makedirs(workdir, durable=False)
                    return golden
                except GoldenFileError:
                    pass  # computed again below and the file replaced
            golden = run()
            with contextlib.suppress(OSError):  # not shared then, and still this process's golden run
                _OPS.write_atomic(path, dump_golden(key, golden), durable=False)
            return golden
        finally:
            os.close(lock)  # releases the lock

    def _lock(self, key: str) -> int:
        """An open descriptor of the workflow's lock file, created once and never replaced (so every process
        locks the same inode)."""
        _OPS.makedirs(self.directory, durable=False)
        lock_path = self.directory / f"{key}.lock"
        if not lock_path.exists():
            _OPS.open_append(lock_path).close()
        return os.open(lock_path, os.O_RDONLY | os.O_CLOEXEC)
