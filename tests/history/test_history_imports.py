"""The history library is pure: importing it pulls in neither strands-agents nor anything doing I/O."""

from __future__ import annotations

import subprocess
import sys


def test_importing_history_does_not_import_strands_agents() -> None:
    code = (
        "import sys, strands_durable.history as h; "
        "loaded = sorted(m for m in sys.modules if m == 'strands' or m.startswith('strands.')); "
        "print(loaded)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
