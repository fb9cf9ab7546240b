"""One factory per backend the scorecard gates: `factory(ctx)` returns the backend's SessionManager, SessionRepository
or Storage for `ctx.session_id`, with `ctx.directory` for local files and `ctx.prefix` (unique per gate run) to keep
gate runs apart on a shared server: an S3 key prefix, a DynamoDB table, a PostgreSQL database, a Redis namespace.

Servers are found through the environment that `servers.py` publishes, so a factory works alike in the driver, in
a forked child and in a fresh process (`strands chaos backend bench.scorecard.factories:NAME` with that environment).
Each backend's third-party package is imported inside its factory: one that does not install or import fails its
own row, not the module.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.scorecard.servers import ENV_DYNAMODB, ENV_POSTGRES, ENV_REDIS, ENV_S3_BUCKET, ServerUnavailable

REGION = "us-east-1"


@dataclass(frozen=True)
class LocalContext:
    """What a factory is called with outside the gate (the bench's measurements and the tests): the same fields
    as the gate's context."""

    session_id: str
    directory: Path
    prefix: str


def _env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        raise ServerUnavailable(f"{name} is not set: start the scorecard's servers (bench/scorecard/servers.py)")
    return value


def _safe_name(prefix: str, *, limit: int) -> str:
    """`prefix` as a lower-case identifier a database or table name accepts."""
    return re.sub(r"[^a-z0-9_]", "_", prefix.lower())[:limit]


def _postgres_database(prefix: str) -> str:
    """The URL path of the database this gate run owns on the scorecard's PostgreSQL, created on first use."""
    import psycopg

    name = "sc_" + _safe_name(prefix, limit=60)
    with psycopg.connect(_env(ENV_POSTGRES), autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if exists is None:
            # another process of the same gate run may have made it first
            with contextlib.suppress(psycopg.errors.DuplicateDatabase):
                conn.execute(f'CREATE DATABASE "{name}"')
    return name


def _postgres_url(prefix: str, driver: str) -> str:
    admin = _env(ENV_POSTGRES)
    return driver + admin.split("postgresql", 1)[1].rsplit("/", 1)[0] + "/" + _postgres_database(prefix)


# ---- the SDK's own (strands-agents) ----


def sdk_file(ctx: Any) -> Any:
    from strands.session.file_session_manager import FileSessionManager

    return FileSessionManager(ctx.session_id, storage_dir=str(ctx.directory))


def sdk_s3(ctx: Any) -> Any:
    from strands.session.s3_session_manager import S3SessionManager

    return S3SessionManager(
        ctx.session_id,
        bucket=_env(ENV_S3_BUCKET),
        prefix=ctx.prefix,
        endpoint_url=_env("AWS_ENDPOINT_URL_S3"),
        region_name=REGION,
    )


def sdk_snapshot_local(ctx: Any) -> Any:
    from strands.storage import LocalFileStorage

    return LocalFileStorage(str(ctx.directory))


def sdk_snapshot_s3(ctx: Any) -> Any:
    from strands.storage import S3Storage

    _env("AWS_ENDPOINT_URL_S3")  # boto3 reads the endpoint from the environment; S3Storage takes none
    return S3Storage(_env(ENV_S3_BUCKET), prefix=ctx.prefix, region_name=REGION)


# ---- community backends on PyPI ----


def valkey(ctx: Any) -> Any:
    import valkey as valkey_client
    from strands_valkey_session_manager import ValkeySessionManager

    # its keys are `session:<id>...` with no namespace option: the session id carries the gate run's prefix
    session_id = f"{_safe_name(ctx.prefix, limit=40)}-{ctx.session_id}".replace(":", "-")
    return ValkeySessionManager(session_id, client=valkey_client.Valkey.from_url(_env(ENV_REDIS)))


def redis(ctx: Any) -> Any:
    import redis as redis_client
    from redis_session_manager import RedisSessionManager

    client = redis_client.Redis.from_url(_env(ENV_REDIS), decode_responses=True)
    return RedisSessionManager(ctx.session_id, redis_client=client, namespace=f"strands:{ctx.prefix}")


def postgresql(ctx: Any) -> Any:
    from sqlmodel import SQLModel, create_engine
    from strands_postgresql_session_manager import PostgresSessionManager

    engine = create_engine(_postgres_url(ctx.prefix, "postgresql+psycopg2"))
    SQLModel.metadata.create_all(engine)  # "Tables must be created before using the session manager"
    return PostgresSessionManager(ctx.session_id, engine=engine)


def session_sql_sqlite(ctx: Any) -> Any:
    from strands_session_sql import SQLSessionManager

    directory = Path(ctx.directory)
    directory.mkdir(parents=True, exist_ok=True)  # SQLite makes the file, not its directory
    return SQLSessionManager(ctx.session_id, url=f"sqlite:///{directory / 'sessions.db'}")


def session_sql_postgresql(ctx: Any) -> Any:
    from strands_session_sql import SQLSessionManager

    return SQLSessionManager(ctx.session_id, url=_postgres_url(ctx.prefix, "postgresql+psycopg"))


def _dynamodb_table(ctx: Any) -> str:
    return "strands-" + _safe_name(ctx.prefix, limit=200)


def _moto_session() -> Any:
    """A boto3 session for moto's server, which takes any credentials (none are needed from the environment)."""
    import boto3

    return boto3.Session(aws_access_key_id="scorecard", aws_secret_access_key="scorecard", region_name=REGION)


def session_dynamodb(ctx: Any) -> Any:
    from strands_session_dynamodb import DynamoDBSessionManager

    return DynamoDBSessionManager(
        ctx.session_id, table_name=_dynamodb_table(ctx), endpoint_url=_env(ENV_DYNAMODB), boto_session=_moto_session()
    )


def dynamodb_session_manager(ctx: Any) -> Any:
    from strands_dynamodb_session_manager import DynamoDBSessionManager

    return DynamoDBSessionManager(
        ctx.session_id, table_name=_dynamodb_table(ctx), endpoint_url=_env(ENV_DYNAMODB), boto_session=_moto_session()
    )


# ---- ours ----


def durable(ctx: Any) -> Any:
    from strands_durable import DurableSessionManager

    return DurableSessionManager(ctx.session_id, ctx.directory)


def durable_storage(ctx: Any) -> Any:
    from strands_durable.sdk.storage import DurableStorage

    return DurableStorage(ctx.directory)


@dataclass(frozen=True)
class Backend:
    """A row of the scorecard: what it is called, the PyPI distribution whose version it shows, its factory, the
    server it needs, and whether it is documented as slow to list (its resume is measured up to 1,000 messages)."""

    name: str
    distribution: str
    factory: Callable[[Any], Any]
    server: str | None = None
    slow_listing: bool = False
    ours: bool = False

    @property
    def reference(self) -> str:
        """`MODULE:FACTORY`, as `strands chaos backend` takes it."""
        return f"{__name__}:{self.factory.__name__}"


BACKENDS: tuple[Backend, ...] = (
    Backend("FileSessionManager (SDK)", "strands-agents", sdk_file),
    Backend("S3SessionManager (SDK, SeaweedFS)", "strands-agents", sdk_s3, "s3", slow_listing=True),
    Backend("SnapshotSessionManager + LocalFileStorage (SDK)", "strands-agents", sdk_snapshot_local),
    Backend("SnapshotSessionManager + S3Storage (SDK, SeaweedFS)", "strands-agents", sdk_snapshot_s3, "s3"),
    Backend(
        "strands-valkey-session-manager (redis-server + RedisJSON)", "strands-valkey-session-manager", valkey, "redis"
    ),
    Backend("strands-redis-session-manager (redis-server)", "strands-redis-session-manager", redis, "redis"),
    Backend("strands-postgresql-session-manager", "strands-postgresql-session-manager", postgresql, "postgresql"),
    Backend("strands-session-sql (SQLite)", "strands-session-sql", session_sql_sqlite),
    Backend("strands-session-sql (PostgreSQL)", "strands-session-sql", session_sql_postgresql, "postgresql"),
    Backend("strands-session-dynamodb (moto)", "strands-session-dynamodb", session_dynamodb, "dynamodb"),
    Backend(
        "strands-dynamodb-session-manager (moto)",
        "strands-dynamodb-session-manager",
        dynamodb_session_manager,
        "dynamodb",
    ),
    Backend("DurableSessionManager (ours)", "strands-durable", durable, ours=True),
    Backend("DurableStorage (ours)", "strands-durable", durable_storage, ours=True),
)


def backend_named(name: str) -> Backend:
    """The backend whose factory is `name` (as `BACKENDS` lists it); KeyError names the known ones."""
    for backend in BACKENDS:
        if backend.factory.__name__ == name:
            return backend
    raise KeyError(f"no backend {name!r}; known: {', '.join(b.factory.__name__ for b in BACKENDS)}")
