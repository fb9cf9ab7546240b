"""Chat-completions requests through `DirectMessagesClient` (models/direct_messages.py) are the same bytes as through
a plain `AsyncOpenAI`, driven by Strands' real `OpenAIModel` and a real Agent against the loopback server, and the
openai package's request transform no longer walks the messages."""

from __future__ import annotations

import asyncio
import base64

import openai
import openai.resources.chat.completions.completions as completions_module
import pytest
from strands import Agent, tool
from strands.models.openai import OpenAIModel

from strands_durable.models.answer import Answer, ToolCall, Usage
from strands_durable.models.digest import canonical_json, sha256_hex
from strands_durable.models.direct_messages import DirectMessagesClient
from strands_durable.models.loop_client import LoopBoundClient
from strands_durable.models.providers import build_model
from strands_durable.testing import OpenAICompatServer

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


@tool
def lookup(city: str, days: list[int], detail: dict | None = None) -> str:
    """Look a city up.

    Args:
        city: The city.
        days: Days ahead.
        detail: Extra options.
    """
    return f'{city}: sunny on {days} (é, ünïcode, "quotes")'


class LookupThenAnswer:
    """A prompt gets one `lookup` call with nested arguments, a tool result a text with non-ASCII characters."""

    def answer(self, request):
        last = request.messages[-1]["content"]
        if any("toolResult" in block for block in last):
            return Answer(text="Sunny — said the tool.", usage=Usage(10, 5))
        arguments = {"city": "Zürich", "days": [1, 2], "detail": {"units": "C", "nested": [{"a": None}]}}
        return Answer(tool_calls=[ToolCall("lookup", arguments, "call_" + sha256_hex(canonical_json(last))[:12])])


def conversation(client) -> None:
    """Three turns of one agent (tool use, non-ASCII text, an image, sampling params) on one loop."""
    model = OpenAIModel(client=client, model_id="loopback-1", params={"max_tokens": 64, "temperature": 0.25})
    agent = Agent(model=model, tools=[lookup], system_prompt="You look things up.", callback_handler=None)

    async def turns() -> None:
        await agent.invoke_async("Weather in Zürich?")
        image = {"image": {"format": "png", "source": {"bytes": PNG}}}
        await agent.invoke_async([{"text": "And this picture?"}, image])
        await agent.invoke_async("Once more, please.")

    asyncio.run(turns())


def sent_through(make_client) -> list[tuple[dict[str, str], bytes]]:
    with OpenAICompatServer(policy=LookupThenAnswer()) as server:
        conversation(LoopBoundClient(make_client, base_url=server.base_url, api_key="test-key"))
        return server.sent


def test_requests_are_byte_identical_to_the_plain_client() -> None:
    plain = sent_through(openai.AsyncOpenAI)
    direct = sent_through(DirectMessagesClient.make)
    assert len(plain) == 6  # three turns, each a tool call then a text
    assert [body for _, body in direct] == [body for _, body in plain]
    assert [headers["authorization"] for headers, _ in direct] == ["Bearer test-key"] * 6
    assert b'"image_url"' in plain[-3][1] and b'"tool_calls"' in plain[-1][1]
    assert plain[0][1].startswith(b'{"messages":[')  # `messages` keeps its place
    for (plain_headers, _), (direct_headers, _) in zip(plain, direct, strict=True):
        assert direct_headers.keys() == plain_headers.keys()
        assert direct_headers["content-type"] == plain_headers["content-type"]


def test_the_transform_no_longer_walks_the_messages(monkeypatch: pytest.MonkeyPatch) -> None:
    """The openai package's transform is handed an empty `messages`; the plain client hands it the history."""
    seen: list[int] = []
    transform = completions_module.async_maybe_transform

    async def counting(data, expected_type):
        seen.append(len(data["messages"]))
        return await transform(data, expected_type)

    monkeypatch.setattr(completions_module, "async_maybe_transform", counting)
    sent_through(openai.AsyncOpenAI)
    assert seen == [2, 4, 6, 8, 10, 12]
    seen.clear()
    sent_through(DirectMessagesClient.make)
    assert seen == [0] * 6


def test_a_callers_extra_body_and_non_list_messages_are_sent_as_by_the_plain_client() -> None:
    async def requests(client) -> None:
        messages = [{"role": "user", "content": "Hi"}]
        for extra_body in (None, {"seed_note": "x"}, {"messages": [{"role": "user", "content": "Override"}]}):
            stream = await client.chat.completions.create(
                model="loopback-1", messages=messages, stream=True, extra_body=extra_body
            )
            async for _ in stream:
                pass
        stream = await client.chat.completions.create(model="loopback-1", messages=iter(messages), stream=True)
        async for _ in stream:
            pass

    def sent(make_client) -> list[bytes]:
        with OpenAICompatServer(policy=LookupThenAnswer()) as server:
            asyncio.run(requests(make_client(base_url=server.base_url, api_key="k")))
            return [body for _, body in server.sent]

    plain = sent(openai.AsyncOpenAI)
    assert sent(DirectMessagesClient.make) == plain
    assert b'"seed_note":"x"' in plain[1] and b"Override" in plain[2] and b'"Hi"' in plain[3]


def test_build_model_gives_the_openai_providers_the_direct_client() -> None:
    model = build_model("openai", model_id="m", runtime={"host": "http://127.0.0.1:9/v1"})

    async def current():
        return model._custom_client.current()  # the SDK keeps an injected client here

    client = asyncio.run(current())
    assert isinstance(client, DirectMessagesClient) and isinstance(client.client, openai.AsyncOpenAI)
