"""`DirectMessagesClient`: an `AsyncOpenAI` whose chat-completions requests carry `messages` as given, without the
openai package's per-request parameter transform walking them.

`AsyncCompletions.create` runs every request's parameters through the package's `async_maybe_transform`, which
walks each value against its TypedDict (aliases, date and base64 formats): for Strands' requests, whose message
history grows with the run, that is ~20% of a 40-step chain against a local server, and for the chat parameters
it changes nothing (none of the message types carries an alias or a format; tests/models/
test_direct_messages.py checks the bytes sent). This client hands `create` an empty `messages` and the real list
in `extra_body`, the package's documented way to send request JSON as given ("Undocumented request params" in
its README); the client merges `extra_body` over the body it built, so `messages` keeps its place and the JSON
sent is the same bytes. Everything else about the call is the package's own: the path, the authentication, the
retries, the stream class, the validation of the other parameters. A caller's own `extra_body` keeps precedence,
and `messages` that are not a list (an iterable the transform would have listed) go through the transform.
"""

from __future__ import annotations

from typing import Any


class DirectMessagesClient:
    """Wraps an `AsyncOpenAI`: `chat.completions.create` as described above, every other attribute the client's."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.chat = _Chat(client.chat)

    @classmethod
    def make(cls, **client_args: Any) -> DirectMessagesClient:
        """`DirectMessagesClient(openai.AsyncOpenAI(**client_args))`, the `make_client` of a `LoopBoundClient`."""
        import openai

        return cls(openai.AsyncOpenAI(**client_args))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)


class _Chat:
    def __init__(self, chat: Any) -> None:
        self._chat = chat
        self.completions = _Completions(chat.completions)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._chat, name)


class _Completions:
    def __init__(self, completions: Any) -> None:
        self._completions = completions

    async def create(self, *, messages: Any, extra_body: Any = None, **params: Any) -> Any:
        """`completions.create(messages=messages, ...)`, sending the same JSON without transforming `messages`."""
        if not isinstance(messages, list):
            return await self._completions.create(messages=messages, extra_body=extra_body, **params)
        body = {"messages": messages, **(extra_body or {})}
        return await self._completions.create(messages=[], extra_body=body, **params)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._completions, name)
