"""Crash states derived from the golden run (faults/kit/derived.py): at every crash point of every example the
derived state equals what the real crash segment leaves (records, the tools' workspace, what a resume reads);
a wrong derivation is named as a finding; the points that cannot be derived run their real segment, counted by
reason (a segment whose commit changes the pattern's position, or in which other units are in flight in lockstep,
in the golden run's own order or in a unit order, is derived: a resumed runner writes the records an uninterrupted
one does); `--strands-chaos-real-segments` checks every point."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import pytest

from strands_durable.crashpoints import ToolCall, UnitBoundary
from strands_durable.faults.classes.explore import explore_point, segment_verdict
from strands_durable.faults.kit.derived import (
    REAL_SEGMENTS,
    SEGMENT_RULE,
    SegmentPolicy,
    fallback_reason,
    segment_facts,
)
from strands_durable.faults.kit.golden import GoldenPoint, WorkflowGoldenRun, cut_for
from strands_durable.faults.kit.runs import run_golden
from strands_durable.faults.kit.target import ChaosTarget
from strands_durable.faults.kit.unit_orders import points_inside, reached, unit_orders
from strands_durable.store.base import read_journal_bytes
from tests.conftest import EXAMPLES

FALLBACKS = {"close", "concurrent-tools"}


QUICK = "chain-research.strands.yaml"  # in the default run; the other examples with the long proofs (`-m long`)
EXAMPLE_SPECS = [
    pytest.param(name, marks=() if name == QUICK else pytest.mark.long)
    for name in sorted(p.name for p in EXAMPLES.glob("*.strands.yaml"))
]


def _commits_pattern_state(golden: WorkflowGoldenRun, point_id: str) -> bool:
    """Whether the crash segment of the point makes a commit that changes the pattern's position."""
    cut = cut_for(golden, golden.point(point_id))
    if cut is None:
        return False
    record = read_journal_bytes(
        golden.journal[: cut.journal_length] + golden.journal[cut.journal_length :].split(b"\n", 1)[0] + b"\n"
    ).records[-1]
    return any(event.get("type") == "pattern_state" for event in record.get("events", ()))


def _units_in_flight(golden: WorkflowGoldenRun, point_id: str) -> bool:
    """Whether more than one unit is in flight somewhere in the crash segment of the point."""
    target = golden.point(point_id)
    cut = cut_for(golden, target)
    units: set[str] = set()
    for p in golden.points[: target.index + 1]:
        if isinstance(p.point, UnitBoundary):
            (units.add if p.point.site == "unit.before" else units.discard)(p.point.unit)
        if p.index >= (cut.index if cut is not None else 0) and len(units) > 1:
            return True
    return False


@pytest.mark.parametrize("spec", EXAMPLE_SPECS)
def test_every_derived_crash_state_of_the_examples_equals_the_real_segments(spec: str, tmp_path: Path) -> None:
    # every point of the golden run, and of each unit order's golden run (default orders) the points inside the
    # layer the plugin explores in it
    golden = run_golden(ChaosTarget(EXAMPLES / spec), tmp_path / "golden")
    runs = [(golden, golden.ordered_ids())]
    for number, order in enumerate(unit_orders(golden, "default")):
        ordered = run_golden(order.target(golden.target), tmp_path / f"order{number}")
        if reached(ordered, order) and not ordered.problems:
            runs.append((ordered, points_inside(ordered, order)))
    segments: Counter[str] = Counter()
    for run, point_ids in runs:
        run.segments = REAL_SEGMENTS
        for point_id in point_ids:
            outcome = explore_point(run, point_id, tmp_path / "points")
            assert outcome.ok, outcome.describe()
            segments[outcome.segment] += 1
            if outcome.segment in FALLBACKS:
                continue
            assert outcome.segment == "derived, checked", (point_id, outcome.segment)
            if _commits_pattern_state(run, point_id):
                segments["pattern-state, derived"] += 1
            if _units_in_flight(run, point_id):
                segments["units in flight, derived"] += 1
                if run.target.unit_order:  # a resumed job keeps its rank in the order (runner/concurrency.py)
                    segments["units in flight in a unit order, derived"] += 1
    derived = {"derived, checked", "pattern-state, derived", "units in flight, derived"}
    assert set(segments) <= {*derived, "units in flight in a unit order, derived", *FALLBACKS}, segments
    assert segments["derived, checked"] > 0, segments  # every example has points whose state is derived
    assert segments["pattern-state, derived"] > 0, segments  # and every one has a pattern whose position moves
    if any(_units_in_flight(golden, point_id) for point_id in golden.ordered_ids()):
        assert segments["units in flight, derived"] > 0, segments
    if len(runs) > 1:  # an example with a layer: every point inside it in another order is derived and checked
        assert segments["units in flight in a unit order, derived"] > 0, segments


def test_a_derived_state_that_differs_from_the_real_segment_fails_naming_the_difference(
    chain_golden: WorkflowGoldenRun, tmp_path: Path
) -> None:
    # a golden run whose record of one point is wrong (its journal length one record short): the derived state
    # lacks the commit the real segment makes, and the check says so
    points = chain_golden.points
    index, target = next(
        (i, p)
        for i, p in enumerate(points)
        if p.point.site == "store.after_commit" and fallback_reason(chain_golden, p, cut_for(chain_golden, p)) is None
    )
    before = points[index - 1]
    assert before.point.site == "store.before_commit"
    wrong = dataclasses.replace(target, journal_length=before.journal_length)
    golden = dataclasses.replace(chain_golden, points=[*points[:index], wrong, *points[index + 1 :]])
    golden.segments = REAL_SEGMENTS
    outcome = explore_point(golden, target.id, tmp_path / "points")
    differences = [p for p in outcome.problems if p.rule == SEGMENT_RULE]
    assert differences, outcome.describe()
    assert target.id in differences[0].detail and "records derived" in differences[0].detail


def test_segments_with_other_units_in_flight_are_derived_in_the_golden_order_and_in_others(tmp_path: Path) -> None:
    golden = run_golden(ChaosTarget(EXAMPLES / "parallel-market-scan.strands.yaml"), tmp_path / "golden")
    reasons = {p.id: fallback_reason(golden, p, cut_for(golden, p)) for p in golden.points}
    assert {reasons[p.id] for p in golden.points if p.point.path.startswith("close")} == {"close"}
    assert set(reasons.values()) == {"close", None}
    assert any(_commits_pattern_state(golden, pid) for pid in reasons)  # the branches' progress moves: derived
    # the three branches are in flight at once; a resumed parallel runner commits with a branch's step the steps
    # its siblings had committed (it once wrote 0 for a sibling that had not re-read its own yet)
    golden.segments = REAL_SEGMENTS
    for point_id in (
        "branch:pricing/step[0]:researcher/unit.after",
        "branch:trends/step[0]:analyst/turn[2]/model.answered",
    ):
        assert _units_in_flight(golden, point_id) and reasons[point_id] is None
        outcome = explore_point(golden, point_id, tmp_path / "derived")
        assert outcome.ok, outcome.describe()
        assert outcome.segment == "derived, checked"
    # under another completion order (competitors, trends, pricing) too: a resumed job keeps its rank in the order
    # whichever unit it starts with, so a resume from within the competitors branch's third step, or from the
    # trends branch's first commit, takes the turns the order's golden run took (ranked by the step it started
    # with, the resumed competitors branch once went last: 21 of these points' real segments differed)
    order = next(iter(unit_orders(golden, "default")))
    ordered = run_golden(order.target(golden.target), tmp_path / "order")
    assert ordered.target.unit_order and reached(ordered, order)
    inside = points_inside(ordered, order)
    assert {fallback_reason(ordered, ordered.point(pid), cut_for(ordered, ordered.point(pid))) for pid in inside} == {
        None
    }
    ordered.segments = REAL_SEGMENTS
    for point_id in (
        "branch:competitors/step[2]:analyst/turn[0]/prompt/store.before_commit",
        "branch:competitors/step[2]:analyst/unit.after",
        "branch:trends/step[0]:analyst/turn[0]/prompt/store.before_commit",
    ):
        assert point_id in inside and _units_in_flight(ordered, point_id)
        outcome = explore_point(ordered, point_id, tmp_path / "ordered")
        assert outcome.ok, outcome.describe()
        assert outcome.segment == "derived, checked"


def test_a_segment_where_one_agent_runs_tools_at_once_runs_for_real() -> None:
    # two tool calls of one conversation in flight together (an agent's concurrent tools, which lockstep does not
    # order): the segment falls back; two units' calls, each at its own turn, do not
    def tool(site: str, conversation: str, call: str) -> ToolCall:
        return ToolCall(site, f"{conversation}/turn[0]/tool[{call}]:t", conversation=conversation, tool_use_id=call)

    def golden_of(*points: object) -> SimpleNamespace:
        run = SimpleNamespace(target=SimpleNamespace(unit_order=()))
        run.points = [GoldenPoint(point, index) for index, point in enumerate(points)]  # type: ignore[arg-type]
        run.segment_facts = lambda: segment_facts(run)
        return run

    start = UnitBoundary("unit.before", "step[0]:a", unit="step[0]")
    one_agent = golden_of(start, tool("tool.before", "a", "1"), tool("tool.before", "a", "2"),
                          tool("tool.executed", "a", "1"), tool("tool.executed", "a", "2"))  # fmt: skip
    points = one_agent.points
    assert fallback_reason(one_agent, points[4], points[0]) == "concurrent-tools"
    assert fallback_reason(one_agent, points[1], points[0]) is None  # only one call in flight up to there
    other = UnitBoundary("unit.before", "step[1]:b", unit="step[1]")
    two_units = golden_of(start, other, tool("tool.before", "a", "1"), tool("tool.before", "b", "2"),
                          tool("tool.executed", "a", "1"), tool("tool.executed", "b", "2"))  # fmt: skip
    assert fallback_reason(two_units, two_units.points[5], two_units.points[0]) is None
    two_units.target.unit_order = ("step[1]",)  # in a unit order as well: a resumed job keeps its rank
    assert fallback_reason(two_units, two_units.points[5], two_units.points[0]) is None


def test_the_seeded_sample_checks_at_least_one_point_in_ten(chain_golden: WorkflowGoldenRun) -> None:
    ids = chain_golden.ordered_ids()
    checked = SegmentPolicy(seed=0).checked_points(chain_golden)
    assert len(checked) * 10 >= len(ids) and checked <= set(ids)
    assert checked == SegmentPolicy(seed=0).checked_points(chain_golden)  # the same points in every process
    assert checked != SegmentPolicy(seed=1).checked_points(chain_golden)
    assert REAL_SEGMENTS.checked_points(chain_golden) == set(ids)


@pytest.mark.slow
def test_the_real_segments_option_checks_every_derived_point(pytester: pytest.Pytester) -> None:
    spec = pytester.path / "routing.strands.yaml"
    spec.write_text((EXAMPLES / "routing-support-triage.strands.yaml").read_text())
    counts = {}
    for tag, extra in (("sampled", ()), ("every", ("--strands-chaos-real-segments",))):
        report = pytester.path / f"{tag}.json"
        result = pytester.runpytest_subprocess(
            "--strands-chaos", "--strands-chaos-schedules=0", "-p", "no:randomly", "-n", "0",
            f"--strands-chaos-report={report}", *extra,
        )  # fmt: skip
        assert result.ret == 0
        line = next(line for line in result.outlines if line.startswith("strands-chaos: crash states:"))
        counts[tag] = json.loads(report.read_text())["crash_segments"]
        derived = counts[tag].get("derived", 0) + counts[tag].get("derived, checked", 0)
        assert line.startswith(f"strands-chaos: crash states: {derived} derived from the golden run")
    assert counts["every"].get("derived", 0) == 0 and counts["every"]["derived, checked"] > 0
    assert counts["sampled"]["derived"] > counts["sampled"]["derived, checked"] > 0
    assert counts["every"]["close"] == counts["sampled"]["close"] > 0


def test_the_check_decodes_only_the_records_after_the_prefix_both_journals_share(
    chain_golden: WorkflowGoldenRun,
) -> None:
    # issue 37 item 4 (a point of a long chain costs about what a short one's does): the derived and the real
    # journal both begin with the golden run's prefix, so the check decodes only what follows it, and still names
    # every record by its number in the whole journal
    from strands_durable.faults.kit.derived import _events_after_shared_prefix, segment_difference
    from strands_durable.store.base import read_journal_bytes

    journal = chain_golden.journal
    lengths = sorted({p.journal_length for p in chain_golden.points})
    shorter, longer = lengths[len(lengths) // 2], lengths[-1]
    records = [len(read_journal_bytes(journal[:n]).records) - 1 for n in (shorter, longer)]  # after the header
    assert 2 <= records[0] < records[1]
    skipped, ours, theirs = _events_after_shared_prefix(journal[:shorter], journal[:longer])
    assert (skipped, len(ours), len(theirs)) == (records[0], 0, records[1] - records[0])
    state = chain_golden.state_at(longer)
    found = segment_difference((journal[:shorter], {}, {}, state), (journal[:longer], {}, {}, state))
    assert found is not None and found.startswith(f"journal: {records[0]} records derived, {records[1]} left by")
    assert segment_difference((journal[:longer], {}, {}, state), (journal[:longer], {}, {}, state)) is None
    report = {"report.md": b"# report\n"}
    found = segment_difference((journal[:longer], {}, {}, state), (journal[:longer], {}, report, state))
    assert found is not None and found.startswith("the output directory: "), found


def test_a_crash_state_with_files_in_the_output_directory_runs_its_real_segment(
    chain_golden: WorkflowGoldenRun, tmp_path: Path
) -> None:
    # the golden run keeps no output directory, and a resume reads it (a file the journal does not claim is
    # refused): from the commit of the first artifact's claim on (its file is written right after it) every point
    # runs its real segment, and the real segment's output directory is compared with the derived one's
    points = chain_golden.points
    first = next(
        i for i, p in enumerate(points) if p.point.path.startswith("artifact[") and p.point.site == "store.after_commit"
    )
    reasons = [fallback_reason(chain_golden, p, cut_for(chain_golden, p)) for p in points]
    assert reasons[first] is None  # claimed, not yet written: derived
    assert set(reasons[first + 1 :]) == {"close"}, list(
        zip([p.id for p in points[first:]], reasons[first:], strict=True)
    )
    # derived, the next point's state would lack the file the real segment leaves: the check names it
    difference, _ = segment_verdict(chain_golden, points[first + 1].id, tmp_path / "check")
    assert difference is not None and difference.startswith("the output directory: "), difference
