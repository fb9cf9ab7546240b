"""On resume with a changed spec: every committed position must still exist (else exit 3 naming it)."""

from __future__ import annotations

from typing import Any

from strands_durable.errors import SpecError
from strands_durable.store.state import SessionState


def check_committed_positions(spec: Any, state: SessionState) -> None:
    file = str(spec.source_path or "<spec>")
    for conv in state.conversations.values():
        if conv.agent not in spec.agents:
            raise SpecError(
                file,
                f"the session has a committed conversation for agent '{conv.agent}', which the spec no longer defines",
                key_path=f"agents.{conv.agent}",
            )
    if spec.pattern.type == "chain":
        steps = spec.pattern.config.steps
        for unit, record in state.units.items():
            if not unit.startswith("step["):
                continue
            index = int(unit[5:-1])
            if index >= len(steps):
                raise SpecError(
                    file,
                    f"committed step {index} no longer exists (the chain has {len(steps)} steps)",
                    key_path="pattern.config.steps",
                )
            expected = getattr(steps[index], "agent", None) or "hitl"
            recorded = record.get("agent") or "hitl"
            if expected != recorded:
                raise SpecError(
                    file,
                    f"committed step {index} ran agent '{recorded}' but the spec now names '{expected}'",
                    key_path=f"pattern.config.steps[{index}].agent",
                )
