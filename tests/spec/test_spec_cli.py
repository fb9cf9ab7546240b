"""`python -m strands_durable validate`: a bad spec exits 3 with one line on stderr; a good one exits 0."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow

GOOD = """\
version: 0
name: demo
runtime: {provider: synthetic}
agents:
  writer: {prompt: Write.}
pattern:
  type: chain
  config:
    steps:
      - agent: writer
"""


def validate(path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "strands_durable", "validate", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_good_spec_exits_0(write_spec):
    result = validate(write_spec(GOOD))
    assert result.returncode == 0, result.stderr
    assert "valid spec for workflow 'demo' (pattern: chain)" in result.stdout


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            GOOD.replace("- agent: writer", "- agent: ghost"),
            "pattern.config.steps[0].agent: unknown agent 'ghost'",
        ),
        (GOOD.replace("name: demo", "name: [demo"), "invalid YAML"),
        (GOOD + "surprise: 1\n", ":11: surprise: unknown key 'surprise'"),
    ],
)
def test_bad_spec_exits_3_with_one_line(write_spec, text, expected):
    result = validate(write_spec(text, "bad.yaml"))
    assert result.returncode == 3
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: ") and "bad.yaml" in lines[0] and expected in lines[0]
    assert "Traceback" not in result.stderr


def test_loading_a_spec_does_not_import_strands_agents(write_spec):
    code = (
        "import sys\nfrom strands_durable.spec import load_spec\n"
        f"load_spec({str(write_spec(GOOD))!r})\n"
        "print(sorted(m for m in sys.modules if m == 'strands' or m.startswith('strands.')))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.strip() == "[]"
