"""The chaos bench's own-work mode (bench/bench_chaos.py `--own-work`): the explorer's own CPU per crash point, and
where the explorer's thread spent its CPU per point (seeds, the checks' reads, judging, the resumes' store opens and
runs, the collector), measured on real explorations and restored afterwards."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from strands_durable.faults.classes import explore
from strands_durable.store.local import LocalStore
from tests.conftest import EXAMPLES
from tests.faults.test_bench_chaos_whole import _bench  # the bench module, loaded from its file


def test_own_work_splits_the_explorers_cpu_per_point_and_puts_back_what_it_timed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    examples = tmp_path / "examples"
    examples.mkdir()
    shutil.copy(EXAMPLES / "chain-research.strands.yaml", examples)
    before = (explore._Exploration._seed, explore._Exploration.load, LocalStore.open)
    _bench().own_work(tmp_path / "work", examples)
    assert (explore._Exploration._seed, explore._Exploration.load, LocalStore.open) == before
    out = capsys.readouterr().out
    assert re.search(r"examples: \d+ crash points; the explorer's own CPU \d+\.\d\d ms per point", out)
    shown = out.splitlines()[-1].split("(ms): ", 1)[1]
    split = {part: float(ms) for part, ms in (item.rsplit(" ", 1) for item in shown.split(", "))}
    parts = ["seeds", "reads", "judging and the rest", "resumes' opens", "resumes' runs", "collector (in all of them)"]
    assert list(split) == parts
    assert split["seeds"] > 0 and split["reads"] > 0 and split["resumes' opens"] > 0 and split["resumes' runs"] > 0
