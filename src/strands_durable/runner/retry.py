"""`failure_policy`: retry throttled and transiently failing model calls with backoff, each attempt recorded.

A model call is retried as a whole: `RetryingModel` collects the stream of one attempt and hands it to the
agent only once it ended cleanly, so a failed attempt leaves nothing behind (no partial message, nothing
committed) and a retry can never duplicate a committed turn. Each failed attempt is reported to `on_attempt`
(the runner commits it as an `attempt` event in the session). After the last retry a transient failure becomes
`WorkflowFailed` (exit 10); a non-transient error passes through untouched (the SDK may handle it, e.g. a
context-window overflow).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from strands_durable.agent.durable import StopRequested
from strands_durable.errors import WorkflowFailed
from strands_durable.models.cancel import until_cancelled
from strands_durable.models.wrapping import WrappedModel

TRANSIENT_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504, 529})
_TRANSIENT_NAMES = (
    "throttl",
    "ratelimit",
    "rate_limit",
    "toomanyrequests",
    "serviceunavailable",
    "internalserver",
    "apiconnection",
    "apitimeout",
    "overloaded",
    "timeout",
)
DEFAULT_WAIT_MIN = 1.0
DEFAULT_WAIT_MAX = 30.0


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to wait: `retries` after the first attempt, backoff between `wait_min`/`wait_max`."""

    retries: int = 2
    backoff: str = "exponential"  # constant | exponential | jittered
    wait_min: float = DEFAULT_WAIT_MIN
    wait_max: float = DEFAULT_WAIT_MAX

    @classmethod
    def from_runtime(cls, runtime: Any) -> RetryPolicy:
        policy = getattr(runtime, "failure_policy", None)
        if policy is None:
            return cls()
        wait_min = DEFAULT_WAIT_MIN if policy.wait_min is None else float(policy.wait_min)
        wait_max = max(wait_min, DEFAULT_WAIT_MAX if policy.wait_max is None else float(policy.wait_max))
        return cls(policy.retries, policy.backoff, wait_min, wait_max)

    def delay(self, attempt: int) -> float:
        """Seconds to wait after failed attempt number `attempt` (0-based)."""
        if self.backoff == "constant":
            return self.wait_min
        exponential = min(self.wait_max, self.wait_min * (2**attempt))
        if self.backoff == "jittered":
            return random.uniform(self.wait_min, max(self.wait_min, exponential))
        return exponential


def is_transient(exc: BaseException) -> bool:
    """Throttling, 429/5xx responses, dropped connections and timeouts: worth another attempt."""
    from strands.types.exceptions import ModelThrottledException

    if isinstance(exc, (ModelThrottledException, ConnectionError, TimeoutError)):
        return True
    for holder in (exc, getattr(exc, "response", None)):
        status = getattr(holder, "status_code", None) or getattr(holder, "status", None)
        if isinstance(status, int) and status in TRANSIENT_STATUS:
            return True
    code = ""
    response = getattr(exc, "response", None)
    if isinstance(response, dict):  # botocore ClientError
        code = str(response.get("Error", {}).get("Code", ""))
    name = (type(exc).__name__ + code).lower()
    return any(part in name for part in _TRANSIENT_NAMES)


AttemptRecorder = Callable[[int, BaseException, float], None]


class RetryingModel(WrappedModel):
    """Wraps one invocation's model: budget check before each call, whole-call retries on transient errors."""

    def __init__(
        self,
        inner: Any,
        policy: RetryPolicy,
        *,
        on_attempt: AttemptRecorder,
        before_call: Callable[[], None] = lambda: None,
        wait: Callable[[float], bool] | None = None,
    ) -> None:
        super().__init__(inner)
        self.policy = policy
        self.on_attempt = on_attempt
        self.before_call = before_call
        self.wait = wait  # returns True when the run was asked to stop during the wait

    async def _back_off(self, attempt: int, reason: BaseException) -> None:
        """Record the failed attempt and wait the policy's delay (a stop request ends the wait at once)."""
        delay = self.policy.delay(attempt)
        self.on_attempt(attempt, reason, delay)
        if delay <= 0:
            return
        if self.wait is None:
            await asyncio.sleep(delay)
        elif await asyncio.get_running_loop().run_in_executor(None, self.wait, delay):
            raise StopRequested() from None

    async def stream(
        self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        attempt = 0
        cancel_signal = kwargs.get("cancel_signal")
        while True:
            self.before_call()
            events: list[Any] = []
            try:
                async for event in until_cancelled(
                    self.inner.stream(messages, tool_specs, system_prompt, **kwargs), cancel_signal
                ):
                    events.append(event)
            except Exception as exc:
                if not is_transient(exc):
                    raise
                if attempt >= self.policy.retries:
                    raise WorkflowFailed(
                        f"model call failed after {attempt + 1} attempt(s) "
                        f"(runtime.failure_policy.retries={self.policy.retries}): {type(exc).__name__}: {exc}"
                    ) from exc
                await self._back_off(attempt, exc)
                attempt += 1
                continue
            if cancel_signal is not None and cancel_signal.is_set():
                return  # the call was cancelled in flight: no answer (the SDK reports it cancelled)
            malformed = malformed_answer(events)
            if malformed is not None:  # never hand a broken answer to the agent (it would be committed)
                if attempt >= self.policy.retries:
                    raise WorkflowFailed(
                        f"model answer rejected after {attempt + 1} attempt(s) "
                        f"(runtime.failure_policy.retries={self.policy.retries}): {malformed}"
                    )
                await self._back_off(attempt, MalformedAnswer(malformed))
                attempt += 1
                continue
            for event in events:
                yield event
            return


class MalformedAnswer(Exception):
    """A model answer that streamed to its end but cannot be a valid turn (F6); retried like a dropped stream."""


def malformed_answer(events: list[Any]) -> str | None:
    """Why a whole answer's stream events cannot be committed as a turn, or None when they can: duplicate or
    invalid toolUse ids, or no tool call and no non-blank text (an empty or blank-only message)."""
    from strands_durable.models.answer import TOOL_USE_ID_RE

    ids: list[str] = []
    text: list[str] = []
    for event in events:
        if not isinstance(event, dict):
            continue
        start = event.get("contentBlockStart", {}).get("start", {})
        if "toolUse" in start:
            ids.append(str(start["toolUse"].get("toolUseId", "")))
        delta = event.get("contentBlockDelta", {}).get("delta", {})
        if "text" in delta:
            text.append(str(delta["text"]))
    for tool_use_id in ids:
        if not TOOL_USE_ID_RE.fullmatch(tool_use_id):
            return f"toolUse id {tool_use_id!r} does not match {TOOL_USE_ID_RE.pattern}"
    if len(set(ids)) != len(ids):
        return "the answer uses one toolUse id more than once"
    if not ids and not "".join(text).strip():
        return "the answer has neither text nor a tool call"
    return None
