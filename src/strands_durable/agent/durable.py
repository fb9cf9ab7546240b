"""One agent invocation of one unit of work, run by a real `strands.Agent` and committed as it happens.

Each message is committed as the agent adds it; each tool result is committed the moment its tool finishes
(a wrap middleware around tool execution), so a crash anywhere inside the invocation resumes exactly:
committed results are replayed, committed model turns are never requested again, and the conversation is
restored message for message. Non-idempotent tools that started but were not committed are answered with an
honest synthesized error instead of running twice.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from strands_durable.agent.loop import run_on_thread_loop
from strands_durable.crashpoints import CrashPoints
from strands_durable.errors import DurableError, SpecError, WorkflowFailed
from strands_durable.history.copying import copy_json_data, copy_message_data
from strands_durable.store import events
from strands_durable.store.base import Session
from strands_durable.store.state import Conversation

SYNTHESIZED_MARKER = "synthesized_tool_results"


class StopRequested(BaseException):
    """Raised at a safe point after Ctrl+C or SIGTERM asked the run to stop; the session stays resumable."""


@dataclass
class Invocation:
    """What a unit asks of an agent: everything needed to build it and to address its crash points."""

    unit: str  # unit id, e.g. "step[1]"
    path: str  # crash-point path prefix, e.g. "step[1]:analyst"
    conv_key: str  # conversation storage key
    agent_id: str
    system_prompt: str | None
    prompt: str
    tools: list[Any] = field(default_factory=list)
    non_idempotent: frozenset[str] = frozenset()
    model: Any = None  # a strands Model
    invocation_state: dict[str, Any] = field(default_factory=dict)  # passed to the agent call (tool_context)
    provider: str = "all"  # history validation profile
    tools_configured: bool | None = None  # whether requests carry a tool config (None: when `tools` is not empty)
    place: tuple[tuple[str, int], ...] = ()  # the unit's crash-point place (see crashpoints.Place)
    redact_pii: bool = False  # security.guardrails.pii_redaction: PII leaves messages and results before commits
    secrets: tuple[str, ...] = ()  # the run's secret values: every stored form of each leaves messages and results
    compaction: Any = None  # an agent.compaction.CompactionPolicy: summarize instead of the sliding window


@dataclass
class InvocationResult:
    response: str
    resumed: bool
    model_calls: int


def text_of(message: dict[str, Any]) -> str:
    return "".join(block["text"] for block in message.get("content", ()) if "text" in block)


def _tool_uses(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [block["toolUse"] for block in message.get("content", ()) if "toolUse" in block]


def _synthesized_result(tool_use_id: str) -> dict[str, Any]:
    from strands_durable.history import SYNTHESIZED_RESULT_TEXT

    return {"toolUseId": tool_use_id, "status": "error", "content": [{"text": SYNTHESIZED_RESULT_TEXT}]}


def _synthesized(conv: Conversation, tool_use_id: str) -> bool:
    """The call's committed result is the synthesized "outcome unknown" error (a non-idempotent tool that started
    before a crash), not a result the tool returned: only those carry the `synthesized_tool_results` marker."""
    return tool_use_id in conv.tools_started and conv.tool_results.get(tool_use_id) == _synthesized_result(tool_use_id)


def unit_messages(conv: Conversation | None, unit: str) -> list[int]:
    """The positions of the unit's messages in the conversation. Found by `list.index` (the search runs in C): a
    conversation holds every message of every unit that used it, and this is asked at each hook of an invocation."""
    if conv is None:
        return []
    owners, found = conv.units, []
    try:
        index = owners.index(unit)
        while True:
            found.append(index)
            index = owners.index(unit, index + 1)
    except ValueError:
        return found


def finished_response(conv: Conversation | None, unit: str, indices: list[int] | None = None) -> str | None:
    """The unit's final answer when its invocation already ended in a committed assistant text message
    (`indices`: its `unit_messages`, when the caller has them)."""
    indices = unit_messages(conv, unit) if indices is None else indices
    if not indices or conv is None:
        return None
    last = conv.messages[indices[-1]]
    if indices[-1] == len(conv.messages) - 1 and last.get("role") == "assistant" and not _tool_uses(last):
        return text_of(last)
    return None


class DurableInvoker:
    """Runs invocations against an open session; one instance serves a whole run."""

    def __init__(
        self,
        session: Session,
        crash_points: CrashPoints,
        *,
        stop_requested: Callable[[], bool] = lambda: False,
        validate_requests: bool = True,
        cancel_in_flight: bool = True,
        defer_commits: bool = False,
    ) -> None:
        self.session = session
        self.crash_points = crash_points
        self.stop_requested = stop_requested
        self.validate_requests = validate_requests
        # a stop request also cancels a model call in flight (the SDK then runs a watcher task per invocation);
        # off, the run stops only at its next safe point, as chaos runs, which never stop from outside, do
        self.cancel_in_flight = cancel_in_flight
        # model answers and tool results are appended at once but made durable in the background; the barrier
        # (`Session.wait_durable`) is passed only before effects outside the process: a tool call waits for the
        # answer asking for it (and so everything before it), and the runner's artifact claims, status changes,
        # HITL pauses and close wait for everything. The fdatasyncs overlap the event loop's own work
        self.defer_commits = defer_commits

    # -- the public entry -----------------------------------------------------------------------------
    def invoke(self, inv: Invocation) -> InvocationResult:
        state = self.session.state
        conv = state.conversations.get(inv.conv_key)
        indices = unit_messages(conv, inv.unit)
        done = finished_response(conv, inv.unit, indices)
        if done is not None:
            return InvocationResult(done, resumed=True, model_calls=0)
        started = bool(indices)
        if started and conv is not None and indices[-1] != len(conv.messages) - 1:
            raise WorkflowFailed(f"conversation {inv.conv_key} continued past unfinished unit {inv.unit}")
        agent, hooks = self._build_agent(inv, conv, started=started)
        try:
            call_state = dict(inv.invocation_state)
            # resume: a trailing user message is answered, a trailing toolUse is executed/replayed
            signal = _StopSignal(self.stop_requested) if self.cancel_in_flight else None
            result = _call_agent(agent, None if started else inv.prompt, call_state, signal)
        except BaseException as exc:  # unwrap the SDK's wrapper so our own errors and crashes surface as-is
            raise _unwrap(exc) from None
        finally:
            # the agent's hooks hold these hooks and they held the agent: a cycle that kept the agent, its registries
            # and its conversation until a collection found it; the invocation is over, so the agent goes at once
            hooks.agent = None
        if getattr(result, "stop_reason", None) == "cancelled":  # a model call cancelled in flight: nothing added
            raise StopRequested()
        # the window's trim at the end of the invocation is committed with this conversation's next message
        conv = self.session.state.conversations[inv.conv_key]
        last = conv.messages[-1]
        return InvocationResult(text_of(last), resumed=started, model_calls=hooks.counters["model_calls"])

    # -- building the agent ---------------------------------------------------------------------------
    def _manager(self, inv: Invocation) -> Any:
        """The conversation manager: Strands' sliding window, or the summarizing one of `context_policy.compaction`,
        which commits each compaction (the summary and what it replaced) the moment it is made."""
        if inv.compaction is None:
            from strands.agent.conversation_manager import SlidingWindowConversationManager

            return SlidingWindowConversationManager()
        from strands_durable.agent.compaction import DurableSummarizingManager

        manager = DurableSummarizingManager(inv.compaction)

        def commit(compacted: Any) -> None:
            conv = self.session.state.conversations[inv.conv_key]
            compacted.compacted_at = len(conv.messages)
            event = events.conversation(inv.conv_key, inv.agent_id, cm_state=compacted.get_state())
            self.session.commit([event], path=f"{inv.path}/compaction")  # a model's answer: durable at once

        manager.on_compacted = commit
        return manager

    def _build_agent(self, inv: Invocation, conv: Conversation | None, *, started: bool) -> tuple[Any, InvocationHooks]:
        from strands import Agent
        from strands.hooks import BeforeModelCallEvent, MessageAddedEvent
        from strands.middleware import ExecuteToolStage
        from strands.tools.executors import SequentialToolExecutor

        manager = self._manager(inv)
        messages: list[dict[str, Any]] = []
        agent_state: dict[str, Any] = {}
        if conv is not None:
            prepend: list[dict[str, Any]] = []
            if conv.cm_state:
                prepend = _restore_manager(manager, conv.cm_state, inv.conv_key)
            # the agent's own copy (the session's messages are shared with its earlier states), made once per unit
            restored = copy_json_data(conv.messages[manager.removed_message_count :])
            _name_restored(restored, f"{self.session.state.session_id}/{inv.conv_key}", manager.removed_message_count)
            messages = prepend + restored
            agent_state = copy_json_data(conv.agent_state)
        agent = Agent(
            model=inv.model,
            aux_model=inv.compaction.summarization_model if inv.compaction is not None else None,
            messages=messages,
            tools=None,  # registered below
            system_prompt=inv.system_prompt,
            callback_handler=None,
            conversation_manager=manager,
            tool_executor=SequentialToolExecutor(),
            agent_id=_agent_id_for_sdk(inv.agent_id),
            state=agent_state,
        )
        _register_tools(agent, inv.tools)
        if messages and not started:
            # the uninterrupted run trimmed the window when the previous invocation ended, and that trim is only
            # committed with this unit's first message: apply it again (a pure function of the messages). A unit
            # already under way was restored from the window state committed with its own messages.
            manager.apply_management(agent)
            fit_window(agent, inv.provider)
            if inv.compaction is not None and conv is not None and manager.due(conv.messages):
                manager.compact(agent)  # before the unit's prompt: a crash after its commit resumes compacted
        counters = {"model_calls": 0}
        hooks = InvocationHooks(self, inv, agent, counters)
        agent.hooks.add_callback(BeforeModelCallEvent, hooks.before_model_call)
        agent.hooks.add_callback(MessageAddedEvent, hooks.message_added)
        agent.add_middleware(ExecuteToolStage, hooks.execute_tool)
        return agent, hooks


def _register_tools(agent: Any, tools: Any) -> None:
    """Give the agent its tools: each `AgentTool` registered as the SDK's `process_tools` registers one, in order,
    without its nested `add_tool` (a closure over itself and the registry: a cycle left for the collector by every
    agent built, even one without tools). Anything else (a module of tools) goes through `process_tools`."""
    from strands.types.tools import AgentTool

    tools = list(tools)
    if not all(isinstance(tool, AgentTool) for tool in tools):
        agent.tool_registry.process_tools(tools)
        return
    for tool in tools:
        agent.tool_registry.register_tool(tool)


_TRACKING_NAMESPACE = uuid.UUID("5d6c1a8e-3f0b-4c2e-9a71-0b7e4f2d8c13")  # names restored messages' tracking ids


def _name_restored(messages: list[dict[str, Any]], conversation: str, first: int) -> None:
    """Give each restored message a tracking id its place names, the same for the same message in every unit and
    every resume: the journal keeps no tracking id (a live agent's are random), and without one the SDK draws a
    random UUID for every message of the window at every invocation. The ids keep the SDK's UUID form (hex and
    hyphens only: its context stash uses them as storage keys) and are unique across sessions and conversations:
    the uuid5 of `conversation` (`<session id>/<conversation key>`) with the message's position as its last 12 hex
    digits."""
    stem = str(uuid.uuid5(_TRACKING_NAMESPACE, conversation))[:-12]
    for position, message in enumerate(messages, start=first):
        message["tracking_id"] = f"{stem}{position:012x}"


def fit_window(agent: Any, provider: str) -> int:
    """A window the trim left starting where `provider` refuses (`history.window.misplaced_start`) starts at its
    first prompt instead, counted removed by the agent's conversation manager: a pure function of the messages, as
    the trim is. The number of messages moved out of the window (spec runs and `DurableSessionManager` alike)."""
    from strands_durable.history.window import misplaced_start

    start = misplaced_start(agent.messages, provider)
    if start:
        del agent.messages[:start]
        agent.conversation_manager.removed_message_count += start
    return start


def _restore_manager(manager: Any, cm_state: dict[str, Any], conv_key: str) -> list[dict[str, Any]]:
    """Restore the committed manager state into this run's manager; what to put before the stored messages (the
    summary of a compacted conversation). The state is read whichever manager wrote it (a spec may turn compaction
    on between runs), but a summary cannot be dropped: turning compaction off after one is refused."""
    state = copy_message_data(cm_state)
    if state.get("summary_message") and not hasattr(manager, "due"):
        raise SpecError(
            "context_policy.compaction",
            f"conversation {conv_key} was compacted; compaction cannot be turned off for this session",
        )
    state["__name__"] = type(manager).__name__
    return manager.restore_from_session(state) or []


class _StopSignal(threading.Event):
    """The run's stop request as the SDK's `cancel_signal`: set once `stop_requested()` says so, so a model call
    in flight is cancelled (our models watch it) instead of finishing first."""

    def __init__(self, stop_requested: Callable[[], bool]) -> None:
        super().__init__()
        self._stop_requested = stop_requested

    def is_set(self) -> bool:
        if not super().is_set() and self._stop_requested():
            self.set()
        return super().is_set()


def _call_agent(
    agent: Any, prompt: Any, invocation_state: dict[str, Any], cancel_signal: threading.Event | None
) -> Any:
    """Run one invocation on an event loop in this thread. The SDK's synchronous `agent()` starts a thread pool
    and a thread per call (~1 ms, most of a short unit's overhead); inside a running loop we must use it."""
    if not _loop_running():
        return run_on_thread_loop(
            agent.invoke_async(prompt, invocation_state=invocation_state, cancel_signal=cancel_signal)
        )
    return agent(prompt, invocation_state=invocation_state, cancel_signal=cancel_signal)


def _loop_running() -> bool:
    """Whether this thread runs an event loop. Asked apart from the invocation: run inside the `except` that
    catches `get_running_loop`'s RuntimeError, the invocation's crash or stop would carry that error as its
    context, and its traceback this frame."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _agent_id_for_sdk(agent_id: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "_-" else "_" for ch in agent_id) or "agent"


def _unwrap(exc: BaseException) -> BaseException:
    seen = 0
    while seen < 5:
        inner = getattr(exc, "original_exception", None) or (
            exc.__cause__ if isinstance(exc.__cause__, (DurableError, StopRequested)) else None
        )
        if inner is None or inner is exc:
            break
        exc = inner
        seen += 1
    return exc


class InvocationHooks:
    """The hooks and the tool middleware of one invocation: commits, replay, validation, crash points.

    The spec runner's `DurableInvoker` and the plain-Python `DurableSessionManager` (strands_durable.sdk) both
    commit through this one class: messages as added, each tool's raw result the moment it returns (replayed,
    never re-run, once committed), requests validated before they are sent.
    """

    def __init__(self, invoker: DurableInvoker, inv: Invocation, agent: Any, counters: dict[str, int]) -> None:
        self.invoker = invoker
        self.inv = inv
        self.agent = agent
        self.counters = counters
        self.session = invoker.session
        self.crash = invoker.crash_points
        self.retrying: set[str] = set()  # calls an AfterToolCallEvent hook asked to run again (a new attempt)
        self.answer_seq: int | None = None  # the seq of the last model answer this invocation committed
        # (conversation, its message count, this unit's turns in it) when last counted: the count is carried over
        # this invocation's own commits instead of searching the whole conversation again at each hook
        self._turns: tuple[Conversation, int, int] | None = None

    @property
    def conv(self) -> Conversation | None:
        return self.session.state.conversations.get(self.inv.conv_key)

    def _turn(self) -> int:
        """The index of the model turn in progress: assistant messages this unit has committed so far."""
        conv = self.conv
        if conv is None:
            return 0
        known = self._turns
        if known is not None and known[0] is conv and known[1] == len(conv.messages):
            return known[2]  # nothing committed to the conversation since it was counted, or only by `_committed`
        turn = sum(1 for i in unit_messages(conv, self.inv.unit) if conv.messages[i].get("role") == "assistant")
        self._turns = (conv, len(conv.messages), turn)
        return turn

    def _committed(self, index: int, turn: int, answer: bool) -> None:
        """This unit's message was just committed at `index` of a conversation where `_turn()` was `turn`: one turn
        more when it is the model's answer. Counted again at the next hook unless the commit is in the state."""
        conv = self.conv
        if conv is not None and len(conv.messages) == index + 1 and conv.units[index] == self.inv.unit:
            self._turns = (conv, index + 1, turn + answer)
        else:
            self._turns = None

    def _check_stop(self) -> None:
        if self.invoker.stop_requested():
            raise StopRequested()

    # -- hooks ---------------------------------------------------------------------------------------
    def before_model_call(self, event: Any) -> None:
        self._check_stop()
        if self.invoker.validate_requests:
            from strands_durable.history import validate

            violations = validate(
                self.agent.messages,
                provider=self.inv.provider,
                mode="request",
                tools_configured=bool(self.inv.tools)
                if self.inv.tools_configured is None
                else self.inv.tools_configured,
            )
            if violations:
                first = violations[0]
                raise WorkflowFailed(
                    f"refusing to send an invalid history for {self.inv.conv_key}: {first.rule} at message "
                    f"{first.message_index}: {first.message}"
                )
        turn = self._turn()
        # no barrier here: a model request is not an effect outside the process that could act on a commit. The
        # results it carries may still be in the syncer's fdatasync; the answer's own commit is appended after them,
        # so a power cut can never keep the answer and lose its results (journal order). A cut in that window
        # re-runs the tools (at-least-once; a non-idempotent call's `tool_started` is synchronous) and asks again.
        self.crash.emit("model.before", f"{self.inv.path}/turn[{turn}]", **self._model_fields(turn))
        self.counters["model_calls"] += 1

    def _model_fields(self, turn: int) -> dict[str, Any]:
        place = (*self.inv.place, ("turn", turn))
        return {"agent": self.inv.agent_id, "conversation": self.inv.conv_key, "turn": turn, "place": place}

    def message_added(self, event: Any) -> None:
        from strands_durable.agent.state_attribution import EVERY_OWNER, settle, state_to_commit

        if self.invoker.stop_requested():
            # the run is stopping (Ctrl+C, SIGTERM, a sibling's crash): what the SDK adds now is its "Cancelled by
            # user" answer or "Tool execution cancelled" results, never committed (the resume asks the model
            # again); committed results stay. A user's own `agent.cancel()` (plain-Python agents) is not a stop:
            # it ends the invocation as the SDK records it.
            raise StopRequested()
        message = event.message
        if self.inv.redact_pii:  # before it is committed, and in the agent's own history, so a resume matches
            from strands_durable.history.pii import redact_message_in_place

            redact_message_in_place(message)
        if self.inv.secrets:  # likewise: the live history equals what a resume reads back
            from strands_durable.history.secrets import redact_secrets_in_place

            redact_secrets_in_place(message, self.inv.secrets)
        turn = counted = self._turn()
        if message.get("role") == "assistant":
            kind = "answer"
            self.crash.emit("model.answered", f"{self.inv.path}/turn[{turn}]", **self._model_fields(turn))
        elif any("toolResult" in block for block in message.get("content", ())):
            kind, turn = "results", turn - 1
        else:
            kind = "prompt"
        commit_path = f"{self.inv.path}/turn[{turn}]/{kind}"
        conv = self.conv
        synthesized = [
            block["toolResult"]["toolUseId"]
            for block in message.get("content", ())
            if "toolResult" in block and conv is not None and _synthesized(conv, block["toolResult"]["toolUseId"])
        ]
        if synthesized:
            meta = message.setdefault("metadata", {})
            meta.setdefault("strands_durable", {})[SYNTHESIZED_MARKER] = synthesized
        stored = {k: copy_message_data(v) for k, v in message.items() if k != "tracking_id"}
        # a results message ends its batch: every change is committed; a prompt or an answer takes no tool's
        owner = EVERY_OWNER if kind == "results" else None
        agent_state, taken = state_to_commit(self.agent, conv.agent_state if conv is not None else {}, owner)
        cm_state = self.agent.conversation_manager.get_state()
        index = len(conv.messages) if conv is not None else 0
        record = events.message(
            self.inv.conv_key,
            self.inv.agent_id,
            index,
            stored,
            unit=self.inv.unit,
            agent_state=agent_state if conv is None or agent_state != conv.agent_state else events.UNSET,
            cm_state=cm_state if conv is None or cm_state != conv.cm_state else events.UNSET,
        )
        # only the model's answer is not re-derivable: a prompt is rendered again, a results message is rebuilt
        # from the durable tool-result journal; those records become durable with the next fsync
        defer = self.invoker.defer_commits
        seq = self.session.commit([record], path=commit_path, durable=kind == "answer", wait=not defer)
        self._committed(index, counted, kind == "answer")
        settle(self.agent, owner, taken)
        if kind == "answer":
            self.answer_seq = seq

    # -- tool middleware -----------------------------------------------------------------------------
    async def execute_tool(self, context: Any, next_fn: Any) -> Any:
        from strands.middleware import ToolResultEvent

        tool_use = context.tool_use
        tool_use_id = tool_use["toolUseId"]
        name = tool_use["name"]
        conv = self.conv
        assert conv is not None, "a tool ran before its conversation was committed"
        turn, index = self._turn() - 1, self._tool_index(conv, tool_use_id)
        tool_path = f"{self.inv.path}/turn[{turn}]/tool[{index}]:{name}"
        point = {
            "name": name,
            "tool_use_id": tool_use_id,
            "conversation": self.inv.conv_key,
            "non_idempotent": name in self.inv.non_idempotent,
            "turn": turn,
            "index": index,
            "place": (*self.inv.place, ("turn", turn), ("tool", index)),
        }
        committed = conv.tool_results.get(tool_use_id)
        if committed is not None and tool_use_id not in self.retrying:
            yield ToolResultEvent(copy_message_data(committed))
            return
        if name in self.inv.non_idempotent or not call_is_idempotent(context.tool, tool_use):
            if tool_use_id in conv.tools_started:
                result = _synthesized_result(tool_use_id)
                self._commit_result(result, tool_path)
                yield ToolResultEvent(result)
                return
            self.session.commit(
                [events.tool_started(self.inv.conv_key, tool_use_id)],
                path=f"{tool_path}/started",
            )
        self._check_stop()
        # a tool never runs before the answer that asked for it is durable; the results of the calls before it in
        # this turn need not be (re-run on resume, as any uncommitted call), so they share one fdatasync
        self.session.wait_durable(self.answer_seq)
        self.crash.emit("tool.before", tool_path, **point)
        final = None
        async for item in next_fn(context):
            if isinstance(item, ToolResultEvent):
                final = item
            else:
                yield item
        if final is None:
            raise WorkflowFailed(f"tool {name} produced no result")
        self.crash.emit("tool.executed", tool_path, **point)
        self.retrying.discard(tool_use_id)
        if self.inv.redact_pii:  # the journal never holds the raw result
            from strands_durable.history.pii import redact_tool_result

            final = ToolResultEvent(redact_tool_result(final.tool_result))
        if self.inv.secrets:  # a tool's echo of a secret (an error text, a printed variable) is never committed
            from strands_durable.history.secrets import redact_secrets

            final = ToolResultEvent(redact_secrets(final.tool_result, self.inv.secrets))
        self._commit_result(final.tool_result, tool_path)
        self.crash.emit("tool.committed", tool_path, **point)
        yield final

    def commit_final_result(self, result: dict[str, Any]) -> None:
        """Commit a tool's result as the user's AfterToolCallEvent hooks left it (they may have rewritten it);
        a call whose final result is committed is not entered again when its invocation is finished."""
        conv = self.conv
        raw = conv.tool_results.get(result["toolUseId"]) if conv is not None else None
        if raw is None or result["toolUseId"] in conv.final_results:  # type: ignore[union-attr]
            return  # not a call this invocation committed (a cancelled or unknown tool), or already final
        # unchanged by the hooks, it need not be durable at once: lost, the hooks would run again on the raw result
        path = f"{self.inv.path}/turn[{self._turn() - 1}]/final"
        self._commit_result(result, path, final=True, durable=result != raw)

    def _commit_result(
        self, result: dict[str, Any], tool_path: str, *, final: bool = False, durable: bool = True
    ) -> None:
        from strands_durable.agent.state_attribution import settle, state_to_commit

        conv = self.conv
        owner = result["toolUseId"]  # the changes this call's task made (and nobody's), never a sibling's
        agent_state, taken = state_to_commit(self.agent, conv.agent_state if conv is not None else {}, owner)
        changed = conv is not None and agent_state != conv.agent_state  # a tool changed agent.state: commit it too
        event = events.tool_result(
            self.inv.conv_key,
            copy_message_data(result),
            final=final,
            agent_state=agent_state if changed else events.UNSET,
        )
        self.session.commit(
            [event],
            path=tool_path if final else f"{tool_path}/result",
            durable=durable,
            wait=not self.invoker.defer_commits,
        )
        settle(self.agent, owner, taken)

    @staticmethod
    def _tool_index(conv: Conversation, tool_use_id: str) -> int:
        for message in reversed(conv.messages):
            uses = _tool_uses(message)
            for index, use in enumerate(uses):
                if use["toolUseId"] == tool_use_id:
                    return index
            if uses:
                break
        return 0


CALL_IDEMPOTENCY_ATTRIBUTE = "__strands_call_idempotent__"
"""A tool whose idempotency depends on the call (an HTTP executor's method) carries `input -> bool` here."""


def call_is_idempotent(tool: Any, tool_use: dict[str, Any]) -> bool:
    judge = getattr(tool, CALL_IDEMPOTENCY_ATTRIBUTE, None)
    return judge is None or bool(judge(tool_use.get("input") or {}))


_InvocationHooks = InvocationHooks  # the name the plugin's mutant tests patch
