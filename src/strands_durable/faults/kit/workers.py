"""Workers forked from a warm process: tasks dealt to them one at a time, results back as compact records.

The parent has done the expensive part once (imported strands and the kit, computed the golden runs); each worker
is a fork of it (`forking.fork_child`: refused while other threads run), so it starts with all of that in memory
and runs tasks by number. Tasks are dealt dynamically: the numbers wait in one pipe every worker reads from (4
bytes a task, written and read whole), so a worker that finishes early takes the next one. Each worker answers on
a pipe of its own with length-prefixed pickled records: `started` before a task, then its result or the text of
the exception it raised. A task whose worker raised or died is `TaskLost`: the caller runs it itself.

    with ForkedWorkers(run_task, count=2) as workers:
        workers.start([3, 0, 1, 2])
        value = workers.result(0)

Linux only (`fork_problem` says why not elsewhere). The chaos plugin's `--strands-chaos-workers` and the backend
gate's kill runs share this machinery.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pickle
import select
import signal
import struct
import sys
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from strands_durable.faults.kit.forking import fork_child, wait_child

_TASK = struct.Struct("<I")  # one task number in the dealing pipe
_FRAME = struct.Struct("<I")  # the length of one record on a worker's answer pipe
_DEAL_CHUNK = 4096 - 4096 % _TASK.size  # <= PIPE_BUF: a write of it is whole or refused, never split
_PIPE_BYTES = 1 << 20  # asked of the kernel for each pipe (F_SETPIPE_SZ); it may give less
_F_SETPIPE_SZ = 1031


class TaskLost(RuntimeError):
    """A task no worker finished: its worker raised (the text is the traceback) or died before answering."""

    def __init__(self, task: int, reason: str) -> None:
        super().__init__(f"task {task}: {reason}")
        self.task = task
        self.reason = reason


def fork_problem(platform: str = sys.platform) -> str | None:
    """Why forked workers cannot run on `platform`, or None where they can (Linux)."""
    if platform.startswith("linux"):
        return None
    return f"forked workers need Linux (this platform: {platform})"


def cores() -> int:
    """The cores this process may run on (what `auto` means)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


@dataclass
class _Worker:
    number: int
    pid: int
    answers: int  # read end of its answer pipe
    buffer: bytearray = field(default_factory=bytearray)
    running: int | None = None  # the task it said it started and has not answered
    ended: bool = False


class ForkedWorkers:
    """`count` forked workers running `run_task(number)`; `setup(worker_number)` runs first in each (1-based), e.g.
    to give it scratch directories of its own. What the workers print is dropped (it would land in whatever the
    parent is capturing; a caller that wants a task's output runs it again itself). `threads_at_fork` lists, for
    each fork, the other threads alive at that moment (always empty lists: the fork is refused otherwise)."""

    def __init__(
        self,
        run_task: Callable[[int], Any],
        *,
        count: int,
        setup: Callable[[int], None] | None = None,
    ) -> None:
        if count < 1:
            raise ValueError(f"workers: count must be at least 1, not {count}")
        self.run_task = run_task
        self.count = count
        self.setup = setup
        self.threads_at_fork: list[list[str]] = []
        self._workers: list[_Worker] = []
        self._results: dict[int, tuple[bool, Any]] = {}
        self._undealt = b""
        self._deal_pipe: int | None = None

    # -- the parent's side --
    def start(self, tasks: Sequence[int]) -> None:
        """Fork the workers and deal `tasks` in this order (the first ones dealt first)."""
        task_read, task_write = os.pipe()
        _grow(task_write)
        self._undealt = b"".join(_TASK.pack(task) for task in tasks)
        try:
            for number in range(1, self.count + 1):
                answer_read, answer_write = os.pipe()
                _grow(answer_write)
                keep = (task_read, answer_write)
                witness: list[str] = []
                pid = fork_child(
                    lambda n=number, k=keep: self._work(n, *k, close=[task_write, *self._parent_fds()]),
                    witness=witness,
                )
                self.threads_at_fork.append(witness)
                os.close(answer_write)  # only the worker holds it: its end reads as EOF here
                self._workers.append(_Worker(number, pid, answer_read))
        except BaseException:
            os.close(task_read)
            os.close(task_write)
            self.close()
            raise
        os.close(task_read)
        os.set_blocking(task_write, False)
        self._deal_pipe = task_write
        self._deal()

    def _parent_fds(self) -> list[int]:
        return [w.answers for w in self._workers]

    def result(self, task: int) -> Any:
        """The value `run_task(task)` returned in a worker (waiting for it); `TaskLost` when the worker raised or
        ended without answering it, or no worker is left to run it."""
        while task not in self._results:
            lost = next((w for w in self._workers if w.ended and w.running == task), None)
            if lost is not None:
                raise TaskLost(task, f"worker {lost.number} ended before answering")
            if all(w.ended for w in self._workers):
                raise TaskLost(task, "no worker left to run it")
            self._pump()
        ok, value = self._results.pop(task)
        if not ok:
            raise TaskLost(task, value)
        return value

    def close(self) -> None:
        """Stop the workers (SIGKILL to those still running: the parent wants no more answers) and reap them."""
        if self._deal_pipe is not None:
            os.close(self._deal_pipe)
            self._deal_pipe = None
        for worker in self._workers:
            if not worker.ended:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(worker.pid, signal.SIGKILL)
            wait_child(worker.pid)
            if worker.answers >= 0:
                os.close(worker.answers)
                worker.answers = -1
            worker.ended = True
        self._workers.clear()

    def __enter__(self) -> ForkedWorkers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _deal(self) -> None:
        """Put as many undealt tasks into the dealing pipe as it takes now; close it when all are in."""
        while self._undealt and self._deal_pipe is not None:
            try:
                written = os.write(self._deal_pipe, self._undealt[:_DEAL_CHUNK])
            except BlockingIOError:
                return
            self._undealt = self._undealt[written:]
        if not self._undealt and self._deal_pipe is not None:
            os.close(self._deal_pipe)  # the workers read EOF once the last task is taken
            self._deal_pipe = None

    def _pump(self) -> None:
        """Wait for answers from any worker (or room in the dealing pipe) and take them in."""
        self._deal()
        live = {w.answers: w for w in self._workers if not w.ended}
        ready, _, _ = select.select(list(live), [], [], 0.05 if self._undealt else None)
        for fd in ready:
            worker = live[fd]
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                worker.ended = True
                continue
            worker.buffer += chunk
            self._take(worker)

    def _take(self, worker: _Worker) -> None:
        buffer = worker.buffer
        while len(buffer) >= _FRAME.size:
            (length,) = _FRAME.unpack_from(buffer)
            if len(buffer) < _FRAME.size + length:
                return
            kind, task, value = pickle.loads(bytes(buffer[_FRAME.size : _FRAME.size + length]))
            del buffer[: _FRAME.size + length]
            if kind == "started":
                worker.running = task
                continue
            worker.running = None
            self._results[task] = (kind == "done", value)

    # -- the worker's side (a forked child; fork_child ends it with os._exit) --
    def _work(self, number: int, tasks: int, answers: int, *, close: list[int]) -> int:
        for fd in close:
            os.close(fd)
        self._quiet()
        if self.setup is not None:
            self.setup(number)
        while True:
            raw = _read_exactly(tasks, _TASK.size)
            if raw is None:
                return 0
            (task,) = _TASK.unpack(raw)
            _send(answers, ("started", task, None))
            try:
                _send(answers, ("done", task, self.run_task(task)))
            except Exception:
                _send(answers, ("raised", task, traceback.format_exc()))

    def _quiet(self) -> None:
        target = os.open(os.devnull, os.O_WRONLY)
        for fd in (1, 2):
            os.dup2(target, fd)
        os.close(target)


def _grow(fd: int) -> None:
    with contextlib.suppress(OSError):  # over the user's limit: the default size only makes dealing refill more often
        fcntl.fcntl(fd, _F_SETPIPE_SZ, _PIPE_BYTES)


def _send(answer_pipe: int, record: tuple[str, int, Any]) -> None:
    data = pickle.dumps(record, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(_FRAME.pack(len(data)) + data)
    while view:
        view = view[os.write(answer_pipe, view) :]


def _read_exactly(fd: int, size: int) -> bytes | None:
    """`size` bytes from the dealing pipe (one read takes a whole task: tasks are written whole), None at EOF."""
    data = b""
    while len(data) < size:
        chunk = os.read(fd, size - len(data))
        if not chunk:
            return None
        data += chunk
    return data
