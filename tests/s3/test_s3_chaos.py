"""Chaos on S3: `pytest --strands-chaos --strands-chaos-sessions=s3://BUCKET/PREFIX` runs the interrupt, kill and
concurrent classes over the seven examples with every session on the local SeaweedFS server, at the classes' gate
bounds, with the very items of a local run, and finds no divergence and no invalid history."""

from __future__ import annotations

import contextlib
import json
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from strands_durable.errors import DurableError
from strands_durable.faults.kit import stores
from tests.plugin.support import EXAMPLES, summary

GATE_POINTS = 30  # the interrupt class's gate bound (faults/classes/interrupt.py); kill and concurrent run at theirs
FAULTS = "--strands-chaos-faults=interrupt,kill,concurrent"


def _common(report: Path | None = None) -> list[str]:
    args = ["--strands-chaos", FAULTS, f"--strands-chaos-max-points={GATE_POINTS}", "--strands-chaos-schedules=0"]
    return [*args, *([f"--strands-chaos-report={report}"] if report else []), "-p", "no:cacheprovider", "-q"]


@pytest.mark.slow
@pytest.mark.long
def test_the_examples_survive_interrupt_kill_and_concurrent_with_sessions_on_s3(
    pytester: pytest.Pytester,
    s3_env: dict[str, str],
    shared_bucket: str,
    admin_client: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the inner runs' scratch space is pytester's: under pytest-xdist the concurrent class can leave an empty
    # `real-faults/` behind in its worker's scratch directory (on main too, local sessions or not)
    monkeypatch.setenv("STRANDS_CHAOS_TMPDIR", str(pytester.mkdir("chaos-tmp")))
    specs = [str(spec) for spec in sorted(EXAMPLES.glob("*.strands.yaml"))]
    assert len(specs) == 7
    report = pytester.path / "chaos.json"
    prefix = f"chaos-{uuid.uuid4().hex[:8]}"
    location = f"s3://{shared_bucket}/{prefix}"
    started = time.monotonic()
    result = pytester.runpytest_subprocess(f"--strands-chaos-sessions={location}", *_common(report), "-n", "2", *specs)
    elapsed = time.monotonic() - started
    totals = summary(result)
    body = json.loads(report.read_text())
    failing = [item for item in body["items"] if item["outcome"] != "passed"]
    assert totals["divergences"] == 0 and totals["invalid"] == 0, json.dumps(failing[:5], indent=1)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-3000:]
    assert totals["workflows"] == 7
    stored = admin_client.list_objects_v2(Bucket=shared_bucket, Prefix=f"{prefix}/")
    assert stored.get("KeyCount", 0) > 0  # the runs' sessions were on the server, not on the local disk
    local = pytester.runpytest_subprocess(*_common(), "--collect-only", *specs)
    local_ids = {line.strip() for line in local.stdout.lines if "::" in line}
    assert local_ids and {item["nodeid"] for item in body["items"]} == local_ids  # the same items as a local run
    kinds = {item["nodeid"].split("::")[1] for item in body["items"]}
    assert {"fault:kill", "fault:concurrent"} <= kinds
    print(f"chaos on S3: 7 examples, interrupt+kill+concurrent at gate bounds, {elapsed:.1f} s")


def test_a_kit_store_on_s3_is_under_a_prefix_of_its_own_root(
    s3_env: dict[str, str], shared_bucket: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each sessions root of the kit gets its own prefix (a root made anew gets a new one), and after the kit
    declares a holder dead its stores take the session over at once (`mark_death`), writing the fence."""
    from strands_durable import S3Store

    monkeypatch.setenv(stores.SESSIONS_ENV, f"s3://{shared_bucket}/kit-{uuid.uuid4().hex[:8]}")
    first, second = stores.store_at(tmp_path / "a"), stores.store_at(tmp_path / "b")
    assert isinstance(first, S3Store) and isinstance(second, S3Store)
    assert first.keys.prefix != second.keys.prefix and stores.store_at(tmp_path / "a").keys.prefix == first.keys.prefix
    meta = {"workflow_name": "w", "pattern": "chain", "created_at": "2026-01-01T00:00:00+00:00"}
    holder = first.create(meta, b"spec")  # a process that dies holding the lease: it is never released
    session_id = holder.session_id
    from strands_durable.errors import SessionInUse

    with pytest.raises(SessionInUse):
        stores.store_at(tmp_path / "a").open(session_id)
    stores.mark_death(tmp_path / "a")
    taker = stores.store_at(tmp_path / "a").open(session_id)
    assert taker.state.seq == 1  # the takeover's fence
    taker.close()
    with contextlib.suppress(DurableError):  # its renewals stop: the lease is the taker's now
        holder.abandon()
    monkeypatch.delenv(stores.SESSIONS_ENV)
    assert type(stores.store_at(tmp_path / "c")).__name__ == "LocalStore"
