"""`SyntheticModel` (`provider: synthetic`): the offline, deterministic stand-in for a paid model.

A pure function of (seed, normalised request); see `synthetic_policy` for how it decides.
`STRANDS_SYNTHETIC_LATENCY_MS` adds that many milliseconds of (async) latency per call.
"""

from __future__ import annotations

import os
from typing import Any

from .base import PolicyModel
from .events import StreamFault
from .synthetic_policy import DEFAULT_MAX_TOOL_ROUNDS, SyntheticPolicy

LATENCY_ENV = "STRANDS_SYNTHETIC_LATENCY_MS"


class SyntheticModel(PolicyModel):
    """Deterministic model: same seed and request, same stream, in any process."""

    def __init__(
        self,
        *,
        seed: int = 0,
        model_id: str = "synthetic",
        max_tool_rounds: int = DEFAULT_MAX_TOOL_ROUNDS,
        stream_fault: StreamFault | None = None,
        answer_literals: tuple[tuple[str, str], ...] = (),
        **config: Any,
    ) -> None:
        super().__init__(
            SyntheticPolicy(seed=seed, max_tool_rounds=max_tool_rounds, literals=answer_literals),
            stream_fault=stream_fault,
            model_id=model_id,
            seed=seed,
            max_tool_rounds=max_tool_rounds,
            **({"answer_literals": answer_literals} if answer_literals else {}),
            **config,
        )

    def update_config(self, **model_config: Any) -> None:
        super().update_config(**model_config)
        self.policy = SyntheticPolicy(
            seed=self.config["seed"],
            max_tool_rounds=self.config["max_tool_rounds"],
            literals=tuple(self.config.get("answer_literals", ())),
        )

    def latency_seconds(self) -> float:
        raw = os.environ.get(LATENCY_ENV, "").strip()
        if not raw:
            return 0.0
        try:
            milliseconds = float(raw)
        except ValueError as exc:
            raise ValueError(f"{LATENCY_ENV} must be a number of milliseconds, got {raw!r}") from exc
        return max(0.0, milliseconds) / 1000.0
