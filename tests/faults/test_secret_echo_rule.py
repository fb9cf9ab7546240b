"""The chaos judge's `secret-echo` rule: a session whose stored files hold a declared secret (in any form redaction
covers) fails with the secret named, never shown; the same session with the secret not in it passes. A real golden
run of the example chain, with `env.secrets` declared, judged from disk as every real-fault class judges a resume;
a golden run that stores one fails every class (the in-process interrupt class too)."""

from __future__ import annotations

from pathlib import Path

from strands_durable import LocalStore
from strands_durable.faults.classes.registry import explore_fault
from strands_durable.faults.kit import judge
from strands_durable.faults.kit.runs import run_golden
from strands_durable.faults.kit.target import ChaosTarget
from tests.conftest import EXAMPLES

DECLARED = "env:\n  secrets:\n    - {name: TOPIC_KEY, source: env, key: ECHO_RULE_TOKEN}\n"


def test_a_stored_declared_secret_fails_the_judge_and_an_absent_one_passes(tmp_path: Path, monkeypatch) -> None:
    spec = tmp_path / "chain.strands.yaml"
    spec.write_text((EXAMPLES / "chain-research.strands.yaml").read_text() + DECLARED)
    monkeypatch.delenv("ECHO_RULE_TOKEN", raising=False)  # not set while the run stores its text: nothing redacted
    golden = run_golden(ChaosTarget(spec), tmp_path / "work")
    sessions = tmp_path / "work" / "golden" / "sessions"
    session_id = golden.target.session_id
    assert judge.completed_on_disk(golden, sessions, session_id) == []  # no secret declared in the environment

    monkeypatch.setenv("ECHO_RULE_TOKEN", "durable agent workflows")  # the run's topic: in its stored prompts
    found = judge.completed_on_disk(golden, sessions, session_id)
    assert found and {rule for rule, _ in found} == {judge.SECRET_ECHO}
    details = [detail for _, detail in found]
    assert "journal.log holds secret TOPIC_KEY (raw)" in details
    assert all("durable agent workflows" not in detail for detail in details)  # named, never shown

    monkeypatch.setenv("ECHO_RULE_TOKEN", "a value this run never saw")
    assert judge.completed_on_disk(golden, sessions, session_id) == []
    assert LocalStore(sessions).load(session_id).status == "completed"


def test_a_golden_run_that_stores_a_declared_secret_fails_every_class(tmp_path: Path, monkeypatch) -> None:
    """The in-process interrupt class (the pytest plugin's) judges its resumes without reading the session's files;
    the golden run's own check makes the rule hold there too. The secret is set once the run has read its secrets
    (so nothing redacts it): a store path that leaks it."""
    spec = tmp_path / "chain.strands.yaml"
    spec.write_text((EXAMPLES / "chain-research.strands.yaml").read_text() + DECLARED)
    monkeypatch.delenv("ECHO_RULE_TOKEN", raising=False)

    def leak(bus) -> None:
        bus.subscribe(lambda point: monkeypatch.setenv("ECHO_RULE_TOKEN", "durable agent workflows"))

    golden = run_golden(ChaosTarget(spec), tmp_path / "work", subscribe=leak)
    assert golden.problems and {p.rule for p in golden.problems} == {judge.SECRET_ECHO}
    details = [p.detail for p in golden.problems]
    assert "golden run: journal.log holds secret TOPIC_KEY (raw)" in details
    assert all("durable agent workflows" not in detail for detail in details)  # named, never shown
    run = explore_fault("interrupt", golden.target, tmp_path / "explore", golden=golden, max_points=1)
    golden_findings = [f for f in run.findings if f.point == "golden"]
    assert golden_findings and {f.rule for f in golden_findings} == {judge.SECRET_ECHO}

    monkeypatch.setenv("ECHO_RULE_TOKEN", "a value this run never saw")
    assert run_golden(ChaosTarget(spec), tmp_path / "clean").problems == []
