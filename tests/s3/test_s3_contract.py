"""The store contract suite over S3Store, with every capability S3 can offer, on SeaweedFS and on moto."""

from __future__ import annotations

import itertools
import time
import uuid
from typing import Any

from strands_durable import S3Store
from strands_durable.store import Session, SessionStore
from strands_durable.testing.store_contract import CHECKS, run
from tests.s3.support import FAST_RETRIES, bucket_on, client_for

TTL_S, SKEW_S = 30.0, 5.0


class S3Factory:
    """Fresh S3 stores (each its own prefix) over one client; their shared clock can be moved past a lease."""

    def __init__(self, server: Any, bucket: str) -> None:
        self.client = client_for(server)
        self.bucket = bucket
        self.run = uuid.uuid4().hex[:8]
        self.count = itertools.count()
        self.offset = 0.0

    def clock(self) -> float:
        return time.time() + self.offset

    def _make(self, prefix: str) -> S3Store:
        return S3Store(
            self.bucket,
            prefix,
            client=self.client,
            lease_ttl_s=TTL_S,
            lease_skew_s=SKEW_S,
            retry_delays=FAST_RETRIES,
            clock=self.clock,
        )

    def __call__(self) -> SessionStore:
        return self._make(f"contract-{self.run}-{next(self.count)}")

    def twin(self, store: SessionStore) -> SessionStore:
        return self._make(store.keys.prefix)  # type: ignore[attr-defined]

    def expire_lease(self, store: SessionStore, session: Session) -> None:
        session._lease.stop_renewing()  # type: ignore[attr-defined]
        self.offset += TTL_S + SKEW_S + 1

    def kill_holder(self, store: SessionStore, session: Session) -> None:
        """A dead holder on S3 is one whose lease expired: it renews nothing and writes nothing more."""
        session._lease.stop_renewing()  # type: ignore[attr-defined]
        session._closed = True  # type: ignore[attr-defined]
        self.offset += TTL_S + SKEW_S + 1

    lose_unsynced = kill_holder  # every S3 commit is a completed PUT: a dying holder loses nothing committed

    def plant_foreign(self, store: SessionStore) -> Any:
        prefix = store.keys.prefix  # type: ignore[attr-defined]
        planted = {
            f"{prefix}views/notes.txt": b"keep me\n",
            f"{prefix}views/not a session.json": b"{}",
            f"{prefix}sessions/not-ours/readme.txt": b"somebody else's\n",
        }
        for key, data in planted.items():
            self.client.put_object(Bucket=self.bucket, Key=key, Body=data)

        def intact() -> bool:
            for key, data in planted.items():
                try:
                    held = self.client.get_object(Bucket=self.bucket, Key=key)["Body"].read()
                except Exception:
                    return False
                if held != data:
                    return False
            return True

        return intact


def test_the_contract_suite_passes_for_the_s3_store(server):
    report = run(S3Factory(server, bucket_on(server, "plain")))
    assert report.conformant, report.describe()
    assert [r.name for r in report.results] == list(CHECKS)
    not_applicable = {r.name for r in report.results if r.outcome == "not applicable"}
    assert not_applicable == {"a torn final record is cut off"}  # an S3 object is written whole or not at all
