"""normalize: the comparable form of a history that two identical runs share."""

from __future__ import annotations

import copy

from strands_durable.history import normalize

from .history_shapes import assistant, result, text, use, user


def run(ids: tuple[str, str], tracking: str, latency: int) -> list[dict]:
    first, second = ids
    return [
        user(text("weather?"), tracking_id=f"{tracking}-0"),
        assistant(
            use(first, city="Paris"),
            use(second, city="Rome"),
            tracking_id=f"{tracking}-1",
            metadata={"usage": {"inputTokens": 10}, "metrics": {"latencyMs": latency}},
        ),
        user(result(second, "rain"), result(first, "sun"), tracking_id=f"{tracking}-2"),
        assistant(text(f"done; I called {first}"), timestamp="2026-01-01T00:00:00Z"),
    ]


def test_two_runs_differing_only_in_ids_and_timings_normalize_equal() -> None:
    one = run(("tooluse_Ab3", "tooluse_Zz9"), "t", 120)
    other = run(("call_1", "call_2"), "u", 999)
    normal_one, normal_other = normalize(one), normalize(other)
    assert normal_one[:3] == normal_other[:3]
    assert normal_one[3] != normal_other[3]  # text is never rewritten, even when it quotes an id


def test_ids_are_renamed_in_order_of_first_appearance_in_calls_and_results() -> None:
    normal = normalize(run(("zeta", "alpha"), "t", 1))
    assert [b["toolUse"]["toolUseId"] for b in normal[1]["content"]] == ["tool_0", "tool_1"]
    assert [b["toolResult"]["toolUseId"] for b in normal[2]["content"]] == ["tool_1", "tool_0"]
    orphan_first = normalize([user(result("late")), assistant(use("early"), use("late"))])
    assert orphan_first[0]["content"][0]["toolResult"]["toolUseId"] == "tool_0"
    assert [b["toolUse"]["toolUseId"] for b in orphan_first[1]["content"]] == ["tool_1", "tool_0"]


def test_volatile_keys_are_dropped_and_nothing_else() -> None:
    history = run(("a", "b"), "t", 5)
    history[0]["custom"] = {"kept": True}
    normal = normalize(history)
    assert [sorted(m) for m in normal] == [
        ["content", "custom", "role"],
        ["content", "role"],
        ["content", "role"],
        ["content", "role"],
    ]
    assert normal[1]["content"][0]["toolUse"]["input"] == {"city": "Paris"}
    assert normal[2]["content"][1]["toolResult"] == {
        "toolUseId": "tool_0",
        "status": "success",
        "content": [{"text": "sun"}],
    }
    assert normal[3]["content"] == [text("done; I called a")]


def test_block_contents_named_like_volatile_keys_are_kept() -> None:
    history = [user(text("q")), assistant(use("a", timestamp="noon", metadata="m"))]
    assert normalize(history)[1]["content"][0]["toolUse"]["input"] == {"timestamp": "noon", "metadata": "m"}


def test_normalize_copies_and_never_mutates() -> None:
    history = run(("a", "b"), "t", 5)
    before = copy.deepcopy(history)
    normal = normalize(history)
    assert history == before
    normal[1]["content"][0]["toolUse"]["input"]["city"] = "changed"
    assert history[1]["content"][0]["toolUse"]["input"]["city"] == "Paris"
