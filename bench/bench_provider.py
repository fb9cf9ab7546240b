"""A tool-using chain through the real Strands `OpenAIModel`, ours vs the peer (strands-cli), whole processes.

One bench process serves a loopback OpenAI-compatible chat-completions server (`OpenAICompatServer`, a real
`http.server` on 127.0.0.1 streaming SSE) with a deterministic answer policy: each step's prompt is answered
with one `calculator` tool call, the tool result with a short text. A chain of `--steps` steps therefore makes
2 x steps chat-completions requests in each run. Both programs run the same spec (`runtime.provider: openai`,
`runtime.host` = the server), in alternating rounds, as real child processes; the median wall time of each is
reported with the ratio ours / peer (and each side's CPU seconds, the median of the paired ratios and the load
average), and, at each model latency (`--latencies`, milliseconds the server waits
before answering), the milliseconds per step. Every run's request count is checked, so a run that failed or
skipped steps does not count.

    PYTHONPATH=src .venv/bin/python bench/bench_provider.py --peer "/tmp/peer-venv/bin/strands run" \
        [--steps 40] [--rounds 3] [--latencies 0,200]

The peer is installed from its source in its own virtual environment (it needs Python >= 3.12), e.g.
`python3.12 -m venv /tmp/peer-venv && /tmp/peer-venv/bin/pip install <strands-cli checkout>`. `--peer ""` runs
ours only. `--profile FILE` runs ours once more under cProfile (in the child) and writes the stats there;
`--floor` times what both sides pay inside the openai package (its request transform over the bodies of the
last run, and the first import of its chat resources).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from strands_durable.models.answer import Answer, ToolCall, Usage
from strands_durable.models.digest import canonical_json, sha256_hex
from strands_durable.models.request import ModelRequest
from strands_durable.testing import OpenAICompatServer

EXPRESSION = "6 * 7"


class ChainPolicy:
    """A prompt gets one calculator call; a tool result gets a short text answer. `latency_s` per request."""

    def __init__(self, latency_s: float = 0.0) -> None:
        self.latency_s = latency_s

    def answer(self, request: ModelRequest) -> Answer:
        if self.latency_s:
            time.sleep(self.latency_s)
        last = request.messages[-1]["content"] if request.messages else []
        if any("toolResult" in block for block in last):
            return Answer(text="The calculator says 42.", usage=Usage(50, 10))
        call = ToolCall("calculator", {"expression": EXPRESSION}, "call_" + sha256_hex(canonical_json(last))[:16])
        return Answer(tool_calls=[call], usage=Usage(50, 10))


def chain_spec(steps: int, base_url: str) -> str:
    lines = [
        "version: 0",
        "name: bench-provider-chain",
        "runtime:",
        "  provider: openai",
        "  model_id: bench-1",
        f"  host: {base_url}",
        "tools:",
        "  python:",
        "    - calculator",
        "agents:",
        "  worker:",
        "    prompt: You compute with the calculator tool.",
        "    tools: [calculator]",
        "pattern:",
        "  type: chain",
        "  config:",
        "    steps:",
    ]
    for index in range(steps):
        lines.append("      - agent: worker")
        lines.append(f'        input: "Step {index + 1}: compute {EXPRESSION} with the calculator."')
    return "\n".join(lines) + "\n"


def ours_command() -> list[str]:
    script = Path(sys.executable).with_name("strands")
    return [str(script), "run"] if script.exists() else [sys.executable, "-m", "strands_durable", "run"]


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed_run(command: list[str], spec: Path, work: Path, env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system) of one run of `command` as a child process."""
    out = work / "out"
    cpu_start = children_cpu()
    start = time.perf_counter()
    result = subprocess.run(
        [*command, str(spec), "--out", str(out), "--force"],
        cwd=work,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - start
    cpu = children_cpu() - cpu_start
    if result.returncode != 0:
        raise SystemExit(f"Error: {shlex.join(command)} exited {result.returncode}: {result.stderr.strip()[-800:]}")
    return elapsed, cpu


def measure(
    name: str, command: list[str], args: argparse.Namespace, latency_ms: int, tmp: Path, bodies: list | None = None
) -> tuple[float, float]:
    """One timed run of `command` against a fresh server (wall and CPU seconds); checks the request count; keeps
    the request bodies."""
    with OpenAICompatServer(policy=ChainPolicy(latency_ms / 1000)) as server:
        work = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=tmp))
        spec = work / "chain.yaml"
        spec.write_text(chain_spec(args.steps, server.base_url), encoding="utf-8")
        env = {
            **os.environ,
            "OPENAI_API_KEY": "bench-key",
            "STRANDS_SESSIONS_DIR": str(work / "sessions"),
            "HOME": str(work),  # the peer keeps its sessions under ~/.strands
        }
        if name == "peer":
            env.pop("PYTHONPATH", None)  # its own environment only
        elif env.get("PYTHONPATH"):
            # the child runs in `work`: a relative entry (`PYTHONPATH=src`) would miss the tree under test and run
            # whatever strands_durable the interpreter has installed
            entries = env["PYTHONPATH"].split(os.pathsep)
            env["PYTHONPATH"] = os.pathsep.join(str(Path(entry).resolve()) for entry in entries if entry)
        elapsed, cpu = timed_run(command, spec, work, env)
        if server.request_count != 2 * args.steps:
            raise SystemExit(f"Error: {name} made {server.request_count} requests, expected {2 * args.steps}")
        if bodies is not None:
            bodies[:] = server.requests
    return elapsed, cpu


def child_seconds(code: str, runs: int = 5) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def report_floor(bodies: list) -> None:
    """What both programs pay inside the openai package: its request transform over these bodies (in this
    process) and the import of its chat resources on first use (child processes)."""
    import asyncio

    from openai._utils import async_maybe_transform
    from openai.types.chat import completion_create_params

    async def transform_all() -> float:
        start = time.perf_counter()
        for body in bodies:
            await async_maybe_transform(body, completion_create_params.CompletionCreateParamsStreaming)
        return time.perf_counter() - start

    transform = asyncio.run(transform_all())
    encode_start = time.perf_counter()
    for body in bodies:
        json.dumps(body)
    encode = time.perf_counter() - encode_start
    chat = child_seconds("import openai; openai.AsyncOpenAI(api_key='x').chat.completions")
    plain = child_seconds("import openai")
    print(f"\npaid by both inside the openai package ({len(bodies)} requests of one run of ours):")
    print(
        f"  request transform (async_maybe_transform): {transform:.2f} s "
        f"(json.dumps of the same bodies: {encode:.3f} s)"
    )
    print(f"  first `client.chat` (imports openai.resources and openai.types): {chat - plain:.2f} s")


def profile_ours(args: argparse.Namespace, tmp: Path) -> None:
    command = [sys.executable, "-m", "cProfile", "-o", str(Path(args.profile).resolve()), "-m", "strands_durable"]
    seconds, _ = measure("profile", [*command, "run"], args, 0, tmp)
    print(f"profile of ours ({seconds:.2f} s under cProfile) written to {args.profile}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peer", default="", help='the peer\'s run command, e.g. "/tmp/peer-venv/bin/strands run"')
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--latencies", default="0,200", help="model latencies in ms, comma-separated")
    parser.add_argument("--profile", default="", help="also write a cProfile of one run of ours to this file")
    parser.add_argument("--floor", action="store_true", help="also time the openai package's work both sides pay")
    args = parser.parse_args()

    sides = {"ours": ours_command()}
    if args.peer:
        sides["peer"] = shlex.split(args.peer)
    with tempfile.TemporaryDirectory(prefix="bench-provider-", dir=os.environ.get("BENCH_DIR")) as tmp_name:
        tmp = Path(tmp_name)
        if args.profile:
            profile_ours(args, tmp)
        print(f"{args.steps}-step chain, one calculator call per step, {2 * args.steps} requests per run")
        bodies: list = []
        for latency_ms in (int(value) for value in args.latencies.split(",") if value.strip()):
            samples: dict[str, list[float]] = {name: [] for name in sides}
            cpus: dict[str, list[float]] = {name: [] for name in sides}
            for _ in range(args.rounds):
                for name, command in sides.items():
                    kept = bodies if name == "ours" else None
                    elapsed, cpu = measure(name, command, args, latency_ms, tmp, kept)
                    samples[name].append(elapsed)
                    cpus[name].append(cpu)
            medians = {name: statistics.median(values) for name, values in samples.items()}
            cpu_medians = {name: statistics.median(values) for name, values in cpus.items()}
            print(f"\nmodel latency {latency_ms} ms (median of {args.rounds}; load average {os.getloadavg()[0]:.1f}):")
            for name, values in samples.items():
                runs = ", ".join(f"{value:.2f}" for value in values)
                per_step = 1000 * medians[name] / args.steps
                print(
                    f"  {name:5} {medians[name]:6.2f} s  {per_step:7.1f} ms/step  CPU {cpu_medians[name]:5.2f} s  "
                    f"(runs: {runs})"
                )
            if "peer" in medians:
                pairs = [ours / peer for ours, peer in zip(samples["ours"], samples["peer"], strict=True)]
                ratio = medians["ours"] / medians["peer"]
                verdict = ""
                if latency_ms == 0:
                    verdict = f"target (ours / strands-cli) <= 0.50 at 0 ms: {'met' if ratio <= 0.5 else 'not met'}"
                print(
                    f"  ratio ours/peer: {ratio:.2f} (median of paired rounds {statistics.median(pairs):.2f}; "
                    f"CPU {cpu_medians['ours'] / cpu_medians['peer']:.2f})  {verdict}"
                )
        if args.floor and bodies:
            report_floor(bodies)


if __name__ == "__main__":
    main()
