"""Forking waits for threads that are ending and refuses, naming them, when threads keep running."""

from __future__ import annotations

import threading
import time

import pytest

from strands_durable.faults.kit.forking import _wait_for_other_threads, run_in_child


def test_a_thread_that_ends_soon_does_not_stop_a_fork() -> None:
    ending = threading.Thread(target=time.sleep, args=(0.3,), name="ending-soon")
    ending.start()
    assert run_in_child(lambda: 7).code == 7  # waited for the thread, then forked
    assert not ending.is_alive()


def test_a_thread_that_keeps_running_is_named_in_the_refusal() -> None:
    stop = threading.Event()
    lingering = threading.Thread(target=stop.wait, name="lingering-renewer")
    lingering.start()
    try:
        with pytest.raises(RuntimeError, match="lingering-renewer"):
            _wait_for_other_threads(0.2)
    finally:
        stop.set()
        lingering.join()
