"""The loopback OpenAI-compatible server, and Strands' real OpenAIModel driven through it end to end."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest
from strands import Agent, tool
from strands.models.openai import OpenAIModel

from strands_durable.models.contracts import parse_route, route_instruction
from strands_durable.models.request import ModelRequest
from strands_durable.models.scripted import ScriptedPolicy
from strands_durable.models.synthetic_policy import SyntheticPolicy
from strands_durable.testing import OpenAICompatServer, request_from_openai
from tests.models.conftest import lookup_weather

RESERVATIONS: list[str] = []


@tool
def reserve_table(restaurant: str, guests: int) -> str:
    """Reserve a table.

    Args:
        restaurant: Where.
        guests: How many people.
    """
    RESERVATIONS.append(f"{restaurant}:{guests}")
    return f"table for {guests} at {restaurant}"


def test_strands_openai_model_runs_a_tool_round_trip_against_the_loopback_server():
    script = ScriptedPolicy(
        [
            [{"name": "reserve_table", "input": {"restaurant": "Noma", "guests": 2}, "toolUseId": "call_1"}],
            "Booked a table for two at Noma.",
        ]
    )
    with OpenAICompatServer(policy=script) as server:
        model = OpenAIModel(client_args={"base_url": server.base_url, "api_key": "test"}, model_id="loopback-1")
        agent = Agent(model=model, tools=[reserve_table], callback_handler=None)
        result = agent("Book dinner for two at Noma.")
        requests = server.requests
    assert str(result).strip() == "Booked a table for two at Noma."
    assert RESERVATIONS == ["Noma:2"]
    assert [m["role"] for m in agent.messages] == ["user", "assistant", "user", "assistant"]
    assert agent.messages[1]["content"][0]["toolUse"]["toolUseId"] == "call_1"
    assert len(requests) == 2
    assert all(r["model"] == "loopback-1" and r["stream"] is True for r in requests)
    assert [t["function"]["name"] for t in requests[0]["tools"]] == ["reserve_table"]
    tool_message = next(m for m in requests[1]["messages"] if m["role"] == "tool")
    assert tool_message["tool_call_id"] == "call_1"
    assert result.metrics.accumulated_usage["totalTokens"] > 0


def _post(url: str, body: dict) -> tuple[int, bytes]:
    data = json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=5) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def _sse(payload: bytes) -> list:
    lines = [line[len("data: ") :] for line in payload.decode().split("\n\n") if line.startswith("data: ")]
    assert lines[-1] == "[DONE]"
    return [json.loads(line) for line in lines[:-1]]


TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "lookup_weather",
            "description": lookup_weather.tool_spec["description"],
            "parameters": lookup_weather.tool_spec["inputSchema"]["json"],
        },
    }
]


def test_streaming_chunks_follow_the_openai_shape_for_text_and_tool_calls():
    with OpenAICompatServer(policy=ScriptedPolicy([[{"name": "lookup_weather", "input": {"city": "Oslo"}}]])) as s:
        status, body = _post(
            s.base_url + "/chat/completions",
            {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}], "tools": TOOLS},
        )
    assert status == 200
    chunks = _sse(body)
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    head = chunks[1]["choices"][0]["delta"]["tool_calls"][0]
    assert head["function"]["name"] == "lookup_weather" and head["id"] == "tooluse_s0_0"
    assert json.loads(chunks[2]["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"]) == {"city": "Oslo"}
    assert chunks[-2]["choices"][0]["finish_reason"] == "tool_calls"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["total_tokens"] > 0

    with OpenAICompatServer(seed=1) as s:
        prompt = "Pick one." + route_instruction(["north", "south"])
        _, body = _post(
            s.base_url + "/chat/completions",
            {"model": "m", "stream": True, "messages": [{"role": "user", "content": prompt}]},
        )
    chunks = _sse(body)
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert parse_route(text, ["north", "south"]) in ("north", "south")
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop"


def test_non_streaming_requests_errors_and_shutdown():
    with OpenAICompatServer(policy=ScriptedPolicy(["Hello."])) as server:
        url = server.base_url + "/chat/completions"
        status, body = _post(url, {"model": "m", "messages": [{"role": "user", "content": "hi"}]})
        assert status == 200
        reply = json.loads(body)
        assert reply["choices"][0]["message"]["content"] == "Hello."
        assert reply["choices"][0]["finish_reason"] == "stop"
        assert _post(server.base_url + "/embeddings", {})[0] == 404
        bad = urllib.request.Request(url, data=b"{not json", method="POST")
        with pytest.raises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(bad, timeout=5)
        assert caught.value.code == 400
        exhausted = {
            "model": "m",
            "messages": [
                {"role": "user", "content": "a"},
                {"role": "assistant", "content": "b"},
                {"role": "user", "content": "c"},
            ],
        }
        status, body = _post(url, exhausted)
        assert status == 500 and "ScriptExhausted" in json.loads(body)["error"]["message"]
        assert server.request_count == 2  # 404s and malformed bodies are not recorded
        assert server.base_url.startswith("http://127.0.0.1:")
    with pytest.raises(RuntimeError, match="not running"):
        server.base_url  # noqa: B018
    with pytest.raises(OSError):
        _post(url, {"model": "m", "messages": []})


def test_openai_requests_convert_back_to_the_strands_conversation():
    body = {
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": [{"type": "text", "text": "Weather?"}]},
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "lookup_weather", "arguments": '{"city": "Oslo"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
        ],
        "tools": TOOLS,
        "tool_choice": "required",
    }
    request = request_from_openai(body)
    assert request.system_prompt == "Be brief."
    assert request.messages == [
        {"role": "user", "content": [{"text": "Weather?"}]},
        {
            "role": "assistant",
            "content": [{"toolUse": {"toolUseId": "c1", "name": "lookup_weather", "input": {"city": "Oslo"}}}],
        },
        {"role": "user", "content": [{"toolResult": {"toolUseId": "c1", "content": [{"text": "sunny"}]}}]},
    ]
    assert request.tool_choice == {"any": {}}
    assert request.tool_schema("lookup_weather") == lookup_weather.tool_spec["inputSchema"]["json"]
    assert request.tool_rounds_since_prompt() == 1
    same = ModelRequest.build(request.messages, [lookup_weather.tool_spec], "Be brief.", tool_choice={"any": {}})
    assert SyntheticPolicy().answer(request).tool_calls == SyntheticPolicy().answer(same).tool_calls
