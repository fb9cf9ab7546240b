"""`python -m chaos [SPEC...] [--budget 10m] [--faults all] [--report chaos-report.json]`.

Without specs it soaks every example (`examples/*.strands.yaml`) and every scenario (`chaos/scenarios/`).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from strands_durable.cli.chaos import chaos

REPO = Path(__file__).resolve().parents[1]
DEFAULT_SPECS_HELP = "every examples/*.strands.yaml and chaos/scenarios/*.strands.yaml"


def default_specs() -> list[Path]:
    return sorted((REPO / "examples").glob("*.strands.yaml")) + sorted(
        (REPO / "chaos" / "scenarios").glob("*.strands.yaml")
    )


def command() -> Any:
    """`strands chaos` whose SPECS may be left out: the parser then gives the default specs, so its help says
    so, and an option's value (`--report r.json`) is never taken for a spec."""
    import typer

    from strands_durable.cli.app import plain_help

    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)
    app.command()(chaos)
    soak = typer.main.get_command(app)
    specs = next(param for param in soak.params if param.name == "specs")
    specs.required = False
    specs.default = lambda: [str(path) for path in default_specs()]
    specs.show_default = DEFAULT_SPECS_HELP
    plain_help(soak)
    return soak


def main(argv: list[str]) -> None:
    command()(argv, prog_name="python -m chaos")


if __name__ == "__main__":
    main(sys.argv[1:])
