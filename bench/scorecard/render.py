"""The scorecard's outputs: the table section of docs/backends.md (everything below `<!-- scorecard -->`) and the
PNG plot it shows, from the rows `run.py` collected."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MARKER = "<!-- scorecard -->"
NEW_FILE_HEAD = "# Session backends under the durability gate\n\n"


@dataclass
class Row:
    """One backend's line: its gate result (or why there is none) and its measurements."""

    name: str
    version: str
    reference: str
    ours: bool
    level: str = "-"
    failed: list[dict[str, Any]] = field(default_factory=list)  # the report's failing clauses
    error: str | None = None  # the first line of why it does not install, import or build
    gate_error: str | None = None  # why the gate gave no report (it failed or ran out of time)
    seconds: dict[str, float] = field(default_factory=dict)  # where the scorecard's time went: gate, measure
    measurements: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {
            "backend": self.name,
            "version": self.version,
            "factory": self.reference,
            "ours": self.ours,
            "level": self.level,
            "failed": self.failed,
            "error": self.error,
            "gate_error": self.gate_error,
            "seconds": self.seconds,
            "measurements": self.measurements,
        }


def _ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.1f}" if value < 100 else f"{value:,.0f}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def table(rows: list[Row], sizes: tuple[int, ...]) -> str:
    head = "| backend | version | level | failed clauses (reproduce) | commit p50 / p99 ms |"
    head += "".join(f" resume {size:,} ms |" for size in sizes)
    lines = [head, "|" + "---|" * (5 + len(sizes))]
    for row in rows:
        if not row.reference:  # not a backend: the floor of the measurements
            failed = "-"
        elif row.error:
            failed = f"does not run: {_cell(row.error)}"
        elif row.gate_error:
            failed = f"no report: {_cell(row.gate_error)}"
        else:
            failed = "<br>".join(
                f"`{clause['name']}`: `{_cell(clause.get('reproduce') or '')}`" for clause in row.failed
            )
            failed = failed or "none"
        m = row.measurements
        commit = f"{_ms(m.get('commit_p50_ms'))} / {_ms(m.get('commit_p99_ms'))}" if m else "-"
        resume = "".join(f" {_ms((m.get('resume_ms') or {}).get(str(size)))} |" for size in sizes)
        name = f"**{row.name}**" if row.ours else row.name
        lines.append(f"| {name} | {row.version} | {row.level} | {failed} | {commit} |{resume}")
    return "\n".join(lines)


def notes(rows: list[Row]) -> str:
    found = [f"- {row.name}: {_cell(note)}" for row in rows for note in row.measurements.get("notes", [])]
    return "\n".join(found)


def section(rows: list[Row], sizes: tuple[int, ...], *, header: str, plot: str | None) -> str:
    parts = [header, "", table(rows, sizes)]
    if notes(rows):
        parts += ["", "Measurement notes:", "", notes(rows)]
    if plot:
        parts += ["", f"![commit latency and resume time per backend]({plot})"]
    return "\n".join(parts) + "\n"


def rewrite(document: Path, body: str) -> None:
    """Replace everything below the marker line of `document` with `body` (the file is made if missing)."""
    text = document.read_text() if document.exists() else NEW_FILE_HEAD + MARKER + "\n"
    if MARKER not in text:
        text = text.rstrip("\n") + "\n\n" + MARKER + "\n"
    above = text.split(MARKER, 1)[0]
    document.parent.mkdir(parents=True, exist_ok=True)
    document.write_text(above + MARKER + "\n\n" + body)


def plot(rows: list[Row], sizes: tuple[int, ...], path: Path) -> None:
    """Two panels: commit p50/p99 per backend (bars, log scale) and resume time against session size (log-log)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    measured = [row for row in rows if row.measurements.get("commit_p50_ms") is not None]
    figure, (commits, resumes) = plt.subplots(1, 2, figsize=(15, 8), gridspec_kw={"width_ratios": [1.1, 1]})
    positions = range(len(measured))
    commits.barh([p + 0.2 for p in positions], [r.measurements["commit_p50_ms"] for r in measured], 0.4, label="p50")
    commits.barh([p - 0.2 for p in positions], [r.measurements["commit_p99_ms"] for r in measured], 0.4, label="p99")
    commits.set_yticks(list(positions), [r.name for r in measured], fontsize=8)
    commits.set_xscale("log")
    commits.set_xlabel("ms to commit one ~1 KB message (log)")
    commits.invert_yaxis()
    commits.legend()
    for row in measured:
        points = [(s, (row.measurements.get("resume_ms") or {}).get(str(s))) for s in sizes]
        points = [(s, v) for s, v in points if v is not None]
        if points:
            style = {"linewidth": 3} if row.ours else {"linewidth": 1.2}
            resumes.plot([s for s, _ in points], [v for _, v in points], marker="o", label=row.name, **style)
    resumes.set_xscale("log")
    resumes.set_yscale("log")
    resumes.set_xlabel("messages in the session (log)")
    resumes.set_ylabel("ms to resume (log)")
    resumes.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2)  # below: no line hidden
    figure.suptitle("Strands session backends on loopback servers, one run (ours in bold)")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=90, bbox_inches="tight")
    plt.close(figure)
