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
        record = json.loads(payload)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


@dataclass
class JournalContents:
    records: list[dict[str, Any]]
    valid_length: int  # bytes of the file that hold whole valid records
    torn_tail: bool  # the file has bytes after the last valid record (an unsynced or torn final write)


def read_journal(path: Path, data: bytes, *, first_seq: int = 0) -> JournalContents:
    """Parse journal bytes. A bad final line is a torn tail; a bad line followed by good ones is corruption.
    `first_seq` > 0 reads a part of a journal that starts at that record (no header expected).

    Checksums are verified line by line and the payloads are then decoded in one `json.loads` call (a JSON array
    of them), which halves the cost of reading a long journal; a payload that fails to decode on its own (a
    checksum collision on garbage) is found by decoding line by line.
    """
    lines = data.split(b"\n")
    complete, rest = lines[:-1], lines[-1]  # `rest` is empty when the file ends with a newline
    payloads: list[bytes] = []
    offset = 0
    torn_at = -1
    for number, line in enumerate(complete):
        payload = _checked_payload(line)
        if payload is None:
            if number + 1 < len(complete) or rest:
                raise CorruptSession(str(path), f"bad checksum at byte {offset} followed by more records")
            torn_at = offset
            break
        payloads.append(payload)
        offset += len(line) + 1
    try:
        records = json.loads(b"[" + b",".join(payloads) + b"]") if payloads else []
        if not all(isinstance(record, dict) for record in records):
            raise ValueError("a record is not an object")
    except ValueError:
        records = _decode_one_by_one(path, payloads)
        if len(records) < len(payloads):  # only the final line may fail: a torn tail
            torn_at = sum(len(p) + 10 for p in payloads[: len(records)])
    for number, record in enumerate(records):
        expected_seq = first_seq + number
        if record.get("seq") != expected_seq:
            at = sum(len(p) + 10 for p in payloads[:number])
            raise CorruptSession(str(path), f"record at byte {at} has seq {record.get('seq')}, expected {expected_seq}")
    if records and first_seq == 0 and records[0].get("kind") != HEADER_KIND:
        raise CorruptSession(str(path), "first record is not a strands-durable journal header")
    if torn_at >= 0:
        return JournalContents(records, torn_at, torn_tail=True)
    if rest:  # a final line without its newline: never fully written
        return JournalContents(records, offset, torn_tail=True)
    return JournalContents(records, offset, torn_tail=False)


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
