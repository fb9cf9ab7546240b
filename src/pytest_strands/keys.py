"""What every module of the chaos plugin shares and none of them owns: the stash key of the session's chaos suite
and the failure a chaos item raises (items.py, reproduce.py and the plugin import it from here, so none of them
imports another for it)."""

from __future__ import annotations

from typing import Any

import pytest

SUITE = pytest.StashKey[Any]()  # the session's `ChaosSuite` (set by the plugin under --strands-chaos)
SELECTION = pytest.StashKey[Any]()  # the spec files and directories the command line names (set by the plugin)


class ChaosFailure(AssertionError):
    """A crash point (or golden run, or schedule) that broke a rule; its text is what the user reads."""
