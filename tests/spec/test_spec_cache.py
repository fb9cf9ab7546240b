"""The parsed-spec cache: a file is parsed once per process while its bytes stay the same, a change on disk is
seen at the next load (whatever its size and mtime say), and runs never mutate the shared spec they were given."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from strands_durable.errors import SpecError
from strands_durable.faults.classes.explore import explore_point, iter_points
from strands_durable.faults.kit.runs import run_golden
from strands_durable.faults.kit.target import ChaosTarget
from strands_durable.spec import Spec, bytes_hash, load_spec, load_spec_text, loader
from strands_durable.spec.document import MAX_BYTES
from tests.conftest import REPO

SPEC = "version: 0\nname: cached\nruntime: {provider: synthetic}\nagents: {a: {prompt: hi}}\n"
SPEC += "pattern: {type: chain, config: {steps: [{agent: a, input: '%s'}]}}\n"


def _everything(spec: Spec) -> dict[str, Any]:
    """What a run can see of a spec: its fields and what the loader attached (path, bytes, hash, warnings)."""
    document = spec._document.data if spec._document is not None else None
    return {
        "fields": spec.model_dump(mode="json", by_alias=True),
        "document": document,
        "source": (spec.source_path, spec.source_bytes, spec.content_hash, spec.warnings),
    }


def test_an_unchanged_file_is_parsed_once_and_a_changed_one_again(tmp_path: Path) -> None:
    path = tmp_path / "flow.strands.yaml"
    path.write_text(SPEC % "first")
    first = load_spec(path)
    assert load_spec(path) is first
    stat = path.stat()
    path.write_text(SPEC % "other")  # same size; mtime put back: only the bytes tell
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    changed = load_spec(path)
    assert changed is not first
    assert changed.pattern.config.steps[0].input == "other"
    assert changed.content_hash != first.content_hash
    assert first.pattern.config.steps[0].input == "first"  # the first object is left as it was


def test_a_spec_file_past_the_limit_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "big.strands.yaml"
    path.write_bytes(b"#" * (MAX_BYTES + 10))
    with pytest.raises(SpecError, match="limited to"):
        load_spec(path)


@pytest.mark.parametrize("example", sorted(p.name for p in (REPO / "examples").glob("*.strands.yaml")))
def test_runs_and_resumes_leave_the_cached_spec_as_parsed(example: str, tmp_path: Path) -> None:
    """A golden run and crash-point resumes (each resume loads the spec through the cache) of every example, then
    the cached object still equals a fresh parse of the same bytes: no run wrote into it."""
    spec_path = REPO / "examples" / example
    golden = run_golden(ChaosTarget(spec_path), tmp_path / "golden")
    for point_id in list(iter_points(golden, 6, 0)):
        assert explore_point(golden, point_id, tmp_path / "points").ok
    raw = spec_path.read_bytes()
    # this file's entries (another test of the same process may have cached a copy of its bytes elsewhere)
    used = [spec for key, spec in loader._PARSED.items() if key[1:] == (str(spec_path), bytes_hash(raw))]
    assert used, "the runs did not load this spec through the cache"
    fresh = load_spec_text(raw, source_path=spec_path)
    for cached in used:
        assert cached is not fresh
        assert _everything(cached) == _everything(fresh)
