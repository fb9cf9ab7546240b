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
    positions = _static_positions(spec)
    if positions is not None:
        for unit, record in state.units.items():
            if unit in positions:
                expected = positions[unit]
                recorded = record.get("agent") or "hitl"
                if recorded != expected:
                    raise SpecError(
                        file,
                        f"committed unit {unit} ran agent '{recorded}' but the spec now names '{expected}'",
                        key_path="pattern.config",
                    )
            elif unit.split("/")[0].split(":")[0] in ("task", "branch", "route") and unit != "reduce":
                raise SpecError(file, f"committed unit {unit} no longer exists in the spec", key_path="pattern.config")
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


def _agent_of(step: Any) -> str:
    return getattr(step, "agent", None) or "hitl"


def _static_positions(spec: Any) -> dict[str, str] | None:
    """unit id -> agent for the units a workflow, parallel or routing spec defines up front (None otherwise)."""
    config = spec.pattern.config
    kind = spec.pattern.type
    if kind == "workflow":
        return {f"task:{task.id}": _agent_of(task) for task in config.tasks}
    if kind == "parallel":
        return {
            f"branch:{branch.id}/step[{index}]": _agent_of(step)
            for branch in config.branches
            for index, step in enumerate(branch.steps)
        }
    if kind == "routing":
        return {
            f"route:{name}/step[{index}]": _agent_of(step)
            for name, route in config.routes.items()
            for index, step in enumerate(route.then)
        }
    return None
