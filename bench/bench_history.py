"""How long history validation takes on a long conversation, against baselines measured in the same run.

Builds a valid 10,000-message history the way Strands stores it (tracking_id and usage metadata on every
message; prompts, answers, tool calls with results, some of them parallel), then reports the best of N runs of
`validate` next to two baselines over the same list: a plain loop touching every content block, and
`json.dumps` (what writing the history once costs). Target: validate(10,000 messages) <= 20 ms.

    .venv/bin/python bench/bench_history.py [--messages 10000] [--runs 30]
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Callable
from typing import Any

from strands_durable.history import normalize, repair, validate

TARGET_MS = 20.0


def build_history(size: int, seed: int = 0) -> list[dict[str, Any]]:
    """A valid conversation of exactly `size` messages, ending with an assistant answer."""
    rng = random.Random(seed)
    words = [
        "the",
        "a",
        "report",
        "weather",
        "city",
        "price",
        "order",
        "status",
        "file",
        "line",
        "result",
        "value",
        "check",
        "list",
        "summary",
    ]

    def sentence(n: int) -> str:
        return " ".join(rng.choice(words) for _ in range(n)).capitalize() + "."

    def stamp(message: dict[str, Any], index: int) -> dict[str, Any]:
        message["tracking_id"] = f"{rng.getrandbits(128):032x}"
        if message["role"] == "assistant":
            tokens = rng.randint(50, 900)
            message["metadata"] = {
                "usage": {"inputTokens": 40 * index, "outputTokens": tokens, "totalTokens": 40 * index + tokens},
                "metrics": {"latencyMs": rng.randint(200, 4000)},
            }
        return message

    history: list[dict[str, Any]] = []
    call = 0
    while len(history) < size:
        history.append({"role": "user", "content": [{"text": sentence(rng.randint(8, 40))}]})
        if len(history) + 3 <= size and rng.random() < 0.6:  # a tool round: 1 call, or 2-4 in parallel
            calls = [f"tooluse_{(call := call + 1):08d}" for _ in range(rng.choice([1, 1, 1, 2, 3, 4]))]
            history.append(
                {
                    "role": "assistant",
                    "content": [{"text": sentence(rng.randint(5, 20))}]
                    + [
                        {"toolUse": {"toolUseId": c, "name": "lookup", "input": {"query": sentence(4), "n": 3}}}
                        for c in calls
                    ],
                }
            )
            history.append(
                {
                    "role": "user",
                    "content": [
                        {
                            "toolResult": {
                                "toolUseId": c,
                                "status": "success",
                                "content": [{"text": sentence(rng.randint(10, 60))}],
                            }
                        }
                        for c in calls
                    ],
                }
            )
        history.append({"role": "assistant", "content": [{"text": sentence(rng.randint(10, 80))}]})
    del history[size:]
    if history[-1]["role"] == "user":  # keep it valid as stored: end on an answer
        history[-1] = {"role": "assistant", "content": [{"text": "Done."}]}
    return [stamp(m, i) for i, m in enumerate(history)]


def best_ms(function: Callable[[], object], runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best * 1000


def touch_every_block(history: list[dict[str, Any]]) -> int:
    count = 0
    for message in history:
        for block in message["content"]:
            if "text" in block:
                count += 1
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()

    history = build_history(args.messages)
    assert validate(history, "all", "stored") == [], "the benchmark history must be valid"
    blocks = sum(len(m["content"]) for m in history)
    calls = sum("toolUse" in b for m in history for b in m["content"])

    loop = best_ms(lambda: touch_every_block(history), args.runs)
    dumps = best_ms(lambda: json.dumps(history), args.runs)
    stored = best_ms(lambda: validate(history, "all", "stored"), args.runs)
    request = best_ms(lambda: validate(history, "all", "request", tools_configured=True, thinking=False), args.runs)
    repairing = best_ms(lambda: repair(history), max(3, args.runs // 5))
    normalizing = best_ms(lambda: normalize(history), max(3, args.runs // 5))

    print(f"history: {len(history)} messages, {blocks} blocks, {calls} tool calls; best of {args.runs} runs")
    print(f"baseline loop touching every block   {loop:8.2f} ms")
    print(f"baseline json.dumps                  {dumps:8.2f} ms")
    print(
        f"validate(all, stored)                {stored:8.2f} ms   {stored / loop:5.1f}x loop   "
        f"{stored / dumps:5.2f}x json.dumps"
    )
    print(
        f"validate(all, request, V11+V13)      {request:8.2f} ms   {request / loop:5.1f}x loop   "
        f"{request / dumps:5.2f}x json.dumps"
    )
    print(f"repair (valid input, copies it)      {repairing:8.2f} ms   {repairing / dumps:5.2f}x json.dumps")
    print(f"normalize (copies it)                {normalizing:8.2f} ms   {normalizing / dumps:5.2f}x json.dumps")
    verdict = "meets" if stored <= TARGET_MS else "MISSES"
    print(f"target: validate <= {TARGET_MS:.0f} ms for 10,000 messages: {verdict} ({stored:.2f} ms)")


if __name__ == "__main__":
    main()
