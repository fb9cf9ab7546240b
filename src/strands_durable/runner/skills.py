"""The spec's `skills`, as strands-cli offers them: a "How to Use Skills" section in every agent's system prompt and
the `Skill` tool (also named `skill_loader` in specs) that reads a skill's SKILL.md, or `<skill>/<module>.md`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

SKILL_TOOL = "Skill"
SKILL_TOOL_NAMES = frozenset({SKILL_TOOL, "skill_loader"})


def skills_prompt(spec: Any) -> str:
    """The section strands-cli appends to system prompts when the spec has skills ('' when it has none)."""
    if not spec.skills:
        return ""
    lines = [
        "",
        "# How to Use Skills",
        "",
        "When a user's request might be solved by a specialized skill, call the Skill tool to load it.",
        'To use a skill, call: `Skill("skill_id")`',
        "",
        "Only use skills from the Available Skills list below.",
        "Do not invoke a skill that's already been loaded.",
        "",
        "# Available Skills",
        "",
    ]
    for skill in spec.skills:
        line = f"- **{skill.id}** (path: `{skill.path}`)"
        lines.append(line + (f": {skill.description}" if skill.description else ""))
    return "\n\n" + "\n".join(lines)


def skill_directories(spec: Any) -> dict[str, Path]:
    """skill id -> its directory (relative paths are relative to the spec file)."""
    if not spec.skills:
        return {}
    base = Path(spec.source_path).parent if spec.source_path else Path.cwd()
    return {skill.id: (base / skill.path).resolve() for skill in spec.skills}


def load_skill(directories: dict[str, Path], skill_id: str) -> str:
    """The text of a skill (`id`: SKILL.md, else README.md) or of one of its modules (`id/module`: module.md)."""
    base_id, _, module = skill_id.strip().partition("/")
    if base_id not in directories:
        raise ValueError(
            f"Skill '{base_id}' not found in workflow specification.\nAvailable skills: "
            + (", ".join(directories) or "none")
        )
    directory = directories[base_id]
    if module:
        target = (directory / f"{module}.md").resolve()
        if directory not in target.parents or not target.is_file():
            modules = sorted(p.stem for p in directory.glob("*.md") if p.name not in ("SKILL.md", "README.md"))
            raise ValueError(
                f"Module '{module}' not found in skill '{base_id}'.\nAvailable modules: {', '.join(modules) or 'none'}"
            )
    else:
        target = next((directory / n for n in ("SKILL.md", "README.md") if (directory / n).is_file()), None)
        if target is None:
            raise ValueError(f"Skill '{base_id}' has no SKILL.md or README.md file at path: {directory}")
    return f"# Skill: {skill_id}\n\n" + target.read_text(encoding="utf-8", errors="replace")[:100_000]
