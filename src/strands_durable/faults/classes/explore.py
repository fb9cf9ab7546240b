"""In-process crash exploration: one golden run, then an interrupt at each of its crash points, resumed in fresh
objects and judged against the golden run (docs/contract.md#what-identical-means). The pytest plugin and user
tests drive it.

How one crash point is explored (`explore_point`):

1. The run that crashes starts from the golden run's durable state just before the last commit that precedes the
   point (its journal prefix, copied into a session directory that holds nothing else, as a fresh one: `_Workspace`;
   readable files are re-derived, as after any crash) and resumes from there with an `InjectedCrash` armed at the
   point. So the crash happens in a real run, and the cost of a point does not grow with the workflow's length. A
   point that never fires is a failure. A single interrupt (`explore_point`) skips that run where the state it
   would leave can be read off the golden run (faults/kit/derived.py); a seeded sample of those points runs it as
   well and compares the two states.
2. Right after the crash the stored histories must be valid (`mode="stored"`).
3. A resume in fresh objects (the session opened anew, its state read from disk, as a new process would; the
   store it is opened through is the run directory's, which holds configuration only) runs until it reaches a
   checkpoint (a commit) whose normalised snapshot equals the golden run's at one of its checkpoints (the
   convergence shortcut), or to the end with `full=True` or when it never converges, where the whole comparable
   view, request validity of every history and the completed status are checked. Committed tools must not run
   again, committed model turns must not be requested again, and the durable state must match, not just the
   memory. Any golden checkpoint will do, not only the one at the same commit: a resume from that durable state
   is what the crash point right after that golden commit explores, so stopping there loses nothing, and runs
   whose concurrent units interleave differently from the golden run meet it long before the end.
4. When the resume passed the same point again, a second run crashes there too, and a third must converge.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from strands_durable.crashpoints import SITES, CrashPoint, CrashPoints, InjectedCrash, ToolCall, ToolKey, natural_key
from strands_durable.errors import DurableError
from strands_durable.faults.kit import judge
from strands_durable.faults.kit.collector import points_collected_less
from strands_durable.faults.kit.derived import SEGMENT_RULE, crash_workspace, fallback_reason, segment_difference
from strands_durable.faults.kit.findings import INVALID_HISTORY, Finding
from strands_durable.faults.kit.golden import (
    GoldenPoint,
    SampleVerdicts,
    WorkflowGoldenRun,
    cut_for,
    failure_of,
    pending_unknown,
    seed_session,
    skip_count,
)
from strands_durable.faults.kit.observe import Phase, observe, run_options, watch_convergence
from strands_durable.faults.kit.observe import arm as _arm
from strands_durable.faults.kit.stores import seeds_in_place, store_at
from strands_durable.faults.kit.workspace import prune, read_files, write_files
from strands_durable.store import SessionStore
from strands_durable.store.base import KnownJournal
from strands_durable.store.fileops import FileOps
from strands_durable.store.state import SessionState
from strands_durable.store.wrapping import WrappingStore

_OPS = FileOps()  # chaos scratch files go through the project's one file-operations layer too


@dataclass
class PointOutcome:
    """The result of exploring one crash point (or one schedule of several)."""

    point_ids: list[str]
    fired: list[str] = field(default_factory=list)  # the points where a fault was actually injected
    problems: list[Finding] = field(default_factory=list)
    converged_at: str | None = None  # the checkpoint where the last resume stopped (None: ran to the end)
    runs: int = 0
    segment: str = ""  # the first interrupt: "derived" (checked), or why its real segment ran (faults/kit/derived.py)

    @property
    def explored(self) -> bool:
        return bool(self.fired) and self.fired[0] == self.point_ids[0]

    @property
    def ok(self) -> bool:
        return self.explored and not self.problems

    def describe(self) -> str:
        lines = [f"crash point: {' -> '.join(self.point_ids)}"]
        if not self.explored:
            lines.append("[not-fired] the fault was never injected: the resumed run did not reach this point")
        lines += [str(p) for p in self.problems]
        return "\n".join(lines)


# -- workspaces ---------------------------------------------------------------------------------------------------


class _Workspace:
    """The directories of an exploration's runs under one root (each a sessions root, an output directory and the
    tools' workspace), one per seed, made once per golden run and root (`_workspace_of`): every exploration under
    the root seeds the same few. A directory an earlier exploration used is seeded again in place: `clear` leaves in
    it only the files its next seed rewrites (`WorkflowGoldenRun.seed_files`, and the tools' files it writes), which
    costs what the last runs left there, not removing and creating the whole tree. So every seed starts from exactly
    the tree a fresh directory would hold: the seed's files, the workspace's and the empty output directory."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.runs: list[_RunDirectory] = []

    def run(self, number: int) -> _RunDirectory:
        """The directory of an exploration's `number`-th seed (1: its first)."""
        while len(self.runs) < number:
            self.runs.append(_RunDirectory(self.root / f"run{len(self.runs) + 1}"))
        return self.runs[number - 1]

    @staticmethod
    def clear(sessions: Path, seed_files: frozenset[str] | None, tools_files: Collection[str] = ()) -> None:
        """Make the directory of `sessions` (and of its siblings) ready for a seed: with `seed_files` (what a seed
        writes under a sessions root, rewritten whole by the seed) and `tools_files` (the names of the tools' files
        it writes), everything else in it is removed; without, the whole directory is."""
        base = sessions.parent
        try:
            if seed_files is None:
                _OPS.remove_tree(base)
                return
            kept = frozenset(os.path.join(_SESSIONS, name) for name in seed_files)
            if tools_files:
                kept = kept | {os.path.join(_TOOLS, name) for name in tools_files}
            prune(base, kept, _RUN_PARTS)
        except FileNotFoundError:
            return  # nothing there yet


_SESSIONS, _OUT, _TOOLS = "sessions", "out", "workspace"  # a run directory's parts (`_RunDirectory`)
_RUN_PARTS = frozenset((_SESSIONS, _OUT, _TOOLS))
_STRICT_ENV = "STRANDS_DURABLE_STRICT"  # a local store's default strictness (`_RunDirectory.store`)


class _RunDirectory:
    """One run directory of an exploration root: its sessions root, output directory and tools' workspace, and the
    store on its sessions root, which it hands to the seed, the checks' reads and every resume (`store`)."""

    def __init__(self, base: Path) -> None:
        self.sessions, self.out_dir, self.scratch = base / _SESSIONS, base / _OUT, base / _TOOLS
        self._store: tuple[str, SessionStore] | None = None  # (the strictness it was made under, the store)

    def store(self, in_place: bool) -> SessionStore:
        """The store on the sessions root (faults/kit/stores.py). A local one is kept while the root is seeded again
        in place (`in_place`, `seeds_in_place`): a local store is its configuration only (root, file layer,
        strictness as the environment set it when it was made), and every session it opens, with its state and
        lease, is new. A root on S3 is made anew for each seed, with a prefix of its own, so it gets a store of its
        own."""
        if not in_place:
            return store_at(self.sessions)
        strictness = os.environ.get(_STRICT_ENV, "")
        if self._store is None or self._store[0] != strictness:
            self._store = (strictness, store_at(self.sessions))
        return self._store[1]


def _workspace_of(golden: WorkflowGoldenRun, root: Path) -> _Workspace:
    """The run directories of the explorations of `golden` under `root`, made once (kept by the golden run)."""
    found = golden.explorer_workspaces.get(root)
    if found is None:
        found = golden.explorer_workspaces[root] = _Workspace(root)
    return found


# -- exploring ----------------------------------------------------------------------------------------------------


class _Exploration:
    """The state of one exploration: the phases run so far and what they committed."""

    def __init__(self, golden: WorkflowGoldenRun, workdir: Path, outcome: PointOutcome) -> None:
        self.golden = golden
        self.workspace = _workspace_of(golden, workdir)
        self.seeds = 0  # the seeds written so far (each into a run directory of its own)
        self.outcome = outcome
        self.sessions: Path | None = None
        self.out_dir: Path | None = None
        self.scratch: Path | None = None  # the tools' workspace of this exploration's runs
        self.committed_tools: set[ToolKey] = set()  # tool calls whose result is committed
        self.executed: dict[ToolKey, int] = {}
        self.seed = b""  # the journal this exploration started from, as written
        self.seed_state: SessionState | None = None  # its state
        self.known: KnownJournal | None = None  # both, for the stores of its runs (None: they read it all)
        # the store of the session: what the checks read it with, and what every resume opens it with (wrapped)
        self.store: SessionStore | None = None
        self.runs_at_seed = 0  # `outcome.runs` when the seed was written (more: a run has touched the session)
        self.session_id = golden.target.session_id  # asked several times per point: looked up once

    def problem(self, rule: str, detail: str) -> None:
        self.outcome.problems.append(Finding(rule, detail))

    # -- directories --
    def seed_prefix(self, cut: GoldenPoint | None) -> None:
        """Start from the golden run's durable state and workspace just before point `cut` (None: the start)."""
        header_end = self.golden.journal.index(b"\n") + 1
        length, index = (cut.journal_length, cut.index) if cut is not None else (header_end, 0)
        self._seed(length, self.golden.workspace.at(index))

    def seed_crash(self, target: GoldenPoint, cut: GoldenPoint | None) -> None:
        """Start from the state a crash at `target` leaves, derived from the golden run (faults/kit/derived.py):
        its durable records at the point, its workspace with the point's own effects, and the tool calls the
        segment from `cut` ran counted as this exploration's executions (as the crashing run would count them)."""
        header_end = self.golden.journal.index(b"\n") + 1
        self._seed(max(target.journal_length, header_end), crash_workspace(self.golden, target))
        start = cut.index if cut is not None else 0
        for p in self.golden.points[start : target.index + 1]:
            if isinstance(p.point, ToolCall) and p.point.site == "tool.before":
                self.executed[p.point.key] = self.executed.get(p.point.key, 0) + 1

    def _seed(self, length: int, files: dict[str, bytes]) -> None:
        header_end = self.golden.journal.index(b"\n") + 1
        self.seeds += 1
        run = self.workspace.run(self.seeds)
        self.sessions, self.out_dir, self.scratch = run.sessions, run.out_dir, run.scratch
        self.runs_at_seed = self.outcome.runs
        in_place = seeds_in_place()
        known_files = self.golden.seed_files if in_place else None
        self.workspace.clear(self.sessions, known_files, files.keys())
        write_files(self.scratch, files)
        store = run.store(in_place)
        self.seed, meta = seed_session(self.golden, store, self.out_dir, self.golden.journal[header_end:length])
        if known_files is None and in_place:  # what a seed writes, as seen once in a fresh directory
            self.golden.seed_files = frozenset(read_files(self.sessions))
        self.seed_state = self.golden.state_at(length)
        self.seed_state.meta = meta
        # the runs' stores decode only what they append to the seed (their open would refuse an invalid one); the
        # seed is a prefix of the golden journal, so its histories are judged once per length
        invalid = self.golden.stored_problems_at(
            length, lambda state: judge.stored_valid(state, "seed", self.golden.valid_histories)
        )
        self.known = None if invalid else KnownJournal(self.session_id, self.seed, self.seed_state)
        self.store = store.knowing(self.known) if self.known is not None else store
        self.committed_tools.update(self.golden.committed_tools_at(length))

    def seeded(self) -> SessionState:
        """The session's durable state before its first run: the seed's own state when the runs' stores read the
        journal on top of it (the journal is then exactly the seed, as written; `KnownJournal` guarantees that
        state is the fold of those bytes and is never changed), else read back from disk."""
        if self.known is not None and self.seed_state is not None:
            return self.seed_state
        return self.load()

    def load(self, *, upto_seq: int | None = None) -> SessionState:
        """The session's durable state, read from its journal on disk (up to record `upto_seq`) as the runs' stores
        read it: only the records after the seeded prefix are decoded when the journal still begins with it."""
        assert self.store is not None
        return self.store.load(self.session_id, upto_seq=upto_seq)

    def stored_upto(self, stored: SessionState, seq: int | None) -> SessionState:
        """The durable state up to record `seq`, given `stored`, the whole journal's state as just read: that very
        state when its last record is `seq` (a resume stops at the commit that converged unless concurrent units
        committed more meanwhile), else read again up to `seq`."""
        if seq is not None and stored.seq == seq:
            return stored
        return self.load(upto_seq=seq)

    # -- one run --
    def resume(
        self,
        *,
        arm: tuple[CrashPoint, int] | None,
        converge: bool,
        label: str,
        before: SessionState | None = None,
        off_the_record: bool = False,
    ) -> Phase:
        """Resume the current session in fresh objects; check tools and requests against what was committed.
        `off_the_record`: a crash made a non-idempotent call's outcome unknown (see `run_options`)."""
        from strands_durable.runner.run import resume

        assert self.store is not None and self.out_dir is not None and self.scratch is not None
        phase = Phase()
        bus = CrashPoints()
        store = WrappingStore(self.store)  # as `observe.observed_store` wraps one: the run's own, fresh wrapper
        observe(bus, phase)
        if arm is not None:
            _arm(bus, phase, *arm)
        if converge:  # the calls that ran without their results committed may have left effects
            watch_convergence(bus, phase, store, self.golden, set(self.executed) - self.committed_tools)
        before = before if before is not None else self.load()
        if before.status == "completed":
            phase.completed = True
            return phase
        self.outcome.runs += 1
        options = run_options(
            self.golden.target,
            self.out_dir,
            bus,
            scratch_dir=self.scratch,
            requests=phase.requests,
            off_the_record=off_the_record,
            lockstep=True,
        )
        try:
            outcome = resume(self.session_id, options, store=store, prepared=self.golden.prepared_resume())
            phase.completed = outcome.status == "completed"
            if not phase.completed:
                self.problem("status", f"{label} ended {outcome.status}")
        except InjectedCrash as crash:
            # the bus keeps the crash (it is final there) and its traceback keeps this run's frames: a cycle that
            # held the whole run (agents, session, states) until a full collection; the run is over, drop them
            crash.__traceback__ = crash.__context__ = None
        except (DurableError, Exception) as exc:  # a resume that fails is a finding, never an aborted session
            if self.golden.failure is None or failure_of(exc) != self.golden.failure:
                phase.error = exc
                expected = f" (the golden run failed with {self.golden.failure})" if self.golden.failure else ""
                self.problem("resume-failed", f"{label} failed: {failure_of(exc)}{expected}")
        finally:
            # the run is over: its bus's subscribers (closures over the phase and the store) and the wrapper's
            # sessions made cycles with the session that held the bus, kept until a collection found them
            bus.close()
            store.sessions.clear()
        self.judged(judge.tools_not_rerun(phase.tools_run, self.committed_tools, self.executed, label))
        self.judged(judge.model_not_rerequested(before, phase.requests.requests, label))
        for results in phase.commits:
            self.committed_tools.update(results)
        return phase

    def judged(self, problems: list[judge.Problem]) -> None:
        for rule, detail in problems:
            self.problem(rule, detail)

    def check_stored(self, label: str) -> SessionState:
        """The session's durable state now, with its histories judged: the seed's own while no run has touched the
        session since it was written (a derived crash state: the journal is exactly the seed, `seeded`), else read
        from disk."""
        state = self.seeded() if self.outcome.runs == self.runs_at_seed else self.load()
        self.judged(judge.stored_valid(state, label, self.golden.valid_histories))
        return state

    def check_end(self, phase: Phase, synthesized: set[str]) -> None:
        """After the last resume: the durable state equals the golden run's (at convergence or at the end)."""
        state = self.check_stored("after resume")
        golden = self.golden
        assert self.out_dir is not None
        if phase.converged_at is not None and not synthesized:
            self.outcome.converged_at = phase.converged_at.id
            checkpoint = golden.checkpoint_states[phase.converged_digest]
            stored = self.stored_upto(state, phase.converged_seq)
            expected = functools.partial(golden.snapshot_at, checkpoint)  # read only when the two differ
            self.judged(judge.durable_at(golden.digester, stored, phase.converged_digest, expected))
            self.judged(judge.workspace_matches(golden.workspace.at(checkpoint.index + 1), self.scratch))
            return
        if phase.error is not None:
            return
        ended = judge.ended_as(golden, state)
        if ended:
            self.judged(ended)
            return
        self.judged([(INVALID_HISTORY, f"after completion: {v}") for v in judge.continuable(state)])
        if synthesized:
            self.judged(judge.answered_unknown(state, synthesized))
            return
        self.judged(judge.identical(golden, state))
        self.judged(judge.out_dir_matches(self.out_dir, state))
        self.judged(judge.workspace_matches(golden.workspace.final, self.scratch))


def explore_point(golden: WorkflowGoldenRun, point_id: str, workdir: Path) -> PointOutcome:
    """Crash at one golden crash point, resume, crash again at the same point if the resume passes it."""
    return explore_schedule(golden, [point_id], workdir, repeat_last=True)


def explore_schedule(
    golden: WorkflowGoldenRun, point_ids: list[str], workdir: Path, *, repeat_last: bool = False
) -> PointOutcome:
    """Crash at each point of `point_ids` in turn (each in the resume of the previous crash), then resume to
    convergence or the end. With `repeat_last`, also crash a second time at the last point when a resume
    passes it again, and require that run to converge as well."""
    with points_collected_less():  # a process tuning, off unless asked for (faults/kit/collector.py)
        return _explore_schedule(golden, point_ids, workdir, repeat_last=repeat_last)


def _explore_schedule(
    golden: WorkflowGoldenRun, point_ids: list[str], workdir: Path, *, repeat_last: bool
) -> PointOutcome:
    outcome = PointOutcome(point_ids=list(point_ids))
    ex = _Exploration(golden, workdir, outcome)
    targets = [golden.point(pid) for pid in point_ids]
    first = targets[0]
    cut = cut_for(golden, first)
    start_index = cut.index if cut is not None else 0
    crash_index = start_index
    label = "crashing run"
    unknown: set[str] = set()  # calls a crash of this schedule left "outcome unknown": later outputs not compared
    derived = _derived_crash(ex, first, cut, workdir)
    if derived:  # the first interrupt's crash state is the golden run's at the point (faults/kit/derived.py)
        outcome.fired.append(first.id)
        crash_index = first.index
        label = f"resume after the crash at {first.id}"
    else:
        ex.seed_prefix(cut)
    for number, target in enumerate(targets):
        if derived and number == 0:
            continue  # a schedule's later faults fire in the resumes, from the derived state on
        before = ex.seeded() if number == int(derived) else ex.load()
        unknown |= pending_unknown(before)
        phase = ex.resume(
            arm=(target.point, skip_count(golden, target, crash_index if number else start_index)),
            converge=False,
            label=label,
            before=before,
            off_the_record=bool(unknown),
        )
        if phase.fired is None:
            if number == 0 or phase.error is not None:
                return outcome  # the first fault never fired: the point counts as unexplored and fails
            # a later fault of a schedule may lie behind the resume's path (a tool the resume answers "outcome
            # unknown" never runs again); the run went on to the end
            ex.check_end(phase, unknown)
            return outcome
        outcome.fired.append(target.id)
        crash_index = target.index
        label = f"resume after the crash at {target.id}"
    last = targets[-1]
    while True:  # at most twice: the resume crashes again at the last point if it passes it, then converges
        crashed = ex.check_stored(f"right after the crash at {outcome.fired[-1]}")
        unknown |= pending_unknown(crashed)
        again = repeat_last and len(outcome.fired) == len(targets)
        final = ex.resume(
            arm=(last.point, 0) if again else None,
            converge=not golden.target.full and not unknown,
            label=label,
            before=crashed,
            off_the_record=bool(unknown),
        )
        if final.fired is None:
            break
        outcome.fired.append(last.id)
        label = f"resume after a second crash at {last.id}"
    ex.check_end(final, unknown)
    return outcome


def _derived_crash(ex: _Exploration, target: GoldenPoint, cut: GoldenPoint | None, workdir: Path) -> bool:
    """Seed `ex` with the crash state at `target` derived from the golden run, when the golden run's policy
    (`golden.segments`), `fallback_reason` and the workflow's sample allow. False: the point runs its real segment.

    Before a workflow's first derived state, every point of its seeded sample also runs its real segment and the two
    states are compared (`_sample_verdicts`, once per process: every process finds the same). When one differs,
    nothing of that workflow is derived (the store or runner under test does not replay the golden run's path), and
    the sampled points that differ fail naming the difference; otherwise the sampled points carry their real
    segment's own findings."""
    golden, outcome = ex.golden, ex.outcome
    policy = golden.segments
    reason = fallback_reason(golden, target, cut) if policy.derive else "real segments asked for"
    if reason is None:
        sample = _sample_verdicts(golden, workdir / "real-segment")
        difference, findings = sample.by_point.get(target.id, (None, []))
        if difference is not None:
            ex.problem(SEGMENT_RULE, f"{target.id}: derived crash state differs from the real segment: {difference}")
        if sample.disproved:
            reason = "derivation disproved"  # the point runs its real segment, which finds what it finds
        else:
            outcome.problems += findings
    outcome.segment = reason or ("derived, checked" if target.id in golden.checked_points() else "derived")
    if reason is not None:
        return False
    ex.seed_crash(target, cut)
    return True


def run_sample(golden: WorkflowGoldenRun, workdir: Path) -> None:
    """Run the workflow's exactness sample now, as its first derived crash state would (`_derived_crash`): a
    process forking workers runs it once before the fork, and every worker inherits its verdicts."""
    if golden.segments.derive:
        _sample_verdicts(golden, workdir / "real-segment")


def _sample_verdicts(golden: WorkflowGoldenRun, workdir: Path) -> SampleVerdicts:
    """For each derivable point of the workflow's seeded sample: the first difference between its derived crash
    state and its real segment's (None: the same), and the real segment's own findings. Computed once per process."""
    if golden.segment_verdicts is not None and golden.segment_verdicts.policy == golden.segments:
        return golden.segment_verdicts
    verdicts: dict[str, tuple[str | None, list[Finding]]] = {}
    for point_id in sorted(golden.checked_points(), key=natural_key):
        target = golden.point(point_id)
        if fallback_reason(golden, target, cut_for(golden, target)) is None:
            verdicts[point_id] = segment_verdict(golden, point_id, workdir)
    golden.segment_verdicts = SampleVerdicts(golden.segments, verdicts)
    return golden.segment_verdicts


def segment_verdict(golden: WorkflowGoldenRun, point_id: str, workdir: Path) -> tuple[str | None, list[Finding]]:
    """The first difference between the crash state at `point_id` derived from the golden run and the one its real
    segment leaves (None: the same), and the real segment's own findings."""
    target = golden.point(point_id)
    cut = cut_for(golden, target)
    derived = _Exploration(golden, workdir / "derived", PointOutcome(point_ids=[point_id]))
    derived.seed_crash(target, cut)
    real = _Exploration(golden, workdir / "real", PointOutcome(point_ids=[point_id]))
    real.seed_prefix(cut)
    phase = real.resume(
        arm=(target.point, skip_count(golden, target, cut.index if cut is not None else 0)),
        converge=False,
        label="real crash segment",
        before=real.seeded(),
    )
    if phase.fired is None:
        return "the real segment never reached the point", real.outcome.problems
    assert real.scratch is not None and derived.scratch is not None
    assert real.store is not None and derived.store is not None
    assert real.out_dir is not None and derived.out_dir is not None
    sid = golden.target.session_id
    difference = segment_difference(
        (derived.store.journal_bytes(sid), read_files(derived.scratch), read_files(derived.out_dir), derived.load()),
        (real.store.journal_bytes(sid), read_files(real.scratch), read_files(real.out_dir), real.load()),
    )
    return difference, real.outcome.problems


def iter_points(golden: WorkflowGoldenRun, max_points: int | None = None, seed: int = 0) -> Iterator[str]:
    """The point ids to explore, in a stable order; at most `max_points`, spread over every site kind."""
    ids = golden.ordered_ids()
    if max_points is None or max_points >= len(ids):
        yield from ids
        return
    import random

    by_site: dict[str, list[str]] = {}
    for point_id in ids:
        by_site.setdefault(golden.point(point_id).point.site, []).append(point_id)
    rng = random.Random(seed)
    for group in by_site.values():
        rng.shuffle(group)
    chosen: list[str] = []
    sites = [s for s in SITES if s in by_site]
    while len(chosen) < max_points:
        for site in sites:
            if by_site[site] and len(chosen) < max_points:
                chosen.append(by_site[site].pop())
    yield from sorted(chosen, key=natural_key)
