"""An `Answer` as Converse stream events, and the model-stream faults (F6) injected on the way.

Events: messageStart, per block contentBlockStart/Delta/Stop (text in fixed-size pieces, a tool's input as one
JSON string), messageStop with stopReason, metadata with usage and latencyMs 0.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any, Literal

from .answer import Answer, ToolCall

StreamFaultKind = Literal["cut", "duplicate_tool_ids", "invalid_tool_id", "empty_text"]
_TEXT_PIECE = 64
INVALID_TOOL_USE_ID = "tool use/id with spaces!"


class StreamCut(ConnectionError):
    """The model stream broke off mid-answer (an injected fault)."""


@dataclass(frozen=True)
class StreamFault:
    """A fault in the model stream.

    - `cut`: the stream raises `StreamCut` after `after_events` events.
    - `duplicate_tool_ids`: every toolUse of the turn carries the first one's id (a lone one is sent twice).
    - `invalid_tool_id`: toolUse ids violate `^[a-zA-Z0-9_-]{1,64}$`.
    - `empty_text`: the turn carries an empty text block (replacing the text of a text answer).

    `times` limits the fault to the first that many model calls of the model holding it (None: every call).
    """

    kind: StreamFaultKind
    after_events: int = 0
    times: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("cut", "duplicate_tool_ids", "invalid_tool_id", "empty_text"):
            raise ValueError(f"unknown stream fault kind: {self.kind!r}")
        if self.after_events < 0:
            raise ValueError("after_events must not be negative")


def apply_fault_to_answer(answer: Answer, fault: StreamFault | None) -> Answer:
    """The answer as the faulty stream delivers it (`cut` is applied to the events instead)."""
    if fault is None or fault.kind == "cut":
        return answer
    calls = answer.tool_calls
    if fault.kind == "duplicate_tool_ids" and calls:
        first = calls[0].tool_use_id
        calls = calls if len(calls) > 1 else [calls[0], calls[0]]
        return dataclasses.replace(answer, tool_calls=[dataclasses.replace(c, tool_use_id=first) for c in calls])
    if fault.kind == "invalid_tool_id" and calls:
        return dataclasses.replace(
            answer,
            tool_calls=[dataclasses.replace(c, tool_use_id=f"{INVALID_TOOL_USE_ID} {i}") for i, c in enumerate(calls)],
        )
    if fault.kind == "empty_text":
        return dataclasses.replace(answer, text="")
    return answer


def answer_events(answer: Answer) -> list[dict[str, Any]]:
    """The Converse stream events of a whole answer."""
    events: list[dict[str, Any]] = [{"messageStart": {"role": "assistant"}}]
    index = 0
    if answer.text is not None:
        events.append({"contentBlockStart": {"contentBlockIndex": index, "start": {}}})
        pieces = [answer.text[i : i + _TEXT_PIECE] for i in range(0, len(answer.text), _TEXT_PIECE)] or [""]
        events.extend({"contentBlockDelta": {"contentBlockIndex": index, "delta": {"text": p}}} for p in pieces)
        events.append({"contentBlockStop": {"contentBlockIndex": index}})
        index += 1
    for call in answer.tool_calls:
        events.extend(_tool_events(call, index))
        index += 1
    events.append({"messageStop": {"stopReason": answer.stop_reason}})
    events.append({"metadata": {"usage": answer.usage.as_strands(), "metrics": {"latencyMs": 0}}})
    return events


def _tool_events(call: ToolCall, index: int) -> list[dict[str, Any]]:
    start = {"toolUse": {"toolUseId": call.tool_use_id, "name": call.name}}
    payload = json.dumps(call.input, ensure_ascii=False, sort_keys=True)
    return [
        {"contentBlockStart": {"contentBlockIndex": index, "start": start}},
        {"contentBlockDelta": {"contentBlockIndex": index, "delta": {"toolUse": {"input": payload}}}},
        {"contentBlockStop": {"contentBlockIndex": index}},
    ]
