"""A crash point of a long one-agent chain costs about what one of a short chain costs (issue 37 item 4): what a
resume and its observers do per committed step or per message of the conversation is work in C or none, not Python
work per step or per message. Counted with cProfile, so the measure is exact and does not depend on the machine's
load, over crash points in the last steps of an 8-step and a 40-step chain with one agent:

- a resume skips a committed step without asking pydantic for an attribute the step lacks (an exception each): as
  many such calls per point on the long chain as on the short one;
- the agent's window (up to 40 messages) is copied in C (`copy_json_data`), not by one Python call per dict and list
  of it: fewer `copy_message_data` calls per point than the window has messages;
- the chaos kit records the requests a phase makes without hashing the whole window at each model call;
- each restored message carries the tracking id its position names, so the SDK draws a random one only for the
  messages an invocation adds, not for every message of the window at every invocation;
- the messages of a unit are found in its conversation by a search in C (`unit_messages`), as a scan finds them;
- a warm resume looks each committed unit up in the spec once per workflow, not once per resume (`found_positions`);
- whether the exactness sample disproved derivation is known at once, not found by walking the sample per point;
- the snapshot digest encodes what a state adds, not the pattern state's whole step history again (counted in bytes
  encoded, since one JSON encoding is one call however long).
"""

from __future__ import annotations

import cProfile
import random
from collections import Counter
from pathlib import Path

import pytest

from strands_durable.agent.durable import unit_messages
from strands_durable.faults.classes.explore import explore_point
from strands_durable.faults.kit import snapshot
from strands_durable.faults.kit.golden import WorkflowGoldenRun
from strands_durable.faults.kit.runs import run_golden
from strands_durable.faults.kit.target import ChaosTarget
from strands_durable.history.copying import copy_json_data, copy_message_data
from strands_durable.store.state import Conversation, SessionState
from strands_durable.testing.chain import refining_chain_text
from tests.profiled import calls_by_term

TERMS = {  # (a file the function is in, its name) -> the term
    ("pydantic/main.py", "__getattr__"): "a missing attribute asked of a spec model",
    ("history/copying.py", "copy_message_data"): "a window copied in Python",
    ("faults/kit/oracle.py", "_digest"): "a request hashed",
    ("uuid.py", "uuid4"): "a random tracking id drawn",
    ("runner/positions.py", "_static_positions"): "a committed unit looked up in the spec",
    ("faults/classes/explore.py", "<genexpr>"): "a generator run by the explorer (the exactness sample walked)",
}


@pytest.fixture(scope="module")
def goldens(tmp_path_factory: pytest.TempPathFactory) -> dict[int, WorkflowGoldenRun]:
    root = tmp_path_factory.mktemp("chains")
    runs = {}
    for steps in (8, 40):
        spec = root / f"chain-{steps}.strands.yaml"
        spec.write_text(refining_chain_text(steps, one_agent=True))
        runs[steps] = run_golden(ChaosTarget(spec), root / f"golden-{steps}")
    return runs


def _terms_per_point(golden: WorkflowGoldenRun, steps: int, workdir: Path) -> Counter[str]:
    """The calls of each term per crash point, over points in the last two steps (every committed step before them
    skipped by each resume, the longest window restored)."""
    ids = [pid for pid in golden.ordered_ids() if pid.startswith((f"step[{steps - 2}]", f"step[{steps - 1}]"))]
    assert len(ids) >= 10
    explore_point(golden, ids[0], workdir)  # the workflow's exactness sample runs here, outside the count
    profile = cProfile.Profile()
    profile.enable()
    for point_id in ids:
        outcome = explore_point(golden, point_id, workdir)
        assert outcome.ok, outcome.describe()
    profile.disable()
    counts = calls_by_term(profile, TERMS)
    return Counter({term: round(calls / len(ids), 2) for term, calls in counts.items()})


def test_a_crash_point_of_a_long_one_agent_chain_does_no_python_work_per_step(
    goldens: dict[int, WorkflowGoldenRun], tmp_path: Path
) -> None:
    short = _terms_per_point(goldens[8], 8, tmp_path / "short")
    long = _terms_per_point(goldens[40], 40, tmp_path / "long")
    print(short, long)
    assert long["a missing attribute asked of a spec model"] <= short["a missing attribute asked of a spec model"]
    assert short["a request hashed"] == long["a request hashed"] == 0, (short, long)
    assert short["a window copied in Python"] < 40 and long["a window copied in Python"] < 40, (short, long)
    assert short["a random tracking id drawn"] < 10 and long["a random tracking id drawn"] < 10, (short, long)
    # a warm resume looks each committed (unit, agent) pair up in the frozen spec once, not once per resume
    assert short["a committed unit looked up in the spec"] < 1 and long["a committed unit looked up in the spec"] < 1
    # whether the workflow's exactness sample disproved derivation is decided once, not by walking it per point
    assert (
        long["a generator run by the explorer (the exactness sample walked)"]
        <= short["a generator run by the explorer (the exactness sample walked)"]
    )


def _digest_bytes_per_point(
    golden: WorkflowGoldenRun, steps: int, workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> float:
    """The bytes the snapshot digest JSON-encodes per crash point, over points in the last two steps."""
    ids = [pid for pid in golden.ordered_ids() if pid.startswith((f"step[{steps - 2}]", f"step[{steps - 1}]"))]
    explore_point(golden, ids[0], workdir)
    encoded = [0]
    canonical = snapshot._canonical

    def counted(value: object) -> bytes:
        data = canonical(value)
        encoded[0] += len(data)
        return data

    with monkeypatch.context() as patch:
        patch.setattr(snapshot, "_canonical", counted)
        for point_id in ids:
            assert explore_point(golden, point_id, workdir).ok
    return encoded[0] / len(ids)


def test_the_snapshot_digest_of_a_long_chain_encodes_what_a_state_adds(
    goldens: dict[int, WorkflowGoldenRun], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # re-encoding the chain's whole `step_history` at each new pattern state: 630 bytes per point on the short chain,
    # 3770 on the long one; encoding only the entries a state adds: about 300 on both
    short = _digest_bytes_per_point(goldens[8], 8, tmp_path / "short", monkeypatch)
    long = _digest_bytes_per_point(goldens[40], 40, tmp_path / "long", monkeypatch)
    assert long <= 1.5 * short, (short, long)


def test_a_pattern_state_is_encoded_as_the_json_encoder_encodes_it() -> None:
    digester = snapshot.SnapshotDigest()
    history: list[dict[str, object]] = []
    for step in range(6):
        history = [*history, {"index": step, "response": f"r{step}", "n": step / 2}]
        for state in (
            {"step_history": history, "current_step": step + 1, "total_steps": 6},
            {"step_history": history[:2], "other": [1, "a", None], "b": {"nested": [history[0]]}},  # a shorter list
            {"step_history": [dict(entry) for entry in history]},  # equal entries, other objects
            {1: "not read from a journal"},
        ):
            assert digester._pattern_state(SessionState(pattern_state=state)) == snapshot._canonical(state)


def test_pattern_states_of_runs_that_branch_apart_are_encoded_as_the_json_encoder_encodes_them() -> None:
    # states of several runs interleaved, as the explorer digests them: lists extended, cut back, changed in one
    # item, copied; more lineages than the digester keeps encodings for
    rng = random.Random(0)
    digester = snapshot.SnapshotDigest()
    runs: list[list[dict[str, object]]] = [[] for _ in range(6)]
    for _ in range(400):
        run = rng.randrange(len(runs))
        items = runs[run]
        change = rng.choice(["extend", "extend", "cut", "change", "copy", "adopt"])
        if change == "extend":
            items = [*items, {"index": len(items), "response": f"r{rng.randrange(3)}"}]
        elif change == "cut":
            items = items[: rng.randrange(len(items) + 1)]
        elif change == "change" and items:
            at = rng.randrange(len(items))
            items = [*items[:at], {"index": at, "response": "changed"}, *items[at + 1 :]]
        elif change == "copy":
            items = [dict(item) for item in items]
        elif change == "adopt":
            items = list(runs[rng.randrange(len(runs))])
        runs[run] = items
        state = {"step_history": items, "current_step": len(items)}
        assert digester._pattern_state(SessionState(pattern_state=state)) == snapshot._canonical(state)


def test_a_units_messages_are_where_a_scan_of_the_owners_finds_them() -> None:
    rng = random.Random(0)
    for _ in range(300):
        owners = [rng.choice(["step[0]", "step[1]", "step[2]", "task:x"]) for _ in range(rng.randrange(0, 30))]
        conv = Conversation(key="a0", agent="a0", messages=[{"role": "user", "content": []}] * len(owners))
        conv.units = owners
        for unit in ("step[0]", "step[1]", "task:x", "absent"):
            assert unit_messages(conv, unit) == [i for i, owner in enumerate(owners) if owner == unit]
    assert unit_messages(None, "step[0]") == []


def test_stored_data_is_copied_whole_into_new_containers() -> None:
    inner = {"text": "shared"}
    data = {
        "messages": [
            {"role": "user", "content": [{"text": "hi"}, inner, inner]},
            {"role": "assistant", "content": [{"toolUse": {"input": {"n": 1.5, "ok": True, "none": None}}}]},
        ],
        "tuple": (1, "two"),
    }
    copied = copy_json_data(data)
    assert copied == data and copied is not data
    originals = {id(item) for item in _containers(data)}
    assert not [item for item in _containers(copied) if id(item) in originals]
    content = copied["messages"][0]["content"]
    assert content[1] is content[2]  # shared inside the value, shared in the copy (as copy.deepcopy keeps it)
    assert type(copied["messages"][1]["content"][0]["toolUse"]["input"]["ok"]) is bool


def test_what_marshal_cannot_copy_is_copied_as_before() -> None:
    class Tagged(dict):
        pass

    data = [{"when": Path("/a/b"), "tagged": Tagged(x=[1])}]
    copied = copy_json_data(data)
    assert copied == copy_message_data(data) == data
    assert type(copied[0]["tagged"]) is Tagged and copied[0]["tagged"]["x"] is not data[0]["tagged"]["x"]


def _containers(value: object) -> list[object]:
    found, stack = [], [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            found.append(item)
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            found.append(item)
            stack.extend(item)
    return found
