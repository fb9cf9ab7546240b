"""The trip-booking conversation: a Python developer's correct agent that the gate must pass at every point.

Concurrent tools (the SDK's default executor), the non-idempotent ones marked (`book_flight`, `book_hotel`,
`send_email`), tools that change `agent.state` (a search counted before it awaits, so its siblings commit first),
an email whose body is built from that state (after an "outcome unknown" it legitimately differs), a sliding window
that trims the conversation, and `DurableSessionManager`; as a plain `Agent` (`trip_agent`, three prompts), a
`Graph` (`trip_graph`) and a `Swarm` (`trip_swarm`), each given one task. `manager` is the manager class (the
self-tests' planted bugs subclass ours). The tests and the docs' run_agent example share it."""

from __future__ import annotations

from typing import Any

from strands_durable.faults.agents.examples import awaiting
from strands_durable.faults.agents.run import AgentContext

PROMPTS = (
    "Book my trip to Lisbon: the flight and the hotel.",
    "Email me the itinerary.",
    "What did I book?",
)
SCRIPT: dict[str, list[Any]] = {
    PROMPTS[0]: [
        [
            {"name": "search_flights", "input": {"city": "Lisbon"}},
            {"name": "book_flight", "input": {"flight": "TP123"}},
            {"name": "book_hotel", "input": {"hotel": "Alfama Inn"}},
        ],
        "Booked the flight TP123 and the Alfama Inn.",
    ],
    PROMPTS[1]: [[{"name": "send_email", "input": {"to": "me@example.com"}}], "Sent you the itinerary."],
    PROMPTS[2]: ["You booked the flight TP123 and the Alfama Inn."],
}
WINDOW = 4  # messages the sliding window keeps: each prompt's turns trim the one before


def trip_tools(ctx: AgentContext) -> list[Any]:
    """The trip's tools, writing to `ctx.workspace`: the searches, the marked bookings and the email."""
    from strands import tool

    from strands_durable.faults.kit.scratch import write_scratch
    from strands_durable.sdk import non_idempotent

    def append(name: str, line: str) -> None:
        path = ctx.workspace / name
        old = path.read_bytes() if path.exists() else b""
        write_scratch(path, old + (line + "\n").encode())

    @tool(context=True)
    async def search_flights(city: str, tool_context: Any) -> str:
        """Search flights to a city (counted in `agent.state`; slower than the bookings of its batch)."""
        state = tool_context.agent.state
        state.set("searches", (state.get("searches") or 0) + 1)
        await awaiting(30)
        return f"TP123 to {city} at 09:00"

    @tool
    async def search_hotels(city: str) -> str:
        """Search hotels in a city."""
        await awaiting()
        return f"Alfama Inn in {city}"

    async def book(kind: str, name: str, tool_context: Any) -> str:
        await awaiting()
        append("bookings.txt", f"{kind} {name}")
        tool_context.agent.state.set(kind, name)
        return f"booked {name}"

    @non_idempotent
    @tool(context=True)
    async def book_flight(flight: str, tool_context: Any) -> str:
        """Book a flight (charges the card: must not happen twice)."""
        return await book("flight", flight, tool_context)

    @non_idempotent
    @tool(context=True)
    async def book_hotel(hotel: str, tool_context: Any) -> str:
        """Book a hotel (charges the card: must not happen twice)."""
        return await book("hotel", hotel, tool_context)

    @non_idempotent
    @tool(context=True)
    async def send_email(to: str, tool_context: Any) -> str:
        """Email the itinerary, built from what was booked."""
        await awaiting()
        state = tool_context.agent.state
        flight, hotel = state.get("flight") or "not booked", state.get("hotel") or "not booked"
        append("outbox.txt", f"to {to}: flight {flight}, hotel {hotel}")
        return "sent"

    return [search_flights, search_hotels, book_flight, book_hotel, send_email]


def trip_agent(ctx: AgentContext, manager: Any = None) -> Any:
    """The user's factory: a plain Agent."""
    from strands import Agent
    from strands.agent.conversation_manager import SlidingWindowConversationManager

    from strands_durable.models.prompt_scripted import PromptScriptedModel
    from strands_durable.sdk import DurableSessionManager

    return Agent(
        model=PromptScriptedModel(SCRIPT),
        tools=trip_tools(ctx),
        system_prompt="You book trips.",
        callback_handler=None,
        conversation_manager=SlidingWindowConversationManager(window_size=WINDOW),
        session_manager=(manager or DurableSessionManager)(ctx.session_id, ctx.storage_dir),
    )


TASK = "Book my trip to Lisbon and email me the itinerary."
_BOOKINGS = [
    {"name": "search_flights", "input": {"city": "Lisbon"}},
    {"name": "book_flight", "input": {"flight": "TP123"}},
    {"name": "book_hotel", "input": {"hotel": "Alfama Inn"}},
]
_EMAIL = {"name": "send_email", "input": {"to": "me@example.com"}}
GRAPH_SCRIPTS: dict[str, list[Any]] = {
    "planner": ["Plan: fly TP123, stay at the Alfama Inn."],
    "booker": [_BOOKINGS, "Booked the flight and the hotel."],
    "mailer": [[_EMAIL], "Sent the itinerary."],
}


def _handoff(to: str) -> dict[str, Any]:
    return {"name": "handoff_to_agent", "input": {"agent_name": to, "message": f"Over to the {to}."}}


SWARM_SCRIPTS: dict[str, list[Any]] = {
    "planner": [[_handoff("booker")], "Handed to the booker."],
    "booker": [_BOOKINGS, [_handoff("mailer")], "Booked; handed to the mailer."],
    "mailer": [[_EMAIL], "Sent the itinerary."],
}


def _node_agents(ctx: AgentContext, scripts: dict[str, list[Any]]) -> list[Any]:
    from strands import Agent

    from strands_durable.models.scripted import ScriptedModel

    return [
        Agent(name=name, model=ScriptedModel(script), tools=trip_tools(ctx), callback_handler=None)
        for name, script in scripts.items()
    ]


def trip_graph(ctx: AgentContext, manager: Any = None) -> Any:
    """The user's factory: a Graph planner -> booker -> mailer, the manager on the graph."""
    from strands.multiagent import GraphBuilder

    from strands_durable.sdk import DurableSessionManager

    builder = GraphBuilder()
    for agent in _node_agents(ctx, GRAPH_SCRIPTS):
        builder.add_node(agent, agent.name)
    builder.add_edge("planner", "booker")
    builder.add_edge("booker", "mailer")
    builder.set_entry_point("planner")
    builder.set_max_node_executions(10)
    builder.set_session_manager((manager or DurableSessionManager)(ctx.session_id, ctx.storage_dir))
    return builder.build()


def trip_swarm(ctx: AgentContext, manager: Any = None) -> Any:
    """The user's factory: a Swarm whose planner hands off to the booker, who hands off to the mailer."""
    from strands.multiagent import Swarm

    from strands_durable.sdk import DurableSessionManager

    agents = _node_agents(ctx, SWARM_SCRIPTS)
    return Swarm(agents, session_manager=(manager or DurableSessionManager)(ctx.session_id, ctx.storage_dir))
