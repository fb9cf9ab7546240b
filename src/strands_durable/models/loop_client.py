"""`LoopBoundClient`: one OpenAI client per event loop and process, for the `client=` of Strands' `OpenAIModel`.

Without an injected client, `OpenAIModel` builds a new `AsyncOpenAI` for every request: a new httpx client with
a new TLS context, whose `load_verify_locations` alone costs ~20 ms, about a third of a 40-step chain's time
against a local server. One shared client is no answer either: httpx connections belong to the loop that opened
them, and a forked child must never write to its parent's connections. This object is what the model gets as
its client; every attribute read (`client.chat`, `client.beta`) is served by the running loop's own client,
made on the first request in that loop and process and reused by every later request there (a run's units and
model turns reuse their thread's loop, agent/loop.py). A loop that is gone takes its client with it (the
mapping holds loops weakly); a forked child finds its parent's clients under another process id and makes its
own. Retries inside a request (the openai package's `max_retries`) and cancellation behave as with a fresh
client: each request is still one `create` call on a client of its own loop.
"""

from __future__ import annotations

import asyncio
import os
import weakref
from collections.abc import Callable
from typing import Any


class LoopBoundClient:
    """Serves each running loop (in each process) its own `make_client(**client_args)`, made on first use there."""

    def __init__(self, make_client: Callable[..., Any], **client_args: Any) -> None:
        self._make_client = make_client
        self.client_args = client_args
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, tuple[int, Any]] = (
            weakref.WeakKeyDictionary()
        )

    def current(self) -> Any:
        """The running loop's client (a `RuntimeError` outside a running loop, as any async client use)."""
        loop = asyncio.get_running_loop()
        pid = os.getpid()
        held = self._clients.get(loop)
        if held is not None and held[0] == pid:
            return held[1]
        client = self._make_client(**self.client_args)
        # No lock: a loop runs in one thread, so no two threads make a client for one key (and a lock another
        # thread held at a fork would stay held in the child).
        self._clients[loop] = (pid, client)
        return client

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.current(), name)
