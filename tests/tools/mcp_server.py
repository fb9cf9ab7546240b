"""A small MCP server (the `mcp` package) for the MCP tool tests, over stdio or streamable HTTP on loopback.

Its tools record each execution (an fsynced line in $MCP_TEST_EFFECTS) so the tests count side effects;
a call whose argument starts "hang" writes $MCP_TEST_EFFECTS.hang and blocks the first time (a run killed
mid-call); the server records "started <pid>" when it starts.

Usage: python tests/tools/mcp_server.py stdio | http PORT
"""

from __future__ import annotations

import os
import sys
import time

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("durable-test")


def _hang_once() -> None:
    """Block for ever the first time (a run killed mid-call); later calls return at once."""
    marker = os.environ["MCP_TEST_EFFECTS"] + ".hang"
    if not os.path.exists(marker):
        open(marker, "w").close()
        time.sleep(600)


def _record(line: str) -> None:
    with open(os.environ["MCP_TEST_EFFECTS"], "a", encoding="utf-8") as log:
        log.write(line + "\n")
        log.flush()
        os.fsync(log.fileno())


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def lookup(key: str) -> str:
    """Look a key up (read-only)."""
    _record(f"lookup {key}")
    if key.startswith("hang"):
        _hang_once()
    return f"value-of-{key}"


@server.tool(annotations=ToolAnnotations(readOnlyHint=False, idempotentHint=False, destructiveHint=True))
def send_message(text: str) -> str:
    """Send a message (a side effect that must not happen twice)."""
    _record(f"send {text}")
    if text.startswith("hang"):
        _hang_once()
    return f"sent {text}"


if __name__ == "__main__":
    _record(f"started {os.getpid()}")
    if sys.argv[1] == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
