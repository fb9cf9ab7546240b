"""A number too long for Python to convert (more than 4,300 digits) is a spec error naming the file and the key,
exit 3, not a traceback (issue 39, item 10); a `--var` of that size is a usage error (exit 2)."""

from __future__ import annotations

import json
import sys

from tests.cli.support import strands_command

DIGITS = "1" * 100_000
LIMIT = sys.get_int_max_str_digits()

SPEC = """\
version: 0
name: long-number
runtime: {{provider: synthetic, temperature: {temperature}}}
inputs:
  required:
    count: integer
agents:
  writer:
    prompt: Count to {{{{ count }}}}.
pattern:
  type: chain
  config:
    steps:
      - agent: writer
        input: Go.
"""


def test_a_yaml_spec_with_a_100000_digit_integer_exits_3_naming_file_line_and_key(tmp_path) -> None:
    (tmp_path / "spec.yaml").write_text(SPEC.format(temperature=DIGITS), encoding="utf-8")
    result = strands_command("run", "spec.yaml", "--var", "count=3", cwd=tmp_path)
    assert result.returncode == 3, result.stderr
    assert result.stderr == (
        f"Error: spec.yaml:3: runtime.temperature: an integer of 100000 characters (integers are limited to {LIMIT} "
        "digits)\n"
    )


def test_a_json_spec_with_a_100000_digit_integer_exits_3_naming_the_key(tmp_path) -> None:
    spec = {
        "version": 0,
        "name": "long-number",
        "runtime": {"provider": "synthetic", "temperature": 0},
        "agents": {"writer": {"prompt": "Hi."}},
        "pattern": {"type": "chain", "config": {"steps": [{"agent": "writer", "input": "Go."}]}},
    }
    text = json.dumps(spec).replace('"temperature": 0', f'"temperature": {DIGITS}')
    (tmp_path / "spec.json").write_text(text, encoding="utf-8")
    result = strands_command("validate", "spec.json", cwd=tmp_path)
    assert result.returncode == 3, result.stderr
    assert result.stderr.startswith("Error: spec.json:1: runtime.temperature: an integer of 100000 characters")
    assert "Traceback" not in result.stderr


def test_a_var_with_a_100000_digit_integer_is_a_usage_error(tmp_path) -> None:
    (tmp_path / "spec.yaml").write_text(SPEC.format(temperature=0.2), encoding="utf-8")
    result = strands_command("run", "spec.yaml", "--var", f"count={DIGITS}", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr == (
        f"Error: Invalid --var count: an integer of 100000 characters (integers are limited to {LIMIT} digits)\n"
    )


def test_a_100000_digit_string_input_reaches_the_model_as_text(tmp_path) -> None:
    """A string input may hold any digits: the synthetic model read every run of digits in a prompt as an integer
    and failed the run (exit 10, Python's integer-conversion limit)."""
    spec = SPEC.format(temperature=0.2).replace("count: integer", "count: string")
    spec = spec.replace("input: Go.", "input: Note the number {{ count }}.")
    (tmp_path / "spec.yaml").write_text(spec, encoding="utf-8")
    result = strands_command("run", "spec.yaml", "--var", f"count={DIGITS}", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
