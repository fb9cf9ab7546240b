"""Record the workflow histories the replay test checks every later release against.

    python -m tests.temporal.record_histories    # from the repository root; writes tests/temporal/histories/

Run it when a release adds a workflow change behind `workflow.patched(...)`, after raising `RELEASE`: the old
files stay (runs started by the old release must still replay) and the new ones are named `<run>.<release>.json`
(release 1's are plain `<run>.json`); an existing file is never overwritten. Each history is a whole run on a
fresh dev server: a chain, a parallel scan answered by a HITL signal, and a workflow DAG.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from strands_durable import RunOptions
from strands_durable.runner.run import create_run
from strands_durable.store import open_store
from strands_durable.temporal import engine
from strands_durable.temporal.dev_server import start_dev_server

ROOT = Path(__file__).resolve().parents[2]
HISTORIES = Path(__file__).resolve().parent / "histories"
RELEASE = 2  # the workflow release today's code records; bump it with the next `workflow.patched` change
RUNS = {
    "chain": "examples/chain-research.strands.yaml",
    "parallel-hitl": "examples/parallel-market-scan.strands.yaml",
    "workflow": "examples/workflow-release-plan.strands.yaml",
}


async def record(address: str, work: Path) -> None:
    sessions = str(work / "sessions")
    ready = asyncio.Event()
    worker = asyncio.create_task(engine.run_worker(address, sessions, ready=ready.set))
    await asyncio.wait_for(ready.wait(), 30)
    client = await engine.connect(address)
    try:
        for name, spec in RUNS.items():
            _, session, _ = create_run(ROOT / spec, RunOptions(out_dir=work / name), store=open_store(sessions))
            session_id = session.state.session_id
            session.close()
            handle = await engine.start_run(client, session_id, sessions)
            if name == "parallel-hitl":
                while await handle.query("status") != "paused for a human":
                    await asyncio.sleep(0.2)
                await engine.answer(client, session_id, "approved")
            await handle.result()
            history = await handle.fetch_history()
            target = HISTORIES / (f"{name}.json" if RELEASE == 1 else f"{name}.r{RELEASE}.json")
            if target.exists():
                print(f"kept {target.name} (recorded before)")
                continue
            target.write_text(history.to_json())
            print(f"recorded {target.name}: {len(history.events)} events")
    finally:
        worker.cancel()


def main() -> None:
    HISTORIES.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        server = start_dev_server(Path(tmp) / "temporal")
        try:
            asyncio.run(record(server.address, Path(tmp)))
        finally:
            server.stop()


if __name__ == "__main__":
    main()
