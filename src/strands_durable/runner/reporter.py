"""What a run tells its caller as it goes; the CLI prints the user's document's lines from these calls."""

from __future__ import annotations


class Reporter:
    """A silent reporter; subclasses print or record. Indices are 0-based; `total` counts the pattern's units."""

    def session_started(self, session_id: str, workflow: str, *, resumed: bool) -> None: ...

    def warning(self, text: str) -> None: ...

    def unit_skipped(self, index: int, label: str, unit: str, *, total: int | None = None) -> None: ...

    def unit_started(self, index: int, total: int | None, label: str, unit: str) -> None: ...

    def unit_completed(self, index: int, total: int | None, label: str, unit: str, tokens: int) -> None: ...

    def finished(self, status: str, tokens_before: int, tokens_total: int) -> None: ...


class RecordingReporter(Reporter):
    """Keeps every call as a tuple (tests and the pytest plugin)."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def session_started(self, session_id: str, workflow: str, *, resumed: bool) -> None:
        self.calls.append(("session_started", session_id, workflow, resumed))

    def warning(self, text: str) -> None:
        self.calls.append(("warning", text))

    def unit_skipped(self, index: int, label: str, unit: str, *, total: int | None = None) -> None:
        self.calls.append(("unit_skipped", index, label, unit))

    def unit_started(self, index: int, total: int | None, label: str, unit: str) -> None:
        self.calls.append(("unit_started", index, total, label, unit))

    def unit_completed(self, index: int, total: int | None, label: str, unit: str, tokens: int) -> None:
        self.calls.append(("unit_completed", index, total, label, unit, tokens))

    def finished(self, status: str, tokens_before: int, tokens_total: int) -> None:
        self.calls.append(("finished", status, tokens_before, tokens_total))
