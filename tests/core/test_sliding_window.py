"""An agent whose conversation outgrows Strands' 40-message sliding window resumes exactly: the window's trim at
the end of an invocation, and the trimmed view in the middle of one, are both restored as the uninterrupted run
had them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.core.support import crash_and_resume, golden_run

STEPS = 14


def long_chain(directory: Path) -> Path:
    steps = "\n".join(
        f"      - {{agent: a0, input: 'Step {i}: check one estimate with the calculator.'}}" for i in range(STEPS)
    )
    spec = directory / "long.strands.yaml"
    spec.write_text(
        "version: 0\nname: long-chain\nruntime: {provider: synthetic}\ntools: {python: [calculator]}\n"
        "agents:\n  a0: {prompt: 'You check estimates.', tools: [calculator]}\n"
        f"pattern:\n  type: chain\n  config:\n    steps:\n{steps}\n"
    )
    return spec


@pytest.mark.slow
def test_a_conversation_past_the_window_resumes_identically_mid_unit_and_between_units(tmp_path: Path) -> None:
    spec = long_chain(tmp_path)
    golden = golden_run(tmp_path / "golden", spec)
    points = golden.point_ids
    messages = len(golden.comparable["histories"]["a0"])
    assert messages > 45, f"the conversation must outgrow the 40-message window (has {messages})"
    late = [p for p in points if any(f"step[{i}]:" in p for i in range(STEPS - 4, STEPS))]
    chosen = [
        p for p in late if p.endswith(("model.before", "unit.before", "tool.executed", "prompt/store.after_commit"))
    ]
    assert len(chosen) >= 8
    failures = []
    for index, target in enumerate(chosen):
        failures += [f"{target}: {p}" for p in crash_and_resume(golden, target, tmp_path / f"p{index}")]
    assert not failures, "\n".join(failures[:10])
