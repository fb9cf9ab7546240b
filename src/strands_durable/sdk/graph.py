"""`DurableSessionManager` on a `strands.multiagent.Graph`: each node's agent journaled like a single agent.

The SDK refuses a session manager on a node's own agent, so the graph-level manager instruments every node agent
itself (its conversation is `node.<node id>`). The graph resets a node's messages and state (on a revisit, and
when its state is restored), so a node agent is restored from the journal at each of its invocations, not once.
One lease is held for the whole graph invocation (its nodes may run concurrently); after each node the graph's
own serialized state is committed, so a resumed graph continues with the nodes that had not completed, and an
interrupted node finishes inside its conversation (its pending invocation, as for a single agent).
"""

from __future__ import annotations

import copy
from typing import Any

from strands_durable.errors import Unsupported
from strands_durable.store.ids import ID_RULE, is_session_id

GRAPH_STATE_KEY = "graph"


def node_key(node_id: str) -> str:
    key = f"node.{node_id}"
    if not is_session_id(key):
        raise Unsupported(f"graph node id {node_id!r} cannot name a stored conversation (use {ID_RULE})")
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


class GraphSupport:
    """The Graph part of `DurableSessionManager` (a mixin: it uses the manager's store, slots and `initialize`)."""

    _node_keys: dict[int, str]
    _shared: Any
    _slots: dict[str, Any]

    def initialize_multi_agent(self, source: Any, **kwargs: Any) -> None:
        """Instrument a Graph's node agents (each journaled as `node.<id>`) and restore the graph's progress."""
        check_graph(source)
        for node_id, node in source.nodes.items():
            agent = node.executor
            self._node_keys[id(agent)] = node_key(node_id)
            agent.hooks.add_hook(self)
            self.initialize(agent)
        state = self._load()
        saved = state.pattern_state.get(GRAPH_STATE_KEY) if state is not None else None
        if saved:
            source.deserialize_state(copy.deepcopy(saved))

    def sync_multi_agent(self, source: Any, **kwargs: Any) -> None:
        """Commit the graph's progress (after each node, and at the end of its invocation)."""
        session = self._shared
        if session is not None:
            event = {"type": "pattern_state", "state": {GRAPH_STATE_KEY: source.serialize_state()}}
            session.commit([event], path="graph/sync")

    def _before_graph(self, event: Any) -> None:
        self._shared = self._open()
        self._shared.commit([{"type": "status", "status": "running"}], path="graph/status", durable=False)

    def _after_graph(self, event: Any) -> None:
        session, self._shared = self._shared, None
        if session is None:
            return
        failed = getattr(event.source.state.status, "value", "") == "executing"  # a crash left it mid-way
        try:
            if not failed:
                self._shared = session
                self.sync_multi_agent(event.source)
                session.commit([{"type": "status", "status": "idle"}], path="graph/end")
        finally:
            self._shared = None
            if failed:
                session.abandon()
            else:
                session.close()
        for slot in self._slots.values():
            slot.seen_seq = session.state.seq
