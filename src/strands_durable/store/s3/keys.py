"""Where a session's objects live under `s3://BUCKET/PREFIX/` (see docs/storage.md, "Sessions on S3")."""

from __future__ import annotations

import re
from dataclasses import dataclass

SEQ_DIGITS = 12  # zero-padded so that key order is commit order
SCRATCH = "files/"  # under a session's prefix: its scratch files, one key per saved version (store/s3/scratch.py)
LEGACY_SCRATCH = "scratch/"  # where sessions saved before manifests existed keep them (`scratch/<path>`)
UNIT_MARK = "@"  # `leases/<id>@<unit>`: a unit lease of session <id> (ids never hold it)


@dataclass(frozen=True)
class Keys:
    prefix: str  # "" or "some/prefix/"

    @classmethod
    def under(cls, prefix: str) -> Keys:
        prefix = prefix.strip("/")
        return cls(f"{prefix}/" if prefix else "")

    def sessions(self) -> str:
        return f"{self.prefix}sessions/"

    def session(self, session_id: str) -> str:
        return f"{self.prefix}sessions/{session_id}/"

    def commits(self, session_id: str) -> str:
        return f"{self.session(session_id)}commits/"

    def commit(self, session_id: str, seq: int) -> str:
        return f"{self.commits(session_id)}{seq:0{SEQ_DIGITS}d}"

    def checkpoints(self, session_id: str) -> str:
        return f"{self.session(session_id)}checkpoints/"

    def checkpoint(self, session_id: str, seq: int) -> str:
        return f"{self.checkpoints(session_id)}{seq:0{SEQ_DIGITS}d}"

    def scratch(self, session_id: str) -> str:
        return f"{self.session(session_id)}{SCRATCH}"

    def spec_snapshot(self, session_id: str) -> str:
        return f"{self.session(session_id)}spec_snapshot.yaml"

    def views(self) -> str:
        return f"{self.prefix}views/"

    def view(self, session_id: str) -> str:
        return f"{self.views()}{session_id}.json"

    def leases(self) -> str:
        return f"{self.prefix}leases/"

    def lease(self, session_id: str) -> str:
        return f"{self.leases()}{session_id}"

    def unit_leases(self, session_id: str) -> str:
        """Where the unit leases of a session's run start: next to its lease, so `list` sees them in the same
        LIST (a session id never holds `@`)."""
        return f"{self.leases()}{session_id}{UNIT_MARK}"

    def unit_lease(self, session_id: str, unit: str) -> str:
        safe = "".join(c if c.isalnum() or c in "._-" else f"~{ord(c):02x}" for c in unit)
        return f"{self.unit_leases(session_id)}{safe}"

    def unit_of(self, session_id: str, key: str) -> str:
        """The unit whose lease is at `key` (`unit_lease` read back; an escape is two hex digits, so a character
        past U+00FF that is not alphanumeric reads back as its escape)."""
        safe = key[len(self.unit_leases(session_id)) :]
        return re.sub(r"~([0-9a-f]{2})", lambda found: chr(int(found.group(1), 16)), safe)

    @staticmethod
    def leased_session(name: str) -> str:
        """The session id of a key's name under `leases/` (its own lease or one of its units')."""
        return name.split(UNIT_MARK, 1)[0]

    @staticmethod
    def seq_of(key: str) -> int | None:
        tail = key.rsplit("/", 1)[-1]
        return int(tail) if len(tail) == SEQ_DIGITS and tail.isdigit() else None
