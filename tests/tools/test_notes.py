"""`context_policy.notes`: each finished agent unit leaves an entry; the last `include_last` entries are in every
later agent's system prompt ("# Previous Workflow Steps"), rebuilt from committed work on resume; the notes file
is written with the artifacts, inside --out."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from strands_durable import LocalStore, RunOptions, resume, run_workflow
from strands_durable.errors import HitlPaused
from strands_durable.models.providers import build_model
from strands_durable.models.wrapping import WrappedModel

SPEC = """\
version: 0
name: notes-test
runtime: {provider: scripted}
context_policy:
  notes: {file: "./artifacts/notes.md", include_last: 1}
agents:
  writer: {prompt: You write., tools: [calculator]}
pattern:
  type: chain
  config:
    steps:
      - {agent: writer, input: "First: tides."}
      - {agent: writer, input: "Second: waves."}
      - {type: hitl, prompt: "Go on?"}
      - {agent: writer, input: "Third: currents."}
"""
SCRIPT = {"writer": ["One.", "Two.", "Three."]}


class _Capturing(WrappedModel):
    def __init__(self, inner: Any, prompts: list[str]) -> None:
        super().__init__(inner)
        self.prompts = prompts

    async def stream(
        self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kw: Any
    ) -> AsyncIterator:
        self.prompts.append(system_prompt or "")
        async for event in self.inner.stream(messages, tool_specs, system_prompt, **kw):
            yield event


def options(prompts: list[str], tmp_path: Path, **kwargs: Any) -> RunOptions:
    def factory(*, agent_id: str, provider: str, model_id: Any, runtime: Any) -> Any:
        return _Capturing(build_model("scripted", scripts=SCRIPT, agent_id=agent_id), prompts)

    return RunOptions(model_factory=factory, out_dir=tmp_path / "out", **kwargs)


def test_notes_reach_later_agents_survive_a_resume_and_are_written_with_the_artifacts(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    store = LocalStore(tmp_path / "sessions")
    prompts: list[str] = []
    with pytest.raises(HitlPaused):
        run_workflow(spec, options(prompts, tmp_path), store=store)
    assert "Previous Workflow Steps" not in prompts[0]
    assert "(Step 1)\n- **Input**: First: tides.\n- **Tools used**: calculator\n- **Outcome**: One." in prompts[1]
    (session_id,) = store.session_ids()
    outcome = resume(session_id, options(prompts, tmp_path, hitl_response="yes"), store=store)  # fresh objects
    assert outcome.status == "completed"
    last = prompts[-1]
    assert "(Step 1)" not in last and "(Step 2)" in last and "Outcome**: Two." in last  # include_last: 1
    notes = (tmp_path / "out" / "artifacts" / "notes.md").read_text(encoding="utf-8")
    assert notes.count("## [") == 3 and "Outcome**: Three." in notes
    assert str(tmp_path / "out" / "artifacts" / "notes.md") in outcome.artifacts
