"""The append-only, checksummed commit journal: one line per commit point, `<crc32 hex> <json>\\n`.

A commit is durable once its line is appended and fdatasync'd. Recovery keeps every valid line, truncates a
torn or unsynced tail (the last line only), and calls anything else corruption.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from strands_durable.errors import CorruptSession

JOURNAL_NAME = "journal.log"
HEADER_KIND = "strands-durable-journal"


def encode_record(record: dict[str, Any]) -> bytes:
    payload = json.dumps(record, separators=(",", ":"), ensure_ascii=False, sort_keys=True).encode()
    return b"%08x " % zlib.crc32(payload) + payload + b"\n"


def _decode_line(line: bytes) -> dict[str, Any] | None:
    """The record in one complete line, or None when the checksum or JSON does not hold."""
    if len(line) < 10 or line[8:9] != b" ":
        return None
    payload = line[9:]
    try:
        if int(line[:8], 16) != zlib.crc32(payload):
            return None
        record = json.loads(payload)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


@dataclass
class JournalContents:
    records: list[dict[str, Any]]
    valid_length: int  # bytes of the file that hold whole valid records
    torn_tail: bool  # the file has bytes after the last valid record (an unsynced or torn final write)


def read_journal(path: Path, data: bytes) -> JournalContents:
    """Parse journal bytes. A bad final line is a torn tail; a bad line followed by good ones is corruption."""
    records: list[dict[str, Any]] = []
    offset = 0
    size = len(data)
    while offset < size:
        end = data.find(b"\n", offset)
        if end < 0:  # a final line without its newline: never fully written
            return JournalContents(records, offset, torn_tail=True)
        record = _decode_line(data[offset:end])
        if record is None:
            if end + 1 < size:
                raise CorruptSession(str(path), f"bad checksum at byte {offset} followed by more records")
            return JournalContents(records, offset, torn_tail=True)
        expected_seq = len(records)
        if record.get("seq") != expected_seq:
            raise CorruptSession(
                str(path), f"record at byte {offset} has seq {record.get('seq')}, expected {expected_seq}"
            )
        records.append(record)
        offset = end + 1
    if records and records[0].get("kind") != HEADER_KIND:
        raise CorruptSession(str(path), "first record is not a strands-durable journal header")
    return JournalContents(records, offset, torn_tail=False)
