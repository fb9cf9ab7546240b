"""The unit of work every pattern is made of: an agent invocation or a human answer, committed once.

A committed unit is never run again: its recorded response is returned and the reporter is told it was
skipped. A unit's outcome and the pattern's readable position are committed together (one commit point).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

from strands_durable.agent.durable import Invocation, unit_messages
from strands_durable.crashpoints import Place
from strands_durable.errors import DurableError, HitlPaused, TurnLimitExceeded, WorkflowFailed
from strands_durable.history.secrets import redact_secrets
from strands_durable.runner.context import RunContext
from strands_durable.runner.notes import notes_prompt_section
from strands_durable.runner.tools import tool_prompt_sections
from strands_durable.spec import render
from strands_durable.store import events

DEFAULT_INPUT = "Proceed with your task."


@dataclass(frozen=True)
class UnitRef:
    """Where a unit sits: its id, the label the reporter prints, and its place among the pattern's units."""

    unit: str  # "step[1]", "task:research", ...
    label: str  # usually the agent id
    index: int
    total: int | None = None
    place: Place = ()  # below the unit's outermost segment: a branch's or route's step, (("step", n),)

    @property
    def path(self) -> str:
        return f"{self.unit}:{self.label}"


def completed(ctx: RunContext, unit: str) -> dict[str, Any] | None:
    record = ctx.state.units.get(unit)
    if record is not None and record.get("status") == "completed":
        return record
    return None


def unit_tokens(ctx: RunContext, unit: str) -> int:
    total = 0
    for conv in list(ctx.state.conversations.values()):  # concurrent units add conversations
        messages = conv.messages
        for index in unit_messages(conv, unit):  # the unit's own, not every message of the conversation
            if index < len(messages):
                usage = (messages[index].get("metadata") or {}).get("usage") or {}
                total += int(usage.get("totalTokens", 0))
    return total


def run_agent_unit(
    ctx: RunContext,
    ref: UnitRef,
    *,
    agent_id: str,
    conv_key: str,
    input_template: str | None,
    template_ctx: dict[str, Any],
    where: str,
    tool_names: list[str] | None = None,
    instruction: str | None = None,
) -> str:
    """Run (or resume) one agent unit and return its response; the caller commits it with `complete_unit`."""
    if ctx.options.unit_gate is not None:
        ctx.options.unit_gate.admit(ref.unit)  # plan mode: a unit not scheduled in this pass stops here
    ctx.reporter.unit_started(ref.index, ref.total, ref.label, ref.unit)
    ctx.crash.emit("unit.before", ref.path, unit=ref.unit, place=ref.place)
    ctx.budget.before_unit(ref.unit)
    if input_template is None:
        prompt = template_ctx.get("last_response") or DEFAULT_INPUT
    else:
        prompt = render(input_template, template_ctx, where=f"{where}.input")
    if instruction:
        prompt = f"{prompt}\n\n{instruction}"
    agent = ctx.spec.agents[agent_id]
    system_prompt = render(agent.prompt, template_ctx, where=f"agents.{agent_id}.prompt")
    system_prompt += notes_prompt_section(ctx) + tool_prompt_sections(ctx.spec)  # as strands-cli builds it
    toolset = ctx.tools.for_agent(agent_id, tool_names)
    invocation = Invocation(
        unit=ref.unit,
        path=ref.path,
        place=ref.place,
        conv_key=conv_key,
        agent_id=agent_id,
        system_prompt=system_prompt,
        prompt=prompt,
        tools=toolset.tools,
        non_idempotent=toolset.non_idempotent,
        model=_guarded_model(ctx, ref, conv_key, ctx.model_for(agent_id)),
        invocation_state=ctx.invocation_state,
        redact_pii=ctx.spec.redacts_pii,
        secrets=ctx.secrets or (),
        compaction=_compaction(ctx, ref, conv_key, agent_id),
    )
    traced = ctx.telemetry.unit(ref.unit, ref.label, agent_id) if ctx.telemetry is not None else nullcontext()
    try:
        with traced:
            return ctx.invoker.invoke(invocation).response
    except (DurableError, AssertionError):
        raise
    except RecursionError as exc:  # the SDK's event loop recurses once per tool turn
        conv = ctx.state.conversations.get(conv_key)
        turns = (
            sum(
                1
                for owner, message in zip(conv.units, conv.messages, strict=False)
                if owner == ref.unit and message.get("role") == "assistant"
            )
            if conv is not None
            else 0
        )
        raise TurnLimitExceeded(ref.path, turns, ctx.state.session_id) from exc
    except Exception as exc:  # a model, tool or provider failure the retry policy did not absorb: exit 10
        raise WorkflowFailed(f"{ref.path}: {type(exc).__name__}: {exc}") from exc


def _compaction(ctx: RunContext, ref: UnitRef, conv_key: str, agent_id: str) -> Any:
    """`context_policy.compaction` for this agent (None when absent or disabled); `summarization_model` is built
    like the agent's own model (same provider) and guarded the same way."""
    policy = ctx.spec.context_policy.compaction if ctx.spec.context_policy is not None else None
    if policy is None or not policy.enabled:
        return None
    from strands_durable.agent.compaction import DEFAULT_THRESHOLD, CompactionPolicy

    summarizer = None
    if policy.summarization_model:
        summarizer = _guarded_model(ctx, ref, conv_key, ctx.model_for(agent_id, policy.summarization_model))
    return CompactionPolicy(
        when_tokens_over=policy.when_tokens_over or DEFAULT_THRESHOLD,
        summary_ratio=policy.summary_ratio,
        preserve_recent_messages=policy.preserve_recent_messages,
        summarization_model=summarizer,
    )


def _guarded_model(ctx: RunContext, ref: UnitRef, conv_key: str, model: Any) -> Any:
    """A model behind the run's budget check and failure policy; failed attempts are committed."""
    from strands_durable.runner.retry import RetryingModel

    def record_attempt(attempt: int, exc: BaseException, wait_s: float) -> None:
        error = redact_secrets(f"{type(exc).__name__}: {exc}", ctx.secrets or ())[:500]
        event = events.attempt(ref.unit, conv_key, attempt, error, round(wait_s, 3))
        ctx.session.commit([event], path=f"{ref.path}/attempt[{attempt}]")
        ctx.reporter.warning(f"{ref.unit}: model call failed ({event['error']}); retrying in {wait_s:.1f}s")

    return RetryingModel(
        model,
        ctx.retry_policy,
        on_attempt=record_attempt,
        before_call=ctx.budget.before_model_call,
        wait=ctx.cancelled.wait,
    )


def complete_unit(
    ctx: RunContext, ref: UnitRef, record: dict[str, Any], pattern_state: dict[str, Any], *, derived: bool = True
) -> None:
    """Commit a unit's outcome and the pattern's new position as one commit point.

    `derived=True` (an agent unit): the outcome is read from the unit's durable conversation, so a lost record
    is re-derived on resume without a model call, and the commit neither fsyncs nor waits for the deferred answer
    before it (the next barrier makes both durable: a tool call, an artifact claim, a status change, a HITL pause,
    `close`). `derived=False` for outcomes from outside the journal (a human's answer): durable before it returns.
    """
    record = {"status": "completed", **record}
    outcome = [events.unit(ref.unit, record)]
    gate = ctx.options.unit_gate
    if gate is None or gate.keeps_position():  # plan mode: a sibling unit's position would not commute
        outcome.append(events.pattern_state(pattern_state))
    ctx.session.commit(outcome, path=ref.path, durable=not derived, wait=not derived)
    ctx.crash.emit("unit.after", ref.path, unit=ref.unit, place=ref.place)
    ctx.reporter.unit_completed(ref.index, ref.total, ref.label, ref.unit, unit_tokens(ctx, ref.unit))


def skip_unit(ctx: RunContext, ref: UnitRef) -> dict[str, Any] | None:
    return skip_committed(ctx, ref.unit, ref.label, ref.index, ref.total)


def skip_committed(ctx: RunContext, unit: str, label: str, index: int, total: int | None) -> dict[str, Any] | None:
    """`skip_unit` for a unit not yet described by a `UnitRef`: its record when it is committed (the reporter and the
    telemetry told it is not run again), else None."""
    found = skip_committed_prefix(ctx, ((unit, label, index),), total)
    return found[0] if found else None


def skip_committed_prefix(
    ctx: RunContext, units: Iterable[tuple[str, str, int]], total: int | None
) -> list[dict[str, Any]]:
    """The records of the leading units of `units` (id, label, index) that are committed (`completed`), each reported
    skipped as `skip_committed` reports it; stops at the first one that is not. A resume of a chain passes its
    committed steps through this one loop: a lookup and the reporter's call per step."""
    reporter, telemetry = ctx.reporter, ctx.telemetry
    records = []
    for unit, label, index in units:
        record = completed(ctx, unit)
        if record is None:
            break
        reporter.unit_skipped(index, label, unit, total=total)
        if telemetry is not None:
            telemetry.unit_skipped(unit, label)
        records.append(record)
    return records


def hitl_answer(ctx: RunContext, ref: UnitRef, step: Any, template_ctx: dict[str, Any], where: str) -> str:
    """The human's answer for a HITL unit (PII redacted under `security.guardrails.pii_redaction`, before the
    caller commits it), or pause the session (exit 19) with the prompt and context shown."""
    answer = _hitl_answer(ctx, ref, step, template_ctx, where)
    return _redacted(ctx, answer)


def _redacted(ctx: RunContext, text: str) -> str:
    if not ctx.spec.redacts_pii:
        return text
    from strands_durable.history.pii import redact_pii

    return redact_pii(text)


def _hitl_answer(ctx: RunContext, ref: UnitRef, step: Any, template_ctx: dict[str, Any], where: str) -> str:
    """The human's answer for a HITL unit, or pause the session (exit 19) with the prompt and context shown.

    An answer comes from `--hitl-response`, or, once `timeout_seconds` have passed since the pause, from the
    step's `default`. One question is pending at a time: while another unit's question waits for its answer,
    this unit waits too (`HitlDeferred`, nothing committed) and asks once that one is answered.
    """
    if ctx.options.unit_gate is not None:
        ctx.options.unit_gate.ask(ref.unit)  # plan mode: only plan passes ask (a unit pass has siblings)
    with ctx.lock:
        pending = ctx.state.pattern_state.get("pending_hitl") or {}
        other_pending = bool(pending) and pending.get("unit") != ref.unit
        if ctx.hitl_response is not None and not other_pending:
            answer = ctx.hitl_response
            ctx.hitl_response = None  # one answer answers one pause
            return answer
        if ctx.options.hitl_answer is not None and not other_pending:
            return ctx.options.hitl_answer
        if ctx.options.hitl_use_defaults and step.default is not None:
            return step.default
        if pending.get("unit") == ref.unit and step.default is not None and step.timeout_seconds:
            paused_at = dt.datetime.fromisoformat(pending["paused_at"])
            if dt.datetime.now(dt.timezone.utc) - paused_at >= dt.timedelta(seconds=step.timeout_seconds):
                return step.default
        if other_pending:
            raise HitlDeferred(f"{ref.unit} waits until the question at {pending['unit']} is answered")
        prompt = render(step.prompt, template_ctx, where=f"{where}.prompt")
        context = (
            render(step.context_display, template_ctx, where=f"{where}.context_display") if step.context_display else ""
        )
        pause: list[dict[str, Any]] = []
        if pending.get("unit") != ref.unit:
            state = dict(ctx.state.pattern_state)
            state["pending_hitl"] = {
                "unit": ref.unit,
                "prompt": _redacted(ctx, prompt),
                "context": _redacted(ctx, context),
                "default": step.default,
                "paused_at": dt.datetime.now(dt.timezone.utc).isoformat(),
            }
            pause.append(events.pattern_state(state))
        if ctx.state.status != "paused" or ctx.state.reason != "hitl":
            pause.append(events.status("paused", "hitl"))
        if pause:
            ctx.session.commit(pause, path=ref.path)
    raise HitlPaused(f"Paused for human input at {ref.unit}: {prompt}" + (f"\n{context}" if context else ""))


class HitlDeferred(HitlPaused):
    """A HITL unit that waits for another unit's pending question to be answered first."""
