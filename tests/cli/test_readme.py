"""The README's two quickstart commands stay true: CI runs the test command verbatim; the run command is offline."""

from __future__ import annotations

import shlex

import yaml

from tests.conftest import REPO


def _fenced_commands() -> list[str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = text.split("```")[1::2]
    return [block.strip() for block in blocks if block.strip().startswith("pip install")]


def test_the_test_command_is_exactly_what_ci_runs():
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    command = 'pip install -e ".[test]" && python -m pytest'
    assert command in _fenced_commands()
    assert command in ci.splitlines()


def test_the_quickstart_runs_the_offline_example():
    quickstart = _fenced_commands()[0]
    install, run = quickstart.split(" && ")
    assert install == "pip install -e ."
    argv = shlex.split(run)
    assert argv[:2] == ["strands", "run"]
    spec = yaml.safe_load((REPO / argv[2]).read_text(encoding="utf-8"))
    assert spec["runtime"]["provider"] == "synthetic"
