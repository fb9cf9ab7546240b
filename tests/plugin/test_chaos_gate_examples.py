"""The CI durability gate: `pytest --strands-chaos` over every example spec finds no divergence and no invalid
history. Bounded to 200 crash points per workflow (today every example has fewer, so all are explored) so the
gate stays well inside CI's 20-minute budget on 2 cores as examples are added (10 s for all 768 points today,
see docs/benchmarks.md). The points run in workers forked after the imports and the golden runs
(`--strands-chaos-workers=2`), which, unlike xdist's `-n 2` workers, neither import Strands again nor compute
the golden runs again; the xdist path of the same gate is held by
test_plugin_chaos.py::test_xdist_workers_report_the_same_totals."""

from __future__ import annotations

import json

import pytest

from tests.plugin.support import EXAMPLES, summary

MAX_POINTS_PER_WORKFLOW = 200


@pytest.mark.slow
def test_every_example_survives_an_interrupt_at_every_crash_point(pytester: pytest.Pytester) -> None:
    specs = sorted(EXAMPLES.glob("*.strands.yaml"))
    assert specs, "no example specs found"
    report = pytester.path / "chaos.json"
    result = pytester.runpytest_subprocess(
        "--strands-chaos",
        f"--strands-chaos-max-points={MAX_POINTS_PER_WORKFLOW}",
        f"--strands-chaos-report={report}",
        "-n",
        "0",
        "--strands-chaos-workers=2",
        "-p",
        "no:cacheprovider",
        "-q",
        *map(str, specs),
    )
    totals = summary(result)
    body = json.loads(report.read_text())
    failing = [item for item in body["items"] if item["outcome"] != "passed"]
    assert totals["divergences"] == 0 and totals["invalid"] == 0, json.dumps(failing[:5], indent=1)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-3000:]
    assert set(body["workflows"]) == {spec.name for spec in specs}
    assert totals["workflows"] == len(specs) and totals["sites"] >= 9 and totals["points"] >= 10 * len(specs)
