"""Crash states derived from the golden run: what an in-process crash at a point leaves, read off the golden run
instead of running the segment from the last commit before the point up to it.

An `InjectedCrash` at golden point k of a run that follows the golden run's path leaves exactly the durable records
the golden run had at k (`GoldenPoint.journal_length`) and the tools' workspace as the golden run had it just after
k (effects of the point's own tool included). That holds only where the segment a real crash run replays is the
golden run's own; `fallback_reason` names every case where it may not be, and such points run the real segment:

- `close`: the segment passes the first write to the output directory (an artifact's or the notes file's, just
  after its claim is committed) or the run's end (the completing commit, the close). The golden run keeps no
  output directory to seed one from, and a resume reads it (a file there that the journal does not claim is
  refused as someone else's), so a crash state with files in it is not one the golden run recorded; and a segment
  from just before the completing commit claims every artifact again (a second `artifact` record for each path,
  which the golden run does not have: the real segment leaves one record more than the golden run at the point);
- `concurrent-tools`: one conversation has more than one tool call in flight somewhere in the segment (an
  agent's tools running at once, in threads the lockstep scheduler does not order): their interleaving in a resume
  may differ, and a sync tool in its thread can outlive the crash (residue the golden run does not show);
- `free-threading`: under a free-threaded interpreter nothing about interleavings is assumed.

Derived, and why that is exact:
- other units in flight, when that is all (at most one tool call in flight per conversation), in the golden
  run's own order or in a unit order given to it (`ChaosTarget.unit_order`): in process, units take turns in
  lockstep (runner/concurrency.py), the turn going to the waiting unit that stands earliest or, under a unit
  order, to the waiting job highest in it, a job being ranked by its own identity (the first segment of its
  units' ids), not by the unit it happens to start with; so a run resumed from the cut's durable state interleaves
  its units as the golden run did (ranked by the unit it started with, a resumed job starting with a later unit
  once went last: 21 points of the parallel example's `order[0,2,1]` differed); a unit hands over its turn at
  `tool.before` and runs the tool only once it has the turn again, so no sibling's tool is running at the crash
  (one waiting at its `tool.before` never runs); and a crash cancels the siblings where they wait for their turn
  and is final (crashpoints.py: a sibling's next commit, model call or tool start raises it again), so they commit
  nothing more. So a real crash leaves no residue beyond the golden run's records and workspace at the point;
- a commit that changes the pattern's position (a `pattern_state` event): a resumed runner rebuilds that position
  from the store, and the record it writes is the one the uninterrupted run writes (contract: a resume writes what
  an uninterrupted run writes; a resumed parallel runner wrote its siblings' progress as 0 until each branch
  re-read its committed steps, and now starts from them: runner/patterns/parallel.py).
tests/faults/test_derived_segments.py compares every point of every example, in every unit order explored, with
its real segment.

Exactness is checked, never assumed (`SegmentPolicy`): a seeded sample of points (at least one in `check_every`
per workflow) also runs the real segment, and `segment_difference` compares the two states (records, the tools'
workspace, the output directory, what a resume reads); `--strands-chaos-real-segments` checks every point.
"""

from __future__ import annotations

import json
import math
import random
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from strands_durable.crashpoints import ToolCall
from strands_durable.store.base import read_journal_bytes

# The golden run and its points (faults/kit/golden.py, which imports this module) are typed `Any` here: naming
# them, even for type checking only, would draw an import loop (tests/core/test_import_loops.py).

if TYPE_CHECKING:
    from strands_durable.faults.kit.workspace import Files
    from strands_durable.store.state import SessionState

CHECK_EVERY = 10  # by default one point in ten (at least one per workflow) also runs the real segment
SEGMENT_RULE = "derived-segment"
"""The rule of a crash state derived from the golden run that differs from the one the real segment leaves."""

# excluded by name from the records compared: model-call timings (`history.normalize` drops `metadata` too)
_TIMINGS = ("latencyMs", "timeToFirstByteMs")


@dataclass(frozen=True)
class SegmentPolicy:
    """How the in-process explorer reaches a crash point: `derive` its state from the golden run where
    `fallback_reason` allows, and run the real segment as well at a seeded sample of points (one in `check_every`,
    at least one per workflow; 1: every point) to compare."""

    derive: bool = True
    check_every: int = CHECK_EVERY
    seed: int = 0

    def checked_points(self, golden: Any) -> frozenset[str]:
        """The golden run's points whose real segment also runs (seeded by the seed and the workflow's name)."""
        ids = golden.ordered_ids()
        if self.check_every <= 1:
            return frozenset(ids)
        rng = random.Random(f"{self.seed}/{golden.target.name}")
        return frozenset(rng.sample(ids, math.ceil(len(ids) / self.check_every))) if ids else frozenset()


REAL_SEGMENTS = SegmentPolicy(check_every=1)  # `--strands-chaos-real-segments`: every point runs its real segment


def fallback_reason(golden: Any, target: Any, cut: Any) -> str | None:
    """Why the crash state at `target` cannot be derived from the golden run (the real segment from `cut` runs
    instead), or None when it can."""
    if not getattr(sys, "_is_gil_enabled", lambda: True)():
        return "free-threading"
    facts = golden.segment_facts()
    start = cut.index if cut is not None else 0
    if facts.closing[target.index + 1] > facts.closing[start]:
        return "close"
    if facts.tools_crowded[target.index + 1] > facts.tools_crowded[start]:
        return "concurrent-tools"
    return None


@dataclass(frozen=True)
class SegmentFacts:
    """What `fallback_reason` asks of a golden run, computed once: running counts (over its points, so a segment's
    count is a difference) of points at or after the run's end (`closing`) and of points where more than one tool
    call was in flight in one conversation (`tools_crowded`)."""

    closing: list[int]
    tools_crowded: list[int]


def segment_facts(golden: Any) -> SegmentFacts:
    closing, tools_crowded = [0], [0]
    tools: dict[str, set[str]] = {}  # the tool calls in flight, by conversation
    written = False  # the output directory holds a file: an artifact's (or the notes') claim was committed
    for p in golden.points:
        point = p.point
        if isinstance(point, ToolCall) and point.site in ("tool.before", "tool.executed"):
            calls = tools.setdefault(point.conversation, set())
            (calls.add if point.site == "tool.before" else calls.discard)(point.path)
        label = point.path.split("/", 1)[0]
        closing.append(closing[-1] + int(written or p.completed or label == "close"))
        written = written or (point.site == "store.after_commit" and _writes_output(label))
        tools_crowded.append(tools_crowded[-1] + int(any(len(calls) > 1 for calls in tools.values())))
    return SegmentFacts(closing, tools_crowded)


def _writes_output(label: str) -> bool:
    """Whether the commit at a point so labelled claims a file the runner then writes to the output directory
    (runner/artifacts.py: `artifact[i]`, `notes`)."""
    return label.startswith("artifact[") or label == "notes"


def crash_workspace(golden: Any, target: Any) -> Files:
    """The tools' workspace a crash at `target` leaves: every change the golden run made up to and at it."""
    return golden.workspace.at(target.index + 1)


def segment_difference(
    derived: tuple[bytes, Files, Files, SessionState], real: tuple[bytes, Files, Files, SessionState]
) -> str | None:
    """The first difference between a derived crash state and the real segment's, each given as (the journal's
    bytes, the tools' workspace, the output directory's files, the state a resume reads); None when they are the
    same. Records are compared by their events (record times and model-call timings excluded by name), the state
    by its normalised view."""
    from strands_durable.faults.kit.oracle import readable_difference
    from strands_durable.faults.kit.snapshot import snapshot_view

    skipped, derived_records, real_records = _events_after_shared_prefix(derived[0], real[0])
    common = list(zip(derived_records, real_records, strict=False))
    for number, (ours, theirs) in enumerate(common):
        if ours != theirs:
            return f"journal record {skipped + number}: " + readable_difference(ours, theirs)
    if len(derived_records) != len(real_records):
        extra = (derived_records if len(derived_records) > len(real_records) else real_records)[len(common)]
        return (
            f"journal: {skipped + len(derived_records)} records derived, {skipped + len(real_records)} left by the "
            f"real segment (the first extra one: {json.dumps(extra)[:300]})"
        )
    if derived[1] != real[1]:
        return "the tools' workspace: " + readable_difference(_text(derived[1]), _text(real[1]))
    if derived[2] != real[2]:
        return "the output directory: " + readable_difference(_text(derived[2]), _text(real[2]))
    ours_view, theirs_view = snapshot_view(derived[3]), snapshot_view(real[3])
    if ours_view != theirs_view:
        return "what a resume reads: " + readable_difference(ours_view, theirs_view)
    return None


def _events_after_shared_prefix(ours: bytes, theirs: bytes) -> tuple[int, list[Any], list[Any]]:
    """(n, the events of each journal's records after its first n records, model-call timings left out), where
    the first n records after the header are byte for byte the same in both: both journals go on from their header
    with the golden run's records the crash state was seeded from, and equal bytes hold equal events, so only the
    records after those are turned into events and compared (all of them, twice, made each check cost O(steps)).
    The headers are not compared (they differ by session directory and time)."""
    ours_lines, theirs_lines = ours.splitlines(keepends=True), theirs.splitlines(keepends=True)
    shared = 0
    for mine, other in zip(ours_lines[1:], theirs_lines[1:], strict=False):
        if mine != other or not mine.endswith(b"\n"):  # a whole record (JSON escapes every line break)
            break
        shared += 1
    if not shared:
        return 0, _events(ours), _events(theirs)
    records = read_journal_bytes(b"".join(ours_lines[: shared + 1])).records
    next_seq = records[-1]["seq"] + 1  # numbering may go on from a checkpoint, so it is read, not counted
    after = shared + 1
    return (
        len(records) - 1,
        _events(b"".join(ours_lines[after:]), next_seq),
        _events(b"".join(theirs_lines[after:]), next_seq),
    )


def _events(journal: bytes, first_seq: int = 0) -> list[Any]:
    """Every record's events after the header (`first_seq` > 0: `journal` is the part of one from that record on,
    without its header), model-call timings left out."""
    records = read_journal_bytes(journal, first_seq=first_seq).records
    return [
        _untimed(json.loads(json.dumps(record.get("events"), default=str)))
        for record in records[0 if first_seq else 1 :]
    ]


def _untimed(value: Any) -> Any:
    if isinstance(value, dict):
        metrics = value.get("metrics")
        if isinstance(metrics, dict):
            value["metrics"] = {k: v for k, v in metrics.items() if k not in _TIMINGS}
        for item in value.values():
            _untimed(item)
    elif isinstance(value, list):
        for item in value:
            _untimed(item)
    return value


def _text(files: Files) -> dict[str, str]:
    return {name: data.decode("utf-8", "replace") for name, data in files.items()}
