"""The state one run carries: spec, session, variables, invoker, models, tools and the template context."""

from __future__ import annotations

import datetime as dt
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from strands_durable.agent.durable import DurableInvoker
from strands_durable.crashpoints import CrashPoints
from strands_durable.runner.reporter import Reporter
from strands_durable.runner.tools import ToolResolver
from strands_durable.spec.templates import compared_literals
from strands_durable.store.base import Session

if TYPE_CHECKING:
    from strands_durable.runner.options import RunOptions


@dataclass
class RunContext:
    spec: Any
    session: Session
    options: RunOptions
    variables: dict[str, Any]
    invoker: DurableInvoker
    tools: ToolResolver
    crash: CrashPoints
    created_at: dt.datetime
    provider: str
    cancelled: threading.Event = field(default_factory=threading.Event)  # set: concurrent units stop at a safe point
    lock: threading.RLock = field(default_factory=threading.RLock)  # pattern state and HITL pauses of concurrent units
    budget: Any = None
    retry_policy: Any = None
    invocation_state: dict[str, Any] = field(default_factory=dict)  # handed to every agent call (native tools)
    hitl_response: str | None = None  # the caller's answer to the pending pause, until a unit takes it
    telemetry: Any = None  # a runner.telemetry.RunTelemetry when the spec has telemetry.otel
    secrets: tuple[str, ...] | None = None  # the run's secret values (runner/run_secrets.py), redacted when stored
    _models: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        from strands_durable.runner.budget import Budget
        from strands_durable.runner.retry import RetryPolicy

        self.hitl_response = self.options.hitl_response
        if self.secrets is None:
            from strands_durable.runner.run_secrets import secret_values

            self.secrets = tuple(secret_values(self.spec))
        if self.budget is None:
            self.budget = Budget(self.spec.runtime.budgets, self.session, self.options.reporter)
        if self.retry_policy is None:
            self.retry_policy = RetryPolicy.from_runtime(self.spec.runtime)

    @property
    def state(self):  # -> SessionState
        return self.session.state

    @property
    def reporter(self) -> Reporter:
        return self.options.reporter

    def base_template_context(self) -> dict[str, Any]:
        runtime = self.spec.runtime.model_dump(mode="json", exclude_none=True)
        policy = self.spec.context_policy.model_dump(mode="json", exclude_none=True) if self.spec.context_policy else {}
        return {
            **self.variables,
            "name": self.spec.name,
            "timestamp": self.created_at.isoformat(),
            "runtime": runtime,
            "context_policy": policy,
            "execution_context": {"workflow": self.spec.name, "pattern": self.spec.pattern.type},
        }

    def model_for(self, agent_id: str, model_id: str | None = None) -> Any:
        """The agent's model; with `model_id`, that model of the agent's provider (compaction's summarizer, with
        strands-cli's temperature 0.3)."""
        key = agent_id if model_id is None else f"{agent_id}\x00{model_id}"
        model = self._models.get(key)
        if model is not None:
            return model
        provider, model_id, runtime = model_arguments(self.spec, self.options, agent_id, model_id)
        if self.options.model_factory is not None:
            model = self.options.model_factory(agent_id=agent_id, provider=provider, model_id=model_id, runtime=runtime)
        else:
            from strands_durable.models.providers import build_model

            model = build_model(
                provider,
                model_id=model_id,
                runtime=runtime,
                seed=self.options.seed,
                scripts=self.options.scripts,
                agent_id=agent_id,
            )
        self._models[key] = model
        return model


def model_arguments(
    spec: Any, options: RunOptions, agent_id: str, model_id: str | None = None
) -> tuple[str, str | None, dict[str, Any]]:
    """(provider, model_id, runtime) of an agent's model in a run with these options; with `model_id`, that model
    of the agent's provider (compaction's summarizer, with strands-cli's temperature 0.3)."""
    agent = spec.agents[agent_id]
    provider = options.provider or agent.provider or spec.runtime.provider
    runtime = spec.runtime.model_dump(mode="json", exclude_none=True)
    if agent.inference is not None:
        runtime.update(agent.inference.model_dump(mode="json", exclude_none=True))
    if model_id is not None:
        runtime["temperature"] = 0.3
    model_id = model_id or agent.model_id or spec.runtime.model_id
    if spec.pattern.type == "graph":  # free-text `when` literals, for the synthetic model to answer
        literals = answer_literals(spec.pattern.config, agent_id)
        if literals:
            runtime["answer_literals"] = literals
    return provider, model_id, runtime


def answer_literals(config: Any, agent_id: str) -> list[tuple[str, str]]:
    """The literals the `when` conditions of the edges leaving `agent_id`'s nodes compare its answers with
    (`spec.templates.compared_literals`): the synthetic model works them into its answers, varied by seed, so
    free-text conditions take either branch and loops exit."""
    sources = {node_id for node_id, node in config.nodes.items() if getattr(node, "agent", None) == agent_id}
    found: list[tuple[str, str]] = []
    for edge in config.edges:
        if edge.source in sources:
            for choice in edge.choose or ():
                found += compared_literals(choice.when)
    return list(dict.fromkeys(found))


def __getattr__(name: str) -> Any:
    """`strands_durable.runner.context.RunOptions`, the path README documented, for one release."""
    if name == "RunOptions":
        from strands_durable.deprecation import moved

        return moved(__name__, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
