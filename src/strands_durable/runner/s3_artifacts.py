"""Artifacts on S3: an `--out s3://BUCKET/PREFIX` location whose files are objects, written with plain PUTs
(the local directory's writes are in runner/artifacts.py, which opens this sink for an S3 location).

An artifact is written once, after the run's units and before `completed` is committed; the session's artifact
record (committed first) says which keys this session owns, so a resume may replace them without `--force`.
"""

from __future__ import annotations

from pathlib import PurePath, PurePosixPath
from typing import Any

from strands_durable.errors import StorageIOError, UsageError
from strands_durable.store.factory import is_s3_location, s3_url
from strands_durable.store.s3 import Objects, make_client, parse_url


class S3Output:
    """The objects of one `--out s3://BUCKET/PREFIX`; errors name the bucket and key (exit 12)."""

    def __init__(self, out: str | PurePath, *, client: Any = None) -> None:
        text = str(out)
        if not is_s3_location(text):
            raise UsageError(f"Not an S3 location: {text} (expected s3://BUCKET/PREFIX)")
        self.url = s3_url(text)
        bucket, self.prefix = parse_url(self.url)
        self.objects = Objects(client if client is not None else make_client(), bucket)

    def __str__(self) -> str:
        return self.url

    def key(self, rel: PurePosixPath) -> str:
        return f"{self.prefix}/{rel}" if self.prefix else str(rel)

    def where(self, rel: PurePosixPath) -> str:
        return f"s3://{self.objects.bucket}/{self.key(rel)}"

    def exists(self, rel: PurePosixPath) -> bool:
        try:
            return self.objects.exists(self.key(rel))
        except StorageIOError as exc:
            raise StorageIOError(f"cannot check artifact {self.where(rel)}: {exc}") from exc

    def write(self, rel: PurePosixPath, content: bytes) -> str:
        """PUT the artifact (a whole object replaces the old one atomically) and return its s3:// address."""
        try:
            self.objects.put(self.key(rel), content)
        except StorageIOError as exc:
            raise StorageIOError(f"cannot write artifact {self.where(rel)}: {exc}") from exc
        return self.where(rel)
