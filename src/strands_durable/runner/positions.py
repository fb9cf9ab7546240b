"""On resume with a changed spec: every committed position must still exist (else exit 3 naming it)."""

from __future__ import annotations

from typing import Any

from strands_durable.errors import SpecError
from strands_durable.store.state import SessionState


def check_committed_positions(
    spec: Any, state: SessionState, checked: set[tuple[str, str | None]] | None = None
) -> None:
    """Raise SpecError (exit 3) naming the first committed conversation or unit the spec no longer has, or whose
    agent it now names differently. `checked`: the (unit, agent as recorded: None for a HITL answer) pairs already
    found in this very spec, skipped and added to (a warm resume's memo, runner/prepared.py: the spec is frozen, so a
    pair found once stays found; when all are, one set operation in C says so)."""
    file = str(spec.source_path or "<spec>")
    for conv in state.conversations.values():
        if conv.agent not in spec.agents:
            raise SpecError(
                file,
                f"the session has a committed conversation for agent '{conv.agent}', which the spec no longer defines",
                key_path=f"agents.{conv.agent}",
            )
    pairs = [(unit, record.get("agent")) for unit, record in state.units.items()]
    if checked is not None:
        if checked.issuperset(pairs):
            return  # a warm resume whose every pair was found before
        pairs = [pair for pair in pairs if pair not in checked]
    if not pairs:
        return
    positions = _static_positions(spec)
    for unit, agent in pairs:
        _check_unit(spec, file, positions, unit, agent or "hitl")
        if checked is not None:
            checked.add((unit, agent))


def _check_unit(spec: Any, file: str, positions: dict[str, str] | None, unit: str, recorded: str) -> None:
    if positions is not None:
        if unit in positions:
            expected = positions[unit]
            if recorded != expected:
                raise SpecError(
                    file,
                    f"committed unit {unit} ran agent '{recorded}' but the spec now names '{expected}'",
                    key_path="pattern.config",
                )
        elif unit.split("/")[0].split(":")[0] in ("task", "branch", "route") and unit != "reduce":
            raise SpecError(file, f"committed unit {unit} no longer exists in the spec", key_path="pattern.config")
    if spec.pattern.type == "chain" and unit.startswith("step["):
        steps = spec.pattern.config.steps
        index = int(unit[5:-1])
        if index >= len(steps):
            raise SpecError(
                file,
                f"committed step {index} no longer exists (the chain has {len(steps)} steps)",
                key_path="pattern.config.steps",
            )
        expected = getattr(steps[index], "agent", None) or "hitl"
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
