"""What the scorecard measures beside each gate result, on the same servers in the same run, ours included.

- commit latency: the time between consecutive messages of one real invocation of many tool turns (each toolUse
  and each result ~1 KB) on a zero-latency scripted model: one message's commit, wherever the manager does it
  (MessageAddedEvent, the tool and model hooks, a Storage's snapshot on every message), p50 and p99 over `samples`
  messages; `floor` measures the same invocation with no session manager;
- resume time: a fresh factory product and a fresh `Agent` restoring a session of N messages (the constructor,
  where every manager reads the session back); the session is seeded by an Agent constructed with the N messages
  and one invocation, so each backend stores them its own way; the restored count is checked.
"""

from __future__ import annotations

import statistics
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.scorecard.conversation import build_agent
from bench.scorecard.factories import Backend, LocalContext

MESSAGE_BYTES = 1000
RESUME_SIZES = (100, 1_000, 10_000)
SLOW_LISTING_LIMIT = 1_000
TOOL_TURNS = 10  # per invocation timed for commit latency


class ResumeMismatch(RuntimeError):
    """A resumed agent did not restore the messages its session was seeded with."""


@dataclass
class Measurements:
    """One backend's figures: commit p50/p99 in ms, and resume time in ms per session size (None: not measured,
    with the reason in `notes`)."""

    commit_p50_ms: float | None = None
    commit_p99_ms: float | None = None
    resume_ms: dict[int, float | None] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "commit_p50_ms": self.commit_p50_ms,
            "commit_p99_ms": self.commit_p99_ms,
            "resume_ms": {str(size): value for size, value in self.resume_ms.items()},
            "notes": self.notes,
        }


def text_message(index: int) -> dict[str, Any]:
    """The index-th message of a seeded conversation: user and assistant alternate, each ~1 KB of text."""
    role = "user" if index % 2 == 0 else "assistant"
    head = f"{role} message {index}: "
    return {"role": role, "content": [{"text": head + "x" * (MESSAGE_BYTES - len(head))}]}


def percentile(values: list[float], fraction: float) -> float:
    """The nearest-rank percentile of `values` (fraction in 0..1)."""
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(fraction * len(ordered) + 0.5) - 1))]


def _context(scratch: Path, label: str) -> LocalContext:
    token = uuid.uuid4().hex[:10]
    directory = scratch / f"{label}-{token}"
    directory.mkdir(parents=True)
    return LocalContext(f"bench-{token}", directory, f"bench{token}")


class MessageClock:
    """A hook that notes when each message is added to the agent (`MessageAddedEvent`)."""

    def __init__(self) -> None:
        self.times: list[float] = []

    def register_hooks(self, registry: Any, **_: Any) -> None:
        from strands.hooks import MessageAddedEvent

        registry.add_callback(MessageAddedEvent, lambda _event: self.times.append(time.perf_counter()))


def commit_latency(factory: Any, scratch: Path, samples: int) -> tuple[float, float]:
    """p50 and p99 in ms between consecutive messages of real invocations of 10 tool turns each (a fresh session
    each, so that every backend commits into a short history) on a zero-latency model, each toolUse and each
    result carrying ~1 KB: one message's commit with the model and tool work around it. `factory` None: no
    session manager, the floor of the same run."""
    payload = "x" * (MESSAGE_BYTES - 100)
    turns: list[Any] = [[{"name": "note", "input": {"n": i, "text": payload}}] for i in range(TOOL_TURNS)]
    gaps: list[float] = []
    while len(gaps) < samples:
        clock = MessageClock()
        agent = build_agent(factory, _context(scratch, "commit"), turns=[*turns, "done"], hooks=[clock])
        agent("Note each number with its text.")
        gaps += [later - earlier for earlier, later in zip(clock.times, clock.times[1:], strict=False)]
    return percentile(gaps, 0.5) * 1000, percentile(gaps, 0.99) * 1000


def resume_time(backend: Backend, scratch: Path, size: int, repeats: int) -> tuple[float, float]:
    """Median ms for a fresh factory product and Agent to restore a session of `size` messages (+ the seeding
    invocation's prompt and answer), and the seconds the seeding took."""
    started = time.perf_counter()
    ctx = _context(scratch, f"resume{size}")
    seed = [text_message(index) for index in range(size)]
    # the scripted model answers by the number of assistant messages in its request: one answer per possible count
    seeding = build_agent(backend.factory, ctx, turns=["seeded"] * (size // 2 + 1), messages=seed)
    seeding("Seed.")
    expected = len(seeding.messages)
    del seeding
    seeding_s = time.perf_counter() - started
    durations: list[float] = []
    for _ in range(repeats):
        start = time.perf_counter()
        agent = build_agent(backend.factory, ctx, turns=[])
        durations.append(time.perf_counter() - start)
        if len(agent.messages) != expected:
            raise ResumeMismatch(f"restored {len(agent.messages)} of {expected} messages")
    return statistics.median(durations) * 1000, seeding_s


def measure(
    backend: Backend,
    scratch: Path,
    *,
    samples: int,
    sizes: tuple[int, ...] = RESUME_SIZES,
    seeding_budget_s: float = 180.0,
) -> Measurements:
    """Every figure for one backend; a figure that fails is None with the first line of its error in notes. A
    session size whose seeding, extrapolated from the previous size's, would take over `seeding_budget_s` is not
    measured (a note says how long it would take)."""
    seeded: tuple[int, float] | None = None  # (size, seconds) of the last seeding
    result = Measurements()
    try:
        result.commit_p50_ms, result.commit_p99_ms = commit_latency(backend.factory, scratch, samples)
    except Exception as exc:
        result.notes.append(f"commit: {first_line(exc)}")
    for size in sizes:
        if backend.slow_listing and size > SLOW_LISTING_LIMIT:
            result.resume_ms[size] = None
            result.notes.append(f"resume at {size:,}: not measured (documented as slow to list)")
            continue
        if seeded is not None and seeded[1] * size / seeded[0] > seeding_budget_s:
            result.resume_ms[size] = None
            estimate = seeded[1] * size / seeded[0]
            result.notes.append(f"resume at {size:,}: not measured (seeding would take ~{estimate:,.0f} s)")
            continue
        try:
            result.resume_ms[size], seeding_s = resume_time(backend, scratch, size, repeats=1 if size >= 10_000 else 3)
            seeded = (size, seeding_s)
        except Exception as exc:
            result.resume_ms[size] = None
            result.notes.append(f"resume at {size:,}: {first_line(exc)}")
    return result


def first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".strip()
