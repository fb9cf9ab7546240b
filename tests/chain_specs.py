"""The one-agent chain the cost and digest tests run: every step by one agent, so its one conversation grows with the
chain, as the issue 37 bench's chains do (bench/bench_chaos.py `chain_spec`)."""

from __future__ import annotations


def one_agent_chain(steps: int, *, tools: bool = True) -> str:
    """A chain of `steps` steps, each refining the last response; with `tools` the agent has the calculator, which the
    synthetic model calls (a tool turn per step)."""
    agent = (
        "  a0: {prompt: 'You estimate and check numbers with the calculator.', tools: [calculator]}"
        if tools
        else "  a0: {prompt: 'You refine a plan.'}"
    )
    lines = [
        "version: 0",
        f"name: one-agent-chain-{steps}",
        "runtime: {provider: synthetic}",
        *(["tools: {python: [calculator]}"] if tools else []),
        "agents:",
        agent,
        "pattern:",
        "  type: chain",
        "  config:",
        "    steps:",
    ]
    step = "      - {{agent: a0, input: 'Step {}: refine {{{{ last_response | truncate(80) }}}}'}}"
    lines += [step.format(i) for i in range(steps)]
    return "\n".join(lines) + "\n"
