"""`python -m chaos [SPEC...] [--budget 10m] [--faults all] [--report chaos-report.json]`.

Without specs it soaks every example (`examples/*.strands.yaml`) and every scenario (`chaos/scenarios/`).
"""

from __future__ import annotations

import sys
from pathlib import Path

from strands_durable.cli.chaos import chaos

REPO = Path(__file__).resolve().parents[1]


def default_specs() -> list[Path]:
    return sorted((REPO / "examples").glob("*.strands.yaml")) + sorted(
        (REPO / "chaos" / "scenarios").glob("*.strands.yaml")
    )


def main(argv: list[str]) -> None:
    import typer

    if not any(arg.endswith((".yaml", ".yml", ".json")) and not arg.startswith("-") for arg in argv):
        argv = [str(p) for p in default_specs()] + argv
    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
    app.command()(chaos)
    app(argv, prog_name="python -m chaos")


if __name__ == "__main__":
    main(sys.argv[1:])
