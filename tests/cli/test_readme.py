"""The README's commands stay true: CI runs its two install commands verbatim and in order (with the pip that
`python -m venv` gives), the extras they install never re-resolve the core package, the run command is offline and
the examples after the quickstart can run after it."""

from __future__ import annotations

import shlex

import pytest
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


def test_ci_runs_the_readme_install_commands_in_order_with_the_stock_pip():
    """A new user runs the quickstart's `pip install -e .`, then the test command's `pip install -e ".[test]"`, in
    one venv whose pip was never upgraded: CI must do exactly that, or it never sees what they see."""
    lines = [line.strip() for line in (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    commands = _fenced_commands()[:2]
    assert [c.split(" && ")[0] for c in commands] == ["pip install -e .", 'pip install -e ".[test]"']
    positions = [lines.index(command) for command in commands]  # each one verbatim, as a line of its own
    assert positions == sorted(positions)
    assert lines.index("python3 -m venv .venv-ci") < positions[0]
    upgrades = [line for line in lines if "pip" in line and ("--upgrade" in line or " -U " in line)]
    assert upgrades == []


def _extras() -> dict[str, list[str]]:
    tomllib = pytest.importorskip("tomllib", reason="the standard library reads TOML from Python 3.11")
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return project["optional-dependencies"]


def test_no_extra_asks_for_the_core_package_again():
    """`strands-agents[openai]` in an extra makes the stock pip (23.x) re-resolve the strands-agents the first
    command installed: it backtracks for minutes and ends in ResolutionImpossible. Extras name the SDK's provider
    packages themselves (and never this package with an extra of its own)."""
    from packaging.requirements import Requirement

    again = {
        extra: requirement
        for extra, requirements in _extras().items()
        for requirement in requirements
        if Requirement(requirement).name in ("strands-agents", "strands-durable")
    }
    assert again == {}


@pytest.mark.parametrize("extra", ["openai", "anthropic", "ollama", "gemini", "litellm"])
def test_a_provider_extra_asks_what_the_sdks_own_extra_asks(extra):
    """Each provider extra installs the packages the installed strands-agents asks for in its extra of that name,
    with the same version ranges (optional helpers of the SDK's extra may be left out)."""
    from importlib.metadata import requires

    from packaging.requirements import Requirement

    sdk = {}
    for line in requires("strands-agents") or []:
        requirement = Requirement(line)
        if requirement.marker is not None and requirement.marker.evaluate({"extra": extra}):
            sdk[requirement.name] = requirement.specifier
    ours = {Requirement(line).name: Requirement(line).specifier for line in _extras()[extra]}
    assert ours, extra
    assert {name: sdk.get(name) for name in ours} == ours


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


def test_the_resume_sample_output_is_what_a_resume_after_ctrl_c_prints(strands, child):
    """The quickstart's run, stopped by Ctrl+C while step 2 runs, then resumed as the README shows it."""
    import signal

    argv = shlex.split(_fenced_commands()[0].split(" && ")[1])
    run = child(*argv[1:2], REPO / argv[2], *argv[3:], env={"STRANDS_SYNTHETIC_LATENCY_MS": "300"})
    run.wait_for("Step 2/3: researcher - EXECUTING")
    run.proc.send_signal(signal.SIGINT)
    assert run.finish() == 130, run.err
    session_id = run.out[0].removeprefix("Session ID: ")
    blocks = (REPO / "README.md").read_text(encoding="utf-8").split("```")[1::2]
    command, *shown = next(b for b in blocks if b.strip().startswith("$ strands run --resume")).strip().splitlines()
    resumed = strands(*shlex.split(command)[2:4], session_id[:8])  # `$ strands run --resume ID`
    assert resumed.returncode == 0, resumed.stderr
    printed = resumed.stdout.strip().splitlines()
    # everything but the session id and the artifact's absolute path, token counts included
    assert printed[1:-1] == shown[1:-1]
    assert printed[0] == f"Resuming session: {session_id[:8]}..." and shown[0].startswith("Resuming session: ")
    for lines in (printed, shown):
        assert lines[-1].startswith("Artifact written: /") and lines[-1].endswith("/durable-agent-workflows-report.md")


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


def test_the_examples_after_the_quickstart_do_not_stop_on_its_artifact():
    """The quickstart writes ./artifacts/durable-agent-workflows-report.md; every later `strands run SPEC` the README
    shows must write elsewhere (`--out`) or say it may overwrite (`--force`), or a reader following the README in
    order stops at `Error: Artifact already exists`."""
    blocks = (REPO / "README.md").read_text(encoding="utf-8").split("```")[1::2]
    commands = [line.split("&&")[-1].split("#")[0].strip() for block in blocks for line in block.splitlines()]
    runs = [
        argv
        for argv in (shlex.split(c) for c in commands if c.startswith(("strands run ", "strands-durable run ")))
        if argv[2].endswith((".yaml", ".yml", ".json"))
    ]
    quickstart, *later = runs
    assert quickstart[2] == "examples/chain-research.strands.yaml" and len(later) >= 3, runs
    assert [argv for argv in later if "--force" not in argv and "--out" not in argv] == []


def test_the_export_shape_the_readme_shows_is_the_exports(strands):
    """The contract's Export rule: `agents` maps a conversation key to `{"messages": [...]}` of plain messages."""
    import json
    import re

    shape = '`{"messages": [{"role": ..., "content": [...]}]}`'
    row = next(
        line for line in (REPO / "README.md").read_text(encoding="utf-8").splitlines() if "sessions export ID" in line
    )
    assert f"`agents` (each conversation key -> {shape}" in row
    result = strands("run", REPO / "examples" / "chain-research.strands.yaml", "--out", "out")
    session_id = re.search(r"Session ID: (\S+)", result.stdout)[1]
    exported = json.loads(strands("sessions", "export", session_id).stdout)
    assert list(exported) == ["session", "pattern_state", "outputs", "agents", "journal"]
    assert exported["agents"]
    for conversation in exported["agents"].values():
        assert list(conversation) == ["messages"]
        assert all(list(message) == ["role", "content"] for message in conversation["messages"])


def test_every_promise_that_a_resume_repeats_the_uninterrupted_run_names_the_outcome_unknown_exception():
    """A resume after a kill inside a non-idempotent tool differs by design ("outcome unknown"): the paragraph that
    promises an exact repeat says so (issue 39, item 5)."""
    promises = []
    for document in (REPO / "README.md", REPO / "docs" / "contract.md"):
        for paragraph in document.read_text(encoding="utf-8").split("\n\n"):
            flat = " ".join(paragraph.split())
            if "repeats the uninterrupted" in flat:
                promises.append((document.name, flat))
    assert [name for name, _ in promises] == ["README.md", "contract.md"]
    for name, flat in promises:
        assert "always repeats" not in flat, name
        assert "outcome unknown" in flat and "non-idempotent" in flat, (name, flat)
