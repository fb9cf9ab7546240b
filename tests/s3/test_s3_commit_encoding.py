"""An S3 commit encodes each record once and decodes it at most once (the copy its writer folds, the one a reader
gets): the journal module's `Line` carries the bytes and the record together from the encoder to the PUT, the
fold, the scratch manifest and the seq returned. It used to decode a record up to four times per commit."""

from __future__ import annotations

import cProfile
import pstats

from tests.s3.support import meta, store_for, unit_message


def _json_calls(profile: cProfile.Profile) -> dict[str, int]:
    """How many times `json.dumps` and `json.loads` ran under the profile."""
    counts = {"dumps": 0, "loads": 0}
    for (filename, _line, name), (calls, *_rest) in pstats.Stats(profile).stats.items():  # type: ignore[attr-defined]
        if filename.endswith("json/__init__.py") and name in counts:
            counts[name] += calls
    return counts


def test_a_commit_encodes_and_decodes_each_record_once(s3_server, space) -> None:
    store = store_for(s3_server, space)
    session = store.create(meta(), b"spec")
    session.commit([unit_message("a", 0)], path="warm-up")  # the lease and the client are warm
    profile = cProfile.Profile()
    profile.enable()
    session.commit([unit_message("a", 1)], path="held", durable=False)  # held, PUT with the next one
    session.commit([unit_message("a", 2)], path="durable")
    profile.disable()
    assert _json_calls(profile) == {"dumps": 2, "loads": 2}  # two records: each encoded once, decoded once
    session.close()
    reread = store.load(session.session_id)
    assert [m["content"][0]["text"] for m in reread.conversations["task:a:agent"].messages] == [
        "a says 0",
        "a says 1",
        "a says 2",
    ]
