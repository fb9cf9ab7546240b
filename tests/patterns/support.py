"""Support for the pattern suites: runs whose model calls are counted per agent and whose tools count their
executions in an fsynced file outside the session directory (tests/core/support.py), and spec variants."""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from strands_durable import RunOptions
from strands_durable.faults.kit.oracle import RequestLog, counting_model
from strands_durable.models import SyntheticModel
from strands_durable.models.wrapping import WrappedModel
from strands_durable.runner.reporter import RecordingReporter
from tests.core.support import ExecutionLog, counting_tools


class _PerAgent(WrappedModel):
    """Counts the calls of one agent's model, optionally failing some of them first."""

    def __init__(self, inner: Any, agent_id: str, probe: Probe) -> None:
        super().__init__(inner)
        self.agent_id = agent_id
        self.probe = probe

    async def stream(
        self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kw: Any
    ) -> AsyncIterator[Any]:
        self.probe.calls[self.agent_id] += 1
        if self.probe.fail is not None:
            error = self.probe.fail(self.agent_id, self.probe.calls[self.agent_id])
            if error is not None:
                raise error
        async for event in self.inner.stream(messages, tool_specs, system_prompt, **kw):
            yield event


@dataclass
class Probe:
    """What one run did: model calls per agent, every request digest, tool executions (shared file)."""

    log: ExecutionLog
    calls: Counter = field(default_factory=Counter)
    requests: RequestLog = field(default_factory=RequestLog)
    reporter: RecordingReporter = field(default_factory=RecordingReporter)
    fail: Callable[[str, int], BaseException | None] | None = None  # (agent, nth call) -> error to raise

    def options(self, **kwargs: Any) -> RunOptions:
        seed = kwargs.get("seed", 0)
        model_kwargs = kwargs.pop("model_kwargs", {})

        def factory(*, agent_id: str, provider: str, model_id: Any, runtime: Any) -> Any:
            model = SyntheticModel(seed=seed, **model_kwargs)
            return _PerAgent(counting_model(model, self.requests), agent_id, self)

        return RunOptions(extra_tools=counting_tools(self.log), model_factory=factory, reporter=self.reporter, **kwargs)

    def skipped(self) -> set[str]:
        return {call[3] for call in self.reporter.calls if call[0] == "unit_skipped"}

    def started(self) -> list[str]:
        return [call[4] for call in self.reporter.calls if call[0] == "unit_started"]

    def warnings(self) -> list[str]:
        return [call[1] for call in self.reporter.calls if call[0] == "warning"]


def spec_variant(source: Path, target_dir: Path, replacements: dict[str, str], name: str | None = None) -> Path:
    """A copy of `source` with exact text replacements (each must occur), written into `target_dir`."""
    text = source.read_text()
    for old, new in replacements.items():
        assert old in text, f"{old!r} not in {source.name}"
        text = text.replace(old, new)
    target_dir.mkdir(parents=True, exist_ok=True)
    path = target_dir / (name or source.name)
    path.write_text(text)
    return path
