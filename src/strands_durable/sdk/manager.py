"""`DurableSessionManager`: a drop-in session manager for plain-Python `strands.Agent`s, on the durable store.

Every message is committed as the agent adds it and every tool's raw result the moment the tool returns (the
spec runner's `InvocationHooks` do both); the final result after the user's AfterToolCallEvent hooks. The lease
is held per invocation. After a crash an invocation stays pending: `agent()` or re-sending the same prompt
finishes it (committed turns are restored without a model call, committed tool results are replayed); a
different prompt first closes it honestly. See docs/python-agents.md.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import copy
import logging
import math
import os
import sys
import threading
import time
import weakref
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from strands.hooks import (
    AfterInvocationEvent,
    AfterModelCallEvent,
    AfterToolCallEvent,
    BeforeInvocationEvent,
    BeforeModelCallEvent,
    BeforeToolCallEvent,
    MessageAddedEvent,
)
from strands.hooks.registry import HookRegistry
from strands.session.session_manager import SessionManager

from strands_durable.agent.durable import DurableInvoker, Invocation, InvocationHooks, fit_window
from strands_durable.agent.state_attribution import (
    EVERY_OWNER,
    TOOL_CALL,
    AttributedState,
    adopt,
    settle,
    state_to_commit,
)
from strands_durable.crashpoints import CrashPoints
from strands_durable.errors import (
    CorruptSession,
    DurableError,
    SessionChanged,
    SessionExists,
    SessionInUse,
    SessionNotFound,
    UsageError,
)
from strands_durable.history import SDK_INTERRUPTED_TEXT
from strands_durable.runner.tools import is_idempotent
from strands_durable.sdk import pending as invocations
from strands_durable.sdk import tokens
from strands_durable.sdk.multiagent import MultiAgentSupport, latest_visit
from strands_durable.sdk.profiles import carries_tool_config, profile_for_model
from strands_durable.store import LocalStore, events, open_store
from strands_durable.store.base import Session, SessionStore
from strands_durable.store.ids import ID_RULE, is_session_id
from strands_durable.store.state import AGENT_PATTERN, Conversation, SessionState

logger = logging.getLogger("strands_durable.sdk")

_LEASE_POLL_S = 0.05  # how often a manager with `lease_timeout` tries a session another holder has again


@dataclass(frozen=True)
class SessionUsage:
    """Tokens of a session's model answers: `committed` (stored in the history) and `lost` (answered but never
    committed: a crash before the commit, or a hook's retry). Each is `{"input", "output", "total"}`."""

    committed: dict[str, int]
    lost: dict[str, int]


@dataclass
class _AgentSlot:
    """What the manager keeps for one agent of the session between and during its invocations."""

    agent: Any
    key: str
    seen_seq: int = -1  # the journal record this agent's memory reflects
    known_messages: int = 0  # len(agent.messages) when it last matched the store
    session: Session | None = None
    hooks: InvocationHooks | None = None
    serve: dict[str, Any] | None = None  # a committed final answer the model stage returns without a call
    stored_results: dict[str, Any] | None = None  # a committed results message the SDK appends again (not stored)
    unsaved: list[dict[str, Any]] = field(default_factory=list)  # messages given to the Agent constructor
    result_order: list[str] = field(default_factory=list)  # toolUse order for a batch the SDK resumed
    invocation: Any = None  # the invocation_state of the invocation in progress (the same for all its passes)
    aborted: bool = False  # the last invocation raised instead of ending (it is pending)
    serve_stop: str = "end_turn"  # the stop reason `serve` is returned with
    replaying: bool = False  # the invocation returns a finished invocation's stored result (its token came again)


class DurableSessionManager(MultiAgentSupport, SessionManager):
    """Persist a plain `strands.Agent` (or several, by `agent_id`) in a durable session.

    `DurableSessionManager(session_id="expenses-1", storage_dir="./sessions")`, or `store=` any SessionStore;
    the default directory follows STRANDS_SESSIONS_DIR (else ~/.strands/sessions). `lease_timeout` waits that
    many seconds for a session another process or thread is invoking (default: fail at once, naming the
    holder). `provider_profile` overrides the validation profile derived from the model class.
    """

    def __init__(
        self,
        session_id: str,
        storage_dir: str | Path | None = None,
        *,
        store: SessionStore | None = None,
        lease_timeout: float | None = None,
        provider_profile: str | None = None,
        crash_points: CrashPoints | None = None,
    ) -> None:
        check_session_id(session_id)
        _check_options(storage_dir, store, lease_timeout, provider_profile)
        self.session_id = session_id
        self.store = store if store is not None else open_store(storage_dir)
        self.lease_timeout = lease_timeout
        self.provider_profile = provider_profile
        self.crash_points = crash_points or CrashPoints()
        self._slots: dict[str, _AgentSlot] = {}
        self._node_keys: dict[int, str] = {}  # id(node agent) -> its node's key (Graph and Swarm nodes)
        self._initial: dict[str, list[dict[str, Any]]] = {}  # node key -> the messages the node agent was built with
        self._acked: dict[str, str] = {}  # node conversation -> the invocation the orchestrator recorded
        self._source: Any = None  # the Graph or Swarm this manager instruments
        self._shared: Session | None = None  # the session a graph invocation holds for all its nodes
        self._own_invocation: dict[str, Any] = {}  # a Graph's or Swarm's own invocation (see sdk/tokens.py)
        self._lock = threading.Lock()
        self._birth: str | None = None  # the session's creation time, once this manager has seen it
        self._refuse_case_twin()
        _LIVE.add(self)

    # -- the SessionManager interface ----------------------------------------------------------------
    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        from strands.hooks import (
            AfterMultiAgentInvocationEvent,
            AfterNodeCallEvent,
            AgentInitializedEvent,
            BeforeMultiAgentInvocationEvent,
            BeforeNodeCallEvent,
            MultiAgentInitializedEvent,
        )

        registry.add_callback(AgentInitializedEvent, lambda event: self.initialize(event.agent))
        registry.add_callback(BeforeInvocationEvent, self._before_invocation)
        registry.add_callback(MessageAddedEvent, lambda event: self.append_message(event.message, event.agent))
        registry.add_callback(BeforeModelCallEvent, self._before_model_call)
        registry.add_callback(AfterModelCallEvent, self._after_model_call)
        registry.add_callback(BeforeToolCallEvent, self._before_tool_call)  # Before* in order: ours runs first
        registry.add_callback(AfterToolCallEvent, self._after_tool_call)  # After* run in reverse: ours runs last
        registry.add_callback(AfterInvocationEvent, self._after_invocation)
        registry.add_callback(MultiAgentInitializedEvent, lambda event: self.initialize_multi_agent(event.source))
        registry.add_callback(BeforeMultiAgentInvocationEvent, self._before_graph)
        registry.add_callback(BeforeNodeCallEvent, self.before_node)
        registry.add_callback(AfterNodeCallEvent, lambda event: self.sync_multi_agent(event.source, event.node_id))
        registry.add_callback(AfterMultiAgentInvocationEvent, self._after_graph)

    def initialize(self, agent: Any, **kwargs: Any) -> None:
        """Restore `agent` from the session: its finished turns, state, conversation-manager and SDK state.
        A pending invocation's messages stay in the journal until `agent()` finishes or a new prompt closes it."""
        from strands.middleware import ExecuteToolStage, InvokeModelStage
        from strands.types.exceptions import SessionException

        key = self._key_of(agent)
        with self._lock:
            if key in self._slots:
                raise SessionException("The `agent_id` of an agent must be unique in a session.")
            slot = self._slots[key] = _AgentSlot(agent, key)
        state = self._load()
        if id(agent) in self._node_keys:
            slot.key = latest_visit(state, key)
        key = slot.key
        conv = state.conversations.get(key) if state is not None else None
        if conv is None:
            slot.unsaved = copy.deepcopy(list(agent.messages))
            slot.seen_seq = state.seq if state is not None else -1
            slot.known_messages = len(agent.messages)
        else:
            self._restore(slot, state, conv)  # type: ignore[arg-type]
        agent.add_middleware(ExecuteToolStage, self._execute_tool_for(slot))
        agent.add_middleware(InvokeModelStage, self._invoke_model_for(slot))

    def append_message(self, message: Any, agent: Any, **kwargs: Any) -> None:
        slot = self._slots[self._key_of(agent)]
        if slot.hooks is None:
            if not _is_sdk_placeholder(message):  # the SDK's "Tool was interrupted." results are never stored
                self._store_outside_invocation(slot, message)
            return
        serve = slot.serve
        if serve is not None and message.get("role") == "assistant" and _same_message(message, serve):
            slot.serve = None  # the committed final answer, served again: already stored
            return
        if slot.result_order and message.get("role") == "user":
            # the SDK puts a resumed batch's completed results first; the uninterrupted run has them in toolUse order
            order = {tool_use_id: i for i, tool_use_id in enumerate(slot.result_order)}
            message["content"].sort(key=lambda b: order.get(b.get("toolResult", {}).get("toolUseId"), len(order)))
            slot.result_order = []
        stored = slot.stored_results
        if stored is not None and message.get("role") == "user" and _same_message(message, stored):
            slot.stored_results = None  # the committed results of a structured-output batch, appended again
            return
        _refuse_unanswered(slot, message)
        slot.hooks.message_added(MessageAddedEvent(agent=agent, message=message))

    def _store_outside_invocation(self, slot: _AgentSlot, message: dict[str, Any]) -> None:
        """Store a message the agent added between invocations (a direct `agent.tool.x()` call records four),
        under the lease, when the journal still ends where this agent's memory does."""
        if id(slot.agent) in self._node_keys or slot.unsaved:
            logger.warning("agent %s: a message added outside an invocation is not stored", slot.key)
            return
        session = self._open()
        stored = False
        try:
            state = session.state
            conv = state.conversations.get(slot.key)
            held = slot.agent.messages
            # the next message after what the store holds, and the journal unchanged since this agent read it
            position = slot.known_messages
            stale = state.seq != slot.seen_seq or len(held) <= position or held[position] is not message
            if stale or invocations.pending_invocation(state, conv) is not None:
                logger.warning(
                    "agent %s: a message added outside an invocation is not stored (the session was extended "
                    "elsewhere or an interrupted invocation is pending)",
                    slot.key,
                )
                return
            index = len(conv.messages) if conv is not None else 0
            event = events.message(slot.key, slot.key, index, _stored(message))
            session.commit([event], path=f"{slot.key}/direct")
            slot.known_messages += 1
            stored = True
        finally:
            session.close()
        if stored:  # what this agent has seen includes the record closing commits
            slot.seen_seq = session.state.seq

    def redact_latest_message(self, redact_message: Any, agent: Any, **kwargs: Any) -> None:
        """Replace the latest stored message (a guardrail's redaction) by committing a new generation."""
        slot = self._slots[self._key_of(agent)]
        if slot.session is None:
            raise DurableError(f"agent {slot.key}: redact_latest_message outside an invocation")
        conv = slot.session.state.conversations[slot.key]
        messages = list(conv.messages)
        messages[-1] = _stored(redact_message)
        event = events.generation(slot.key, messages, list(conv.units), backup="redacted")
        slot.session.commit([event], path=f"{slot.key}/redact")

    def sync_agent(self, agent: Any, **kwargs: Any) -> None:
        slot = self._slots.get(self._key_of(agent))
        if slot is not None and slot.session is not None:
            event, taken = _state_event(slot)
            if event is not None:
                slot.session.commit([event], path=f"{slot.key}/sync", durable=False)
                settle(agent, EVERY_OWNER, taken)

    # -- invocations ---------------------------------------------------------------------------------
    async def _before_invocation(self, event: Any) -> None:
        slot = self._slots[self._key_of(event.agent)]
        if slot.hooks is not None:
            if slot.invocation is event.invocation_state:
                return  # a continuation pass of the same invocation
            self._let_go(slot)  # an invocation that never reached its end (its event loop was torn down)
        slot.invocation = event.invocation_state
        slot.aborted = False
        try:
            slot.session = await self._open_async()
            self._begin(slot, event)
        except BaseException:
            self._let_go(slot)
            raise

    def _begin(self, slot: _AgentSlot, event: Any) -> None:
        session = slot.session
        assert session is not None
        state = session.state
        token = None
        if id(slot.agent) in self._node_keys:
            # the orchestrator resets its node agents (each Swarm run, a Graph revisit, its own restore)
            pending = self.node_invocation(slot, state, list(event.messages or []))
        else:
            if state.seq != slot.seen_seq:
                self._catch_up(slot, state)
            pending = invocations.pending_invocation(state, state.conversations.get(slot.key))
            token = tokens.token_of(event.invocation_state)
            known = tokens.unit_of(state, slot.key, token) if token is not None else None
            if known is not None and (pending is None or known != pending.unit):
                finished = tokens.finished_invocation(state, state.conversations.get(slot.key), known)
                if finished is not None:
                    self._replay(slot, state, finished, event)
                    return
            if known is not None and pending is not None and known == pending.unit:
                event.messages = []  # the token names the pending invocation: finish it, whatever the prompt
            if pending is None and not event.messages and _nothing_to_answer(slot.agent):
                raise UsageError(
                    f"Nothing to finish in session {self.session_id} for agent {slot.key}: no invocation is "
                    'pending; pass a prompt, e.g. agent("...")'
                )
        if pending is None:
            self._fit_profile(slot, session)
            self._fit_window(slot)
        conv = state.conversations.get(slot.key)
        session.commit([events.status("running")], path=f"{slot.key}/status", durable=False)
        unit = invocations.next_invocation(conv, slot.key)
        if pending is not None and conv is not None:
            incoming = list(event.messages or [])
            if invocations.same_prompt(incoming, conv.messages[pending.start]):
                event.messages = []
                unit = pending.unit
                self._fast_forward(slot, conv, pending)
                logger.info("session %s, agent %s: finishing the interrupted invocation", self.session_id, slot.key)
            else:
                self._close_interrupted(slot, conv, pending)
                unit = invocations.next_invocation(session.state.conversations[slot.key], slot.key)
                logger.info(
                    "session %s, agent %s: the interrupted invocation was closed before the new prompt",
                    self.session_id,
                    slot.key,
                )
        if slot.unsaved:
            self._store_initial(slot, session)
        if token is not None and tokens.unit_of(session.state, slot.key, token) != unit:
            session.commit([tokens.token_event(slot.key, unit, token)], path=f"{unit}/token", durable=False)
        conv = session.state.conversations.get(slot.key)
        adopt(slot.agent, conv.agent_state if conv is not None else {})
        slot.hooks = self._hooks(slot, session, unit)
        self.crash_points.emit("unit.before", unit)

    def _replay(self, slot: _AgentSlot, state: SessionState, finished: tokens.Finished, event: Any) -> None:
        """Return a finished invocation's stored result again, running nothing and committing nothing: its answer
        is served by the model stage (no model call) after the messages it answered; the re-sent prompt is not
        added. When the invocation ends, the agent is restored to the stored history (`_end_replay`). The stored
        usage is this invocation's (`metrics.agent_invocations[-1].usage`), but no model answered: the agent's
        `accumulated_usage` and its OpenTelemetry token counters stay as they were."""
        conv = state.conversations[slot.key]
        agent = slot.agent
        agent.messages = copy.deepcopy(conv.messages[finished.start : finished.end])
        invocation_usage = agent.event_loop_metrics.agent_invocations[-1].usage
        for message in conv.messages[finished.start : finished.end + 1]:
            usage = (message.get("metadata") or {}).get("usage")
            if message.get("role") == "assistant" and usage:
                _add_usage(invocation_usage, usage)
        slot.serve = copy.deepcopy(conv.messages[finished.end])
        slot.serve_stop = finished.stop_reason
        slot.replaying = True
        event.messages = []
        slot.hooks = self._hooks(slot, slot.session, finished.unit)  # type: ignore[arg-type]
        logger.info(
            "session %s, agent %s: returning the stored result of %s (its idempotency token was given again)",
            self.session_id,
            slot.key,
            finished.unit,
        )

    def _end_replay(self, slot: _AgentSlot) -> None:
        session, slot.session, slot.hooks, slot.serve, slot.replaying = slot.session, None, None, None, False
        slot.serve_stop = "end_turn"
        assert session is not None
        state = session.state
        session.abandon()  # nothing was committed: released as it was found
        conv = state.conversations.get(slot.key)
        kept = slot.agent.state  # changes made since the last commit are still to be committed with the next one
        if conv is not None:
            self._restore(slot, state, conv)
        slot.agent.state = kept

    def _fit_profile(self, slot: _AgentSlot, session: Session) -> None:
        """Make the stored history one the next request can carry under the model's provider profile, not only
        one the stored-history rules accept: a history holding tool blocks while the request will carry no tool
        config (rule V13: the agent's tools were removed since those calls; Anthropic rejects such a request)
        gets a new generation with those blocks rendered as text, the previous one kept in backups/, and a log
        line. Nothing is pending here: a pending invocation is finished or closed on its own history first."""
        from strands_durable.history import validate
        from strands_durable.history.tool_text import tool_blocks_as_text

        agent = slot.agent
        conv = session.state.conversations.get(slot.key)
        if conv is None or getattr(agent.model, "stateful", False):
            return
        profile = self.provider_profile or profile_for_model(agent.model)
        tools = carries_tool_config(agent)
        if not any(v.rule == "V13" for v in validate(conv.messages, profile, "stored", tools_configured=tools)):
            return
        messages, actions = tool_blocks_as_text(conv.messages)
        if not actions or validate(messages, mode="stored"):
            return  # nothing it may change (calls of messages holding reasoning): the request check explains
        event = events.generation(slot.key, messages, list(conv.units), actions=[str(action) for action in actions])
        session.commit([event], path=f"{slot.key}/fit-profile")
        self._restore(slot, session.state, session.state.conversations[slot.key])
        logger.warning(
            "session %s, agent %s: the stored history holds tool calls but the %s request carries no tool config "
            "(the agent has no tools); %d tool blocks were rendered as text in a new generation, the previous one "
            "kept in %s",
            self.session_id,
            slot.key,
            profile,
            len(actions),
            session.backup_of(slot.key),
        )

    def _fit_window(self, slot: _AgentSlot) -> None:
        """Move the conversation manager's window on to its first prompt when it starts where the model's profile
        refuses (`history.window.misplaced_start`). The messages stay stored; the conversation manager counts them
        removed (committed with the next message), and a log line says so."""
        agent = slot.agent
        if getattr(agent.model, "stateful", False):
            return
        profile = self.provider_profile or profile_for_model(agent.model)
        start = fit_window(agent, profile)
        if not start:
            return
        slot.known_messages = len(agent.messages)
        logger.warning(
            "session %s, agent %s: the conversation manager's window started with an assistant turn, which the %s "
            "request refuses; it now starts %s (%d more messages counted removed, still stored)",
            self.session_id,
            slot.key,
            profile,
            "at the next user turn" if agent.messages else "empty",
            start,
        )

    def _store_initial(self, slot: _AgentSlot, session: Session) -> None:
        """Store the messages the Agent was constructed with (a new conversation), before the first prompt and
        outside any invocation: they are history the user supplied, not part of the invocation that follows (whose
        prompt `pending_prompt()` returns and a re-send matches). Made durable by the invocation's next fsync."""
        from strands_durable.history import validate

        messages = [_stored(message) for message in slot.unsaved]
        violations = validate(messages, mode="stored")
        if violations:
            first = violations[0]
            raise UsageError(
                f"agent {slot.key}: the messages given to Agent(messages=...) are not a valid history: {first.rule} "
                f"at message {first.message_index}: {first.message}"
            )
        initial = [events.message(slot.key, slot.key, i, message) for i, message in enumerate(messages)]
        session.commit(initial, path=f"{slot.key}/initial", durable=False)
        slot.unsaved = []

    def _after_invocation(self, event: Any) -> None:
        slot = self._slots[self._key_of(event.agent)]
        if slot.hooks is None:
            return
        if slot.replaying:
            self._end_replay(slot)
            return
        if event.result is None:  # the invocation raised: it stays pending, as after a crash
            self._let_go(slot)
            slot.aborted = True
            return
        try:
            self._end(slot, event.result)
        except BaseException:
            self._let_go(slot)
            raise

    def _end(self, slot: _AgentSlot, result: Any) -> None:
        session, hooks = slot.session, slot.hooks
        assert session is not None and hooks is not None
        unit = hooks.inv.unit
        stop_reason = str(result.stop_reason)
        record = {"status": "interrupted" if stop_reason == "interrupt" else "completed", "stop_reason": stop_reason}
        end: list[dict[str, Any]] = [events.unit(unit, record)]
        state_event, taken = _state_event(slot)
        if state_event is not None:
            end.append(state_event)
        if stop_reason == "interrupt":
            end.append(events.status("paused", "hitl"))
        elif session is not self._shared:  # a node's end: the multi-agent invocation goes on
            end.append(events.status("idle"))
        session.commit(end, path=f"{unit}/end")
        settle(slot.agent, EVERY_OWNER, taken)
        self.crash_points.emit("unit.after", unit)
        slot.hooks = None
        slot.session = None
        if session is not self._shared:
            session.close()
        slot.seen_seq = session.state.seq
        slot.known_messages = len(slot.agent.messages)

    def _let_go(self, slot: _AgentSlot) -> None:
        """After a failed invocation: release the lease as a crash would and show the agent the session as a
        fresh process would load it (the interrupted invocation pending)."""
        session, slot.session, slot.hooks, slot.serve = slot.session, None, None, None
        slot.result_order, slot.serve_stop, slot.replaying = [], "end_turn", False
        if session is None:
            return
        if session is not self._shared:
            session.abandon()
        state = self._load()
        conv = state.conversations.get(slot.key) if state is not None else None
        if conv is not None:
            self._restore(slot, state, conv)  # type: ignore[arg-type]

    # -- restoring -------------------------------------------------------------------------------------
    def _restore(self, slot: _AgentSlot, state: SessionState, conv: Conversation, end: int | None = None) -> None:
        from strands.interrupt import _InterruptState

        agent = slot.agent
        agent.state = AttributedState(copy.deepcopy(conv.agent_state))
        internal = conv.internal_state
        if "interrupt_state" in internal:
            agent._interrupt_state = _InterruptState.from_dict(copy.deepcopy(internal["interrupt_state"]))
        if "model_state" in internal:
            agent._model_state = copy.deepcopy(internal["model_state"])
        prepend: list[Any] = []
        removed = 0
        if conv.cm_state:
            prepend = agent.conversation_manager.restore_from_session(copy.deepcopy(conv.cm_state)) or []
            removed = int(agent.conversation_manager.removed_message_count)
        if end is None:
            pending = invocations.pending_invocation(state, conv)
            end = pending.start if pending is not None else len(conv.messages)
        if not getattr(agent.model, "stateful", False):
            agent.messages = prepend + copy.deepcopy(conv.messages[removed:end])
        slot.seen_seq = state.seq
        slot.known_messages = len(agent.messages)
        slot.unsaved = []

    def _catch_up(self, slot: _AgentSlot, state: SessionState) -> None:
        """Another process extended the session since this agent loaded it: reload, unless this agent holds
        messages that are not stored (then refuse: two processes must never extend a stale history). Another
        agent's conversation, or the session's creation, changes nothing for this one."""
        conv = state.conversations.get(slot.key)
        if conv is None and len(slot.agent.messages) == slot.known_messages:
            slot.seen_seq = state.seq  # nothing stored for this agent yet: its constructor messages are still to store
            return
        if slot.unsaved or len(slot.agent.messages) != slot.known_messages:
            raise SessionChanged(
                f"Session {self.session_id} was extended by another process while agent {slot.key} held "
                "messages that are not stored; build the agent again to continue from the stored session"
            )
        if conv is not None:
            self._restore(slot, state, conv)
            logger.info("session %s, agent %s: reloaded (extended by another process)", self.session_id, slot.key)
        slot.seen_seq = state.seq

    def _fast_forward(self, slot: _AgentSlot, conv: Conversation, pending: invocations.Pending) -> None:
        """Put the pending invocation's committed messages back without calling the model; a committed final
        answer is served by the model stage instead (so the invocation ends with it as the SDK expects), and
        calls whose final result is committed are handed to the SDK as completed (their hooks not re-entered)."""
        from strands.interrupt import PendingToolExecution

        agent = slot.agent
        committed = copy.deepcopy(conv.messages[pending.start :])
        if committed[-1].get("role") == "assistant" and not invocations.tool_uses(committed[-1]):
            slot.serve = committed.pop()
        elif _answers_structured_output(agent, committed):
            # the SDK reads a structured answer only from its tool running in this invocation: the batch is handed
            # back with its other results completed, the (pure) structured-output tool runs again
            slot.stored_results = committed.pop()
        agent.messages.extend(committed)
        self.replay_handoffs(slot, conv, committed)
        for message in committed:
            usage = (message.get("metadata") or {}).get("usage")
            if message.get("role") == "assistant" and usage:
                agent.event_loop_metrics.update_usage(usage)
        last = committed[-1]
        uses = invocations.tool_uses(last) if last.get("role") == "assistant" else []
        finals = [
            copy.deepcopy(conv.tool_results[u["toolUseId"]])
            for u in uses
            if u["toolUseId"] in conv.final_results and u["name"] in agent.tool_registry.registry
        ]
        if finals:
            state = agent._interrupt_state
            state.pending_tool_execution = PendingToolExecution(assistant_message=last, completed_tool_results=finals)
            state.activate()
            slot.result_order = [u["toolUseId"] for u in uses]

    def _close_interrupted(self, slot: _AgentSlot, conv: Conversation, pending: invocations.Pending) -> None:
        """Close a pending invocation before a different prompt: nothing runs, no committed message changes."""
        closing = invocations.closing_messages(conv, pending)
        session = slot.session
        assert session is not None
        base = len(conv.messages)
        closed = [
            events.message(slot.key, slot.key, base + i, message, unit=pending.unit)
            for i, message in enumerate(closing)
        ]
        closed.append(events.unit(pending.unit, {"status": "interrupted"}))
        session.commit(closed, path=f"{pending.unit}/closed")
        conv = session.state.conversations[slot.key]
        slot.agent.messages.extend(copy.deepcopy(conv.messages[pending.start :]))

    # -- hooks during an invocation --------------------------------------------------------------------
    def _hooks(self, slot: _AgentSlot, session: Session, unit: str) -> InvocationHooks:
        agent = slot.agent
        registry = agent.tool_registry.registry
        risky = frozenset(name for name, tool in registry.items() if not is_idempotent(tool))
        inv = Invocation(
            unit=unit,
            path=unit,
            conv_key=slot.key,
            agent_id=slot.key,
            system_prompt=None,
            prompt="",
            tools=list(registry.values()),
            non_idempotent=risky,
            model=agent.model,
            provider=self.provider_profile or profile_for_model(agent.model),
            tools_configured=carries_tool_config(agent),
        )
        invoker = DurableInvoker(session, self.crash_points)
        return InvocationHooks(invoker, inv, agent, {"model_calls": 0})

    def _before_model_call(self, event: Any) -> None:
        slot = self._slots[self._key_of(event.agent)]
        if slot.hooks is not None and slot.serve is None:
            slot.hooks.before_model_call(event)

    def _after_model_call(self, event: Any) -> None:
        """Record the answer's token usage as it arrives, before its message is committed (appended, not fsynced:
        a process crash keeps it, a power cut may not), so tokens a crash loses are reported apart."""
        slot = self._slots[self._key_of(event.agent)]
        session, response = slot.session, event.stop_response
        if slot.hooks is None or session is None or response is None or slot.serve is not None:
            return  # no invocation, a failed call, or a committed answer served again without a call
        usage = (response.message.get("metadata") or {}).get("usage")
        if usage:
            session.commit(
                [events.model_usage(slot.key, slot.key, dict(usage))],
                path=f"{slot.hooks.inv.path}/usage",
                durable=False,
            )

    def _before_tool_call(self, event: Any) -> None:
        """Attribute what this call's task changes in `agent.state` (the hooks before it, the tool, the hooks after
        it) to the call: it is committed with the call's result (agent/state_attribution.py)."""
        TOOL_CALL.set(event.tool_use["toolUseId"])

    def _after_tool_call(self, event: Any) -> None:
        slot = self._slots[self._key_of(event.agent)]
        hooks = slot.hooks
        try:
            if hooks is None:
                return
            tool_use_id = event.tool_use["toolUseId"]
            if event.retry:
                hooks.retrying.add(tool_use_id)  # a new attempt: its raw result is committed in turn
                return
            hooks.commit_final_result(event.result)
        finally:
            TOOL_CALL.set(None)  # the sequential executor runs the next call (and the loop) in this same context

    def _execute_tool_for(self, slot: _AgentSlot) -> Any:
        from strands.tools.structured_output.structured_output_tool import StructuredOutputTool

        async def execute_tool(context: Any, next_fn: Any) -> Any:
            hooks = slot.hooks
            if hooks is None or isinstance(context.tool, StructuredOutputTool):  # pure: it runs again on resume
                stream = next_fn(context)
            else:
                stream = hooks.execute_tool(context, next_fn)
            async for item in stream:
                yield item

        return execute_tool

    def _invoke_model_for(self, slot: _AgentSlot) -> Any:
        async def invoke_model(context: Any, next_fn: Any) -> Any:
            served = slot.serve
            if served is None:
                async for item in next_fn(context):
                    yield item
                return
            from strands.types.event_loop import Metrics, Usage
            from strands.types.events import ModelStopReason

            metadata = served.get("metadata") or {}
            usage = metadata.get("usage") or Usage(inputTokens=0, outputTokens=0, totalTokens=0)
            if slot.replaying:  # counted in the invocation's usage by `_replay`: the SDK adds this one to the totals
                usage = Usage(inputTokens=0, outputTokens=0, totalTokens=0)
            metrics = metadata.get("metrics") or Metrics(latencyMs=0)
            message = {"role": "assistant", "content": copy.deepcopy(served["content"])}
            yield ModelStopReason(stop_reason=slot.serve_stop, message=message, usage=usage, metrics=metrics)

        return invoke_model

    # -- the store -------------------------------------------------------------------------------------
    def _load(self) -> SessionState | None:
        from strands_durable.history import validate

        try:
            state = self.store.load(self.session_id)
        except SessionNotFound:
            pass
        else:
            if any(validate(conv.messages, mode="stored") for conv in state.conversations.values()):
                with contextlib.suppress(SessionInUse):  # its holder's open finds and repairs it in turn
                    self._repair()
                    state = self.store.load(self.session_id)
            self._birth = self._birth or state.meta.get("created_at")
            return state
        if isinstance(self.store, LocalStore) and self._birth is None:
            from strands_durable.sdk.importing import import_file_session

            if import_file_session(self.store, self.session_id, _new_meta(self.session_id)):
                return self._load()
        return None

    def _open(self) -> Session:
        """Open (or create) the session, holding its lease; wait up to `lease_timeout` for another holder. During a
        graph invocation its nodes share the session the graph holds."""
        deadline = self._lease_deadline()
        while True:
            opened = self._open_or_wait(deadline)
            if not isinstance(opened, float):
                return opened
            time.sleep(opened)

    async def _open_async(self) -> Session:
        """`_open` on an event loop (an invocation's hooks): waiting for another holder yields to the loop rather
        than blocking it, so a holder running on the same loop (`asyncio.gather` of two agents) can finish."""
        deadline = self._lease_deadline()
        while True:
            opened = self._open_or_wait(deadline)
            if not isinstance(opened, float):
                return opened
            await asyncio.sleep(opened)

    def _lease_deadline(self) -> float | None:
        return None if self.lease_timeout is None else time.monotonic() + self.lease_timeout

    def _open_or_wait(self, deadline: float | None) -> Session | float:
        """The session opened (or created) under its lease, or the seconds to wait before trying again while
        another holder has it and `deadline` (monotonic) is ahead; SessionInUse once it is not."""
        if self._shared is not None:
            return self._shared
        while True:
            try:
                try:
                    session = self._repairing(lambda: self.store.open(self.session_id, crash_points=self.crash_points))
                except SessionNotFound:
                    if self._birth is not None:
                        raise SessionChanged(
                            f"Session {self.session_id} was deleted while this manager held it (its agents' memory "
                            "holds turns the store no longer has); build the agent again to start a new session"
                        ) from None
                    try:
                        session = self.store.create(_new_meta(self.session_id), b"", crash_points=self.crash_points)
                    except SessionExists:
                        continue  # another process created it a moment ago: open it (its lease may be held)
            except SessionInUse:
                if deadline is None or time.monotonic() >= deadline:
                    raise
                return _LEASE_POLL_S
            born = session.state.meta.get("created_at")
            if self._birth is not None and born != self._birth:
                session.abandon()
                raise SessionChanged(
                    f"Session {self.session_id} was deleted and created again since this manager loaded it; build "
                    "the agent again to continue from the stored session"
                )
            self._birth = born
            return session

    def _repairing(self, read: Any) -> Any:
        """`read()`; when the session's stored history is invalid (written by an older version, or edited), it is
        repaired first, as `strands sessions repair` does (a new generation recording what changed; the old files
        kept in backups/), and a log line says so. Anything repair cannot fix is raised as it was found."""
        try:
            return read()
        except CorruptSession as exc:
            if "stored history breaks" not in str(exc):
                raise
            try:
                self._repair()
            except DurableError:
                raise exc from None
            return read()

    def _repair(self) -> None:
        from strands_durable.operations.repair import repair_session

        report = repair_session(self.store, self.session_id)
        for done in report.conversations:
            logger.warning(
                "session %s, agent %s: the stored history was invalid and was repaired (%s); the previous "
                "generation is kept in %s",
                self.session_id,
                done.conversation,
                "; ".join(str(action) for action in done.actions),
                done.backup,
            )

    def _refuse_case_twin(self) -> None:
        lister = getattr(self.store, "session_ids", None)
        if lister is None:
            return
        folded = self.session_id.casefold()
        for other in lister():
            if other != self.session_id and other.casefold() == folded:
                raise UsageError(
                    f"Session id {self.session_id!r} differs only by case from the existing session {other!r} "
                    "(case-insensitive file systems would share one directory)"
                )

    def _key_of(self, agent: Any) -> str:
        return self._node_keys.get(id(agent)) or _agent_key(agent)

    def pending_prompt(self, agent_id: str = "default") -> list[dict[str, Any]] | None:
        """The content blocks of the agent's pending (interrupted) invocation's prompt, or None when nothing is
        pending: `agent()` or re-sending this prompt finishes it."""
        state = self._load()
        conv = state.conversations.get(agent_id) if state is not None else None
        pending = invocations.pending_invocation(state, conv)
        if pending is None or conv is None:
            return None
        return copy.deepcopy(conv.messages[pending.start].get("content", []))

    def session_usage(self, agent_id: str | None = None) -> SessionUsage:
        """Token usage of the session (or of one agent's conversations): `committed`, the answers stored in the
        history; `lost`, answers the model gave that were never committed (a crash between the answer and its
        commit, or a hook's retry); each `{input, output, total}`."""
        state = self._load()
        committed = {"input": 0, "output": 0, "total": 0}
        lost = dict(committed)
        for key, conv in (state.conversations if state is not None else {}).items():
            if agent_id is not None and key != agent_id and not key.startswith(f"{agent_id}."):
                continue
            for total, part in ((committed, conv.usage()), (lost, conv.lost_usage())):
                for name, value in part.items():
                    total[name] += value
        return SessionUsage(committed=committed, lost=lost)

    def _interrupted_at_exit(self) -> None:
        """The interpreter is exiting on Ctrl+C (an uncaught KeyboardInterrupt) after an invocation ended without
        its end: the session is marked paused (reason interrupted); the invocation stays pending."""
        for slot in list(self._slots.values()):
            if not slot.aborted:
                continue
            with contextlib.suppress(DurableError, OSError):
                session = self._open()
                try:
                    session.commit([events.status("paused", "interrupted")])
                finally:
                    session.close()

    def close(self) -> None:
        """Release everything this manager holds (an invocation in progress is left pending)."""
        for slot in list(self._slots.values()):
            self._let_go(slot)

    def __enter__(self) -> DurableSessionManager:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def check_session_id(session_id: str) -> None:
    if not isinstance(session_id, str) or not (is_session_id(session_id)):
        raise UsageError(f"Not a session id: {session_id!r} (use {ID_RULE})")


def _agent_key(agent: Any) -> str:
    key = str(getattr(agent, "agent_id", None) or "default")
    if not is_session_id(key):
        raise UsageError(f"Agent id {key!r} cannot name a stored conversation (use {ID_RULE})")
    return key


def _new_meta(session_id: str) -> dict[str, Any]:
    return {
        "session_id": session_id,
        "workflow_name": session_id,
        "pattern": AGENT_PATTERN,
        "created_at": datetime.now(timezone.utc).isoformat(timespec="microseconds"),
        "variables": {},
        "runtime": {},
    }


def _state_event(slot: _AgentSlot) -> tuple[dict[str, Any] | None, int]:
    """A `conversation` event for what changed outside messages (agent, conversation-manager, SDK state), and the
    order up to which it takes the agent's state changes (all of them: no tool is running)."""
    session = slot.session
    if session is None:
        return None, 0
    agent = slot.agent
    conv = session.state.conversations.get(slot.key)
    agent_state, taken = state_to_commit(agent, conv.agent_state if conv is not None else {}, EVERY_OWNER)
    cm_state = agent.conversation_manager.get_state()
    internal = {"interrupt_state": agent._interrupt_state.to_dict(), "model_state": agent._model_state}
    event = events.conversation(
        slot.key,
        slot.key,
        agent_state=agent_state if conv is None or agent_state != conv.agent_state else events.UNSET,
        cm_state=cm_state if conv is None or cm_state != conv.cm_state else events.UNSET,
        internal_state=internal if conv is None or internal != conv.internal_state else events.UNSET,
    )
    return (event if len(event) > 3 else None), taken


def _stored(message: dict[str, Any]) -> dict[str, Any]:
    return copy.deepcopy({k: v for k, v in message.items() if k != "tracking_id"})


def _same_message(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return a.get("role") == b.get("role") and a.get("content") == b.get("content")


def _answers_structured_output(agent: Any, committed: list[dict[str, Any]]) -> bool:
    """Whether the committed messages end with the results of a batch whose structured-output tool (a tool the
    agent's own registry does not hold) succeeded. A call of a tool nobody registered (the model's mistake, which
    the SDK answers with an "Unknown tool" error) is an ordinary result: its batch is not handed back to run."""
    if len(committed) < 2 or committed[-1].get("role") != "user" or committed[-2].get("role") != "assistant":
        return False
    status = {
        block["toolResult"]["toolUseId"]: block["toolResult"].get("status")
        for block in committed[-1].get("content", ())
        if "toolResult" in block
    }
    return any(
        use["name"] not in agent.tool_registry.registry and status.get(use["toolUseId"]) == "success"
        for use in invocations.tool_uses(committed[-2])
    )


def _nothing_to_answer(agent: Any) -> bool:
    """Whether `agent()` without a prompt would only send the model its own last answer (a request every provider
    refuses as a prefill): no interrupt to resume, and the history is empty or ends with a plain answer."""
    if agent._interrupt_state.activated:
        return False
    messages = agent.messages
    return not messages or (messages[-1].get("role") == "assistant" and not invocations.tool_uses(messages[-1]))


def _check_options(storage_dir: Any, store: Any, lease_timeout: Any, provider_profile: Any) -> None:
    """Refuse a constructor argument of the wrong kind at once (`UsageError` naming it), not at the first prompt
    after the session was marked running."""
    from strands_durable.history import PROFILES

    if storage_dir is not None and not isinstance(storage_dir, (str, os.PathLike)):
        raise UsageError(f"storage_dir must be a path (str or os.PathLike), not {type(storage_dir).__name__}")
    if storage_dir is not None and store is not None:
        raise UsageError("give DurableSessionManager storage_dir or store, not both")
    number = isinstance(lease_timeout, (int, float)) and not isinstance(lease_timeout, bool)
    if lease_timeout is not None and not (number and math.isfinite(lease_timeout) and lease_timeout >= 0):
        raise UsageError(f"lease_timeout must be None or a number of seconds >= 0, not {lease_timeout!r}")
    if provider_profile is not None and provider_profile not in PROFILES:
        raise UsageError(f"unknown provider_profile {provider_profile!r}; expected one of {', '.join(PROFILES)}")


def _add_usage(target: dict[str, int], usage: dict[str, int]) -> None:
    """Add a stored answer's `usage` to `target` (an SDK `Usage`), the optional cache counts too."""
    for name, value in usage.items():
        if isinstance(value, int):
            target[name] = target.get(name, 0) + value


def _is_sdk_placeholder(message: dict[str, Any]) -> bool:
    blocks = message.get("content") or []
    return bool(blocks) and all(
        "toolResult" in block
        and [c.get("text") for c in block["toolResult"].get("content", ())] == [SDK_INTERRUPTED_TEXT]
        for block in blocks
    )


def _refuse_unanswered(slot: _AgentSlot, message: dict[str, Any]) -> None:
    """Never store a results message that leaves a call of the previous turn unanswered. The SDK's concurrent
    executor drops a tool task that raised a BaseException and appends the batch without its result (an SDK
    defect); storing that would leave an invalid history behind."""
    session = slot.session
    if session is None or message.get("role") != "user":
        return
    conv = session.state.conversations.get(slot.key)
    if conv is None or not conv.messages:
        return
    asked = {use["toolUseId"] for use in invocations.tool_uses(conv.messages[-1])}
    answered = {b["toolResult"]["toolUseId"] for b in message.get("content", ()) if "toolResult" in b}
    if asked - answered:
        raise DurableError(
            f"agent {slot.key}: refusing to store tool results that leave {sorted(asked - answered)} unanswered "
            "(a tool task ended without a result); the invocation stays pending"
        )


_LIVE: weakref.WeakSet[DurableSessionManager] = weakref.WeakSet()


@atexit.register
def _mark_interrupted_sessions() -> None:
    if isinstance(getattr(sys, "last_value", None), KeyboardInterrupt):
        for manager in list(_LIVE):
            manager._interrupted_at_exit()
