"""A real headless Chromium for the HTML report tests, driven through Playwright (the system browser, never a
downloaded one). In CI (`CI=true`) a missing browser fails the test; elsewhere the test is skipped with the
command that installs it."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

INSTALL = "apt-get update && apt-get install -y chromium (Debian/Ubuntu; .ci/run does this); pip install playwright"


def chromium_path() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


def _missing(what: str) -> None:
    message = f"{what} is missing: the HTML report is checked in a real headless Chromium; install with: {INSTALL}"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


@contextmanager
def chromium_page(**page_options: Any) -> Iterator[Any]:
    """A fresh page of a headless system Chromium."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("the playwright package")
    path = chromium_path()
    if path is None:
        _missing("Chromium")
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=path, args=["--no-sandbox"])
        try:
            yield browser.new_page(**page_options)
        finally:
            browser.close()
