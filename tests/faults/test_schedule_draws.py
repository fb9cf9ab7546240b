"""The multi-fault schedules a workflow's `schedules` item tries are the same wherever the gate runs. Hypothesis puts
integer literals from the source of the "local" modules loaded (not installed packages, not tests) into some of its
draws; the schedules must not depend on them: not on whether this package is installed editable, not on the
project's own modules (faults/classes/schedule.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.faults.conftest import CHAIN

# One process: the schedules drawn, then a module of the project's own imported (as hypothesis sees one: not
# installed, not a test) whose literals are every index of the workflow's points, then the schedules drawn again.
DRAWS = """
import importlib, json, sys
from pathlib import Path
from strands_durable.faults.classes.schedule import explore_schedules
from strands_durable.faults.kit.runs import run_golden
from strands_durable.faults.kit.target import ChaosTarget

spec, work = Path(sys.argv[1]), Path(sys.argv[2])
golden = run_golden(ChaosTarget(spec), work / "golden")
drawn = [[o.point_ids for o in explore_schedules(golden, work / "before", examples=30).outcomes]]
project = work / "project"
project.mkdir()
(project / "index_literals.py").write_text(f"LITERALS = {list(range(len(golden.points)))}\\n")
sys.path.insert(0, str(project))
importlib.import_module("index_literals")
drawn.append([o.point_ids for o in explore_schedules(golden, work / "after", examples=30).outcomes])
print(json.dumps(drawn))
"""


def test_the_schedules_drawn_do_not_depend_on_the_local_modules_loaded(tmp_path: Path) -> None:
    work = tmp_path / "work"  # hypothesis takes a module for local unless it lies in a directory named "test(s)"
    work.mkdir()
    assert not {"test", "tests"} & set(work.parts)  # else the module of literals would not count, on the old code too
    done = subprocess.run(
        [sys.executable, "-c", DRAWS, str(CHAIN), str(work)],
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    before, after = json.loads(done.stdout.splitlines()[-1])
    assert len(before) == 30 and all(len(schedule) >= 2 for schedule in before)
    assert after == before
