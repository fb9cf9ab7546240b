"""Every id rule matches the whole text: `$` also matches before a final newline, so `"evil\\n"` passed the session
id rule and made a session that could not be shown or deleted by id (issue 39, item 4)."""

from __future__ import annotations

import pytest

from strands_durable import LocalStore
from strands_durable.errors import UsageError
from strands_durable.models.scripted import ScriptError, parse_turn
from strands_durable.spec.fields import check_identifier
from strands_durable.store.ids import is_session_id, is_uuid, resolve_session_id
from strands_durable.store.layout import safe_key


def test_a_session_id_with_a_final_newline_is_refused_by_the_session_manager(tmp_path) -> None:
    from strands_durable.sdk import DurableSessionManager

    with pytest.raises(UsageError, match="Not a session id: 'evil\\\\n'"):
        DurableSessionManager(session_id="evil\n", store=LocalStore(tmp_path / "sessions"))
    assert not (tmp_path / "sessions").exists() or list((tmp_path / "sessions").iterdir()) == []


def _scripted_tool_use_id(text: str) -> bool:
    try:
        parse_turn([{"name": "calculator", "input": {}, "toolUseId": text}], 0)
    except ScriptError:
        return False
    return True


@pytest.mark.parametrize(
    "check",
    [
        pytest.param(lambda text: is_session_id(text), id="session-id"),
        pytest.param(lambda text: is_uuid(text), id="uuid"),
        pytest.param(_scripted_tool_use_id, id="scripted-tool-use-id"),
    ],
)
def test_id_rules_refuse_a_final_newline(check) -> None:
    assert check("0123abcd-0000-4000-8000-000000000000")
    assert not check("0123abcd-0000-4000-8000-000000000000\n")


def test_storage_keys_and_spec_ids_refuse_a_final_newline() -> None:
    with pytest.raises(ValueError, match="unsafe storage key"):
        safe_key("writer\n")
    with pytest.raises(ValueError, match="not a valid id"):
        check_identifier("writer\n")
    # what a user types is stripped before it is looked up; what a program passes is checked as it is
    assert resolve_session_id("0123abcd-0000-4000-8000-000000000000\n", ["0123abcd-0000-4000-8000-000000000000"])
