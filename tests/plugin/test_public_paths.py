"""What stays public of the chaos gate (README, "Python API"): the fixture, `pytest_strands.point`, the plugin's
options and `strands_durable.testing.*` import and work without a warning, and README says every
`strands_durable.faults.*` path is private and may move."""

from __future__ import annotations

import subprocess
import sys

from tests.plugin.support import REPO

PUBLIC = """
import warnings
warnings.simplefilter("error")
import pytest_strands
from pytest_strands import point
from pytest_strands.plugin import OPTIONS, ChaosFailure, strands_chaos
import strands_durable.testing
from strands_durable.testing import chain, openai_server, store_contract
point("outside a chaos run")  # a no-op there
print(sorted(flag for flag, *_ in OPTIONS))
"""


def test_the_public_chaos_paths_import_and_work_without_a_warning() -> None:
    done = subprocess.run([sys.executable, "-c", PUBLIC], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "--strands-chaos-faults" in done.stdout and "--strands-chaos-max-points" in done.stdout


def test_readme_says_the_fault_kit_paths_are_private() -> None:
    readme = (REPO / "README.md").read_text()
    assert "Every `strands_durable.faults.*` path is private and may move" in readme
