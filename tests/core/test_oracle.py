"""The oracle's description of where two runs differ names the first difference, on every kind of mismatch."""

from __future__ import annotations

from strands_durable.faults.kit.oracle import first_difference, readable_difference


def test_equal_views_have_no_difference() -> None:
    view = {"units": {"step[0]": "a"}, "histories": {"w": [{"role": "user"}]}}
    assert first_difference(view, view) is None
    assert readable_difference(view, view) is None


def test_each_kind_of_mismatch_is_named_at_its_path() -> None:
    golden = {"units": {"step[0]": "a", "step[1]": "b"}, "histories": {"w": [1, 2]}, "status": "completed"}
    assert (
        first_difference(golden, {**golden, "units": {"step[0]": "a"}}) == ".units.step[1]: missing in the resumed run"
    )
    assert first_difference(golden, {**golden, "extra": 1}) == ".extra: extra in the resumed run (1)"
    assert (
        first_difference(golden, {**golden, "histories": {"w": [1, 2, 3]}}) == ".histories.w: expected 2 items, got 3"
    )
    assert first_difference(golden, {**golden, "status": "paused"}) == '.status: expected "completed", got "paused"'
    assert first_difference(golden, {**golden, "histories": {"w": [1, 5]}}) == ".histories.w[1]: expected 2, got 5"


def test_the_readable_difference_shows_a_diff_of_the_differing_value() -> None:
    text = readable_difference({"units": {"u": "one\ntwo"}}, {"units": {"u": "one\nthree"}})
    assert text.splitlines()[0] == ".units.u"
    assert "-two" in text and "+three" in text
    assert "<missing>" in readable_difference({"a": 1}, {})
