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


def _sample_after(command: str) -> list[str]:
    """The output block the README shows right after the fenced block holding `command`."""
    blocks = (REPO / "README.md").read_text(encoding="utf-8").split("```")[1::2]
    index = next(i for i, block in enumerate(blocks) if command in block)
    return blocks[index + 1].strip().splitlines()


def test_the_quickstart_sample_output_is_what_the_command_prints(strands):
    argv = shlex.split(_fenced_commands()[0].split(" && ")[1])
    result = strands(*argv[1:2], REPO / argv[2], *argv[3:])
    assert result.returncode == 0, result.stderr
    shown = _sample_after(_fenced_commands()[0])
    printed = result.stdout.strip().splitlines()
    # everything but the random session id and the artifact's absolute path, token counts included
    assert printed[1:-1] == shown[1:-1]
    assert printed[0].startswith("Session ID: ") and printed[-1].endswith("/durable-agent-workflows-report.md")


def test_the_readme_k_example_selects_one_real_crash_point(tmp_path):
    import re
    import subprocess
    import sys

    text = (REPO / "README.md").read_text(encoding="utf-8")
    node = re.search(r"\(`(chain-research\.strands\.yaml::[^`]+)`, rerunnable with `-k`\)", text)[1]
    docs = (REPO / "docs" / "chaos-plugin.md").read_text(encoding="utf-8")
    selector = re.search(r'-k "([^"]+)"', docs)[1]
    assert node.endswith("::" + selector)
    spec = str(REPO / "examples" / node.split("::")[0])
    flags = ("--collect-only", "-q", "-n", "0", "-p", "no:cacheprovider", "-k", selector)
    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "--strands-chaos", spec, *flags],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    items = [line for line in collected.stdout.splitlines() if "::" in line]
    assert items == [f"examples/{node}"], collected.stdout + collected.stderr
