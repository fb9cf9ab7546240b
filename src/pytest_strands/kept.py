"""`--strands-chaos-keep-failures=DIR`: a failing multi-fault schedule, once hypothesis has shrunk it, written as a
plain pytest file that imports only public names and fails the same way.

The file holds the spec (relative to the file), the schedule's crash points in order, the completion order its
concurrent units ran in (when not the golden run's) and the options that decided it (seed, mode); its one test asks
the `strands_chaos` fixture to run that schedule (`strands_chaos.run_schedule`), so it runs under
`pytest --strands-chaos FILE` like any fixture test and fails with the same rule lines.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

TEMPLATE = '''"""A failing multi-fault schedule of {spec_name}, shrunk by hypothesis (`--strands-chaos-keep-failures`).

Run it with: pytest --strands-chaos{options} {file_name}
What it found:
{found}
"""

from pathlib import Path

import pytest

SPEC = Path(__file__).parent / {spec!r}
# crash points, each in the resume of the previous crash
SCHEDULE = {schedule}
# units that finish first, in this order (empty: the golden run's order)
UNIT_ORDER = {unit_order}


@pytest.mark.strands_chaos(spec=str(SPEC))
def test_{name}_schedule(strands_chaos):
    strands_chaos.run_schedule(SCHEDULE, unit_order=UNIT_ORDER)
'''


def kept_file_name(spec_path: Path) -> str:
    name = re.sub(r"[^A-Za-z0-9]+", "_", spec_path.name.split(".strands.")[0].split(".")[0]).strip("_").lower()
    return f"test_{name or 'spec'}_schedule.py"


def write_kept_failure(
    directory: Path, spec_path: Path, schedule: list[str], unit_order: tuple[str, ...], found: str, settings: Any
) -> Path:
    """Write the schedule's file into `directory` (made if missing); returns its path."""
    from strands_durable.store.fileops import FileOps

    ops = FileOps()
    ops.makedirs(directory, durable=False)
    path = directory / kept_file_name(spec_path)
    options = f" --strands-chaos-seed={settings.seed}" + (" --strands-chaos-full" if settings.full else "")
    text = TEMPLATE.format(
        spec_name=spec_path.name,
        options=options,
        file_name=path.name,
        found="\n".join(f"    {line}" for line in found.splitlines()[:20]).replace('"""', "'''"),
        spec=os.path.relpath(spec_path.resolve(), directory.resolve()),
        schedule=_listed(schedule),
        unit_order=_listed(unit_order),
        name=path.stem.removeprefix("test_").removesuffix("_schedule"),
    )
    ops.write_atomic(path, text.encode(), durable=False)
    return path


def _listed(names: Any) -> str:
    """A list of strings as Python source, one a line."""
    return "[" + "".join(f"\n    {name!r}," for name in names) + ("\n]" if names else "]")
