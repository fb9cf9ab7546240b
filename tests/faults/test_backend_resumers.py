"""Two resumers over a repository or storage, under the SDK's lease-less managers, in lockstep: their contested
commits (the prompt's `create_message`, or a storage `write`) are ordered both ways and each order is judged, so a
backend's verdict and finding are the same in every run. The correct repository passes in both orders; a
repository that overwrites another process's message id fails in both; a failure any storage shows under the SDK's
`SnapshotSessionManager` is attributed to that layer."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from strands_durable.faults.backends import run_backend_gate
from strands_durable.faults.backends.children import Setup
from strands_durable.faults.backends.gate import RACE_POINT, warm_imports
from strands_durable.faults.backends.resumers import race
from strands_durable.testing import backends

pytestmark = pytest.mark.slow


def _race(name: str, kind: str, root: Path) -> list[str]:
    warm_imports()
    return race(Setup(getattr(backends, name), kind, "sdtest"), root, limit_s=60)


def test_two_resumers_over_the_correct_repository_pass_in_both_orders_of_their_commits(tmp_path: Path) -> None:
    for attempt in range(3):  # free-running, this race failed 4 of 7 runs; in lockstep it passes every time
        assert _race("reference_repository", "session-repository", tmp_path / str(attempt)) == []


def test_a_repository_overwriting_another_process_message_id_forks_in_both_orders(tmp_path: Path) -> None:
    for attempt in range(2):
        problems = _race("own_ids_repository", "session-repository", tmp_path / str(attempt))
        fork = "both resumers returned without an error (the session forked silently)"
        assert problems == [  # the second to commit overwrote the first's prompt: the same finding every time
            f"A committed first, B then: {fork}; stored: ['B']",
            f"B committed first, A then: {fork}; stored: ['A']",
        ]


def test_a_storage_forks_under_the_sdks_snapshot_manager_and_the_gate_blames_that_layer() -> None:
    report = run_backend_gate(backends.reference_storage, points=[RACE_POINT])
    [clause] = [c for c in report.clauses if c.name == "two-resumers"]
    assert clause.outcome == "fail"
    assert clause.detail.startswith("the SDK's SnapshotSessionManager fails it over a correct storage too; here: ")
    assert "forked silently" in clause.detail
    assert clause.reproduce.endswith(f"--point {RACE_POINT}")


def test_the_reference_repository_creates_a_message_id_once_when_two_create_it_at_once(tmp_path: Path) -> None:
    from strands.types.session import Session

    repository = backends.ReferenceRepository(tmp_path)
    repository.create_session(Session(session_id="s1", session_type="AGENT"))
    for message_id in range(20):
        start, won = threading.Barrier(2), []
        racers = [
            threading.Thread(target=_create, args=(repository, message_id, text, start, won)) for text in ("one", "two")
        ]
        for racer in racers:
            racer.start()
        for racer in racers:
            racer.join()
        assert len(won) == 1, f"message {message_id}: {len(won)} creates succeeded"
        stored = repository.read_message("s1", "a1", message_id)
        assert stored.message["content"][0]["text"] == won[0]


def _create(repository: Any, message_id: int, text: str, start: threading.Barrier, won: list[str]) -> None:
    from strands.types.session import SessionMessage

    message = SessionMessage.from_message({"role": "user", "content": [{"text": text}]}, message_id)
    start.wait()
    try:
        repository.create_message("s1", "a1", message)
    except Exception:
        return
    won.append(text)
