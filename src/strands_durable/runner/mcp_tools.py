"""MCP server tools (`tools.mcp`) through the Strands SDK's `MCPClient`: stdio servers are started on first use
and stopped when the run ends, HTTP servers are connected by URL. Their tools are ordinary Strands tools in the
durable tool path (each call committed, a committed one replayed).

Idempotency comes from the MCP tool annotations: a tool that says `readOnlyHint` or `idempotentHint` is re-run
after a crash like any tool; one whose annotations say neither (e.g. `destructiveHint`) is answered "outcome
unknown" instead; a tool without annotations keeps the default (re-run). A server's `x-idempotent` overrides.
Under an offline model a stdio server runs in the session's scratch directory (its "." is the scratch).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from strands_durable.agent.durable import CALL_IDEMPOTENCY_ATTRIBUTE
from strands_durable.errors import WorkflowFailed


def annotated_idempotent(mcp_tool: Any) -> bool:
    """Whether an MCP tool may be re-run after a crash hid its outcome, from its annotations."""
    annotations = getattr(mcp_tool, "annotations", None)
    if annotations is None:
        return True

    def hint(snake: str, camel: str) -> bool:  # mcp 2 names them in snake case, mcp 1 in camel case
        return bool(getattr(annotations, snake, None) or getattr(annotations, camel, None))

    return hint("read_only_hint", "readOnlyHint") or hint("idempotent_hint", "idempotentHint")


class McpServers:
    """The spec's MCP servers for one run: each connected on first use, all stopped by `close()`."""

    def __init__(self, spec: Any, *, workdir: Path | None = None, startup_timeout_s: int = 30) -> None:
        self.spec = spec
        self.workdir = workdir
        self.startup_timeout_s = startup_timeout_s
        self._clients: dict[str, Any] = {}
        self._tools: dict[str, list[Any]] = {}
        self._lock = threading.Lock()  # concurrent units may ask for the same server

    def tools(self, server_id: str) -> list[Any]:
        """The tools of one server (starting it the first time)."""
        with self._lock:
            if server_id not in self._tools:
                config = next(m for m in self.spec.tools.mcp if m.id == server_id)
                client = self._client(config)
                try:
                    client.start()
                    listed = list(client.list_tools_sync())
                except Exception as exc:
                    self._stop(client)
                    raise WorkflowFailed(f"MCP server '{server_id}' (tools.mcp) did not start: {exc}") from exc
                self._clients[server_id] = client
                for tool in listed:
                    idempotent = config.idempotent
                    if idempotent is None:
                        idempotent = annotated_idempotent(getattr(tool, "mcp_tool", None))
                    setattr(tool, CALL_IDEMPOTENCY_ATTRIBUTE, lambda _input, value=idempotent: value)
                self._tools[server_id] = listed
            return self._tools[server_id]

    def _client(self, config: Any) -> Any:
        from strands.tools.mcp import MCPClient

        if getattr(config, "url", None):
            return MCPClient(
                url=config.url, headers=dict(config.headers) or None, startup_timeout=self.startup_timeout_s
            )
        from mcp import StdioServerParameters, stdio_client

        parameters = StdioServerParameters(
            command=config.command, args=list(config.args), env=dict(config.env) or None, cwd=self.workdir
        )
        return MCPClient(lambda: stdio_client(parameters), startup_timeout=self.startup_timeout_s)

    def close(self) -> None:
        """Stop every server this run started (stdio servers end with their process)."""
        with self._lock:
            clients, self._clients, self._tools = list(self._clients.values()), {}, {}
        for client in clients:
            self._stop(client)

    @staticmethod
    def _stop(client: Any) -> None:
        try:
            client.stop(None, None, None)
        except Exception:  # a server that already died: nothing left to stop
            return
