"""`DurableSessionManager` on a `strands.multiagent.Graph` or `Swarm`: each node's agent journaled like one agent.

The SDK refuses a session manager on a node's own agent, so the multi-agent manager instruments every node agent
itself. A node's conversation is `node.<id>`; the SDK starts a node afresh on some visits (every Swarm node run,
a Graph revisit with `reset_on_revisit`), and each such visit gets a conversation of its own (`node.<id>.v<n>`),
so a resumed visit restores exactly what that visit held. One lease is held for the whole multi-agent invocation.
After each node the orchestrator's own serialized state is committed together with the node invocation it
consumed (`acked`), so a resumed run continues with the node that was running, inside its conversation (its
pending invocation, as for a single agent); a node whose invocation ended but was never recorded by the
orchestrator is finished again from the journal (no model call, no tool run). Swarm handoffs, which only change
the swarm's memory, are applied again from their committed tool calls. A call that raised (Ctrl+C inside a node)
is left pending as a crash leaves it, whatever status the SDK reports, and the same object called again continues
it as a new one would.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import re
from typing import Any

from strands_durable.errors import Unsupported, UsageError
from strands_durable.sdk import pending as invocations
from strands_durable.sdk import tokens
from strands_durable.store import events
from strands_durable.store.ids import ID_RULE, is_session_id
from strands_durable.store.state import Conversation, SessionState

ACKED_KEY = "acked"  # pattern_state: conversation key -> the node invocation the orchestrator recorded
BEFORE_KEY = "swarm.before"  # pattern_state: the Swarm's state before its latest node ran
NEXT_KEY = "graph.next"  # pattern_state: the nodes a Graph runs next, as it computes them (revisits included)
HANDOFF_TOOL = "handoff_to_agent"  # the tool Swarm injects into its nodes
logger = logging.getLogger("strands_durable.sdk")
_VISIT = re.compile(r"\.v\d+$")


def node_key(node_id: str) -> str:
    key = f"node.{node_id}"
    if not is_session_id(key):
        raise Unsupported(f"node id {node_id!r} cannot name a stored conversation (use {ID_RULE})")
    return key


def visit_key(base: str, visit: int) -> str:
    return base if visit == 0 else f"{base}.v{visit}"


def latest_visit(state: SessionState | None, base: str) -> str:
    """The conversation key of the node's latest visit in the journal (its first visit's when there is none)."""
    visit = 0
    while state is not None and visit_key(base, visit + 1) in state.conversations:
        visit += 1
    return visit_key(base, visit)


def check_source(source: Any) -> str:
    """The orchestrator's kind ("graph" or "swarm"); anything else, or a node we cannot journal, is refused."""
    from strands import Agent
    from strands.multiagent.graph import Graph
    from strands.multiagent.swarm import Swarm

    if not isinstance(source, (Graph, Swarm)):
        raise Unsupported(f"DurableSessionManager on a {type(source).__name__} is not supported (Graph and Swarm are)")
    for node_id, node in source.nodes.items():
        if not isinstance(node.executor, Agent):
            raise Unsupported(
                f"node {node_id!r} runs a {type(node.executor).__name__}; DurableSessionManager journals "
                "only Agent nodes"
            )
        if _VISIT.search(node_id) and _VISIT.sub("", node_id) in source.nodes:
            raise Unsupported(f"node id {node_id!r} would share its stored conversation with a visit of another node")
    return "graph" if isinstance(source, Graph) else "swarm"


class MultiAgentSupport:
    """The Graph and Swarm part of `DurableSessionManager` (a mixin: it uses the manager's store and slots)."""

    _node_keys: dict[int, str]
    _shared: Any
    _slots: dict[str, Any]
    _initial: dict[str, list[dict[str, Any]]]
    _acked: dict[str, str]
    _source: Any
    _before: dict[str, Any] | None = None  # the Swarm's state as of before its latest node
    _graph_batch: list[Any]  # the Graph's nodes that ended in the batch under way
    _latest: dict[str, Any] | None = None  # the Swarm's state after its latest node
    _own_invocation: dict[str, Any]  # tokens.MULTIAGENT_KEY: the orchestrator's own invocation (token, end stored)
    _task: Any = None  # the task of the invocation starting (seen by the wrapped stream_async)
    _replaying: bool = False  # a Graph returning its last invocation's stored result
    _torn: list[str]  # the Graph's nodes that a BaseException tore down in the invocation under way
    _restored: bool = False  # the orchestrator's progress was restored from the journal for its next invocation

    def initialize_multi_agent(self, source: Any, **kwargs: Any) -> None:
        """Instrument the node agents and restore the orchestrator's progress and each node's latest visit."""
        kind = check_source(source)
        self._source = source
        self._graph_batch = []
        self._torn = []
        self._see_tasks(source)
        for node_id, node in source.nodes.items():
            agent = node.executor
            base = node_key(node_id)
            self._node_keys[id(agent)] = base
            self._initial[base] = copy.deepcopy(agent.messages)
            agent.hooks.add_hook(self)
            self.initialize(agent)  # type: ignore[attr-defined]
        self._continue_pending(source, kind, self._load())  # type: ignore[attr-defined]
        self._restored = True  # the next invocation starts from what was just restored

    def _continue_pending(self, source: Any, kind: str, state: SessionState | None) -> None:
        """Restore the orchestrator's progress and each node's latest visit from the journal, as a new process does:
        a multi-agent invocation left mid-way (the session still `running`, or `paused` by Ctrl+C at exit)
        continues with the node that was running."""
        saved = state.pattern_state if state is not None else {}
        self._acked = dict(saved.get(ACKED_KEY) or {})
        self._own_invocation = dict(saved.get(tokens.MULTIAGENT_KEY) or {})
        payload = copy.deepcopy(saved.get(kind))
        self._before = copy.deepcopy(saved.get(BEFORE_KEY))
        self._latest = copy.deepcopy(payload)
        running = left_mid_way(state)
        if payload and running and kind == "graph":
            _forget_graph_run(source)  # a Graph called before (its call raised) restores as a new one does
        if payload and running and kind == "graph" and NEXT_KEY in saved:
            # mid-way (or every node ended but the invocation's end was not recorded): the Graph continues with
            # the nodes it would have run next, revisits of completed nodes included (its own resume state
            # cannot name a completed node), or finishes with the recorded results
            resume_graph(source, payload, saved[NEXT_KEY])
        elif payload and running and not payload["next_nodes_to_execute"]:
            # every node ended but the invocation's end was not recorded; the SDK's restore would start the task
            # over: a Graph finishes with the recorded results, a Swarm runs its last node again from the journal
            if kind == "graph":
                source._from_dict(payload)
                source._resume_from_session = True
            else:
                last = payload["node_history"][-1] if payload["node_history"] else None
                if last is not None:
                    self._acked.pop(self._slots[node_key(last)].key, None)
                self._latest = self._before
                if self._before:
                    source.deserialize_state(copy.deepcopy(self._before))
        elif payload:
            source.deserialize_state(payload)
        for node in source.nodes.values():
            base = self._node_keys[id(node.executor)]
            slot = self._slots[base]
            if slot.session is not None and slot.session is not self._shared:  # left open by a call that raised
                slot.session = slot.hooks = slot.serve = None  # (its session already released)
            slot.key = latest_visit(state, base)
            conv = state.conversations.get(slot.key) if state is not None else None
            if conv is not None:  # the orchestrator's restore resets its nodes: give them back what they held
                self._restore(slot, state, conv)  # type: ignore[attr-defined]
            elif node.executor.messages != self._initial[base]:  # never stored: as the node agent was built
                node.executor.messages = copy.deepcopy(self._initial[base])
                slot.unsaved = copy.deepcopy(self._initial[base])
                slot.known_messages = len(node.executor.messages)

    def sync_multi_agent(self, source: Any, node_id: str | None = None, **kwargs: Any) -> None:
        """Commit the orchestrator's progress with the node invocation it has just recorded (after each node, and
        at the end of the multi-agent invocation)."""
        session = self._shared
        if session is None:
            return
        if node_id is not None and node_id in source.nodes:
            if _left_running(source.nodes[node_id]):
                self._torn.append(node_id)  # ended by a BaseException (Ctrl+C, a cancellation), not by its agent
            key = self._slots[node_key(node_id)].key
            conv = session.state.conversations.get(key)
            if conv is not None and conv.units and conv.units[-1] in session.state.units:
                self._acked[key] = conv.units[-1]
        kind = "graph" if type(source).__name__ == "Graph" else "swarm"
        payload = source.serialize_state()
        new = {kind: payload, ACKED_KEY: dict(self._acked), tokens.MULTIAGENT_KEY: dict(self._own_invocation)}
        if kind == "swarm":
            if node_id is not None:
                self._before, self._latest = self._latest, payload
            new[BEFORE_KEY] = self._before
        else:
            new[NEXT_KEY] = self._graph_next(source, node_id, payload)
        session.commit([events.pattern_state(new)], path=f"{kind}/sync")

    def before_node(self, event: Any) -> None:
        """Run no further node of a Graph invocation one of whose nodes was torn down by a BaseException (Ctrl+C
        inside its tool). The call is raising; but on Python 3.11 the SDK's Graph can lose the cancellation that
        tears it down (`asyncio.wait_for` returns a result that arrived just before it was cancelled) and go on
        to the next nodes, which would then run without the torn node's result. The node is marked failed so
        that the Graph prunes its branch, and its task is cancelled before its agent starts: nothing is
        committed for it, and the invocation is continued from the journal when called again."""
        from strands.multiagent.base import Status

        source = event.source
        if not self._torn or type(source).__name__ != "Graph" or event.node_id not in source.nodes:
            return
        logger.warning(
            "session %s: node %s not started: node(s) %s of this invocation were interrupted",
            self.session_id,  # type: ignore[attr-defined]
            event.node_id,
            ", ".join(self._torn),
        )
        source.nodes[event.node_id].execution_status = Status.FAILED
        raise asyncio.CancelledError(f"node {event.node_id}: the graph invocation was interrupted")

    def node_invocation(self, slot: Any, state: SessionState, incoming: list[Any]) -> invocations.Pending | None:
        """Settle which conversation a node agent's invocation continues and what it must finish from the journal:
        its pending invocation; or its last one, ended but never recorded by the orchestrator, when the same
        input arrives again; else nothing (a new visit's conversation when the SDK started the node afresh)."""
        base = self._node_keys[id(slot.agent)]
        conv = state.conversations.get(slot.key)
        pending = invocations.pending_invocation(state, conv)
        if pending is None and conv is not None:
            last = invocations.last_invocation(conv)
            if (
                last is not None
                and incoming
                and self._acked.get(slot.key) != last.unit
                and invocations.same_prompt(incoming, conv.messages[last.start])
            ):
                pending = last
        if pending is not None:
            self._restore(slot, state, conv, end=pending.start)  # type: ignore[attr-defined]
            return pending
        if conv is not None and invocations.last_invocation(conv) is not None:
            if slot.agent.messages == self._initial[base]:  # the orchestrator reset the node: a new visit
                slot.key = visit_key(base, _visit_of(slot.key, base) + 1)
                slot.unsaved = copy.deepcopy(list(slot.agent.messages))
            else:
                interrupt = slot.agent._interrupt_state
                self._restore(slot, state, conv)  # type: ignore[attr-defined]
                if interrupt.activated:  # resumed from its interrupt: the human's responses are in this state
                    slot.agent._interrupt_state = interrupt
        return None

    def _graph_next(self, source: Any, node_id: str | None, payload: dict[str, Any]) -> list[str]:
        """The nodes the Graph runs next, recorded after each node: while other nodes of its batch still run, the
        Graph's own resume state (they are not completed); once the batch is over, the nodes the Graph finds
        newly ready after it (its own `_find_newly_ready_nodes`, which may name completed nodes: a cycle)."""
        from strands.multiagent.base import Status

        if node_id is None or node_id not in source.nodes:
            return list(payload["next_nodes_to_execute"])
        self._graph_batch.append(source.nodes[node_id])
        if any(node.execution_status == Status.EXECUTING for node in source.nodes.values()):
            return list(payload["next_nodes_to_execute"])
        batch, self._graph_batch = self._graph_batch, []
        return [node.node_id for node in source._find_newly_ready_nodes(batch)]

    def replay_handoffs(self, slot: Any, conv: Conversation, committed: list[dict[str, Any]]) -> None:
        """Apply again the Swarm handoffs of a node's committed tool calls (they change only the swarm's memory,
        and a committed call is replayed, not run)."""
        swarm = self._source
        if swarm is None or id(slot.agent) not in self._node_keys or not hasattr(swarm, "_handle_handoff"):
            return
        answered = set(conv.tool_results)
        for message in committed:
            answered.update(b["toolResult"]["toolUseId"] for b in message.get("content", ()) if "toolResult" in b)
        for message in committed:
            for use in invocations.tool_uses(message) if message.get("role") == "assistant" else []:
                target = swarm.nodes.get(use.get("input", {}).get("agent_name"))
                if use.get("name") == HANDOFF_TOOL and use["toolUseId"] in answered and target is not None:
                    arguments = use["input"]
                    swarm._handle_handoff(target, arguments.get("message", ""), arguments.get("context") or {})

    def _see_tasks(self, source: Any) -> None:
        """Know each invocation's task before it starts (the SDK's BeforeMultiAgentInvocationEvent does not carry it;
        every entry point, `__call__`, `invoke_async` and `stream_async`, goes through `stream_async`)."""
        if getattr(source, "_durable_sees_tasks", False):
            return
        stream = source.stream_async

        def stream_async(task: Any, invocation_state: dict[str, Any] | None = None, **kwargs: Any) -> Any:
            self._task = task
            return stream(task, invocation_state, **kwargs)

        source.stream_async = stream_async
        source._durable_sees_tasks = True

    async def _before_graph(self, event: Any) -> None:
        source = event.source
        resuming = getattr(source, "_resume_from_session", False)
        restored, self._restored = self._restored, False
        self._graph_batch = []
        self._torn = []
        self._shared = session = await self._open_async()  # type: ignore[attr-defined]
        try:
            if not resuming and not restored and left_mid_way(session.state):
                # an invocation left mid-way since this orchestrator was restored: its own call raised (Ctrl+C, a
                # KeyboardInterrupt inside a node) or another process crashed; the SDK would start the task over
                self._continue_pending(source, check_source(source), session.state)
                resuming = getattr(source, "_resume_from_session", False)
                if resuming:
                    logger.info("session %s: continuing the interrupted invocation", self.session_id)  # type: ignore[attr-defined]
            self._own_invocation = dict(session.state.pattern_state.get(tokens.MULTIAGENT_KEY) or {})
            token = tokens.token_of(event.invocation_state)
            saved = session.state.pattern_state
            if not resuming and self._returns_stored_result(source, saved, event.invocation_state):
                return
        except BaseException:
            self._shared = None
            session.abandon()  # refused before anything ran: released as it was found
            raise
        if not resuming:
            self._before = self._latest = None  # a new run of the task
            finished = list(self._own_invocation.get("finished_tokens") or ())
            self._own_invocation = {"token": token, "ended": False, "finished_tokens": finished}
        elif token is not None:
            self._own_invocation["token"] = token  # the pending run, finished under this token
        started = [
            events.status("running"),
            events.pattern_state_change(set={tokens.MULTIAGENT_KEY: dict(self._own_invocation)}),
        ]
        session.commit(started, path="multiagent/status", durable=False)

    def _returns_stored_result(self, source: Any, saved: dict[str, Any], invocation_state: Any) -> bool:
        """Set the orchestrator up to return its last invocation's stored result, running nothing, when that
        invocation's end is stored, nothing ran since, and this call is the same invocation: the same token, or
        (no token given) the same task; `durable_new_run` forces a new run. A token of an earlier finished
        invocation, whose result is no longer stored, is refused."""
        from strands.types.session import encode_bytes_values

        token = tokens.token_of(invocation_state)
        if tokens.forces_new_run(invocation_state):
            return False
        kind = "graph" if type(source).__name__ == "Graph" else "swarm"
        payload = saved.get(kind)
        last = self._own_invocation
        if payload is None or not last.get("ended"):
            same = False
        elif token is not None:
            same = token == last.get("token")
        else:
            same = encode_bytes_values(self._task) == payload.get("current_task")
        if not same:
            if token is not None and token in (last.get("finished_tokens") or ()):
                raise UsageError(
                    f"The {kind} invocation with idempotency token {token!r} finished earlier, but only the last "
                    f"invocation's result is stored (session {self.session_id}); give "  # type: ignore[attr-defined]
                    f'invocation_state["{tokens.NEW_RUN}"]=True to run it again'
                )
            return False
        if kind == "graph":
            resume_graph(source, copy.deepcopy(payload), [])  # nothing left to run: it returns the stored result
            self._replaying = True
        else:
            self._finish_last_node_again(source, payload, saved.get(BEFORE_KEY))
        logger.info("session %s: returning the stored result of the last %s invocation", self.session_id, kind)  # type: ignore[attr-defined]
        return True

    def _finish_last_node_again(self, source: Any, payload: dict[str, Any], before: dict[str, Any] | None) -> None:
        """A Swarm cannot be restored with nothing left to run: restore it as it was before its last node, whose
        invocation is then finished again from the journal (no model call, no tool run)."""
        last = payload["node_history"][-1] if payload["node_history"] else None
        if last is not None:
            self._acked.pop(self._slots[node_key(last)].key, None)
        self._before = copy.deepcopy(before)
        self._latest = copy.deepcopy(before)
        if before:
            source.deserialize_state(copy.deepcopy(before))
        self._shared.commit(  # type: ignore[union-attr]
            [events.status("running")], path="multiagent/status", durable=False
        )

    def _after_graph(self, event: Any) -> None:
        session, self._shared = self._shared, None
        if session is None:
            return
        if self._replaying:  # a Graph that returned its stored result: nothing ran, nothing to commit
            self._replaying = False
            session.abandon()
            return
        state = event.source.state
        status = getattr(state, "status", None) or getattr(state, "completion_status", None)
        failed = getattr(status, "value", "") == "executing"  # a crash left it mid-way
        unfinished = [] if failed else self._unfinished_nodes(event.source, session.state)
        if unfinished and getattr(status, "value", "") != "failed":
            # the SDK reports the invocation ended although a node never finished: a BaseException (Ctrl+C) inside
            # the node, which the SDK's Graph can swallow while its call raises. Left mid-way, as after a crash.
            logger.warning(
                "session %s: the %s reported %s while node(s) %s never finished (an exception such as "
                "KeyboardInterrupt inside them); its end is not stored, calling it again continues them",
                self.session_id,  # type: ignore[attr-defined]
                type(event.source).__name__,
                getattr(status, "value", status),
                ", ".join(unfinished),
            )
            failed = True
        try:
            if not failed:
                self._shared = session
                if getattr(status, "value", "") == "completed":  # the end is stored with the state below
                    self._own_invocation = _ended(self._own_invocation)
                self.sync_multi_agent(event.source)
                end = events.status("idle")
                if getattr(status, "value", "") == "interrupted":  # stopped for a human (a node's interrupt)
                    end = events.status("paused", "hitl")
                session.commit([end], path="multiagent/end")
        finally:
            self._shared = None
            if failed:
                session.abandon()
            else:
                session.close()
        for slot in self._slots.values():
            slot.seen_seq = session.state.seq

    def _unfinished_nodes(self, source: Any, state: SessionState) -> list[str]:
        """The nodes the SDK left running (EXECUTING or DISPATCHED) or whose agent's invocation raised and is still
        pending in the journal."""
        unfinished = []
        for node_id, node in source.nodes.items():
            slot = self._slots[node_key(node_id)]
            raised = slot.aborted and invocations.pending_invocation(state, state.conversations.get(slot.key))
            if _left_running(node) or node_id in self._torn or raised:
                unfinished.append(node_id)
        return unfinished


def left_mid_way(state: SessionState | None) -> bool:
    """Whether the session's last invocation never stored its end: `running` (a crash, or an exception such as
    KeyboardInterrupt inside it), or `paused` because Ctrl+C ended the script during it."""
    if state is None:
        return False
    return state.status == "running" or (state.status == "paused" and state.reason == "interrupted")


def _forget_graph_run(graph: Any) -> None:
    """Clear what a Graph's own earlier run left in memory (its state, its nodes' statuses), as a new Graph has."""
    from strands.multiagent.base import Status
    from strands.multiagent.graph import GraphState

    graph.state = GraphState()
    for node in graph.nodes.values():
        node.execution_status = Status.PENDING


def _left_running(node: Any) -> bool:
    """Whether the SDK left a Graph node running: its node call ended without its status (a BaseException)."""
    from strands.multiagent.base import Status

    return getattr(node, "execution_status", None) in (Status.EXECUTING, Status.DISPATCHED)


def _ended(invocation: dict[str, Any]) -> dict[str, Any]:
    """The multi-agent invocation's token record once its end is stored (its token joins the finished ones)."""
    finished = list(invocation.get("finished_tokens") or ())
    token = invocation.get("token")
    if token is not None and token not in finished:
        finished.append(token)
    return {**invocation, "ended": True, "finished_tokens": finished}


def resume_graph(graph: Any, payload: dict[str, Any], next_ids: list[str]) -> None:
    """Restore a Graph's recorded state and make `next_ids` the nodes it runs first (what `deserialize_state`
    does, except that it would compute the next nodes itself, leaving out any completed node a cycle revisits)."""
    from strands.interrupt import _InterruptState

    internal = payload.get("_internal_state")
    if internal:
        graph._interrupt_state = _InterruptState.from_dict(internal["interrupt_state"])
    graph._from_dict(payload)
    graph._resume_next_nodes = [graph.nodes[node_id] for node_id in next_ids if node_id in graph.nodes]
    graph._resume_from_session = True


def _visit_of(key: str, base: str) -> int:
    return 0 if key == base else int(key[len(base) + 2 :])
