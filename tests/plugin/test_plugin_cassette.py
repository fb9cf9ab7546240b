"""Cassettes end to end: `--strands-record` drives Strands' real OpenAIModel against the loopback
OpenAI-compatible server once and stores its answers by normalised request (no secrets); later chaos runs replay
offline; a request missing from the cassette is a divergence."""

from __future__ import annotations

import json

import pytest

from strands_durable.testing import OpenAICompatServer
from tests.plugin.support import summary

SECRET = "sk-test-cassette-secret-0123456789"
SPEC = """
version: 0
name: loopback-chain
runtime:
  provider: openai
  model_id: loopback-1
  host: "{host}"
tools:
  python:
    - calculator
agents:
  analyst:
    prompt: You estimate things and check them with the calculator.
    tools: [calculator]
pattern:
  type: chain
  config:
    steps:
      - agent: analyst
        input: "Estimate the number of piano tuners in a city of 700000 people."
      - agent: analyst
        input: "Check this estimate: {{{{ last_response }}}}"
"""
ARGS = ("--strands-chaos", "--strands-chaos-max-points=15", "--strands-chaos-schedules=2", "-p", "no:cacheprovider")


def test_record_once_then_replay_offline_and_report_a_missing_request(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    spec = pytester.path / "loopback.strands.yaml"
    cassette = pytester.path / "loopback.strands.yaml.cassette.json"
    with OpenAICompatServer(seed=1) as server:
        spec.write_text(SPEC.format(host=server.base_url))
        recorded = pytester.runpytest_inprocess(*ARGS, "--strands-record")
        requests_seen = server.request_count
    recorded.assert_outcomes(passed=17)
    assert requests_seen >= 4 and cassette.is_file()
    assert summary(recorded)["divergences"] == 0
    body = json.loads(cassette.read_text())
    assert len(body["responses"]) >= 4  # one per distinct request: the recording run only
    text = cassette.read_text()
    assert SECRET not in text and "Authorization" not in text and "Estimate the number" not in text

    replayed = pytester.runpytest_inprocess(*ARGS)  # the server is gone: only the cassette can answer
    replayed.assert_outcomes(passed=17)
    assert summary(replayed) == {**summary(recorded), "seed": 0}

    body["responses"].pop(sorted(body["responses"])[-1])
    cassette.write_text(json.dumps(body))
    missing = pytester.runpytest_inprocess(*ARGS)
    assert missing.ret == pytest.ExitCode.TESTS_FAILED
    assert "is not in the cassette loopback.strands.yaml.cassette.json" in missing.stdout.str()
    assert summary(missing)["divergences"] >= 1
