"""Artifacts: rendered from the final template context, confined to --out (a local directory, or `s3://BUCKET/PREFIX`
whose files are objects), written atomically and recorded."""

from __future__ import annotations

import contextlib
import hashlib
import re
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

from strands_durable.errors import SpecError, StorageIOError, UsageError
from strands_durable.spec import render
from strands_durable.store import events
from strands_durable.store.factory import is_s3_location, s3_url
from strands_durable.store.fileops import FileOps, is_temp_file

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def artifact_relpath(spec: Any, index: int, rendered: str) -> PurePosixPath:
    return _relpath(spec, rendered, f"outputs.artifacts[{index}].path")


def _relpath(spec: Any, rendered: str, where: str) -> PurePosixPath:
    """A path of a file strictly inside the output directory, or a SpecError naming `where`: not empty, not
    absolute, no `..`, not `.` alone, not ending in `/` or `/.` (a directory), no control character (NUL)."""
    text = rendered.strip()
    rel = PurePosixPath(text)
    file = str(spec.source_path or "<spec>")

    def refuse(why: str) -> SpecError:
        return SpecError(file, f"artifact path {rendered!r} {why}", key_path=where)

    if _CONTROL.search(text):
        raise refuse("holds a control character")
    if not text or rel.is_absolute() or ".." in rel.parts or text.startswith("~"):
        raise refuse("must stay inside the output directory")
    if not rel.parts or text.split("/")[-1] in ("", "."):
        raise refuse("must name a file inside the output directory, not a directory")
    return rel


def _no_symlink_on_the_way(out_dir: Path, rel: PurePosixPath) -> Path:
    """`out_dir/rel`, refused (StorageIOError) when a component below `out_dir` is a symbolic link or the file
    itself is a directory: an artifact is written strictly inside --out, never through a link out of it."""
    target = out_dir
    with _unwritable(out_dir / rel):
        for part in rel.parts:
            target = target / part
            if target.is_symlink():
                raise StorageIOError(
                    f"cannot write artifact {rel}: {target} is a symbolic link (artifacts are written strictly "
                    f"inside {out_dir}, never through a link)"
                )
        if target.is_dir():
            raise StorageIOError(f"cannot write artifact {rel}: {target} is a directory")
    return target


@contextlib.contextmanager
def _unwritable(target: Path) -> Iterator[None]:
    """An OSError looking at or writing `target` (a name too long for the file system, a directory that may not
    be searched) is the artifact's StorageIOError naming it (exit 12), never a raw traceback."""
    try:
        yield
    except OSError as exc:
        raise StorageIOError(f"cannot write artifact {target}: {exc.strerror or exc}") from exc


def resolve_out(out_dir: str | Path) -> str | Path:
    """`--out` as a run records it: a local directory made absolute, an S3 location as `s3://BUCKET/PREFIX` text
    (a `Path` would fold its `//`)."""
    return s3_url(out_dir) if is_s3_location(out_dir) else Path(out_dir).resolve()


def recorded_out(out_dir: str | Path) -> str | Path:
    """The out_dir a session recorded (`resolve_out` made it absolute when the session was created), used as
    recorded: resolving it again walks every component with a system call on each resume. A relative one (an
    older session's) is resolved."""
    if is_s3_location(out_dir):
        return s3_url(out_dir)
    path = Path(out_dir)
    return path if path.is_absolute() else path.resolve()


def _s3_output(out_dir: str | Path) -> Any:
    """The S3Output for an `s3://` out_dir, else None (the S3 client is imported only then)."""
    if not is_s3_location(out_dir):
        return None
    from strands_durable.runner.s3_artifacts import S3Output

    return S3Output(out_dir)


def _existing(out_dir: str | Path, rel: PurePosixPath, s3: Any) -> str | None:
    """The address of the file or object already at `rel`, or None."""
    if s3 is not None:
        return s3.where(rel) if s3.exists(rel) else None
    target = Path(out_dir) / rel
    with _unwritable(target):
        return str(target) if target.exists() else None


def check_existing(spec: Any, out_dir: str | Path, context: dict[str, Any], *, force: bool, ours: set[str]) -> None:
    """Refuse early (before any model call) to overwrite a file we did not write, unless --force."""
    if force:
        return
    paths: list[PurePosixPath] = []
    for index, artifact in enumerate(spec.outputs.artifacts):
        try:
            rendered = render(artifact.path, context, where=f"outputs.artifacts[{index}].path")
        except SpecError:
            continue  # depends on the run's results; checked again when written
        paths.append(artifact_relpath(spec, index, rendered))
    notes = spec.context_policy.notes if spec.context_policy else None
    if notes is not None:
        paths.append(_relpath(spec, notes.file, "context_policy.notes.file"))
    s3 = _s3_output(out_dir) if paths else None
    for rel in paths:
        found = None if str(rel) in ours else _existing(out_dir, rel, s3)
        if found is not None:
            raise UsageError(f"Artifact already exists: {found} (use --force to overwrite)")


def artifact_context(ctx: Any, final: dict[str, Any]) -> dict[str, Any]:
    """The pattern's final context as artifacts see it, with strands-cli's additions: `TRACE` (the trace document
    with telemetry.otel, else empty), `cumulative_tokens` (committed tokens), and `execution_context` holding the
    pattern's results."""
    from strands_durable.runner.patterns.places import BASE

    results = {k: v for k, v in final.items() if k not in BASE and k not in ctx.variables}
    execution = {**final.get("execution_context", {}), **results}
    trace = ctx.telemetry.trace_json() if ctx.telemetry is not None else ""
    return {**final, "TRACE": trace, "cumulative_tokens": ctx.state.usage()["total"], "execution_context": execution}


def write_artifacts(ctx: Any, context: dict[str, Any], fileops: FileOps) -> list[str]:
    """Render and write every artifact (and the `context_policy.notes` file); return the paths written."""
    from strands_durable.runner.notes import notes_file

    context = artifact_context(ctx, context)
    spec = ctx.spec
    files: list[tuple[str, PurePosixPath, bytes]] = []
    for index, artifact in enumerate(spec.outputs.artifacts):
        rel = artifact_relpath(spec, index, render(artifact.path, context, where=f"outputs.artifacts[{index}].path"))
        content = render(artifact.source, context, where=f"outputs.artifacts[{index}].from")
        if spec.redacts_pii:  # security.guardrails.pii_redaction: variables rendered into artifacts too
            from strands_durable.history.pii import redact_pii

            content = redact_pii(content)
        files.append((f"artifact[{index}]", rel, content.encode("utf-8")))
    notes = notes_file(ctx)
    if notes is not None:
        files.append(("notes", _relpath(spec, notes[0], "context_policy.notes.file"), notes[1]))
    s3 = _s3_output(ctx.options.out_dir) if files else None
    return [_write(ctx, label, rel, content, fileops, s3) for label, rel, content in files]


def _write(ctx: Any, label: str, rel: PurePosixPath, content: bytes, fileops: FileOps, s3: Any) -> str:
    out_dir = resolve_out(ctx.options.out_dir)
    if str(rel) not in set(ctx.state.artifacts) and not ctx.options.force:
        found = _existing(out_dir, rel, s3)
        if found is not None:
            raise UsageError(f"Artifact already exists: {found} (use --force to overwrite)")
    target = _no_symlink_on_the_way(Path(out_dir), rel) if s3 is None else None
    # claim the path first: a crash between the claim and the write leaves a file this session may replace
    ctx.session.commit(
        [events.artifact(str(rel), hashlib.sha256(content).hexdigest(), len(content))],
        path=label,
    )
    if target is None:
        return str(s3.write(rel, content))
    with _unwritable(target):
        fileops.makedirs(target.parent)
        _remove_stale_temps(target, fileops)
        fileops.write_atomic(target, content)
    return str(target)


def _remove_stale_temps(target: Path, fileops: FileOps) -> None:
    """Temp files an interrupted write of this artifact left behind."""
    prefix = f".{target.name}."
    for candidate in target.parent.iterdir():
        if candidate.name.startswith(prefix) and is_temp_file(candidate.name):
            with contextlib.suppress(FileNotFoundError):
                fileops.remove(candidate)
