"""`DurableSessionManager` on a `strands.multiagent.Graph`: each node's agent journaled like a single agent.

The SDK refuses a session manager on a node's own agent, so the graph-level manager instruments every node agent
itself (its conversation is `node.<node id>`). The graph resets a node's messages and state (on a revisit, and
when its state is restored), so a node agent is restored from the journal at each of its invocations, not once.
One lease is held for the whole graph invocation (its nodes may run concurrently); after each node the graph's
own serialized state is committed, so a resumed graph continues with the nodes that had not completed, and an
interrupted node finishes inside its conversation (its pending invocation, as for a single agent).
"""

from __future__ import annotations

from typing import Any

from strands_durable.errors import Unsupported
from strands_durable.store import layout

GRAPH_STATE_KEY = "graph"


def node_key(node_id: str) -> str:
    key = f"node.{node_id}"
    if not layout.is_named_session_id(key):
        raise Unsupported(f"graph node id {node_id!r} cannot name a stored conversation ({layout.NAMED_ID_RULE})")
    return key


def check_graph(source: Any) -> None:
    from strands import Agent
    from strands.multiagent.graph import Graph

    if not isinstance(source, Graph):
        raise Unsupported(f"DurableSessionManager on a {type(source).__name__} is not supported yet (a Graph is)")
    if source.reset_on_revisit:
        raise Unsupported("DurableSessionManager on a Graph with reset_on_revisit=True is not supported yet")
    for node_id, node in source.nodes.items():
        if not isinstance(node.executor, Agent):
            raise Unsupported(
                f"graph node {node_id!r} runs a {type(node.executor).__name__}; DurableSessionManager journals "
                "only Agent nodes"
            )
