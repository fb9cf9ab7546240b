"""Pydantic models of a strands-cli v0 spec file: the top level, runtime, inputs, agents, tools and the rest.

The models accept exactly the v0 format (unknown keys are errors) plus one extension of ours: a Python tool
entry in mapping form may say `x-idempotent: false` (see `PythonToolEntry`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    Discriminator,
    Field,
    PrivateAttr,
    StrictInt,
    StrictStr,
    Tag,
    field_validator,
)

from strands_durable.spec.document import Document
from strands_durable.spec.fields import Identifier, NonEmpty, SpecModel, Template
from strands_durable.spec.patterns import Pattern, ScalarValue

# ---------------------------------------------------------------------------------------------- runtime


class Budgets(SpecModel):
    max_steps: int | None = Field(default=None, ge=1)
    max_tokens: int | None = Field(default=None, ge=1)
    max_duration_s: int | float | None = Field(default=None, gt=0)
    warn_threshold: float = Field(default=0.8, ge=0.0, le=1.0)


class FailurePolicy(SpecModel):
    retries: int = Field(default=2, ge=0)
    backoff: Literal["constant", "exponential", "jittered"] = "exponential"
    wait_min: int | float | None = Field(default=None, ge=0)
    wait_max: int | float | None = Field(default=None, ge=0)


class Runtime(SpecModel):
    provider: NonEmpty
    model_id: NonEmpty | None = None
    region: NonEmpty | None = None
    host: NonEmpty | None = None
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    top_p: float | None = Field(default=None, ge=0.0, le=1.0)
    max_tokens: int | None = Field(default=None, ge=1)
    max_parallel: int = Field(default=5, ge=1)
    budgets: Budgets = Field(default_factory=Budgets)
    failure_policy: FailurePolicy = Field(default_factory=FailurePolicy)


# ----------------------------------------------------------------------------------------------- inputs

InputType = Literal["string", "number", "integer", "boolean", "array", "object"]


class InputVar(SpecModel):
    type: InputType = "string"
    description: str | None = None
    default: Any = None
    enum: list[Any] | None = Field(default=None, min_length=1)


def _shorthand_input(value: Any) -> Any:
    """`topic: string` is shorthand for `topic: {type: string}`."""
    return {"type": value} if isinstance(value, str) else value


class Inputs(SpecModel):
    required: dict[str, InputVar] = Field(default_factory=dict)
    optional: dict[str, InputVar] = Field(default_factory=dict)
    values: dict[str, ScalarValue] = Field(default_factory=dict)

    @field_validator("required", "optional", mode="before")
    @classmethod
    def _expand_shorthand(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {name: _shorthand_input(spec) for name, spec in value.items()}
        return value

    def declared(self) -> dict[str, InputVar]:
        """Every declared input, required and optional."""
        return {**self.optional, **self.required}


# ----------------------------------------------------------------------------------------------- agents


class Inference(SpecModel):
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    top_p: float | None = Field(default=None, ge=0.0, le=1.0)
    max_tokens: int | None = Field(default=None, ge=1)


class Agent(SpecModel):
    """An agent after `$ref` resolution. `input_schema`/`output_schema` are a path or an inline JSON schema;
    paths inherited through `$ref` are made absolute (they were relative to the referenced file)."""

    prompt: Template
    tools: list[NonEmpty] | None = None
    provider: NonEmpty | None = None
    model_id: NonEmpty | None = None
    inference: Inference | None = None
    input_schema: str | dict[str, Any] | None = None
    output_schema: str | dict[str, Any] | None = None


# ------------------------------------------------------------------------------------------------ tools

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_TOOL_NAME = re.compile(rf"^{_NAME}(\.{_NAME})*(:{_NAME})?$")


def _check_tool_name(value: str) -> str:
    if not _TOOL_NAME.fullmatch(value):
        raise ValueError(
            f"'{value}' is not a tool name: use a short name (calculator), 'module:function' or "
            "'package.module.function'"
        )
    return value


ToolName = Annotated[str, AfterValidator(_check_tool_name)]


class PythonToolEntry(SpecModel):
    """Mapping form of a Python tool. `x-idempotent: false` (our extension) marks a tool with a side effect
    that must not run twice: after a crash between its start and its committed result, resume answers it
    with a synthesized "outcome unknown" error instead of running it again."""

    callable: ToolName
    idempotent: bool = Field(default=True, alias="x-idempotent")

    @property
    def name(self) -> str:
        return self.callable


def _python_tool_kind(value: Any) -> str | None:
    if isinstance(value, str):
        return "<name>"
    if isinstance(value, dict | PythonToolEntry):
        return "<entry>"
    return None


PythonTool = Annotated[
    Annotated[ToolName, Tag("<name>")] | Annotated[PythonToolEntry, Tag("<entry>")],
    Discriminator(
        _python_tool_kind,
        custom_error_type="invalid_tool",
        custom_error_message="expected a tool name or a mapping with `callable`",
    ),
]


class HttpExample(SpecModel):
    description: str | None = None
    method: str | None = None
    path: str | None = None
    json_data: dict[str, Any] | None = None


class HttpEndpoint(SpecModel):
    path: str
    description: str
    method: str | None = None


class HttpExecutor(SpecModel):
    id: Identifier
    base_url: NonEmpty
    headers: dict[str, str] = Field(default_factory=dict)
    timeout: int | None = Field(default=None, ge=1)  # seconds, as strands-cli (default 30)
    timeout_ms: int | None = Field(default=None, ge=1)
    idempotent: bool | None = Field(default=None, alias="x-idempotent")  # None: by method (POST, PATCH are not)
    description: str | None = None
    examples: list[HttpExample] = Field(default_factory=list)
    common_endpoints: list[HttpEndpoint] = Field(default_factory=list)
    response_format: str | None = None
    authentication_info: str | None = None


class McpStdioServer(SpecModel):
    id: Identifier
    command: NonEmpty
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    idempotent: bool | None = Field(default=None, alias="x-idempotent")  # None: from the tools' annotations


class McpHttpServer(SpecModel):
    id: Identifier
    url: NonEmpty
    headers: dict[str, str] = Field(default_factory=dict)
    idempotent: bool | None = Field(default=None, alias="x-idempotent")


def _mcp_kind(value: Any) -> str | None:
    if isinstance(value, dict):
        return "<http>" if "url" in value else "<stdio>"
    if isinstance(value, McpHttpServer | McpStdioServer):
        return "<http>" if isinstance(value, McpHttpServer) else "<stdio>"
    return None


McpServer = Annotated[
    Annotated[McpStdioServer, Tag("<stdio>")] | Annotated[McpHttpServer, Tag("<http>")],
    Discriminator(
        _mcp_kind,
        custom_error_type="invalid_mcp",
        custom_error_message="expected a mapping with `id` and `command` (stdio) or `url` (http)",
    ),
]


class Tools(SpecModel):
    python: list[PythonTool] = Field(default_factory=list)
    http_executors: list[HttpExecutor] = Field(default_factory=list)
    mcp: list[McpServer] = Field(default_factory=list)

    def python_entries(self) -> list[PythonToolEntry]:
        """Every Python tool in mapping form (short strings become entries with the defaults)."""
        return [
            PythonToolEntry.model_validate({"callable": item}) if isinstance(item, str) else item
            for item in self.python
        ]


# --------------------------------------------------------------------------------------- other sections


class Secret(SpecModel):
    key: Identifier
    source: Literal["env", "secrets_manager", "ssm", "file"]
    name: str | None = None
    path: str | None = None


class Env(SpecModel):
    secrets: list[Secret] = Field(default_factory=list)
    mounts: dict[str, str] = Field(default_factory=dict)


class Otel(SpecModel):
    endpoint: NonEmpty | None = None
    service_name: str | None = None
    sample_ratio: float | None = Field(default=None, ge=0.0, le=1.0)


class Redact(SpecModel):
    tool_inputs: bool = True
    tool_outputs: bool = False


class Telemetry(SpecModel):
    otel: Otel | None = None
    redact: Redact | None = None


class Compaction(SpecModel):
    enabled: bool = True
    when_tokens_over: int | None = Field(default=None, ge=1000)
    summary_ratio: float = Field(default=0.35, ge=0.0, le=1.0)
    preserve_recent_messages: int = Field(default=12, ge=1)
    summarization_model: str | None = None


class Notes(SpecModel):
    file: NonEmpty
    include_last: int = Field(default=12, ge=1)
    format: Literal["markdown", "json"] = "markdown"


class Retrieval(SpecModel):
    jit_tools: list[Identifier] = Field(default_factory=list)
    mcp_servers: list[Identifier] = Field(default_factory=list)


class ContextPolicy(SpecModel):
    compaction: Compaction | None = None
    notes: Notes | None = None
    retrieval: Retrieval | None = None


class Skill(SpecModel):
    id: Identifier
    path: NonEmpty
    description: str | None = None
    preload_metadata: bool = False


class Artifact(SpecModel):
    """`path` (relative, inside `--out`) and `source` (written `from:`), both templates."""

    path: Annotated[Template, Field(min_length=1)]
    source: Template = Field(alias="from")


class Outputs(SpecModel):
    artifacts: list[Artifact] = Field(default_factory=list)


class Guardrails(SpecModel):
    deny_network: bool | None = None
    pii_redaction: bool | None = None
    allow_tools: list[str] | None = None


class Security(SpecModel):
    guardrails: Guardrails | None = None


# ------------------------------------------------------------------------------------------------- spec


class Spec(SpecModel):
    """A loaded, validated spec. `agents` holds the resolved agents (every `$ref` replaced by its agent).

    `source_path`, `content_hash` and `source_bytes` are set by the loader (they are not spec keys).
    """

    version: StrictInt | StrictStr
    name: NonEmpty
    description: str | None = None
    tags: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    runtime: Runtime
    inputs: Inputs = Field(default_factory=Inputs)
    env: Env | None = None
    telemetry: Telemetry | None = None
    context_policy: ContextPolicy | None = None
    skills: list[Skill] = Field(default_factory=list)
    tools: Tools = Field(default_factory=Tools)
    agents: dict[Identifier, Agent] = Field(min_length=1)
    pattern: Pattern
    outputs: Outputs = Field(default_factory=Outputs)
    security: Security | None = None

    _source_path: Path | None = PrivateAttr(default=None)
    _content_hash: str | None = PrivateAttr(default=None)
    _source_bytes: bytes | None = PrivateAttr(default=None)
    _document: Document | None = PrivateAttr(default=None)
    _agent_files: dict[str, Path] = PrivateAttr(default_factory=dict)
    _warnings: list[str] = PrivateAttr(default_factory=list)

    @property
    def source_path(self) -> Path | None:
        """Absolute path of the spec file (None for a spec loaded from text without a path)."""
        return self._source_path

    @property
    def content_hash(self) -> str:
        """sha256 (hex) of the file's raw bytes, as `spec_hash` computes it."""
        return self._content_hash or ""

    @property
    def source_bytes(self) -> bytes:
        """The exact bytes that were loaded and hashed (for a snapshot that matches `content_hash`)."""
        return self._source_bytes or b""

    @property
    def redacts_pii(self) -> bool:
        """`security.guardrails.pii_redaction`: PII is redacted before messages, tool results and artifacts are
        stored or written, and from exported traces."""
        guardrails = self.security.guardrails if self.security is not None else None
        return bool(guardrails is not None and guardrails.pii_redaction)

    @property
    def warnings(self) -> list[str]:
        """One line per defect on a path the run may never take (see references.CONDITIONAL_TEMPLATES)."""
        return list(self._warnings)

    @property
    def agent_files(self) -> dict[str, Path]:
        """Agent id -> absolute path of the file its `$ref` named (only agents defined by `$ref`)."""
        return dict(self._agent_files)

    def line_of(self, key_path: tuple[str | int, ...]) -> int | None:
        """The line in the spec file where `key_path` (or its nearest ancestor) starts, when known."""
        return self._document.line_of(key_path) if self._document is not None else None


__all__ = [
    "Agent",
    "Artifact",
    "Budgets",
    "Compaction",
    "ContextPolicy",
    "Env",
    "FailurePolicy",
    "HttpExecutor",
    "Inference",
    "InputType",
    "InputVar",
    "Inputs",
    "McpHttpServer",
    "McpServer",
    "McpStdioServer",
    "Notes",
    "Outputs",
    "PythonTool",
    "PythonToolEntry",
    "Retrieval",
    "Runtime",
    "Secret",
    "Security",
    "Skill",
    "Spec",
    "Telemetry",
    "Tools",
]
