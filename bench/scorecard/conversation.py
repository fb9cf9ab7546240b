"""A real `strands.Agent` on a backend: the tool-using conversation the scorecard's round-trip check and its
measurements run, on a scripted (deterministic, zero-latency) model.

The factory's product becomes the agent's session manager the way a user would use it: a SessionManager as it
is, a SessionRepository under the SDK's `RepositorySessionManager`, a Storage under `SnapshotSessionManager`
saving on every message. Run as a module it resumes a conversation in a fresh process:

    python -m bench.scorecard.conversation FACTORY SESSION_ID DIRECTORY PREFIX PROMPTS_SO_FAR

prints one JSON line: the messages the resumed agent restored, and the answer to the next prompt.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

AGENT_ID = "scorecard"
PROMPTS = 4  # the script answers this many prompts: each a tool call, then a text answer


def prompt(index: int) -> str:
    return f"Prompt {index}: note the number {index}."


def answer(index: int) -> str:
    return f"Noted {index}."


def script() -> list[Any]:
    turns: list[Any] = []
    for index in range(PROMPTS):
        turns.append([{"name": "note", "input": {"n": index}, "toolUseId": f"tooluse_note{index:08d}"}])
        turns.append(answer(index))
    return turns


def session_manager_for(made: Any, session_id: str, *, save_latest_on: str = "message") -> Any:
    """The SessionManager a user puts on an Agent for what a factory returned."""
    from strands.session import SessionManager, SessionRepository, SnapshotSessionManager
    from strands.session.repository_session_manager import RepositorySessionManager

    if isinstance(made, SessionManager):
        return made
    if isinstance(made, SessionRepository):
        return RepositorySessionManager(session_id=session_id, session_repository=made)
    if all(callable(getattr(made, name, None)) for name in ("read", "write", "delete", "list")):  # the protocol
        return SnapshotSessionManager(session_id, storage=made, save_latest_on=save_latest_on)  # type: ignore[arg-type]
    raise TypeError(f"the factory returned {type(made).__name__}: not a SessionManager, SessionRepository or Storage")


def build_agent(
    factory: Any,
    ctx: Any,
    *,
    turns: list[Any] | None = None,
    messages: list[Any] | None = None,
    hooks: list[Any] | None = None,
) -> Any:
    """A real Agent with the `note` tool on a scripted model, its session on what `factory(ctx)` returns (no
    session manager when `factory` is None: the measurements' floor)."""
    from strands import Agent, tool
    from strands.agent.conversation_manager import NullConversationManager

    from strands_durable.models.scripted import ScriptedModel

    @tool
    def note(n: int, text: str = "") -> str:
        """Note a number (and a text, echoed back)."""
        return f"noted {n} {text}".strip()

    return Agent(
        model=ScriptedModel(script() if turns is None else turns),
        tools=[note],
        agent_id=AGENT_ID,
        messages=messages,
        conversation_manager=NullConversationManager(),  # the whole history is kept and restored, never trimmed
        callback_handler=None,
        hooks=hooks,
        session_manager=None if factory is None else session_manager_for(factory(ctx), ctx.session_id),
    )


def resume_in_this_process(factory_name: str, session_id: str, directory: str, prefix: str, done: int) -> dict:
    from bench.scorecard.factories import LocalContext, backend_named

    backend = backend_named(factory_name)
    agent = build_agent(backend.factory, LocalContext(session_id, Path(directory), prefix))
    restored = list(agent.messages)
    result = agent(prompt(done))
    return {"restored": restored, "answer": str(result).strip(), "messages": len(agent.messages)}


def main(argv: list[str]) -> int:
    factory_name, session_id, directory, prefix, done = argv
    print(json.dumps(resume_in_this_process(factory_name, session_id, directory, prefix, int(done)), default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
