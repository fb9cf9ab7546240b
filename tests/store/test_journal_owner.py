"""The journal line belongs to `store/journal.py` and the event records to `store/events.py`: no other code of the
package frames, checksums or parses a line, and no other code spells an event as a dict literal."""

from __future__ import annotations

import ast
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from strands_durable.store import events
from strands_durable.store.journal import CorruptLine, decode_line, encode_line, read_journal

SRC = Path(__file__).resolve().parents[2] / "src"
JOURNAL_MODULE = SRC / "strands_durable" / "store" / "journal.py"
EVENTS_MODULE = SRC / "strands_durable" / "store" / "events.py"


def _sources() -> list[Path]:
    return sorted(SRC.rglob("*.py"))


def line_parsing_sites(source: str, where: str) -> list[str]:
    """Every place in `source` that reads a journal line's frame: a slice from byte 9 (past `<crc32> `), or a
    checksum computed with zlib.crc32."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
            lower = node.slice.lower
            if isinstance(lower, ast.Constant) and lower.value in (8, 9, 10) and node.slice.upper is None:
                found.append(f"{where}:{node.lineno}: [{lower.value}:]")
        if isinstance(node, ast.Attribute) and node.attr == "crc32":
            found.append(f"{where}:{node.lineno}: crc32")
    return found


def event_literals(source: str, where: str) -> list[str]:
    """Every dict literal in `source` whose "type" is an event kind (an event built by hand)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Dict):
            continue
        for key, value in zip(node.keys, node.values, strict=True):
            if (
                isinstance(key, ast.Constant)
                and key.value == "type"
                and isinstance(value, ast.Constant)
                and value.value in events.KINDS
            ):
                found.append(f"{where}:{node.lineno}: {{'type': {value.value!r}, ...}}")
    return found


def _everywhere_but(owner: Path, finder: Callable[[str, str], list[str]]) -> list[str]:
    """What `finder` reports in every source file of the package but `owner`."""
    return [hit for path in _sources() if path != owner for hit in finder(path.read_text(), str(path.relative_to(SRC)))]


def test_no_code_outside_the_journal_module_parses_a_journal_line() -> None:
    assert _everywhere_but(JOURNAL_MODULE, line_parsing_sites) == []


def test_the_line_check_finds_a_parse_of_the_frame() -> None:
    """The check is not blind: the parse S3's session used to do (and the checksum of the encoder) are found."""
    assert line_parsing_sites("record = json.loads(data[9:])\n", "s3.py") == ["s3.py:1: [9:]"]
    assert line_parsing_sites("c = zlib.crc32(payload)\n", "x.py") == ["x.py:1: crc32"]


def test_every_event_is_built_by_its_constructor() -> None:
    assert _everywhere_but(EVENTS_MODULE, event_literals) == []
    assert event_literals('e = {"type": "status", "status": "idle"}\n', "x.py") == ["x.py:1: {'type': 'status', ...}"]
    assert event_literals('t = {"type": "object"}\n', "schema.py") == []  # a JSON schema is not an event


def test_a_line_decodes_to_its_record_and_a_damaged_one_is_refused() -> None:
    record = {"seq": 3, "at": "2026-01-01T00:00:00+00:00", "events": [events.status("paused", "interrupted")]}
    line = encode_line(record)
    assert line.data.endswith(b"\n") and line.record == record and line.seq == 3
    assert line.record is not record  # what the writer folds is what a reader decodes, never the caller's dict
    assert decode_line(line.data).record == record and decode_line(line.data.rstrip(b"\n")) == line
    damaged = line.data.replace(b"paused", b"pauses")
    with pytest.raises(CorruptLine):
        decode_line(damaged)
    with pytest.raises(CorruptLine):
        decode_line(b"not a line")
    both = read_journal("commit", line.data + encode_line({**record, "seq": 4}).data, first_seq=3, lines=True)
    assert [kept.seq for kept in both.lines or ()] == [3, 4] and both.lines[0] == line  # type: ignore[index]


def test_constructors_leave_out_what_was_not_given() -> None:
    """Optional fields are absent (never null), as the journal has always had them."""
    assert events.status("idle") == {"type": "status", "status": "idle"}
    assert events.status("paused", None) == {"type": "status", "status": "paused", "reason": None}
    assert events.message("c", "a", 0, {"role": "user", "content": []}) == {
        "type": "message",
        "conv": "c",
        "agent": "a",
        "index": 0,
        "message": {"role": "user", "content": []},
    }
    assert events.tool_result("c", {"toolUseId": "t"}) == {
        "type": "tool_result",
        "conv": "c",
        "result": {"toolUseId": "t"},
    }
    assert events.tool_result("c", {"toolUseId": "t"}, final=True)["final"] is True
    assert json.loads(json.dumps(events.pattern_state_change(extend={"k": [1]}))) == {
        "type": "pattern_state",
        "extend": {"k": [1]},
    }
