"""The chaos kit's sessions on S3 compact as any session does (a reader GETs the latest checkpoint and the commits
after it, not the whole history) and keep the commits the checkpoints cover (`S3Store(keep_history=True)`), so
the kit still cuts a journal at any commit's `journal_size()` and loads any record (`load(upto_seq=)`)."""

from __future__ import annotations

import copy
import uuid

from strands_durable import S3Store
from strands_durable.faults.kit import stores
from strands_durable.store.base import read_journal_bytes
from strands_durable.store.state import fold, snapshot
from strands_durable.testing.s3_faults import CountingClient
from tests.s3.support import as_a_fresh_process, client_for, meta, unit

COMMITS = 150


def test_the_kits_s3_sessions_compact_and_are_still_cut_and_loaded_at_every_commit(
    s3_server, s3_env, shared_bucket, tmp_path, monkeypatch
):
    monkeypatch.setenv(stores.SESSIONS_ENV, f"s3://{shared_bucket}/kit-{uuid.uuid4().hex[:8]}")
    store = stores.store_at(tmp_path / "sessions")
    assert isinstance(store, S3Store)
    session = store.create(meta(), b"spec")
    session_id = session.session_id
    cuts = []
    for index in range(COMMITS):
        session.commit([unit(index % 7)])
        cuts.append((session.journal_size(), session.stored_seq(), copy.deepcopy(snapshot(session.state))))
    session.close()

    checkpoints = [item.key for item in store.objects.list(store.keys.checkpoints(session_id))]
    assert checkpoints, "the kit's session was never compacted"
    journal = store.journal_bytes(session_id)
    for size, seq, expected in cuts:
        contents = read_journal_bytes(journal[:size])
        assert not contents.torn_tail and contents.records[-1]["seq"] == seq
        assert snapshot(fold(contents.records)) == expected, f"the cut at record {seq} folds to another state"
    assert snapshot(store.load(session_id, upto_seq=cuts[10][1])) == cuts[10][2]  # below the checkpoints

    as_a_fresh_process()  # a fresh process reads the checkpoint and the commits after it, no more
    counting = CountingClient(client_for(s3_server))
    reader = S3Store(shared_bucket, store.keys.prefix, client=counting, keep_history=True)
    assert snapshot(reader.load(session_id)) == snapshot(store.load(session_id))
    assert counting.counts["get_object"] <= store.checkpoint_every + 1, counting.counts
    resumed = reader.open(session_id)  # and a resume goes on from there
    resumed.commit([unit(0)])
    resumed.close()
