"""Collection as a strands-cli user expects it: globs in `strands_chaos_specs` (relative to the ini file), plain
`.yaml`/`.json` specs named on the command line, an opted-in directory of plain specs, a line saying why nothing
was collected, a HITL golden run that names the ini option, and a JSON report listing every item."""

from __future__ import annotations

import json
import os

import pytest
import yaml

from tests.plugin.support import RESEARCH, SUMMARY, summary

QUICK = ("--strands-chaos", "--strands-chaos-max-points=2", "--strands-chaos-schedules=0", "-p", "no:cacheprovider")
HITL_SPEC = """
version: 0
name: approval
runtime: {provider: synthetic, model_id: synthetic-1}
agents:
  writer: {prompt: You write one sentence.}
pattern:
  type: chain
  config:
    steps:
      - agent: writer
        input: Draft a release note.
      - type: hitl
        prompt: Approve the draft?
      - agent: writer
        input: "Reviewer said: {{ steps[1].response }}"
"""


def _plain_specs(pytester: pytest.Pytester, *names: str) -> None:
    for name in names:
        path = pytester.path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        text = RESEARCH.read_text()
        path.write_text(json.dumps(yaml.safe_load(text)) if name.endswith(".json") else text)


def _collected_workflows(result: pytest.RunResult) -> set[str]:
    return {line.split("::")[0] for line in result.stdout.lines if line.endswith("::golden")}


def test_strands_chaos_specs_globs_are_relative_to_the_ini_file(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    _plain_specs(pytester, "specs/alpha.yaml", "specs/beta.yml", "specs/nested/gamma.yaml")
    pytester.makeini("[pytest]\nstrands_chaos_specs = specs/*.yaml specs/*.yml\n")
    elsewhere = pytester.mkdir("elsewhere")
    monkeypatch.chdir(elsewhere)  # the ini file is found upwards; its globs do not depend on the working directory
    result = pytester.runpytest_inprocess(*QUICK, "--collect-only", "-q")
    workflows = {w.rsplit("/", 1)[-1] for w in _collected_workflows(result)}
    assert workflows == {"alpha.yaml", "beta.yml"}, result.stdout.str()


def test_a_glob_that_matches_nothing_is_a_usage_error_naming_it(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nstrands_chaos_specs = flows/*.yaml\n")
    result = pytester.runpytest_inprocess(*QUICK, "--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert f"strands_chaos_specs: flows/*.yaml matches no file (relative to {pytester.path})" in result.stderr.str()


def test_plain_yaml_and_json_specs_named_on_the_command_line_are_collected(pytester: pytest.Pytester) -> None:
    _plain_specs(pytester, "flow.yaml", "flow.json", "other.yaml")
    result = pytester.runpytest_inprocess(*QUICK, "flow.yaml", "flow.json")
    result.assert_outcomes(passed=6)  # golden and 2 points each; other.yaml was not named
    assert summary(result)["workflows"] == 2
    assert "other.yaml" not in result.stdout.str()


def test_an_opted_in_directory_collects_its_plain_yaml_specs(pytester: pytest.Pytester) -> None:
    _plain_specs(pytester, "workflows/a.yaml", "workflows/deep/b.yml", "loose.yaml")
    pytester.makeini("[pytest]\nstrands_chaos_spec_dirs = workflows\n")
    result = pytester.runpytest_inprocess(*QUICK, "--collect-only", "-q")
    workflows = _collected_workflows(result)
    assert workflows == {"workflows/a.yaml", "workflows/deep/b.yml"}, result.stdout.str()
    pytester.makeini("[pytest]\nstrands_chaos_spec_dirs = workflow\n")  # a typo: no such directory
    typo = pytester.runpytest_inprocess(*QUICK, "--collect-only", "-q")
    assert typo.ret == pytest.ExitCode.USAGE_ERROR
    assert f"strands_chaos_spec_dirs: workflow is not a directory under {pytester.path}" in typo.stderr.str()


def test_zero_collected_while_plain_specs_are_present_says_why(pytester: pytest.Pytester) -> None:
    _plain_specs(pytester, "specs/a.yaml", "specs/b.json")
    (pytester.path / "specs" / "settings.yaml").write_text("log_level: info\n")  # not a spec: not mentioned
    result = pytester.runpytest_inprocess(*QUICK)
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    lines = result.stdout.lines
    summary_at = next(i for i, line in enumerate(lines) if SUMMARY.match(line))
    assert lines[summary_at + 1] == (
        "strands-chaos: 0 workflows collected, but 2 files look like workflow specs and are not named "
        "*.strands.yaml|yml|json: specs/a.yaml, specs/b.json; name them on the command line, list them in "
        "strands_chaos_specs (globs, relative to the ini file) or opt their directory in with strands_chaos_spec_dirs"
    )


def test_zero_collected_and_no_spec_anywhere_says_so(pytester: pytest.Pytester) -> None:
    (pytester.path / "settings.yaml").write_text("log_level: info\n")
    result = pytester.runpytest_inprocess(*QUICK)
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    assert "strands-chaos: 0 workflows collected: no workflow spec found under " in result.stdout.str()


def test_a_golden_run_stopped_by_hitl_without_default_names_the_ini_option(pytester: pytest.Pytester) -> None:
    (pytester.path / "approval.strands.yaml").write_text(HITL_SPEC)
    stopped = pytester.runpytest_inprocess(*QUICK)
    stopped.assert_outcomes(failed=1)
    assert "HitlPaused: Paused for human input at step[1]" in stopped.stdout.str()
    assert "set strands_chaos_hitl_answer in the ini file" in stopped.stdout.str()
    pytester.makeini("[pytest]\nstrands_chaos_hitl_answer = approved\n")
    answered = pytester.runpytest_inprocess(*QUICK)
    answered.assert_outcomes(passed=3)


def test_the_json_report_lists_every_item_schedules_included(pytester: pytest.Pytester) -> None:
    (pytester.path / "research.strands.yaml").write_text(RESEARCH.read_text())
    report = pytester.path / "chaos.json"
    result = pytester.runpytest_inprocess(
        "--strands-chaos",
        "--strands-chaos-max-points=3",
        "--strands-chaos-schedules=2",
        "-p",
        "no:cacheprovider",
        f"--strands-chaos-report={report}",
    )
    result.assert_outcomes(passed=5)
    body = json.loads(report.read_text())
    kinds = [item["kind"] for item in body["items"]]
    assert sorted(kinds) == ["golden", "point", "point", "point", "schedules"]
    assert len({item["nodeid"] for item in body["items"]}) == 5  # one record per item
    (schedules,) = (item for item in body["items"] if item["kind"] == "schedules")
    assert schedules["outcome"] == "passed" and len(schedules["schedules"]) == 2
    assert all(len(s["points"]) >= 2 and s["ok"] and s["fired"] for s in schedules["schedules"])
    assert body["summary"] == SUMMARY.search(result.stdout.str()).group(0)  # the summary line CI greps, unchanged


def test_without_hypothesis_the_schedules_ask_for_it_in_one_usage_error(pytester, monkeypatch):
    """The plugin ships in the package, hypothesis only in its `pytest` extra: a project without it gets one line
    naming the extra (or how to go without schedules), before anything is collected."""
    blocked = pytester.path / "blocked"
    (blocked / "hypothesis").mkdir(parents=True)
    (blocked / "hypothesis" / "__init__.py").write_text("raise ImportError('hypothesis is not installed here')\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(blocked), os.environ.get("PYTHONPATH")])))
    spec = pytester.path / "research.strands.yaml"
    spec.write_text(RESEARCH.read_text())
    refused = pytester.runpytest_subprocess("--strands-chaos", "-p", "no:hypothesispytest", "-p", "no:randomly", spec)
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    assert (
        "ERROR: --strands-chaos: the multi-fault schedules (--strands-chaos-schedules, 10 per workflow) need "
        "hypothesis: pip install 'strands-durable[pytest]', or pass --strands-chaos-schedules=0"
    ) in refused.stderr.str()
    without = pytester.runpytest_subprocess(
        "--strands-chaos", "--strands-chaos-schedules=0", "--strands-chaos-max-points=2", "-p", "no:hypothesispytest",
        "-p", "no:randomly", spec,
    )  # fmt: skip
    assert without.ret == pytest.ExitCode.OK, without.stdout.str()
