"""What the backend gate found: one `ClauseResult` per clause (pass, fail or not applicable, with the evidence and
a command that reproduces a failure), the level the backend reached, the JSON document and the terminal table."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

PASS, FAIL, NOT_APPLICABLE = "pass", "fail", "not applicable"

# the clauses of the manager level (every backend is driven through a manager), each with its one-line meaning
CRASH_CLAUSES: dict[str, str] = {
    "valid-history": "every request a resumed agent sends, and the stored history continued, is one a provider accepts",
    "acknowledged-not-lost": "every message of an agent/Graph/Swarm call that returned to its caller survives a kill",
    "durable-per-message": "a message survives a kill once its MessageAddedEvent has returned",
    "ids-not-reused": "no message id that a stored message holds is given to another message",
    "tool-results-once": "a recorded tool result is never run again; a started non-idempotent tool never runs "
    "again and is answered as an error (outcome unknown)",
    "nodes-not-rerun": "a Graph or Swarm never runs a completed node again",
    "liveness": "every run ends within the per-run limit",
}
CONCURRENT_CLAUSES: dict[str, str] = {
    "two-resumers": "of two processes resuming one session at once, the loser gets an error and none of its "
    "writes becomes durable",
}
CLAUSES: dict[str, str] = {**CRASH_CLAUSES, **CONCURRENT_CLAUSES}

# named levels, each asking for every clause of the one before it
LEVELS = ("none", "crash-safe", "message-durable", "concurrent-safe")
LEVEL_MEANINGS = {
    "none": "a clause below crash-safe fails",
    "crash-safe": "kills at every point: the contract clauses of its kind and every crash clause except "
    "durable-per-message pass",
    "message-durable": "crash-safe, and every message is durable once its MessageAddedEvent returned",
    "concurrent-safe": "message-durable, and two resumers of one session cannot fork it",
}
_LEVEL_ASKS = {"message-durable": "durable-per-message", "concurrent-safe": "two-resumers"}


@dataclass
class ClauseResult:
    name: str
    outcome: str
    detail: str = ""
    reproduce: str = ""

    def as_json(self) -> dict[str, str]:
        return {"name": self.name, "outcome": self.outcome, "detail": self.detail, "reproduce": self.reproduce}


@dataclass
class BackendReport:
    """The gate's answer for one backend. `level` is the highest of `LEVELS` every clause it asks for passes;
    `repository_calls` counts the calls into the backend's repository or storage the proxy saw (0: only the SDK's
    hook points were explored)."""

    backend: str
    kind: str
    clauses: list[ClauseResult] = field(default_factory=list)
    repository_calls: int = 0
    crash_points: int = 0
    factory_kills: int = 0  # runs killed inside the factory call (session creation) and resumed
    seconds: float = 0.0
    phases: dict[str, float] = field(default_factory=dict)  # seconds per phase (detect, contract, golden, ...)
    children: int = 0  # processes forked

    def clause(self, name: str) -> ClauseResult | None:
        return next((c for c in self.clauses if c.name == name), None)

    @property
    def failed(self) -> list[ClauseResult]:
        return [c for c in self.clauses if c.outcome == FAIL]

    @property
    def passed(self) -> bool:
        """Every applicable clause passed."""
        return not self.failed

    @property
    def level(self) -> str:
        base = [c for c in self.clauses if c.name not in _LEVEL_ASKS.values()]
        if any(c.outcome == FAIL for c in base):
            return "none"
        reached = "crash-safe"
        for level in LEVELS[2:]:
            asked = self.clause(_LEVEL_ASKS[level])
            if asked is None or asked.outcome != PASS:
                break
            reached = level
        return reached

    def as_json(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "level": self.level,
            "clauses": [c.as_json() for c in self.clauses],
            "kind": self.kind,
            "repository_calls": self.repository_calls,
            "crash_points": self.crash_points,
            "factory_kills": self.factory_kills,
            "seconds": round(self.seconds, 2),
        }

    def table(self) -> str:
        """The terminal table: one row per clause, then the level."""
        width = max([len(c.name) for c in self.clauses] + [6])
        lines = [f"backend {self.backend} ({self.kind})", f"{'clause':<{width}}  {'outcome':<14}  detail"]
        for c in self.clauses:
            lines.append(f"{c.name:<{width}}  {c.outcome:<14}  {c.detail}")
            if c.outcome == FAIL and c.reproduce:
                lines.append(f"{'':<{width}}  {'':<14}  reproduce: {c.reproduce}")
        calls = (
            f"{self.repository_calls} repository/storage calls seen"
            if self.repository_calls
            else ("no repository or storage calls seen (only the SDK's hook points were explored)")
        )
        kills = f"{self.factory_kills} killed inside the factory call"
        lines.append(f"{self.crash_points} crash points ({kills}), {calls}, {self.seconds:.1f} s")
        lines.append(f"level: {self.level} ({LEVEL_MEANINGS[self.level]})")
        return "\n".join(lines)
