"""`chain_spec_text`: the text of a strands-cli chain spec of N steps, one calculator-using agent per step, on the
scripted model: the workload of the store benches (bench/bench_store.py, bench/bench_durability.py) and of the
tests that watch a run's commits reach the disk."""

from __future__ import annotations

__all__ = ["chain_spec_text"]


def chain_spec_text(steps: int, *, name: str = "bench-chain") -> str:
    lines = [
        "version: 0",
        f"name: {name}",
        "runtime: {provider: scripted}",
        "tools: {python: [calculator]}",
        "agents:",
        *[f"  worker{i}: {{prompt: 'You compute.', tools: [calculator]}}" for i in range(steps)],
        "pattern:",
        "  type: chain",
        "  config:",
        "    steps:",
        *[f"      - {{agent: worker{i}, input: 'Step {i}: compute.'}}" for i in range(steps)],
    ]
    return "\n".join(lines) + "\n"
