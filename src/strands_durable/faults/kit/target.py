"""What a fault class runs: a spec with its variables, Python tools, HITL answer, model (a cassette or the synthetic
model), network tools (answered from the cassette) and the tools' external state.

`spec_target` builds it the same way for every class and face: under chaos the model is the cassette when one
exists, otherwise the synthetic model, whatever `runtime.provider` says; a spec whose network tools have no cassette
is `NotExplorable` (with the command that records one), in every fault class.
"""

from __future__ import annotations

import datetime as dt
import functools
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PINNED_CREATED_AT = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
"""Every chaos run of a workflow is created at this instant, so clocks, templates and tool results repeat."""


@dataclass
class ChaosTarget:
    """What to explore: a spec, its variables and Python tools, and how the model answers."""

    spec_path: Path
    variables: dict[str, str] = field(default_factory=dict)
    tools: dict[str, Any] = field(default_factory=dict)
    seed: int = 0
    hitl_answer: str | None = None
    model: Callable[..., Any] | None = None  # (agent_id, model_id, runtime) -> strands Model; None: synthetic
    full: bool = False  # run every resumed tail to the end instead of stopping at convergence
    network_tools: Any = None  # `NetworkCassette` answering the network tools (faults/kit/cassette.py); None: none
    workspace: Path | None = None  # the tools' external state each run starts from (copied; None: empty)
    unit_order: tuple[str, ...] = ()  # units whose jobs go first under lockstep, in this order (kit/unit_orders.py)

    def __post_init__(self) -> None:
        self.spec_path = Path(self.spec_path)

    @property
    def session_id(self) -> str:
        return _session_id_for(self.spec_path, self.seed)

    @property
    def name(self) -> str:
        return self.spec_path.name.split(".strands.")[0]


@functools.lru_cache(maxsize=256)
def _session_id_for(spec_path: Path, seed: int) -> str:
    """One fixed session id per spec file and seed (resolving the path costs system calls; asked per run)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"strands-chaos:{spec_path.resolve()}:{seed}"))


class NotExplorable(Exception):
    """A spec whose network tools have no cassette: chaos runs never reach the network, so it cannot be explored
    until one is recorded (`command` records it)."""

    def __init__(self, spec_path: Path, tools: list[str]) -> None:
        from strands_durable.faults.kit.cassette import cassette_path

        self.spec_path = spec_path
        self.tools = tools
        self.command = f"pytest --strands-chaos --strands-record {spec_path}"
        super().__init__(
            f"not explorable: network tools {', '.join(tools)} and no cassette {cassette_path(spec_path).name}; "
            f"record one with: {self.command}"
        )


def network_tool_names(spec_path: Path) -> list[str]:
    """The tools of a spec that reach the network (they need a cassette under chaos)."""
    from strands_durable.runner.native_tools import native_tools
    from strands_durable.runner.tools import ToolResolver
    from strands_durable.spec import load_spec

    return ToolResolver(
        load_spec(spec_path), provider="synthetic", native=native_tools(), network=True
    ).network_tool_names()


def spec_target(
    spec_path: Path,
    *,
    seed: int = 0,
    variables: dict[str, str] | None = None,
    tools: dict[str, Any] | None = None,
    hitl_answer: str | None = None,
    full: bool = False,
    workspace: Path | None = None,
    recording: bool = False,
) -> ChaosTarget:
    """The target for a spec: the cassette's answers (model and network tools) when one exists, otherwise the
    synthetic model; a spec with network tools and no cassette raises `NotExplorable`. With `recording`, the
    target is left for `faults.kit.runs.record_cassette` to record its cassette from the real provider and
    network first."""
    target = ChaosTarget(
        spec_path=Path(spec_path),
        variables=dict(variables or {}),
        tools=dict(tools or {}),
        seed=seed,
        hitl_answer=hitl_answer,
        full=full,
        workspace=workspace,
    )
    if recording:
        return target
    # imported here: the cassette imports strands-agents, which the xdist controller (it only configures the
    # suite and adds up reports) never needs; importing it there delayed starting the workers by ~0.6 s
    from strands_durable.faults.kit.cassette import Cassette, NetworkCassette, cassette_path, replaying_factory

    path = cassette_path(target.spec_path)
    if path.is_file():
        cassette = Cassette.load(path)
        target.model = replaying_factory(cassette)
        target.network_tools = NetworkCassette(cassette, recording=False)
    else:
        names = network_tool_names(target.spec_path)
        if names:
            raise NotExplorable(target.spec_path, names)
    return target
