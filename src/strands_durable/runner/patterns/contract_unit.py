"""An agent unit whose answer must satisfy a JSON contract (route, evaluation, task list).

The first prompt ends with the contract's instruction; an answer that does not parse is followed, in the same
conversation, by a corrective prompt (`<unit>.retry[<k>]`), up to `retries` times, then `WorkflowFailed` (exit
10). Every answer is committed as it comes, so a resume re-reads the answers instead of asking again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from strands_durable.errors import WorkflowFailed
from strands_durable.models.contracts import ContractError
from strands_durable.runner.context import RunContext
from strands_durable.runner.units import UnitRef, run_agent_unit

T = TypeVar("T")

CORRECTION = "Your previous answer could not be used: {{ contract_error }}\nAnswer again, following the format exactly."


def ask_with_contract(
    ctx: RunContext,
    ref: UnitRef,
    *,
    agent_id: str,
    conv_key: str,
    input_template: str | None,
    template_ctx: dict[str, Any],
    where: str,
    instruction: str,
    parse: Callable[[str], T],
    retries: int,
    what: str,
    tool_names: list[str] | None = None,
) -> tuple[str, T, int]:
    """(answer, parsed value, attempts used); raises WorkflowFailed naming `what` after the last retry."""
    error: ContractError | None = None
    for attempt in range(retries + 1):
        unit = ref.unit if attempt == 0 else f"{ref.unit}.retry[{attempt}]"
        response = run_agent_unit(
            ctx,
            UnitRef(unit, ref.label, ref.index, ref.total, ref.place),
            agent_id=agent_id,
            conv_key=conv_key,
            input_template=input_template if attempt == 0 else CORRECTION,
            template_ctx={**template_ctx, "contract_error": str(error)} if error else template_ctx,
            where=where,
            tool_names=tool_names,
            instruction=instruction.strip(),
        )
        try:
            return response, parse(response), attempt + 1
        except ContractError as exc:
            error = exc
    raise WorkflowFailed(f"{what} (agent '{agent_id}') gave no valid answer in {retries + 1} attempt(s): {error}")
