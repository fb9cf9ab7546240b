"""A session directory deleted or replaced under a live DurableSessionManager: the agent stops with
`SessionChanged` (exit 17) before any tool runs, instead of committing to a journal nobody reads or silently
starting a new session that holds only the new turn."""

from __future__ import annotations

import shutil
from typing import Any

import pytest
from strands import tool
from strands.hooks import AfterModelCallEvent, MessageAddedEvent

from strands_durable import LocalStore
from strands_durable.errors import ExitCode, SessionChanged
from strands_durable.sdk import DurableSessionManager

from .support import PROMPTS, World

CHARGES = [
    [{"name": "charge", "input": {"amount": 10}}, {"name": "charge", "input": {"amount": 20}}],
    "Charged twice.",
]


@pytest.fixture
def world(tmp_path) -> World:
    return World(tmp_path / "sessions")


def _session_dir(world: World) -> Any:
    return world.sessions / "session_expenses-1"


def _raised(call: Any) -> BaseException:
    """What `call()` raised, unwrapped from the SDK's EventLoopException."""
    try:
        call()
    except BaseException as exc:
        seen: BaseException | None = exc
        while seen is not None and not isinstance(seen, SessionChanged):
            seen = getattr(seen, "original_exception", None) or seen.__cause__
        return seen or exc
    raise AssertionError("the call did not raise")


def test_a_session_deleted_between_prompts_is_not_recreated_with_only_the_new_turn(world):
    agent = world.agent()
    agent(PROMPTS[0])
    requests = len(world.requests)
    shutil.rmtree(_session_dir(world))
    error = _raised(lambda: agent(PROMPTS[1]))
    assert isinstance(error, SessionChanged) and error.exit_code == ExitCode.SESSION_UNUSABLE
    assert "expenses-1 was deleted" in str(error)
    assert not _session_dir(world).exists(), "a new session was created holding only the new turn"
    assert len(world.requests) == requests, "the model was asked although the session was gone"


def test_a_session_deleted_and_created_again_elsewhere_is_not_extended_by_the_old_agent(world):
    agent = world.agent()
    agent(PROMPTS[0])
    shutil.rmtree(_session_dir(world))
    other = world.agent()  # another process starts the id afresh
    other(PROMPTS[0])
    stored = LocalStore(world.sessions).load("expenses-1").conversations["default"].messages
    error = _raised(lambda: agent(PROMPTS[1]))
    assert isinstance(error, SessionChanged) and "created again" in str(error)
    assert LocalStore(world.sessions).load("expenses-1").conversations["default"].messages == stored


@pytest.mark.parametrize("when", ["while the model answered", "after the answer was committed"])
def test_a_session_deleted_mid_invocation_runs_no_tool_after_it_is_gone(world, when):
    charged: list[float] = []

    @tool
    def charge(amount: float) -> str:
        """Charge the card."""
        charged.append(amount)
        return "charged"

    def delete(event: Any) -> None:
        if _session_dir(world).exists():  # an operator's `rm -rf` during the invocation (moved away first, so
            gone = world.sessions.parent / "deleted"  # that a file written meanwhile cannot fail the removal)
            _session_dir(world).rename(gone)
            shutil.rmtree(gone)

    agent = world.agent(script=CHARGES, tools=[charge])
    if when == "while the model answered":
        agent.hooks.add_callback(AfterModelCallEvent, lambda e: e.stop_response is not None and delete(e))
    else:  # the user's hook runs after the manager's commit of the answer: the tools' barrier must notice
        agent.hooks.add_callback(MessageAddedEvent, lambda e: e.message["role"] == "assistant" and delete(e))
    error = _raised(lambda: agent("Charge the card twice."))
    assert isinstance(error, SessionChanged), repr(error)
    assert charged == [], "a tool ran after the session's directory was deleted"
    assert not _session_dir(world).exists(), "something wrote into the deleted session's place"
    # the manager refuses to go on, naming what happened, rather than starting a session with the new turn only
    assert isinstance(_raised(lambda: agent("Again.")), SessionChanged)


def test_a_fresh_manager_on_a_deleted_id_starts_a_new_session(world):
    agent = world.agent()
    agent(PROMPTS[0])
    shutil.rmtree(_session_dir(world))
    fresh = world.agent()
    assert fresh.messages == []
    fresh(PROMPTS[0])
    assert len(LocalStore(world.sessions).load("expenses-1").conversations["default"].messages) == 4


def test_the_error_is_also_importable_from_the_sdk_package():
    from strands_durable import sdk

    assert sdk.SessionChanged is SessionChanged
    assert DurableSessionManager is sdk.DurableSessionManager
