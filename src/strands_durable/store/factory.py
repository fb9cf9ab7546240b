"""`open_store`: the one way faces turn a `--sessions-dir` value (or its default) into a `SessionStore`."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from strands_durable.errors import Unsupported
from strands_durable.store.base import SessionStore
from strands_durable.store.layout import SESSIONS_DIR_ENV

__all__ = ["SESSIONS_DIR_ENV", "is_s3_location", "open_store", "s3_url"]

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


def open_store(sessions_dir: str | Path | None = None, **opts: Any) -> SessionStore:
    """The store for `sessions_dir`: None means `$STRANDS_SESSIONS_DIR`, else `~/.strands/sessions`; a value
    starting with `s3://` opens `S3Store.from_url(value, **opts)`; any other `scheme://` is refused (exit 18
    naming the scheme); anything else is a local directory (`LocalStore(value, **opts)`)."""
    if sessions_dir is None:
        sessions_dir = os.environ.get(SESSIONS_DIR_ENV) or None
    if sessions_dir is not None:
        match = _SCHEME.match(str(sessions_dir))
        if match:
            return _remote_store(match.group(1).lower(), str(sessions_dir), opts)
    from strands_durable.store.local import LocalStore

    if sessions_dir is None:
        return LocalStore(None, **opts)
    return LocalStore(Path(sessions_dir).expanduser(), **opts)


def is_s3_location(location: str | Path) -> bool:
    """Whether a sessions or `--out` value names an S3 location: `s3://BUCKET/PREFIX`, also as `Path` keeps it
    (`s3:/BUCKET/PREFIX`, the double slash collapsed)."""
    return str(location).startswith("s3:/")


def s3_url(location: str | Path) -> str:
    """An S3 location as `s3://BUCKET/PREFIX`, also from the collapsed `s3:/BUCKET/PREFIX` a `Path` made of it
    (sessions recorded before `--out` was kept as text hold that form)."""
    return "s3://" + str(location)[len("s3:/") :].lstrip("/")


def _remote_store(scheme: str, url: str, opts: dict[str, Any]) -> SessionStore:
    if scheme == "s3":
        try:
            from strands_durable.store.s3 import S3Store  # type: ignore[import-not-found,unused-ignore]
        except ModuleNotFoundError as exc:
            if exc.name != "strands_durable.store.s3":
                raise
            raise Unsupported(f"Sessions on s3:// are not supported by this installation: {url}") from None
        return S3Store.from_url(url, **opts)  # type: ignore[no-any-return,unused-ignore]
    raise Unsupported(f"Unsupported sessions location scheme {scheme}:// in {url} (use a directory or s3://)")
