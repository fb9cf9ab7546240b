"""`$ref` agents: `agents: {x: {$ref: ../agents/x.yaml, model_id: ...}}` takes an agent from another file.

The rule for which files may be named: the path is relative (absolute paths and `~` are refused) and is
resolved against the real directory of the spec that names it, exactly as written: `..` is allowed because
the user wrote it (the corpus uses `../agents/...`), but no component of the written path may be a symlink,
so a link cannot lead somewhere other than what the text says. The target must be a regular `.yaml`, `.yml`
or `.json` file within the size limit.

The referenced file is a full spec (its one agent, or the agent named like the file's `name`) or a bare
agent mapping (`prompt`, ...). Keys beside `$ref` override the referenced agent's (`inference` key by key).
Relative `input_schema`/`output_schema` paths from the referenced file are made absolute, since they were
written relative to it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from strands_durable.errors import SpecError

REF_KEY = "$ref"
SUFFIXES = (".yaml", ".yml", ".json")
_SCHEMA_KEYS = ("input_schema", "output_schema")


def ref_target(spec_dir_real: Path, ref: str) -> Path:
    """The file `ref` names, or ValueError saying why it may not be used."""
    if not ref.strip():
        raise ValueError("`$ref` is empty")
    if os.path.isabs(ref) or ref.startswith(("~", "\\")) or (len(ref) > 1 and ref[1] == ":"):
        raise ValueError(f"`$ref` '{ref}' must be a path relative to the spec file")
    if "\x00" in ref:
        raise ValueError("`$ref` contains a NUL byte")
    target = Path(os.path.normpath(spec_dir_real / ref))
    if not target.name.lower().endswith(SUFFIXES):
        raise ValueError(f"`$ref` '{ref}' must name a .yaml, .yml or .json file")
    # Walk the written path one component at a time: no component may be a symlink.
    current = spec_dir_real
    for part in Path(ref).parts:
        current = current.parent if part == ".." else current if part == "." else current / part
        if current.is_symlink():
            raise ValueError(f"`$ref` '{ref}' passes through the symlink {current}; name the real file")
    if not target.is_file():
        raise ValueError(f"`$ref` '{ref}' names no file ({target})")
    return target


def pick_agent(document: dict[str, Any], file: str) -> dict[str, Any]:
    """The agent mapping a referenced document provides."""
    agents = document.get("agents")
    if agents is None:
        if "prompt" in document:
            return document
        raise SpecError(file, "a `$ref` file must be a spec with `agents` or an agent with `prompt`")
    if not isinstance(agents, dict) or not agents:
        raise SpecError(file, "`agents` must be a non-empty mapping", key_path="agents")
    if len(agents) == 1:
        return next(iter(agents.values()))
    name = document.get("name")
    if name in agents:
        return agents[name]
    raise SpecError(
        file,
        f"a `$ref` file with several agents ({', '.join(map(str, agents))}) must name one of them in `name`",
        key_path="agents",
    )


def absolute_schema_paths(agent: dict[str, Any], base_dir: Path) -> dict[str, Any]:
    out = dict(agent)
    for key in _SCHEMA_KEYS:
        value = out.get(key)
        if isinstance(value, str) and value and not os.path.isabs(value):
            out[key] = os.path.normpath(base_dir / value)
    return out


def merge_overrides(base: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    merged = {**base, **overrides}
    if isinstance(base.get("inference"), dict) and isinstance(overrides.get("inference"), dict):
        merged["inference"] = {**base["inference"], **overrides["inference"]}
    return merged


__all__ = ["REF_KEY", "absolute_schema_paths", "merge_overrides", "pick_agent", "ref_target"]
