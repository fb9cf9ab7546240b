"""The append-only, checksummed commit journal: one line per commit point, `<crc32 hex> <json>\\n`.

A commit is durable once its line is appended and fdatasync'd. Recovery keeps every valid line, truncates a
torn or unsynced tail (the last line only), and calls anything else corruption. A compacted journal
(store/checkpoint.py) holds the header, one checkpoint record (seq K: the whole state after record K) and the
records after K.

This module is the only code that knows the line's frame: `encode_line` makes a line (a `Line`: the bytes, and the
record a reader decodes from them, decoded at most once), `decode_line` reads one back, `read_journal` reads a
whole journal (or a commit object holding several lines). The local store, the S3 store and the fault kit all go
through them; `tests/store/test_journal_owner.py` holds that nothing else parses a line.

A torn multi-sector append may keep its last sector, newline included, and lose one in the middle: a complete
final line with a bad checksum is a torn tail too, unless something durable proves the line was once whole
(`refuse_damaged_last`); then it is corruption, never silently dropped. No record may nest deeper than
`bounded_json.MAX_DEPTH` levels.
"""

from __future__ import annotations

import functools
import json
import os
import zlib
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from strands_durable.errors import CorruptSession
from strands_durable.store import bounded_json

JOURNAL_NAME = "journal.log"
HEADER_KIND = "strands-durable-journal"


def utc_now() -> str:
    """A record's `at` timestamp."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


class Line:
    """One journal line: its bytes as written (`<crc32> <json>\n`) and the record they hold.

    A line made by `encode_line` decodes its record from its own bytes on first use, once: a writer folds what a
    reader of the line will get (never the caller's objects, which it may still change), without encoding or
    decoding the record again. A line read back (`decode_line`, `read_journal(lines=True)`) has its record.
    """

    __slots__ = ("_record", "data")

    def __init__(self, data: bytes, record: dict[str, Any] | None = None) -> None:
        self.data = data
        self._record = record

    @property
    def record(self) -> dict[str, Any]:
        if self._record is None:
            self._record = json.loads(self.data[9:])
        return self._record

    @property
    def seq(self) -> int:
        return int(self.record["seq"])

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Line) and other.data == self.data

    def __hash__(self) -> int:
        return hash(self.data)

    def __repr__(self) -> str:
        return f"Line({self.data[:60]!r}...)"


class CorruptLine(ValueError):
    """Bytes that are not one whole journal line (a bad checksum, no frame, not a JSON object)."""


def encode_line(record: dict[str, Any], *, sort_keys: bool = True) -> Line:
    """One journal line. `sort_keys=False` keeps the dicts' order (a checkpoint's state: units and conversations
    are in commit order, which the fold of the records it replaces would give)."""
    payload = json.dumps(record, separators=(",", ":"), ensure_ascii=False, sort_keys=sort_keys).encode()
    bounded_json.check_depth(payload)  # never write what a reader refuses
    return Line(frame_line(payload))


def frame_line(payload: bytes) -> bytes:
    """The line that holds `payload` (JSON bytes) as they are, checksummed: `encode_line`'s frame, and a harness's
    way to plant a record the encoder refuses to write (testing/hostile_files.py)."""
    return b"%08x " % zlib.crc32(payload) + payload + b"\n"


def decode_line(data: bytes) -> Line:
    """The line `data` holds (with or without its newline), its checksum verified; CorruptLine otherwise."""
    line = data[:-1] if data.endswith(b"\n") else data
    payload = _checked_payload(line)
    record = _decode(payload) if payload is not None else None
    if record is None:
        raise CorruptLine("not a whole journal line")
    return Line(line + b"\n", record)


def _checked_payload(line: bytes) -> bytes | None:
    """The JSON payload of one complete line, or None when its checksum does not hold."""
    if len(line) < 10 or line[8:9] != b" ":
        return None
    payload = line[9:]
    try:
        if int(line[:8], 16) != zlib.crc32(payload):
            return None
    except ValueError:
        return None
    return payload


def _decode(payload: bytes) -> dict[str, Any] | None:
    try:
        record = bounded_json.loads(payload)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


@dataclass
class JournalContents:
    records: list[dict[str, Any]]
    valid_length: int  # bytes of the file that hold whole valid records
    torn_tail: bool  # the file has bytes after the last valid record (an unsynced or torn final write)
    checkpoint_end: int = 0  # bytes of the file up to the end of its checkpoint record (0: none)
    damaged_last: bool = False  # the torn tail is a complete, newline-terminated line that fails its checksum
    lines: list[Line] | None = None  # each record with its bytes (`read_journal(lines=True)`)

    def describe_tail(self, size: int) -> str:
        """What `sessions check` says of the torn tail of a file of `size` bytes."""
        torn = size - self.valid_length
        if self.damaged_last:
            return (
                f"the last record ({torn} bytes after record {len(self.records) - 1}) is complete but fails its "
                "checksum, and nothing proves it was ever written whole (a write torn by a power cut?); "
                "cut off on the next resume"
            )
        last = len(self.records) - 1
        return f"torn tail of {torn} bytes after record {last} (an interrupted write; cut off on the next resume)"


def written_on_boot(
    records: list[dict[str, Any]], boot: str | None, earlier: tuple[str | None, ...] = ()
) -> str | None:
    """Why a damaged last line after `records` was once whole, or None: a record among them was written on this
    boot of the machine (`boot`; `earlier`: the boots a checkpoint or known state before `records` holds). Every
    process marks its first commit with its boot, and a close's mark holds it too; a process reads the whole
    journal before it commits, so everything after such a record was written since this machine last started,
    and no power cut can have torn it (a killed process leaves a line without its newline, never one with it)."""
    if boot is None:
        return None
    for record in reversed(records):
        checkpoint = record.get("checkpoint")
        marks = (record.get("boot"), record.get("views_boot"))
        if isinstance(checkpoint, dict):
            marks += (checkpoint.get("written_boot"), checkpoint.get("views_boot"))
        if boot in marks:
            return f"record {record.get('seq')} before it was written since this machine last started"
    if boot in earlier:
        return "a record before it was written since this machine last started"
    return None


def damaged_last_detail(contents: JournalContents, proof: str) -> str:
    """What is wrong with a journal whose damaged last line `proof` shows was once whole."""
    return (
        f"the last record (at byte {contents.valid_length}) is complete but fails its checksum, and {proof}: it was "
        "committed and is now damaged"
    )


def refuse_damaged_last(path: Path, contents: JournalContents, proof: str | None) -> None:
    """Raise CorruptSession when the journal's final line is complete but damaged and `proof` (what shows it was
    once whole and durable, in words) is given: such a record was committed, and dropping it would lose it."""
    if contents.torn_tail and contents.damaged_last and proof:
        detail = damaged_last_detail(contents, proof)
        raise CorruptSession(str(path), f"{detail} (restore the file from a backup, or delete the session)")


def read_journal(path: Path | str, data: bytes, *, first_seq: int = 0, lines: bool = False) -> JournalContents:
    """Parse journal bytes (`path` names them in errors: a file, or an object's URL). A bad final line is a torn
    tail; a bad line followed by good ones is corruption. `first_seq` > 0 reads a part of a journal that starts at
    that record (no header expected). `lines` also returns each record with its bytes (`JournalContents.lines`).

    Checksums are verified line by line and the payloads are then decoded in one `json.loads` call (a JSON array
    of them), which halves the cost of reading a long journal; a payload that fails to decode on its own (a
    checksum collision on garbage) is found by decoding line by line. A checkpoint record (large) is decoded
    on its own, not copied into the array.
    """
    lines = data.split(b"\n")
    complete, rest = lines[:-1], lines[-1]  # `rest` is empty when the file ends with a newline
    payloads: list[bytes] = []
    offset = 0
    torn_at = -1
    limit = bounded_json.MAX_DEPTH
    for number, line in enumerate(complete):
        payload = _checked_payload(line)
        if payload is None:
            if number == 0 and first_seq == 0:
                raise CorruptSession(str(path), "its first line is not a strands-durable journal header")
            if number + 1 < len(complete) or rest:
                raise CorruptSession(str(path), f"bad checksum at byte {offset} followed by more records")
            torn_at = offset
            break
        # a record with fewer opening brackets than the limit cannot nest deeper: most are measured by two counts
        if payload.count(b"[") + payload.count(b"{") > limit and bounded_json.depth_exceeds(payload):
            raise CorruptSession(str(path), f"record at byte {offset} is {bounded_json.TooDeep()}")
        payloads.append(payload)
        offset += len(line) + 1
    damaged_last = torn_at >= 0
    try:
        records = _decode_all(payloads)
        if not all(isinstance(record, dict) for record in records):
            raise ValueError("a record is not an object")
    except ValueError:
        records = _decode_one_by_one(path, payloads)
        if len(records) < len(payloads):  # only the final line may fail: a torn tail
            torn_at = sum(len(p) + 10 for p in payloads[: len(records)])
            damaged_last = not rest
    base = first_seq
    checkpoint_end = 0
    for number, record in enumerate(records):
        if number == 1 and first_seq == 0 and "checkpoint" in record and isinstance(record.get("seq"), int):
            base = record["seq"] - 1  # the records a checkpoint replaced are gone: numbering goes on from it
            checkpoint_end = len(payloads[0]) + len(payloads[1]) + 20
        expected_seq = base + number
        if record.get("seq") != expected_seq:
            at = sum(len(p) + 10 for p in payloads[:number])
            raise CorruptSession(str(path), f"record at byte {at} has seq {record.get('seq')}, expected {expected_seq}")
    if records and first_seq == 0 and records[0].get("kind") != HEADER_KIND:
        raise CorruptSession(str(path), "first record is not a strands-durable journal header")
    kept = [Line(complete[n] + b"\n", record) for n, record in enumerate(records)] if lines else None
    if torn_at >= 0:
        return JournalContents(
            records, torn_at, True, checkpoint_end, damaged_last=damaged_last and not rest, lines=kept
        )
    if rest:  # a final line without its newline: never fully written
        return JournalContents(records, offset, True, checkpoint_end, lines=kept)
    return JournalContents(records, offset, False, checkpoint_end, lines=kept)


_LARGE_PAYLOAD = 1 << 16


def _decode_all(payloads: list[bytes]) -> list[Any]:
    records: list[Any] = []
    batch: list[bytes] = []
    for payload in payloads:
        if len(payload) < _LARGE_PAYLOAD:
            batch.append(payload)
            continue
        if batch:
            records += json.loads(b"[" + b",".join(batch) + b"]")
            batch = []
        records.append(json.loads(payload))
    if batch:
        records += json.loads(b"[" + b",".join(batch) + b"]")
    return records


def _decode_one_by_one(path: Path, payloads: list[bytes]) -> list[dict[str, Any]]:
    records = []
    for number, payload in enumerate(payloads):
        record = _decode(payload)
        if record is None:
            if number + 1 < len(payloads):
                at = sum(len(p) + 10 for p in payloads[:number])
                raise CorruptSession(str(path), f"bad record at byte {at} followed by more records")
            break
        records.append(record)
    return records


@dataclass(frozen=True)
class JournalEnds:
    """What a listing needs from a journal without reading all of it: is its first line our header, and its last
    complete, checksummed record (None when the window holds none: read the whole journal to know more)."""

    ours: bool
    last: dict[str, Any] | None


def journal_ends(path: Path, *, window: int = 65536) -> JournalEnds:
    """The header check and the last record, from one open and (for journals up to `window` bytes) one read."""
    with open(path, "rb") as fh:
        head = fh.read(window)
        size = fh.seek(0, 2)
        if size <= len(head):
            start, data = 0, head
        else:
            start = max(0, size - window)
            fh.seek(start)
            data = fh.read()
            newline = head.find(b"\n")
            if newline < 0:  # a header longer than the window: read its line in full
                fh.seek(0)
                head = fh.readline()
    first = head.split(b"\n", 1)[0] if b"\n" in head else b""
    payload = _checked_payload(first)
    header = _decode(payload) if payload is not None else None
    ours = header is not None and header.get("kind") == HEADER_KIND and header.get("seq") == 0
    return JournalEnds(ours, _last_complete_record(data, cut=start > 0))


def _last_complete_record(data: bytes, *, cut: bool) -> dict[str, Any] | None:
    lines = data.split(b"\n")[:-1]  # the part after the last newline was never fully written
    if cut:
        lines = lines[1:]  # the first line may be cut by the window
    for line in reversed(lines):
        payload = _checked_payload(line)
        if payload is not None:
            return _decode(payload)
        return None  # a bad complete line: only a whole read can tell a torn tail from corruption
    return None


def header_of(data: bytes) -> bytes:
    """The first line of a journal's bytes, newline included (b"" when they hold no complete first line): what
    `header_line` reads from the file."""
    end = data.find(b"\n")
    return data[: end + 1] if end >= 0 else b""


def header_line(path: Path) -> bytes:
    """The journal's first line, newline included (b"" when it has no complete first line). Raises OSError."""
    first = first_line(path)
    return first if first.endswith(b"\n") else b""


_FIRST_READ = 8192  # one read holds a header (~1 KB); a longer first line is read on, as far as 16 MB


def first_line(path: str | Path) -> bytes:
    """The file's first line, its newline included (the whole file, or its first 16 MB, when it has none): one
    unbuffered read for a journal's header (asked at every open of a session), the buffered
    `readline` only when that read holds no newline. Raises OSError."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        start = os.read(fd, _FIRST_READ)
    finally:
        os.close(fd)
    end = start.find(b"\n")
    if end >= 0:
        return start[: end + 1]
    if len(start) < _FIRST_READ:
        return start  # the whole file
    with open(path, "rb") as journal:
        return journal.readline(1 << 24)


def looks_like_a_record(start: bytes) -> bool:
    """Whether `start` (a file's first bytes) begins like one of our records, `<crc32 hex> {`, whole or not: a
    journal of ours whose header is damaged, not another program's file."""
    return len(start) >= 10 and start[8:10] == b" {" and all(c in b"0123456789abcdef" for c in start[:8])


def is_header_line(first: bytes) -> bool:
    """True when `first` (a `header_line`) is a checksummed strands-durable journal header (the file is ours).
    The verdict is a function of the bytes alone, so one already reached for the same bytes is reused
    (`_remembered_header_verdict`): every command on a session asks it of the same first line again."""
    if len(first) <= _REMEMBERED_LINE_MAX:
        return _remembered_header_verdict(first)
    return _header_verdict(first)


_REMEMBERED_LINE_MAX = 1 << 14  # a header is ~1 KB; longer first lines are checked every time, never kept


def _header_verdict(first: bytes) -> bool:
    payload = _checked_payload(first[:-1]) if first else None
    record = _decode(payload) if payload is not None else None
    return record is not None and record.get("kind") == HEADER_KIND and record.get("seq") == 0


_remembered_header_verdict = functools.lru_cache(maxsize=256)(_header_verdict)


def starts_with_header(path: Path) -> bool:
    """True when the file's first line is a checksummed strands-durable journal header (the file is ours)."""
    try:
        return is_header_line(header_line(path))
    except OSError:
        return False
