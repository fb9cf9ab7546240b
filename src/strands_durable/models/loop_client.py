"""`LoopBoundClient`: one OpenAI client per event loop and process, for the `client=` of Strands' `OpenAIModel`.

Without an injected client, `OpenAIModel` builds a new `AsyncOpenAI` for every request: a new httpx client with
a new TLS context, whose `load_verify_locations` alone costs ~20 ms, about a third of a 40-step chain's time
against a local server. One shared client is no answer either: httpx connections belong to the loop that opened
them, and a forked child must never write to its parent's connections. This object is what the model gets as
its client; every attribute read (`client.chat`, `client.beta`) is served by the running loop's own client,
made on the first request in that loop and process and reused by every later request there (a run's units and
model turns reuse their thread's loop, agent/loop.py). A loop that is gone takes its client with it (the
mapping holds loops weakly, and a closed loop's client is dropped when the next client is made); a forked child
forgets its parent's clients and makes its own. Retries inside a request (the openai package's `max_retries`)
and cancellation behave as with a fresh client: each request is still one `create` call on its loop's client.
"""

from __future__ import annotations

import asyncio
import os
import threading
import weakref
from collections.abc import Callable
from typing import Any


class LoopBoundClient:
    """Serves each running loop (in each process) its own `make_client(**client_args)`, made on first use there."""

    def __init__(self, make_client: Callable[..., Any], **client_args: Any) -> None:
        self._make_client = make_client
        self.client_args = client_args
        self._pid = os.getpid()
        self._lock = threading.Lock()
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()

    def current(self) -> Any:
        """The running loop's client (a `RuntimeError` outside a running loop, as any async client use)."""
        loop = asyncio.get_running_loop()
        if self._pid != os.getpid():  # a forked child: none of the parent's clients (nor its lock) is ours
            self._pid, self._lock, self._clients = os.getpid(), threading.Lock(), weakref.WeakKeyDictionary()
        client = self._clients.get(loop)
        if client is not None:
            return client
        client = self._make_client(**self.client_args)
        with self._lock:  # loops of concurrent units run in other threads
            self._forget_closed_loops()
            self._clients[loop] = client
        return client

    def _forget_closed_loops(self) -> None:
        """Drop the clients of loops that were closed: a client whose pooled connections refer to its loop would
        otherwise keep the loop alive, and with it the weak mapping's entry, for the life of the process."""
        for loop in [loop for loop in list(self._clients.keys()) if loop.is_closed()]:
            self._clients.pop(loop, None)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.current(), name)
