"""One OpenAI client per event loop and process (models/loop_client.py), driven through Strands' real
OpenAIModel, a real Agent and the loopback chat-completions server: reuse within a loop, a client of its own
for another loop and for a forked child, cancellation mid-request and whole-call retries still correct."""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import threading
import time
import weakref

import openai
import pytest
from strands import Agent, tool
from strands.models.openai import OpenAIModel

from strands_durable import LocalStore, RunOptions, run_workflow
from strands_durable.agent.loop import run_on_thread_loop
from strands_durable.models.answer import Answer, ToolCall, Usage
from strands_durable.models.digest import canonical_json, sha256_hex
from strands_durable.models.direct_messages import DirectMessagesClient
from strands_durable.models.loop_client import LoopBoundClient
from strands_durable.models.providers import build_model
from strands_durable.models.wrapping import WrappedModel
from strands_durable.runner.retry import RetryingModel, RetryPolicy
from strands_durable.testing import OpenAICompatServer


@tool
def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: First.
        b: Second.
    """
    return a + b


class AddThenAnswer:
    """A prompt gets one `add` call, a tool result a text. `hold` (set per request number) delays an answer
    until `release` is set; `fail_first` requests fail with a server error."""

    def __init__(
        self,
        *,
        fail_first: int = 0,
        hold: frozenset[int] = frozenset(),
        call: tuple[str, dict] = ("add", {"a": 2, "b": 3}),
    ) -> None:
        self.call = call
        self.fail_first = fail_first
        self.hold = hold
        self.release = threading.Event()
        self.arrived = threading.Event()
        self.count = 0
        self._lock = threading.Lock()

    def answer(self, request):
        with self._lock:
            self.count += 1
            number = self.count
        if number <= self.fail_first:
            raise RuntimeError(f"injected failure {number}")
        if number in self.hold:
            self.arrived.set()
            self.release.wait(10)
        last = request.messages[-1]["content"]
        if any("toolResult" in block for block in last):
            return Answer(text="The sum is 5.", usage=Usage(10, 5))
        call_id = "call_" + sha256_hex(canonical_json(last))[:12]
        return Answer(tool_calls=[ToolCall(*self.call, call_id)], usage=Usage(10, 5))


class CountingClients:
    """`make_client` for LoopBoundClient: a real AsyncOpenAI as the providers make it (sending messages as given,
    models/direct_messages.py), counted (per process)."""

    def __init__(self) -> None:
        self.made: list[DirectMessagesClient] = []

    def __call__(self, **client_args) -> DirectMessagesClient:
        client = DirectMessagesClient.make(**client_args)
        self.made.append(client)
        return client


def model_for(server: OpenAICompatServer, clients: CountingClients) -> OpenAIModel:
    loop_client = LoopBoundClient(clients, base_url=server.base_url, api_key="test")
    return OpenAIModel(client=loop_client, model_id="loopback-1")


def ask(model, prompt: str = "Add 2 and 3.", **kwargs):
    agent = Agent(model=model, tools=[add], callback_handler=None)
    return agent.invoke_async(prompt, **kwargs)


def test_every_request_on_one_loop_uses_one_client_and_another_loop_gets_its_own():
    clients = CountingClients()
    with OpenAICompatServer(policy=AddThenAnswer()) as server:
        model = model_for(server, clients)
        first = run_on_thread_loop(ask(model))
        second = run_on_thread_loop(ask(model, "Add 2 and 3 again."))
        assert str(first).strip() == str(second).strip() == "The sum is 5."
        assert server.request_count == 4 and len(clients.made) == 1  # 4 requests, 2 invocations, one loop

        other: list = []
        thread = threading.Thread(target=lambda: other.append(asyncio.run(ask(model))))  # a loop of its own
        thread.start()
        thread.join(30)
        assert str(other[0]).strip() == "The sum is 5."
        assert server.request_count == 6 and len(clients.made) == 2
        assert clients.made[0] is not clients.made[1]
        assert clients.made[1].base_url == clients.made[0].base_url == server.base_url + "/"

        run_on_thread_loop(ask(model, "Once more."))  # back on the first loop: its client again
        assert len(clients.made) == 2


def test_build_model_gives_openai_a_loop_bound_client_that_reaches_the_host(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with OpenAICompatServer(policy=AddThenAnswer()) as server:
        model = build_model("openai", model_id="loopback-1", runtime={"host": server.base_url})
        assert isinstance(model._custom_client, LoopBoundClient)  # the SDK keeps an injected client here
        result = run_on_thread_loop(ask(model))
        assert str(result).strip() == "The sum is 5." and server.request_count == 2


def test_a_forked_child_makes_its_own_clients_even_on_an_inherited_loop():
    clients = CountingClients()
    loop = asyncio.new_event_loop()
    try:
        with OpenAICompatServer(policy=AddThenAnswer()) as server:
            loop_client = LoopBoundClient(clients, base_url=server.base_url, api_key="test")
            model = OpenAIModel(client=loop_client, model_id="loopback-1")

            async def plain_request() -> str:
                reply = await loop_client.chat.completions.create(
                    model="loopback-1", messages=[{"role": "user", "content": "Hi."}]
                )
                return reply.choices[0].finish_reason

            async def current_client() -> DirectMessagesClient:
                return loop_client.current()

            assert loop.run_until_complete(plain_request()) == "tool_calls"
            parents = loop.run_until_complete(current_client())
            assert clients.made == [parents]
            read_end, write_end = os.pipe()
            pid = os.fork()
            if pid == 0:  # the child: the same loop object, the parent's client in the mapping
                status = 1
                try:
                    signal.alarm(30)
                    # the inherited loop (it cannot do I/O here: its executor's threads stayed in the parent)
                    on_inherited = loop.run_until_complete(current_client())
                    fresh = on_inherited is not parents and clients.made == [parents, on_inherited]
                    result = run_on_thread_loop(ask(model, "From the child."))  # the child's own thread loop
                    os.write(write_end, f"{fresh} {len(clients.made)} {str(result).strip()}".encode())
                    status = 0
                finally:
                    os._exit(status)
            os.close(write_end)
            _, status = os.waitpid(pid, 0)
            report = os.read(read_end, 200).decode()
            os.close(read_end)
            assert os.waitstatus_to_exitcode(status) == 0, report
            assert report == "True 3 The sum is 5."  # new clients in the child only
            assert len(clients.made) == 1 and server.request_count == 3
            assert loop.run_until_complete(plain_request()) == "tool_calls"
            assert len(clients.made) == 1
    finally:
        loop.close()


def test_a_request_cancelled_in_flight_ends_at_once_and_the_loops_client_still_serves_the_next():
    clients = CountingClients()
    policy = AddThenAnswer(hold=frozenset({1}))
    with OpenAICompatServer(policy=policy) as server:
        model = WrappedModel(model_for(server, clients))  # every model we run streams through until_cancelled
        cancel = threading.Event()
        threading.Thread(target=lambda: policy.arrived.wait(10) and cancel.set(), daemon=True).start()
        started = time.monotonic()
        result = run_on_thread_loop(ask(model, cancel_signal=cancel))
        elapsed = time.monotonic() - started
        policy.release.set()
        assert result.stop_reason == "cancelled"
        assert elapsed < 3, elapsed  # the server holds the answer up to 10 s
        after = run_on_thread_loop(ask(model, "Add 2 and 3, not cancelled."))
        assert str(after).strip() == "The sum is 5."
        assert len(clients.made) == 1 and server.request_count == 3


def test_whole_call_retries_after_server_errors_reuse_the_loops_client():
    clients = CountingClients()
    # the openai package retries a 500 twice itself, so three failed requests make one failed attempt
    with OpenAICompatServer(policy=AddThenAnswer(fail_first=3)) as server:
        attempts: list[str] = []
        model = RetryingModel(
            model_for(server, clients),
            RetryPolicy(retries=2, backoff="constant", wait_min=0.01, wait_max=0.01),
            on_attempt=lambda attempt, exc, wait: attempts.append(type(exc).__name__),
        )
        result = run_on_thread_loop(ask(model))
        assert str(result).strip() == "The sum is 5."
        assert attempts == ["InternalServerError"]
        assert server.request_count == 5 and len(clients.made) == 1  # 3 failed, then the tool round trip


def test_a_closed_loops_client_is_dropped_even_when_it_refers_to_its_loop():
    class PooledClient:  # like an AsyncOpenAI holding a kept-alive connection: it refers to its loop
        def __init__(self, **client_args) -> None:
            self.loop = asyncio.get_running_loop()

    client = LoopBoundClient(PooledClient, api_key="test")

    async def current():
        return weakref.ref(client.current())

    first = asyncio.run(current())  # asyncio.run closes its loop
    second = asyncio.run(current())
    gc.collect()
    assert first() is None  # gone with its closed loop once the next client was made
    assert second() is not None  # the newest is kept until another loop makes one


def test_the_client_is_only_served_inside_a_running_loop():
    client = LoopBoundClient(CountingClients(), base_url="http://127.0.0.1:9/v1", api_key="test")
    with pytest.raises(RuntimeError):
        client.chat  # noqa: B018
    with pytest.raises(AttributeError):
        client._private  # noqa: B018


CHAIN = """version: 0
name: two-agents
runtime:
  provider: openai
  model_id: loopback-1
  host: {host}
tools:
  python: [calculator]
agents:
  first:
    prompt: Use the calculator.
    tools: [calculator]
  second:
    prompt: Use the calculator too.
    tools: [calculator]
pattern:
  type: chain
  config:
    steps:
      - agent: first
        input: "One: 2 + 3?"
      - agent: second
        input: "Two: 2 + 3?"
      - agent: first
        input: "Three: 2 + 3?"
      - agent: second
        input: "Four: 2 + 3?"
"""


def test_a_run_builds_each_agents_model_once_with_one_client_on_its_loop(tmp_path, monkeypatch):
    made: list[str] = []

    class CountedAsyncOpenAI(openai.AsyncOpenAI):
        def __init__(self, **client_args) -> None:
            made.append(client_args["base_url"])
            super().__init__(**client_args)

    monkeypatch.setattr(openai, "AsyncOpenAI", CountedAsyncOpenAI)  # counts what build_model's clients make
    built: list[str] = []

    def factory(*, agent_id: str, provider: str, model_id, runtime):
        built.append(agent_id)
        return build_model(provider, model_id=model_id, runtime=runtime)

    with OpenAICompatServer(policy=AddThenAnswer(call=("calculator", {"expression": "2 + 3"}))) as server:
        spec = tmp_path / "chain.yaml"
        spec.write_text(CHAIN.format(host=server.base_url), encoding="utf-8")
        options = RunOptions(model_factory=factory, out_dir=tmp_path / "out")
        outcome = run_workflow(spec, options, store=LocalStore(tmp_path / "sessions"))
        assert outcome.status == "completed" and server.request_count == 8
        assert built == ["first", "second"]  # once per agent and run, whatever the provider
        assert made == [server.base_url] * 2  # one client per model on the run's loop, not one per request
