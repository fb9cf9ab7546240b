"""Load a spec file: read (size-limited), parse, resolve `$ref` agents, validate the schema, check references.

Every failure is a SpecError (exit 3) naming the file, and the key path and line where known.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from strands_durable.errors import SpecError
from strands_durable.spec import agent_refs, diagnostics, references, variables
from strands_durable.spec.document import MAX_BYTES, Document, check_size, parse_document
from strands_durable.spec.models import Agent, Spec

MAX_REF_DEPTH = 8
"""How many `$ref` hops a chain of referenced agent files may take."""


def read_spec_bytes(path: str | Path) -> bytes:
    """The raw bytes of a spec file, refusing anything but a regular file within the size limit."""
    file = str(path)
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # a FIFO or device would block or never end
            raise SpecError(file, "not a regular file")
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            check_size(size, file)
            # one byte more than fstat said, to see a file that grew meanwhile (a buffer of MAX_BYTES would be
            # allocated, and its pages touched, on every read: a resume reads its spec once)
            raw = handle.read(size + 1)
            if len(raw) > size:
                raw += handle.read(MAX_BYTES + 1 - len(raw))
    except FileNotFoundError:
        raise SpecError(file, "no such file") from None
    except OSError as exc:
        raise SpecError(file, f"cannot read: {exc.strerror or exc}") from None
    check_size(len(raw), file)
    return raw


def spec_hash(path: str | Path) -> str:
    """sha256 (hex) of the spec file's bytes: what a session records and resume compares."""
    return bytes_hash(read_spec_bytes(path))


def bytes_hash(raw: bytes) -> str:
    """sha256 (hex) of a spec's raw bytes (`spec_hash` of bytes already read)."""
    return hashlib.sha256(raw).hexdigest()


_PARSED: dict[tuple[str, str, str], Spec] = {}
"""(file, absolute path, sha256 of the bytes) -> a validated spec without `$ref` agents: a resume (or a chaos run,
which resumes hundreds of times) parses an unchanged spec file once per process. Specs are frozen models and
are shared, never copied."""
_PARSED_LIMIT = 32


def load_spec(path: str | Path) -> Spec:
    """Load and validate the spec at `path` (YAML, or JSON for `.json`); raises SpecError."""
    return load_spec_bytes(read_spec_bytes(path), path)


def load_spec_bytes(raw: bytes, path: str | Path) -> Spec:
    """`load_spec` for bytes already read from `path` (`read_spec_bytes`): a resume hashes and loads one read."""
    try:
        key = (str(path), os.path.abspath(path), bytes_hash(raw))
        cached = _PARSED.get(key)
        if cached is None:
            cached = _load(raw, file=str(path), source_path=Path(key[1]), chain=())
            if cached._agent_files:  # referenced agent files may change on their own: never cached
                return cached
            if len(_PARSED) >= _PARSED_LIMIT:
                _PARSED.pop(next(iter(_PARSED)))
            _PARSED[key] = cached
        return cached
    except SpecError as exc:
        raise diagnostics.single_line_error(exc) from None


def load_spec_text(
    text: str | bytes, *, source_path: str | Path | None = None, json_format: bool | None = None
) -> Spec:
    """Load a spec from text. `source_path` names it in errors and anchors `$ref` paths (default: the current
    directory); JSON is assumed when `json_format` is true or the path ends in `.json`."""
    raw = text.encode("utf-8") if isinstance(text, str) else text
    file = str(source_path) if source_path is not None else "<spec>"
    absolute = Path(os.path.abspath(source_path if source_path is not None else "spec.yaml"))
    try:
        return _load(raw, file=file, source_path=absolute, chain=(), json_format=json_format)
    except SpecError as exc:
        raise diagnostics.single_line_error(exc) from None


def _load(
    raw: bytes,
    *,
    file: str,
    source_path: Path,
    chain: tuple[Path, ...],
    json_format: bool | None = None,
) -> Spec:
    if json_format is None:
        json_format = source_path.suffix.lower() == ".json"
    document = parse_document(raw, file=file, json_format=json_format)
    data = document.data
    if not isinstance(data, dict):
        raise SpecError(file, f"a spec is a mapping of keys, not {type(data).__name__}", line=1)
    data = dict(data)
    agent_files: dict[str, Path] = {}
    if isinstance(data.get("agents"), dict):
        data["agents"] = _resolve_refs(data["agents"], document, file, source_path, chain, agent_files)
    try:
        spec = Spec.model_validate(data)
    except ValidationError as exc:
        raise diagnostics.from_validation(exc, document, file) from None
    problems = references.find_problems(spec)
    problems.extend(diagnostics.Problem(path, detail) for path, detail in variables.declared_value_problems(spec))
    errors = [problem for problem in problems if not problem.warning]
    if errors:
        raise diagnostics.from_problems(errors, document, file)
    spec._warnings = [
        diagnostics.from_problems([problem], document, file).message for problem in problems if problem.warning
    ]
    spec._source_path = source_path
    spec._content_hash = bytes_hash(raw)
    spec._source_bytes = raw
    spec._document = document
    spec._agent_files = agent_files
    return spec


def _resolve_refs(
    agents: dict[Any, Any],
    document: Document,
    file: str,
    source_path: Path,
    chain: tuple[Path, ...],
    agent_files: dict[str, Path],
) -> dict[Any, Any]:
    resolved: dict[Any, Any] = {}
    spec_dir = Path(os.path.realpath(source_path.parent))
    for agent_id, entry in agents.items():
        if not (isinstance(entry, dict) and agent_refs.REF_KEY in entry):
            resolved[agent_id] = entry
            continue
        key_path = ("agents", str(agent_id), agent_refs.REF_KEY)
        where = f"agents.{agent_id}.{agent_refs.REF_KEY}"
        line = document.line_of(key_path)
        ref = entry[agent_refs.REF_KEY]
        if not isinstance(ref, str):
            raise SpecError(file, "`$ref` must be a path (text)", key_path=where, line=line)
        try:
            target = agent_refs.ref_target(spec_dir, ref)
        except ValueError as exc:
            raise SpecError(file, str(exc), key_path=where, line=line) from None
        if target in chain or target == source_path:
            cycle = " -> ".join(str(p) for p in (*chain, source_path, target))
            raise SpecError(file, f"`$ref` cycle: {cycle}", key_path=where, line=line)
        if len(chain) >= MAX_REF_DEPTH:
            raise SpecError(file, f"`$ref` nested more than {MAX_REF_DEPTH} deep", key_path=where, line=line)
        agent = _referenced_agent(target, (*chain, source_path))
        overrides = {key: value for key, value in entry.items() if key != agent_refs.REF_KEY}
        resolved[agent_id] = agent_refs.merge_overrides(agent, overrides)
        agent_files[str(agent_id)] = target
    return resolved


def _referenced_agent(target: Path, chain: tuple[Path, ...]) -> dict[str, Any]:
    """The validated agent mapping (schema paths made absolute) that a `$ref` file provides."""
    file = os.path.relpath(target) if not os.path.relpath(target).startswith("..") else str(target)
    raw = read_spec_bytes(target)
    document = parse_document(raw, file=file, json_format=target.suffix.lower() == ".json")
    if not isinstance(document.data, dict):
        raise SpecError(file, "a `$ref` file must be a mapping", line=1)
    if "agents" in document.data:
        spec = _load(raw, file=file, source_path=target, chain=chain)
        chosen = agent_refs.pick_agent({"agents": spec.agents, "name": spec.name}, file)
        agent = chosen.model_dump(by_alias=True, exclude_unset=True)
    else:
        try:
            agent = Agent.model_validate(document.data).model_dump(by_alias=True, exclude_unset=True)
        except ValidationError as exc:
            raise diagnostics.from_validation(exc, document, file) from None
    return agent_refs.absolute_schema_paths(agent, target.parent)


__all__ = ["bytes_hash", "load_spec", "load_spec_bytes", "load_spec_text", "read_spec_bytes", "spec_hash"]
