"""The seven pattern configs of strands-cli v0 (chain, workflow, parallel, routing, evaluator_optimizer,
orchestrator_workers, graph), their steps, tasks and nodes, and human-in-the-loop (HITL) pause points."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag, model_validator

from strands_durable.spec.fields import AgentName, Condition, Identifier, NonEmpty, SpecModel, Template

PATTERN_TYPES = (
    "chain",
    "workflow",
    "parallel",
    "routing",
    "evaluator_optimizer",
    "orchestrator_workers",
    "graph",
)

ScalarValue = str | int | float | bool


class HitlFields(SpecModel):
    """A pause for a human: shows `prompt` and `context_display`; `default` answers non-interactive runs."""

    type: Literal["hitl"]
    prompt: Template
    context_display: Template | None = None
    default: str | None = None
    timeout_seconds: int | None = Field(default=None, ge=0)


class HitlStep(HitlFields):
    pass


class AgentStep(SpecModel):
    agent: AgentName
    input: Template | None = None
    vars: dict[str, ScalarValue] | None = None
    tool_overrides: list[str] | None = None


def _hitl_or(other: str):
    def kind(value: Any) -> str | None:
        if isinstance(value, dict):
            return "<hitl>" if "type" in value else other
        if isinstance(value, SpecModel):
            return "<hitl>" if isinstance(value, HitlFields) else other
        return None

    return kind


def _either(agent_model: type, hitl_model: type, what: str) -> Any:
    return Annotated[
        Annotated[agent_model, Tag("<agent>")] | Annotated[hitl_model, Tag("<hitl>")],
        Discriminator(
            _hitl_or("<agent>"),
            custom_error_type="invalid_unit",
            custom_error_message=f"expected a mapping: an {what} with `agent`, or `type: hitl` with `prompt`",
        ),
    ]


Step = _either(AgentStep, HitlStep, "agent step")


class ChainConfig(SpecModel):
    steps: list[Step] = Field(min_length=1)


class AgentTask(SpecModel):
    id: Identifier
    agent: AgentName
    input: Template | None = None
    description: str | None = None
    deps: list[Identifier] = Field(default_factory=list)


class HitlTask(HitlFields):
    id: Identifier
    deps: list[Identifier] = Field(default_factory=list)


Task = _either(AgentTask, HitlTask, "agent task")


class WorkflowConfig(SpecModel):
    tasks: list[Task] = Field(min_length=1)


class Branch(SpecModel):
    id: Identifier
    steps: list[Step] = Field(min_length=1)


class ParallelConfig(SpecModel):
    branches: list[Branch] = Field(min_length=2)
    reduce: Step | None = None


class Router(SpecModel):
    agent: AgentName
    input: Template | None = None
    max_retries: int = Field(default=2, ge=0)
    review_router: HitlStep | None = None


class Route(SpecModel):
    then: list[Step] = Field(min_length=1)


class RoutingConfig(SpecModel):
    router: Router
    routes: dict[Identifier, Route] = Field(min_length=1)


class Evaluator(SpecModel):
    agent: AgentName
    input: Template | None = None


class Accept(SpecModel):
    min_score: int = Field(ge=0, le=100)
    max_iters: int = Field(default=3, ge=1)


class EvaluatorOptimizerConfig(SpecModel):
    producer: AgentName
    evaluator: Evaluator
    accept: Accept
    revise_prompt: Template | None = None
    review_gate: HitlStep | None = None


class Limits(SpecModel):
    max_workers: int | None = Field(default=None, ge=1)
    max_rounds: int | None = Field(default=None, ge=1)


class Orchestrator(SpecModel):
    agent: AgentName
    limits: Limits = Field(default_factory=Limits)


class WorkerTemplate(SpecModel):
    agent: AgentName
    tools: list[NonEmpty] | None = None


class OrchestratorWorkersConfig(SpecModel):
    orchestrator: Orchestrator
    worker_template: WorkerTemplate
    reduce: Step | None = None
    writeup: Step | None = None
    decomposition_review: HitlStep | None = None
    reduce_review: HitlStep | None = None


class AgentNode(SpecModel):
    agent: AgentName
    input: Template | None = None


class HitlNode(HitlFields):
    pass


Node = _either(AgentNode, HitlNode, "agent node")


class Choice(SpecModel):
    when: Condition
    to: Identifier


class Edge(SpecModel):
    """`from` one node `to` a list of nodes, or to the first `choose` whose `when` holds."""

    source: Identifier = Field(alias="from")
    to: list[Identifier] | None = Field(default=None, min_length=1)
    choose: list[Choice] | None = Field(default=None, min_length=1)

    @model_validator(mode="after")
    def _one_target_kind(self) -> Edge:
        if (self.to is None) == (self.choose is None):
            raise ValueError("an edge needs exactly one of `to` (a list of nodes) or `choose`")
        return self

    @property
    def targets(self) -> list[str]:
        """Every node this edge may lead to."""
        return list(self.to) if self.to is not None else [choice.to for choice in self.choose or []]


class GraphConfig(SpecModel):
    nodes: dict[Identifier, Node] = Field(min_length=1)
    edges: list[Edge] = Field(default_factory=list)
    max_iterations: int = Field(default=10, ge=1)


class ChainPattern(SpecModel):
    type: Literal["chain"]
    config: ChainConfig


class WorkflowPattern(SpecModel):
    type: Literal["workflow"]
    config: WorkflowConfig


class ParallelPattern(SpecModel):
    type: Literal["parallel"]
    config: ParallelConfig


class RoutingPattern(SpecModel):
    type: Literal["routing"]
    config: RoutingConfig


class EvaluatorOptimizerPattern(SpecModel):
    type: Literal["evaluator_optimizer"]
    config: EvaluatorOptimizerConfig


class OrchestratorWorkersPattern(SpecModel):
    type: Literal["orchestrator_workers"]
    config: OrchestratorWorkersConfig


class GraphPattern(SpecModel):
    type: Literal["graph"]
    config: GraphConfig


def _pattern_type(value: Any) -> str | None:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return f"<{kind}>" if kind in PATTERN_TYPES else None


Pattern = Annotated[
    Annotated[ChainPattern, Tag("<chain>")]
    | Annotated[WorkflowPattern, Tag("<workflow>")]
    | Annotated[ParallelPattern, Tag("<parallel>")]
    | Annotated[RoutingPattern, Tag("<routing>")]
    | Annotated[EvaluatorOptimizerPattern, Tag("<evaluator_optimizer>")]
    | Annotated[OrchestratorWorkersPattern, Tag("<orchestrator_workers>")]
    | Annotated[GraphPattern, Tag("<graph>")],
    Discriminator(
        _pattern_type,
        custom_error_type="invalid_pattern",
        custom_error_message="`type` must be one of: " + ", ".join(PATTERN_TYPES),
    ),
]

__all__ = [
    "PATTERN_TYPES",
    "Accept",
    "AgentNode",
    "AgentStep",
    "AgentTask",
    "Branch",
    "ChainConfig",
    "ChainPattern",
    "Choice",
    "Edge",
    "EvaluatorOptimizerConfig",
    "EvaluatorOptimizerPattern",
    "GraphConfig",
    "GraphPattern",
    "HitlFields",
    "HitlNode",
    "HitlStep",
    "HitlTask",
    "Limits",
    "Node",
    "Orchestrator",
    "OrchestratorWorkersConfig",
    "OrchestratorWorkersPattern",
    "ParallelConfig",
    "ParallelPattern",
    "Pattern",
    "Route",
    "Router",
    "RoutingConfig",
    "RoutingPattern",
    "Step",
    "Task",
    "WorkerTemplate",
    "WorkflowConfig",
    "WorkflowPattern",
]
