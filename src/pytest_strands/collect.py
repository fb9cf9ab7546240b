"""Which files `pytest --strands-chaos` runs as workflow specs, and why it ran none when none were collected.

A file is a spec when it is named `*.strands.yaml|yml|json`, named on the command line with a `.yaml`, `.yml` or
`.json` suffix, matched by a glob of the ini option `strands_chaos_specs` (relative to the ini file's directory),
or lies under a directory the ini option `strands_chaos_spec_dirs` opts in. Cassettes are never specs.
"""

from __future__ import annotations

import fnmatch
import glob
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from strands_durable.faults.suite import SPEC_SUFFIXES, ChaosUsageError

PLAIN_SUFFIXES = (".yaml", ".yml", ".json")
CASSETTE_SUFFIX = ".cassette.json"
WAYS_IN = (
    "name them on the command line, list them in strands_chaos_specs (globs, relative to the ini file) "
    "or opt their directory in with strands_chaos_spec_dirs"
)
_SCAN_LIMIT = 5000  # files looked at when explaining an empty run
_SPEC_KEYS = (re.compile(r"^pattern\s*:", re.MULTILINE), re.compile(r"^agents\s*:", re.MULTILINE))


@dataclass
class SpecSelection:
    """The spec files of one chaos session: by name, listed in the ini (globs expanded), named on the command
    line, or under an opted-in directory."""

    listed: list[Path] = field(default_factory=list)  # strands_chaos_specs, expanded, in order
    named: set[Path] = field(default_factory=set)  # files named on the command line
    dirs: list[Path] = field(default_factory=list)  # strands_chaos_spec_dirs

    def wants(self, path: Path) -> bool:
        name = path.name
        if name.endswith(CASSETTE_SUFFIX):
            return False
        if name.endswith(SPEC_SUFFIXES):
            return True
        resolved = path.resolve()
        if resolved in self.listed:
            return True
        if not name.endswith(PLAIN_SUFFIXES):
            return False
        return resolved in self.named or any(resolved.is_relative_to(d) for d in self.dirs)

    def extra_args(self) -> list[str]:
        """What the ini options add to the paths pytest collects."""
        return [str(p) for p in [*self.listed, *self.dirs]]


def select_specs(config: pytest.Config) -> SpecSelection:
    """The selection from the ini options (pytest `paths`, joined to the ini file's directory) and the paths named
    on the command line. An ini entry that matches nothing is a usage error (`ChaosUsageError`)."""
    base = config.inipath.parent if config.inipath else config.invocation_params.dir
    listed: list[Path] = []
    for entry in config.getini("strands_chaos_specs"):
        pattern = str(entry)
        matches = sorted(glob.glob(pattern, recursive=True)) if any(c in pattern for c in "*?[") else [pattern]
        files = [Path(m).resolve() for m in matches if Path(m).is_file()]
        if not files:
            raise ChaosUsageError(f"strands_chaos_specs: {_relative(entry, base)} matches no file (relative to {base})")
        listed += [f for f in files if f not in listed]
    dirs = []
    for entry in config.getini("strands_chaos_spec_dirs"):
        if not entry.is_dir():
            raise ChaosUsageError(f"strands_chaos_spec_dirs: {_relative(entry, base)} is not a directory under {base}")
        dirs.append(entry.resolve())
    invoked = config.invocation_params.dir
    named = {(invoked / arg.split("::", 1)[0]).resolve() for arg in config.args}
    return SpecSelection(listed=listed, named=named, dirs=dirs)


def _relative(path: Path, base: Path) -> str:
    try:
        return str(path.relative_to(base))
    except ValueError:
        return str(path)


# -- explaining an empty run ----------------------------------------------------------------------------------------


def looks_like_spec(path: Path) -> bool:
    """A YAML or JSON file with top-level `pattern` and `agents` keys, as every strands-cli v0 spec has."""
    try:
        if path.stat().st_size > 2_000_000:
            return False
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    if path.suffix == ".json":
        return '"pattern"' in text and '"agents"' in text
    return all(key.search(text) for key in _SPEC_KEYS)


def candidate_files(roots: list[Path], norecursedirs: list[str]) -> list[Path]:
    """YAML/JSON files under `roots` (hidden and `norecursedirs` directories pruned, as pytest does)."""
    found: list[Path] = []
    for root in roots:
        if root.is_file():
            found.append(root)
            continue
        for current, subdirs, files in os.walk(root):
            subdirs[:] = sorted(
                d for d in subdirs if not d.startswith(".") and not any(fnmatch.fnmatch(d, p) for p in norecursedirs)
            )
            found += [Path(current) / f for f in sorted(files) if f.endswith(PLAIN_SUFFIXES)]
            if len(found) >= _SCAN_LIMIT:
                return found
    return found


def _roots(config: pytest.Config) -> list[Path]:
    """The paths pytest was given (node ids cut to their file)."""
    return [config.invocation_params.dir / arg.split("::", 1)[0] for arg in config.args]


def spec_files(config: pytest.Config, selection: SpecSelection) -> list[Path]:
    """The spec files this session will collect, found ahead of pytest's collection (the same walk; files that
    `--ignore` or a conftest leaves out are still listed), in one order every process agrees on."""
    found = candidate_files(_roots(config), config.getini("norecursedirs"))
    return list(dict.fromkeys(p.resolve() for p in found if selection.wants(p)))


def nothing_collected_line(config: pytest.Config, selection: SpecSelection) -> str | None:
    """Why a chaos session ran no workflow, or None when specs were collected and merely deselected (`-k`).
    Looks at the paths pytest was given (on the xdist controller too, which collects nothing itself)."""
    roots = _roots(config)
    found = candidate_files(roots, config.getini("norecursedirs"))
    specs = [p for p in found if not p.name.endswith(CASSETTE_SUFFIX)]
    specs = [p for p in specs if looks_like_spec(p)]
    passed_over = [p for p in specs if not selection.wants(p)]
    if passed_over:
        shown = ", ".join(_relative(p, Path.cwd()) for p in passed_over[:10])
        more = f" and {len(passed_over) - 10} more" if len(passed_over) > 10 else ""
        return (
            f"strands-chaos: 0 workflows collected, but {len(passed_over)} files look like workflow specs and are "
            f"not named *.strands.yaml|yml|json: {shown}{more}; {WAYS_IN}"
        )
    if specs:
        return None
    return (
        "strands-chaos: 0 workflows collected: no workflow spec found under "
        + ", ".join(_relative(r, Path.cwd()) or "." for r in roots)
        + " (collected: *.strands.yaml|yml|json, and .yaml/.yml/.json files named on the command line, listed in "
        "strands_chaos_specs or under strands_chaos_spec_dirs)"
    )


def hitl_hint(exc: BaseException) -> str:
    """The golden run's error in one line; a HITL pause says which ini option answers it."""
    from strands_durable.errors import HitlPaused

    text = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, HitlPaused):
        return (
            f"{text}\nthe golden run stopped at a HITL step that has no default: set strands_chaos_hitl_answer "
            "in the ini file (the answer given to every HITL step), or give the step a default"
        )
    return text
