"""Time from `strands run` to the first model request, against `python -c "import strands"` in the same run.

Target (issue 18): at most 0.3 s more than importing strands-agents alone, on the synthetic example. Each sample
is a real child process of this interpreter: the `strands` program (its `main`, as the console script runs it)
on `examples/chain-research.strands.yaml` with the synthetic provider, through a small wrapper that writes the
wall-clock time of the synthetic policy's first answer (the first model request) to stderr; the bench takes the
time from just before the child was spawned. `--runs` samples of each side, alternating, after one warm-up;
medians are reported. `--modules` also lists the modules the run imports before its first model request that
`import strands` does not, with their own import time (`python -X importtime`), largest first.

    PYTHONPATH=src .venv/bin/python bench/bench_startup.py [--runs 15] [--modules 25]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "chain-research.strands.yaml"
MARK = "FIRST-MODEL-REQUEST"
WRAPPER = f"""
import os, sys, time
from strands_durable.models.synthetic_policy import SyntheticPolicy
answer = SyntheticPolicy.answer
def first_answer(self, request):
    SyntheticPolicy.answer = answer
    os.write(2, ("{MARK} %.6f\\n" % time.time()).encode())
    return answer(self, request)
SyntheticPolicy.answer = first_answer
from strands_durable.cli.app import main
sys.argv[0] = "strands"
main()
"""


def run_seconds(work: Path, env: dict[str, str], extra: list[str] | None = None) -> tuple[float, str]:
    """(seconds from spawn to the first model request, the child's stderr)."""
    command = [sys.executable, *(extra or []), "-c", WRAPPER, "run", str(EXAMPLE), "--provider", "synthetic"]
    command += ["--out", str(work / "out"), "--force", "--sessions-dir", str(work / "sessions")]
    start = time.time()
    result = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    marks = [line for line in result.stderr.splitlines() if line.startswith(MARK)]
    if result.returncode != 0 or not marks:
        raise SystemExit(f"Error: strands run exited {result.returncode}: {result.stderr.strip()[-800:]}")
    return float(marks[0].split()[1]) - start, result.stderr


def import_seconds(env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import strands"], env=env, check=True)
    return time.perf_counter() - start


def imported_modules(stderr: str) -> dict[str, int]:
    """Module -> its own import time in microseconds, from `-X importtime` lines up to the first model request."""
    modules: dict[str, int] = {}
    for line in stderr.splitlines():
        if line.startswith(MARK):
            break
        if line.startswith("import time:") and "cumulative" not in line:
            own, _, name = line[len("import time:") :].split("|")
            modules[name.strip()] = int(own)
    return modules


def extra_modules(work: Path, env: dict[str, str], top: int) -> None:
    _, run_stderr = run_seconds(work, env, ["-X", "importtime"])
    plain = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import strands"], env=env, capture_output=True, text=True
    )
    extra = {
        name: us for name, us in imported_modules(run_stderr).items() if name not in imported_modules(plain.stderr)
    }
    print(f"\n{len(extra)} modules imported before the first model request beyond `import strands`:")
    print(f"  {sum(extra.values()) / 1000:.0f} ms of their own import time; the largest:")
    for name, us in sorted(extra.items(), key=lambda item: -item[1])[:top]:
        print(f"  {us / 1000:7.1f} ms  {name}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--modules", type=int, default=0, help="list this many extra modules (0: none)")
    args = parser.parse_args()
    env = {**os.environ, "STRANDS_CLOCK": "2026-01-01T00:00:00Z"}
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as tmp:
        work = Path(tmp)
        run_seconds(work, env)  # warm the file cache and bytecode
        import_seconds(env)
        runs, imports = [], []
        for _ in range(args.runs):
            runs.append(run_seconds(work, env)[0])
            imports.append(import_seconds(env))
        run_median, import_median = statistics.median(runs), statistics.median(imports)
        print(f'python -c "import strands": {import_median * 1000:.0f} ms (median of {args.runs})')
        print(f"strands run -> first model request: {run_median * 1000:.0f} ms (median of {args.runs})")
        gap = run_median - import_median
        print(f"difference: {gap * 1000:.0f} ms (target <= 300 ms: {'met' if gap <= 0.3 else 'NOT met'})")
        if args.modules:
            extra_modules(work, env, args.modules)


if __name__ == "__main__":
    main()
