"""Texts of strands-cli chain specs of N steps:
- `chain_spec_text`: one calculator-using agent per step, on the scripted model: the workload of the store benches
  (bench/bench_store.py, bench/bench_durability.py) and of the tests that watch a run's commits reach the disk;
- `refining_chain_text`: each step refining the last response, on the synthetic model, with one agent for all steps
  (one conversation that grows with the chain) or one per step: the workload of the chaos benches' chain comparison
  (bench/bench_chaos.py, bench/bench_sdk_terms.py) and of the tests that count a crash point's work per step."""

from __future__ import annotations

__all__ = ["chain_spec_text", "refining_chain_text"]


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


def refining_chain_text(steps: int, *, one_agent: bool, tools: bool = True, name: str | None = None) -> str:
    """With `tools` the agents have the calculator, which the synthetic model calls (a tool turn per step)."""
    agents = ["a0"] if one_agent else [f"a{i}" for i in range(steps)]
    prompt = (
        "{prompt: 'You estimate and check numbers with the calculator.', tools: [calculator]}"
        if tools
        else "{prompt: 'You refine a plan.'}"
    )
    lines = [
        "version: 0",
        f"name: {name or f'refining-chain-{steps}'}",
        "runtime: {provider: synthetic}",
        *(["tools: {python: [calculator]}"] if tools else []),
        "agents:",
        *[f"  {agent}: {prompt}" for agent in agents],
        "pattern:",
        "  type: chain",
        "  config:",
        "    steps:",
        *[
            f"      - {{agent: {agents[0] if one_agent else agents[i]}, "
            f"input: 'Step {i}: refine {{{{ last_response | truncate(80) }}}}'}}"
            for i in range(steps)
        ],
    ]
    return "\n".join(lines) + "\n"
