"""The golden run: one uninterrupted run that every fault class and agent harness judges against.

`GoldenRun` is what every golden run has: the crash points it passed (in order, each with the durable state at that
moment where it is known), what a resumed run must equal (`comparable`), the problems it showed, its model requests
and the tools' workspace. `WorkflowGoldenRun` is a workflow's (faults/kit/runs.py runs it): it also holds the
journal and what a crash run starts from (`seed_session`, `seed_workspace`, `cut_for`, `state_at`).
`AgentGoldenRun` is a Python agent's or multi-agent system's (faults/agents/): the tools' effects and whether they
overlapped. Data and its seeding only: the observer and the judge read these, never the other way round.
"""

from __future__ import annotations

import bisect
import itertools
import json
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from strands_durable.crashpoints import Commit, CrashPoint, ToolKey, natural_key
from strands_durable.errors import BudgetExceeded, DurableError, WorkflowFailed
from strands_durable.faults.kit.derived import SegmentFacts, SegmentPolicy, segment_facts
from strands_durable.faults.kit.findings import Finding
from strands_durable.faults.kit.snapshot import SnapshotDigest, snapshot_view
from strands_durable.faults.kit.target import ChaosTarget
from strands_durable.faults.kit.workspace import WorkspaceHistory, write_files
from strands_durable.store.base import SessionStore, read_journal_bytes
from strands_durable.store.fileops import FileOps
from strands_durable.store.state import SessionState, copy_state, fold

_GOLDEN_STATES_KEPT = 32

_OPS = FileOps()  # chaos scratch files go through the project's one file-operations layer too


def spread(ids: list[str], limit: int | None) -> list[str]:
    """All of `ids`, or `limit` of them spread evenly over them (the first and the last included), in order."""
    if limit is None or limit >= len(ids):
        return ids
    if limit <= 1:
        return ids[:limit]
    return [ids[i] for i in sorted({round(i * (len(ids) - 1) / (limit - 1)) for i in range(limit)})]


@dataclass(frozen=True)
class GoldenPoint:
    """A crash point of the golden run, where it happened, and the durable state at that moment."""

    point: CrashPoint
    index: int  # position in the golden run
    journal_length: int = 0  # journal bytes durable when the point was reached (a workflow's golden run)
    digest: str | None = None  # snapshot digest, at store.after_commit points
    completed: bool = False  # the session's status was already completed
    outcome_unknown: bool = False  # a non-idempotent tool had started and had no committed result
    effect_uncommitted: bool = False  # the tools' workspace held an effect of a call whose result was not committed

    @property
    def id(self) -> str:
        return self.point.id


def golden_points(points: Iterable[CrashPoint]) -> list[GoldenPoint]:
    """The points an agent harness's golden run passed, in order (no journal of ours to measure)."""
    return [GoldenPoint(point, index) for index, point in enumerate(points)]


def dump_points(points: Iterable[CrashPoint]) -> bytes:
    """The points a child process passed, in order, for its parent's golden run (`load_points`)."""
    return json.dumps([[p.site, p.path, p.occurrence] for p in points]).encode()


def load_points(data: str) -> list[GoldenPoint]:
    """The golden points of what `dump_points` wrote (each point's id as the child passed it)."""
    return golden_points(CrashPoint(site, path, occurrence) for site, path, occurrence in json.loads(data))


@dataclass(kw_only=True)
class GoldenRun:
    """What every golden run has: the crash points it passed, what a resumed run must equal (`comparable`: a
    workflow's comparable view, an agent's normalised history, a multi-agent run's summary), the problems it
    showed, its model requests, the tools' workspace and the secrets it declares (by name and environment variable,
    never their values: no stored file may hold them). The judge's rules take this."""

    workdir: Path
    points: list[GoldenPoint]
    comparable: Any
    problems: list[Finding] = field(default_factory=list)
    model_requests: int = 0
    workspace: WorkspaceHistory = field(default_factory=lambda: WorkspaceHistory({}))  # the tools' files
    secret_variables: dict[str, str] = field(default_factory=dict)  # declared secret -> its environment variable
    _by_id: dict[str, GoldenPoint] = field(default_factory=dict, init=False, repr=False)
    _emitted: dict[tuple[str, str], list[int]] | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self._by_id = {p.id: p for p in self.points}

    def point(self, point_id: str) -> GoldenPoint:
        return self._by_id[point_id]

    def emissions_before(self, site: str, path: str, index: int) -> int:
        """How many times the golden run emitted `site` at `path` before its point `index` (a search in the indices
        of that site and path, listed once: a point costs the same early or late in a long run)."""
        if self._emitted is None:
            self._emitted = {}
            for position, p in enumerate(self.points):
                self._emitted.setdefault((p.point.site, p.point.path), []).append(position)
        return bisect.bisect_left(self._emitted.get((site, path), ()), index)

    @property
    def point_ids(self) -> list[str]:
        """Every point's id, in the order the golden run passed them."""
        return [p.id for p in self.points]

    @property
    def site_kinds(self) -> set[str]:
        return {p.point.site for p in self.points}

    def ordered_ids(self) -> list[str]:
        """Point ids in an order that is the same in every process (concurrent units interleave differently)."""
        return sorted(self._by_id, key=natural_key)

    def sample(self, limit: int | None) -> list[str]:
        """The points to explore: all, or `limit` spread evenly over them, in the order of `ordered_ids`."""
        return spread(self.ordered_ids(), limit)


@dataclass(kw_only=True)
class AgentGoldenRun(GoldenRun):
    """A Python agent's or multi-agent system's golden run (faults/agents/engine.py): what ran (`target`: the
    engine's `AgentChaos`), the tools' executions by call key (`effects`) and whether they overlapped in time (the
    tools really ran in parallel). The engine also keeps what a fresh build found after it: each agent's
    `agent.state` (`states`) and every stored conversation (`stored`; `comparable` holds the loaded windows), what
    each call of a Graph or Swarm returned (`results`, by prompt index) and its model requests by turn
    (`turns`, `judge.turn_key`)."""

    target: Any
    effects: Counter[str] = field(default_factory=Counter)
    concurrent: bool = False
    states: dict[str, Any] = field(default_factory=dict)
    stored: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    results: list[Any] = field(default_factory=list)
    turns: Counter[str] = field(default_factory=Counter)


@dataclass(frozen=True)
class SampleVerdicts:
    """What a workflow's seeded sample found under `policy`: for each sampled point, the first difference between
    its derived crash state and its real segment's (None: the same) and the real segment's findings."""

    policy: SegmentPolicy
    by_point: dict[str, tuple[str | None, list[Finding]]]

    @cached_property
    def disproved(self) -> bool:
        """Some sampled point differed, so nothing of the workflow is derived (asked at every crash point, found
        once)."""
        return any(difference is not None for difference, _ in self.by_point.values())


@dataclass(kw_only=True)
class WorkflowGoldenRun(GoldenRun):
    """A workflow's golden run (faults/kit/runs.py `run_golden`): also its journal, the durable state at each
    point (the journal's length, the snapshot digest at each commit) and how it ended; a crash run starts where it
    stood (`cut_for`, `seed_session`, `seed_workspace`)."""

    target: ChaosTarget
    tool_executions: int = 0
    journal: bytes = b""
    spec_snapshot: bytes = b""
    meta: dict[str, Any] = field(default_factory=dict)
    checkpoint_states: dict[str, GoldenPoint] = field(default_factory=dict)  # snapshot digest -> first checkpoint
    digester: SnapshotDigest = field(default_factory=SnapshotDigest)  # shared by the explorations of this run
    valid_histories: dict[str, Any] = field(default_factory=dict)  # last stored-valid, per key (judge.ValidHistories)
    commits: list[tuple[int, tuple[ToolKey, ...]]] = field(default_factory=list, init=False)  # (length, results)
    _states: OrderedDict[int, SessionState] = field(default_factory=OrderedDict, init=False, repr=False)
    _committed_at: dict[int, frozenset[ToolKey]] = field(default_factory=dict, init=False, repr=False)
    _seed_verdicts: dict[int, list[tuple[str, str]]] = field(default_factory=dict, init=False, repr=False)
    _header: dict[str, Any] | None = field(default=None, init=False, repr=False)
    _decoded_records: tuple[tuple[list[dict[str, Any]], list[int]] | None] | None = field(
        default=None, init=False, repr=False
    )
    _resolved: dict[Path, str] = field(default_factory=dict, init=False, repr=False)  # out_dir -> its resolved path
    failure: str | None = None  # the deterministic failure the golden run ended with (`failure_of`); None: completed
    untaken_edges: list[str] = field(default_factory=list)  # graph edges (`a -> b`) the golden run never took
    segments: SegmentPolicy = field(default_factory=SegmentPolicy)  # how its interrupts reach their points
    _checked: tuple[SegmentPolicy, frozenset[str]] | None = field(default=None, init=False, repr=False)
    _segment_facts: SegmentFacts | None = field(default=None, init=False, repr=False)
    # the seeded sample's real segments under a policy, once per process (faults/classes/explore.py)
    segment_verdicts: SampleVerdicts | None = field(default=None, init=False, repr=False)

    # the files a seed writes under a sessions root (faults/classes/explore.py seeds a directory again in place)
    seed_files: frozenset[str] | None = field(default=None, init=False, repr=False)
    warm_resumes: bool = True  # its explorations resume with `prepared_resume()`
    # exploration root -> its run directories and their stores (faults/classes/explore.py `_workspace_of`)
    explorer_workspaces: dict[Path, Any] = field(default_factory=dict, init=False, repr=False)
    _prepared: Any = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        for p in self.points:
            if p.digest is not None:
                self.checkpoint_states.setdefault(p.digest, p)
        self.commits = [
            (p.journal_length, p.point.tool_results)
            for p in self.points
            if isinstance(p.point, Commit) and p.point.site == "store.after_commit"
        ]

    def prepared_resume(self) -> Any:
        """What every resume of this run's session reads and none changes (runner/prepared.py), built once; None
        with `warm_resumes` off (each resume then reads and derives it all, as `strands run --resume` does)."""
        if not self.warm_resumes:
            return None
        if self._prepared is None:
            from strands_durable.runner.prepared import prepare

            self._prepared = prepare(self.target.session_id, self.meta["spec_path"])
        return self._prepared

    def checked_points(self) -> frozenset[str]:
        """The points whose real crash segment also runs, to check the derived state (`SegmentPolicy`)."""
        if self._checked is None or self._checked[0] != self.segments:
            self._checked = (self.segments, self.segments.checked_points(self))
        return self._checked[1]

    def segment_facts(self) -> SegmentFacts:
        """What deciding whether a crash state can be derived asks of this run (`derived.segment_facts`), once."""
        if self._segment_facts is None:
            self._segment_facts = segment_facts(self)
        return self._segment_facts

    def seed_workspace(self, directory: Path, index: int = 0) -> Path:
        """Create `directory` as a run's own copy of the tools' workspace as the golden run left it just before
        its point `index` (0: the external state every run starts from)."""
        if directory.exists():
            _OPS.remove_tree(directory)
        write_files(directory, self.workspace.at(index))
        return directory

    def require_completed(self) -> WorkflowGoldenRun:
        """This run, when it completed; the classes that compare a resume's completed result need one."""
        if self.failure is not None or self.comparable.get("status") != "completed":
            raise DurableError(
                f"{self.target.spec_path}: the golden run ended {self.failure or 'failed'}, not completed"
            )
        return self

    def committed_tools_at(self, length: int) -> frozenset[ToolKey]:
        """The tool calls whose results the first `length` bytes of the journal commit (once per length)."""
        found = self._committed_at.get(length)
        if found is None:
            keys: set[ToolKey] = set()
            for end, results in self.commits:
                if end > length:
                    break
                keys.update(results)
            found = self._committed_at[length] = frozenset(keys)
        return found

    def stored_problems_at(self, length: int, judged: Callable[[SessionState], list[tuple[str, str]]]) -> list[Any]:
        """What `judged` finds in the durable state after the first `length` bytes of the journal: the same bytes
        fold to the same state, so it is judged once per length (a seed many crash points start from)."""
        found = self._seed_verdicts.get(length)
        if found is None:
            found = self._seed_verdicts[length] = judged(self.state_at(length))
        return list(found)

    def header_record(self) -> dict[str, Any]:
        """The journal's header record, decoded once (callers build new dicts from it, never change it)."""
        if self._header is None:
            header_end = self.journal.index(b"\n") + 1
            self._header = read_journal_bytes(self.journal[:header_end]).records[0]
        return self._header

    def resolved(self, directory: Path) -> str:
        """`directory`'s absolute path with links resolved (the explorations of a process reuse theirs)."""
        found = self._resolved.get(directory)
        if found is None or not directory.is_absolute():  # a relative path resolves against the working directory
            found = self._resolved[directory] = str(directory.resolve())
        return found

    def snapshot_at(self, checkpoint: GoldenPoint) -> dict[str, Any]:
        return snapshot_view(self.state_at(checkpoint.journal_length))

    def state_at(self, length: int) -> SessionState:
        """The durable state after the first `length` bytes of the golden journal (a copy the caller may fold
        more records into). Folded from the nearest shorter state already made, so exploring the points in
        order folds each record about once instead of the whole prefix per point; from the journal's records as
        decoded once (`_decoded`) where the fold only refers to them, so every state of the run holds the very same
        message objects (the judge's and the digest's comparisons of two states then take pointer time)."""
        state = self._states.get(length)
        if state is None:
            base = max((known for known in self._states if known <= length), default=0)
            records = self._records_between(base, length)
            state = copy_state(self._states[base]) if base else None
            state = fold(records, state) if records is not None else _fold_bytes(self.journal[base:length], state)
            self._states[length] = state
            while len(self._states) > _GOLDEN_STATES_KEPT:
                self._states.popitem(last=False)
        self._states.move_to_end(length)
        return copy_state(state)

    def _records_between(self, start: int, end: int) -> list[dict[str, Any]] | None:
        """The journal's records from byte `start` to byte `end` (both record boundaries) as decoded once, or
        None when they are to be decoded afresh (`_decoded`)."""
        decoded = self._decoded()
        if decoded is None:
            return None
        records, ends = decoded
        first, last = bisect.bisect_right(ends, start), bisect.bisect_right(ends, end)
        if (first and ends[first - 1] != start) or not last or ends[last - 1] != end:
            return None  # not on record boundaries: decoded afresh, which refuses them as a reader would
        return records[first:last]

    def _decoded(self) -> tuple[list[dict[str, Any]], list[int]] | None:
        """Every record of the journal, decoded once, and the byte offset where each ends. None when some record's
        payload becomes state that later records change in place (a checkpoint, a `generation` event: the fold
        adopts their lists and dicts): a fold must then get its own decoded copy. Every other payload is only
        referred to by the states folded from it, never changed (messages, results and records are replaced whole)."""
        if self._decoded_records is None:
            records = read_journal_bytes(self.journal).records
            ends = list(itertools.accumulate(len(line) + 1 for line in self.journal.split(b"\n")[:-1]))
            adopting = any(
                "checkpoint" in record or any(event.get("type") == "generation" for event in record.get("events", ()))
                for record in records
            )
            self._decoded_records = (None if adopting or len(ends) != len(records) else (records, ends),)
        return self._decoded_records[0]


# -- where a crash run starts -------------------------------------------------------------------------------------


def cut_for(golden: WorkflowGoldenRun, target: GoldenPoint) -> GoldenPoint | None:
    """The last store.before_commit point strictly before `target` whose durable state lets the run reach the
    target as the golden run did: the crashing run starts just before that commit, so it makes the commit itself
    and every point attached to it (tool.committed, unit.after) is reached. Two kinds of state are never a start,
    as a run resumed from them could not leave what a real crash at the target leaves:
    - a non-idempotent tool has started without a result (its resume answers "outcome unknown" instead of running
      the tool): the cut moves back before the tool's `started` commit;
    - the tools' workspace holds an effect of a tool call whose result is not committed (its resume runs the
      tool again, so the crash run would start from a workspace that already holds the effect it makes once
      more): the cut moves back before the tool ran, where the workspace holds exactly the committed effects.
    Points after the run completed (closing the session) are reached from before the completing commit."""
    for point in reversed(golden.points[: target.index]):
        if point.point.site != "store.before_commit" or point.completed:
            continue
        if not point.outcome_unknown and not point.effect_uncommitted:
            return point
    return None


def skip_count(golden: WorkflowGoldenRun, target: GoldenPoint, start_index: int) -> int:
    """Which emission of the target's site and path to crash at, in a run that starts at `start_index`."""
    return max(0, target.point.occurrence - golden.emissions_before(target.point.site, target.point.path, start_index))


def seed_session(
    golden: WorkflowGoldenRun, store: SessionStore, out_dir: Path, journal_tail: bytes
) -> tuple[bytes, dict[str, Any]]:
    """A session of the run's store (`kit/stores.py`) holding the golden header (with this run's output directory)
    and `journal_tail`; returns the journal's bytes and the session's metadata."""
    _OPS.makedirs(out_dir, durable=False)
    golden_header = golden.header_record()
    meta = dict(golden_header["events"][0]["meta"])
    meta["runtime"] = {**meta["runtime"], "out_dir": golden.resolved(out_dir)}
    header = {**golden_header, "events": [{**golden_header["events"][0], "meta": meta}, *golden_header["events"][1:]]}
    journal = store.seed(golden.target.session_id, header=header, tail=journal_tail, spec_snapshot=golden.spec_snapshot)
    return journal, meta


def _fold_bytes(journal: bytes, state: SessionState | None = None) -> SessionState:
    """`journal` (a whole journal, or the part of one after `state`'s records) folded into `state`."""
    if state is None:
        return fold(read_journal_bytes(journal).records)
    return fold(read_journal_bytes(journal, first_seq=state.seq + 1).records, state)


DETERMINISTIC_FAILURES = (WorkflowFailed, BudgetExceeded)
"""Failures a golden run may end with and still be explored (a graph past `max_iterations`, a budget exceeded):
the same inputs fail the same way, so every crash point must resume to the same failure."""


def failure_of(exc: BaseException) -> str:
    """How a failure is compared between the golden run and a resume: its type and message."""
    return f"{type(exc).__name__}: {exc}"


def pending_unknown(state: SessionState) -> set[str]:
    """toolUseIds of non-idempotent tools that started but whose results are not committed: a resume from this
    state answers them "outcome unknown" (a results message clears both records, so no message is read)."""
    pending: set[str] = set()
    for conv in state.conversations.values():
        if conv.tools_started:
            pending |= conv.tools_started - conv.tool_results.keys()
    return pending
