"""The backend scorecard: the durability gate over real Strands session backends from PyPI on real servers on
loopback, each row beside its commit latency and resume times measured on the same servers in the same run.

    pip install -e ".[test,bench]" -r bench/scorecard/requirements.txt
    python bench/scorecard/run.py [--out docs/backends.md] [--json FILE] [--only FACTORY,...] [--install]

Rewrites docs/backends.md below its `<!-- scorecard -->` line and the plot docs/img/backends-scorecard.png. A
backend that does not install, import or build gets its row with its version and the first line of the error.
`--install` installs the backends that cannot share one `pip install -r` (their rows keep pip's error line).
Measurements run first, one backend at a time; then the gates, `--gate-jobs` at a time, each in a child stopped
after `--gate-timeout-s` or when the run's `--budget-s` is spent (its row says which); `--gate-every N` runs a
partial gate (every N-th crash point).
Exit 0: the scorecard was written (backends failing clauses are its content); 2: a bad option; 4: a server did
not start, or (with `--require-gate`) the gate is not installed: the scorecard could not run.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import importlib.util
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # `python bench/scorecard/run.py` puts only bench/scorecard on the path

from bench.scorecard.conversation import build_agent, prompt  # noqa: E402 - after the path line above
from bench.scorecard.factories import BACKENDS, Backend, LocalContext  # noqa: E402
from bench.scorecard.measure import RESUME_SIZES, commit_latency, first_line, measure  # noqa: E402
from bench.scorecard.render import Row, plot, rewrite, section  # noqa: E402
from bench.scorecard.servers import ServerUnavailable, serving  # noqa: E402

REQUIREMENTS = Path(__file__).with_name("requirements.txt")
# backend distribution -> its requirements, installed by its own pip run (strands-redis-session-manager needs
# Python >= 3.12): a failure becomes that backend's row instead of stopping the shared `pip install -r`
SEPARATE = {"strands-redis-session-manager": ("strands-redis-session-manager==0.1.0", "redis==8.1.0")}
GATE_MODULE = "strands_durable.faults.backends"
FLOOR = "no session manager (the floor)"
# the servers' versions the scorecard pins (Debian 12's packages; moto is pinned in requirements.txt)
RENDER_MARGIN_S = 60  # stopping the servers, the table and the plot, after the last gate
SERVER_VERSIONS = {"redis": "redis 7.0.", "postgresql": "PostgreSQL 15."}
EXIT_USAGE = 2
EXIT_CANNOT_RUN = 4


def pinned_versions() -> dict[str, str]:
    """distribution (lower case) -> the version requirements.txt (and SEPARATE) pin."""
    lines = [line.split("#")[0].strip() for line in REQUIREMENTS.read_text().splitlines()]
    lines += [requirement for requirements in SEPARATE.values() for requirement in requirements]
    pins = [line.split("==") for line in lines if "==" in line]
    return {name.split("[")[0].lower(): version for name, version in pins}


def installed_version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def install_separately() -> dict[str, str]:
    """Install SEPARATE's backends one by one; distribution -> the first line of pip's error for those that fail."""
    errors: dict[str, str] = {}
    for distribution, requirements in SEPARATE.items():
        command = [sys.executable, "-m", "pip", "install", "-q", *requirements]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            lines = [line for line in done.stderr.splitlines() if line.startswith("ERROR")] or ["pip failed"]
            errors[distribution] = lines[0]
    return errors


def probe(backend: Backend, scratch: Path) -> None:
    """Build the backend's Agent and run one prompt: the row's `does not run` error when this raises."""
    name = backend.factory.__name__
    directory = scratch / f"probe-{name}"
    directory.mkdir(parents=True)
    agent = build_agent(backend.factory, LocalContext("probe", directory, f"probe-{name}"))
    agent(prompt(0))


GATES: set[subprocess.Popen] = set()  # the gate children running now


def kill_group(process: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)


def stop_on_sigterm(signum: int, _frame: object) -> None:
    """SIGTERM (`timeout` in CI): kill the running gates, then unwind so that every server is stopped."""
    for process in list(GATES):
        kill_group(process)
    raise SystemExit(128 + signum)


def gate(backend: Backend, args: argparse.Namespace, timeout_s: float) -> tuple[str, list[dict], str | None]:
    """(level, failing clauses, error) from the gate run on `backend` in a child process stopped after
    `timeout_s`."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    command = [sys.executable, "-m", "bench.scorecard.gate_child", backend.factory.__name__, str(args.run_limit_s)]
    command.append(str(args.gate_every))
    # a session of its own: a timeout or the driver's SIGTERM kills the gate and every child it forked
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env, start_new_session=True
    )
    GATES.add(process)
    try:
        stdout, stderr = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        kill_group(process)
        process.communicate()
        return "-", [], f"the gate did not finish within {timeout_s:.0f} s"
    finally:
        GATES.discard(process)
    if process.returncode != 0 or not stdout.strip():
        tail = (stderr.strip().splitlines() or ["no output"])[-1]
        return "-", [], f"the gate failed (exit {process.returncode}): {tail}"
    report = json.loads(stdout.strip().splitlines()[-1])
    failed = [clause for clause in report["clauses"] if clause["outcome"] == "fail"]
    level = report["level"] if args.gate_every == 1 else f"{report['level']} (1 crash point in {args.gate_every})"
    return level, failed, None


def measured_row(backend: Backend, args: argparse.Namespace, scratch: Path, install_errors: dict[str, str]) -> Row:
    """The backend's row with its version, and its measurements, or the first line of why it does not run."""
    version = installed_version(backend.distribution)
    pinned = pinned_versions().get(backend.distribution.lower(), "?")
    row = Row(backend.name, version or f"{pinned} (not installed)", backend.reference, backend.ours)
    if backend.distribution in install_errors:
        row.error = install_errors[backend.distribution]
        return row
    try:
        probe(backend, scratch)
    except Exception as exc:
        row.error = first_line(exc)
        return row
    started = time.monotonic()
    row.measurements = measure(
        backend, scratch / "measure", samples=args.samples, seeding_budget_s=args.seeding_budget_s
    ).as_json()
    row.seconds["measure"] = time.monotonic() - started
    return row


def gate_rows(pairs: list[tuple[Backend, Row]], args: argparse.Namespace, deadline: float) -> None:
    """Gate every backend that runs, `--gate-jobs` at a time (each gate waits on its children's kills, fsyncs and
    servers far more than it computes), after the measurements so that none of them is timed beside a gate; a
    gate still running at `deadline` (monotonic) is stopped and its row says so."""
    from concurrent.futures import ThreadPoolExecutor

    def one(pair: tuple[Backend, Row]) -> None:
        backend, row = pair
        started = time.monotonic()
        left = deadline - started
        if left <= 0:
            row.level, row.gate_error = "-", "not gated: the scorecard's --budget-s ran out"
            return
        row.level, row.failed, row.gate_error = gate(backend, args, min(args.gate_timeout_s, left))
        row.seconds["gate"] = time.monotonic() - started
        print(f"scorecard: gated {backend.name}: {row.level} {row.gate_error or ''}", file=sys.stderr, flush=True)

    with ThreadPoolExecutor(max_workers=args.gate_jobs) as pool:
        list(pool.map(one, [(backend, row) for backend, row in pairs if row.error is None]))


def floor(args: argparse.Namespace, scratch: Path) -> Row:
    """The row of no session manager at all: the commit latency every backend's figure includes."""
    row = Row(FLOOR, installed_version("strands-agents") or "?", "", ours=False)
    (scratch / "floor").mkdir()
    p50, p99 = commit_latency(None, scratch / "floor", args.samples)
    row.measurements = {"commit_p50_ms": p50, "commit_p99_ms": p99, "resume_ms": {}, "notes": []}
    return row


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "backends.md")
    parser.add_argument("--png", type=Path, default=None, help="default: img/backends-scorecard.png beside --out")
    parser.add_argument("--json", type=Path, default=None, help="also write every row as JSON here")
    parser.add_argument("--only", default="", help="comma-separated factory names (default: every backend)")
    parser.add_argument("--install", action="store_true", help="install the backends that need their own pip run")
    parser.add_argument("--require-gate", action="store_true", help="exit 4 when the gate is not installed")
    parser.add_argument("--any-server-version", action="store_true", help="accept servers other than the pinned")
    parser.add_argument("--samples", type=int, default=100, help="commits timed per backend")
    parser.add_argument("--seeding-budget-s", type=float, default=60.0, help="the longest seeding of a resume size")
    parser.add_argument("--run-limit-s", type=float, default=30.0, help="the gate's per-run limit")
    parser.add_argument("--gate-timeout-s", type=float, default=600.0, help="one backend's whole gate")
    parser.add_argument("--gate-every", type=int, default=1, help="a partial gate: every n-th crash point only")
    parser.add_argument("--gate-jobs", type=int, default=3, help="backends gated at once")
    parser.add_argument("--budget-s", type=float, default=3600.0, help="the whole run: gates still running stop")
    args = parser.parse_args(argv)
    known = {backend.factory.__name__ for backend in BACKENDS}
    args.selected = [name for name in args.only.split(",") if name] or [b.factory.__name__ for b in BACKENDS]
    unknown = sorted(set(args.selected) - known)
    if unknown:
        print(f"Error: --only names unknown backends {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        raise SystemExit(EXIT_USAGE)
    args.png = args.png or args.out.parent / "img" / "backends-scorecard.png"
    return args


def main(argv: list[str]) -> int:
    args = parse(argv)
    signal.signal(signal.SIGTERM, stop_on_sigterm)
    started = time.monotonic()
    args.gate_available = importlib.util.find_spec(GATE_MODULE) is not None
    if not args.gate_available:
        print(f"warning: {GATE_MODULE} is not installed: rows get measurements but no gate level", file=sys.stderr)
        if args.require_gate:
            print(f"Error: the gate ({GATE_MODULE}) is not installed")
            return EXIT_CANNOT_RUN
    install_errors = install_separately() if args.install else {}
    backends = [b for b in BACKENDS if b.factory.__name__ in args.selected]
    needed = tuple(sorted({b.server for b in backends if b.server}))
    rows: list[Row] = []  # the floor first, then the backends
    with tempfile.TemporaryDirectory(prefix="scorecard-") as scratch:
        try:
            servers_cm = serving(Path(scratch) / "servers", needed)
            servers = servers_cm.__enter__()
        except ServerUnavailable as exc:
            print(f"Error: {exc}")
            return EXIT_CANNOT_RUN
        wrong = [
            server.version
            for name, server in servers.items()
            if not server.version.startswith(SERVER_VERSIONS.get(name, ""))
        ]
        if wrong and not args.any_server_version:
            servers_cm.__exit__(None, None, None)
            pinned = ", ".join(f"{v}x" for v in SERVER_VERSIONS.values())
            print(f"Error: the scorecard pins {pinned}; this machine has {', '.join(wrong)} (--any-server-version)")
            return EXIT_CANNOT_RUN
        try:
            rows.append(floor(args, Path(scratch)))
            pairs: list[tuple[Backend, Row]] = []
            for backend in backends:
                print(f"scorecard: measuring {backend.name} ...", file=sys.stderr, flush=True)
                pairs.append((backend, measured_row(backend, args, Path(scratch), install_errors)))
                print(f"scorecard: {backend.name}: {pairs[-1][1].error or 'measured'}", file=sys.stderr, flush=True)
            rows += [row for _, row in pairs]
            if args.gate_available:
                gate_rows(pairs, args, deadline=started + args.budget_s - RENDER_MARGIN_S)
            else:
                for row in rows[1:]:
                    row.level = "not gated (the gate is not installed)" if row.error is None else row.level
        finally:
            servers_cm.__exit__(None, None, None)
    elapsed = time.monotonic() - started
    server_versions = ", ".join(server.version for server in servers.values()) or "none"
    header = (
        f"Generated by `python bench/scorecard/run.py` in {elapsed / 60:.1f} min on {time.strftime('%Y-%m-%d')}"
        f" (strands-agents {installed_version('strands-agents')}, Python {sys.version.split()[0]}; servers on"
        f" loopback: {server_versions}; 2 cores, possibly shared: compare rows of the same run)."
    )
    plot(rows, RESUME_SIZES, args.png)
    relative_png = os.path.relpath(args.png, args.out.parent)
    rewrite(args.out, section(rows, RESUME_SIZES, header=header, plot=relative_png))
    if args.json:
        args.json.write_text(json.dumps({"elapsed_s": elapsed, "rows": [r.as_json() for r in rows]}, indent=2))
    print(f"scorecard: {len(rows)} rows written to {args.out} in {elapsed:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
