"""The store contract suite: every behaviour a `SessionStore` must have, run against a factory, as a report.

    from strands_durable.testing.store_contract import run

    report = run(lambda: MyStore(...))      # a fresh, empty store per call
    assert report.conformant, report.describe()

Each check passes, fails, or is not applicable. Behaviours that need the store's cooperation (a lease holder that
dies, a torn final record, a lease that expires, unsynced writes lost to a power cut, a foreign entry among the
sessions) are asked of the factory through the optional methods of `StoreCapabilities`; a factory without one gets
"not applicable" for that check, never "pass". `conformant` means no check failed.
"""

from __future__ import annotations

import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from strands_durable.errors import DurableError, ExitCode, SessionInUse, SessionNotFound, UsageError
from strands_durable.store import Session, SessionState, SessionStore, events
from strands_durable.store.fileops import machine_boot_id

__all__ = ["CheckResult", "ContractReport", "StoreCapabilities", "run"]

Outcome = Literal["pass", "fail", "not applicable"]


@dataclass(frozen=True)
class CheckResult:
    name: str
    outcome: Outcome
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.outcome:>14}  {self.name}" + (f": {self.detail}" if self.detail else "")


@dataclass
class ContractReport:
    results: list[CheckResult] = field(default_factory=list)

    @property
    def failures(self) -> list[CheckResult]:
        return [r for r in self.results if r.outcome == "fail"]

    @property
    def conformant(self) -> bool:
        """No check failed (checks the store's capabilities do not allow are not applicable, not passed)."""
        return not self.failures

    def outcome(self, name: str) -> Outcome:
        return next(r.outcome for r in self.results if r.name == name)

    def describe(self) -> str:
        return "\n".join(str(r) for r in self.results)


class StoreCapabilities(Protocol):
    """What a factory may offer beyond `__call__() -> SessionStore` (a fresh, empty store per call). Each method
    is optional: the suite looks it up with `getattr` and reports its checks as not applicable when missing."""

    def twin(self, store: SessionStore) -> SessionStore:
        """Another store over the same storage, as a second process would open it (default: `store` itself)."""
        ...

    def kill_holder(self, store: SessionStore, session: Session) -> None:
        """End the process holding `session` as a crash would: no flush, no final record, its lease dead."""
        ...

    def damage_tail(self, store: SessionStore, session_id: str) -> None:
        """Leave a torn, half-written record after the last complete one (the session is not open)."""
        ...

    def lose_unsynced(self, store: SessionStore, session: Session) -> None:
        """Cut the power: every write of `session` not yet durable is lost, and its holder dies."""
        ...

    def expire_lease(self, store: SessionStore, session: Session) -> None:
        """Move the store's clock past the lease's expiry without the holder renewing it."""
        ...

    def plant_foreign(self, store: SessionStore) -> Callable[[], bool]:
        """Put an entry among the sessions that the store cannot read as its own; returns a probe that says
        whether it is still there, untouched."""
        ...


class _NotApplicable(Exception):
    pass


class _Failed(AssertionError):
    pass


def _expect(condition: bool, message: str) -> None:
    if not condition:
        raise _Failed(message)


def _capability(factory: Any, name: str) -> Callable[..., Any]:
    method = getattr(factory, name, None)
    if method is None:
        raise _NotApplicable(f"the factory offers no `{name}`")
    return method  # type: ignore[no-any-return]


def _meta(name: str = "contract") -> dict[str, Any]:
    return {
        "workflow_name": name,
        "pattern": "chain",
        "spec_path": f"/contract/{name}.yaml",
        "spec_hash": "0" * 64,
        "variables": {},
        "created_at": "2026-01-01T00:00:00+00:00",
        "runtime": {"provider": "synthetic", "seed": 0},
    }


def _message(conv: str, index: int, text: str, role: str = "user") -> dict[str, Any]:
    return events.message(conv, conv.split(".")[0], index, {"role": role, "content": [{"text": text}]}, unit="step[0]")


def _comparable(state: SessionState) -> dict[str, Any]:
    """What two reads of one session must agree on (times of records aside)."""
    return {
        "meta": state.meta,
        "status": (state.status, state.reason),
        "pattern_state": state.pattern_state,
        "units": state.units,
        "artifacts": state.artifacts,
        "seq": state.seq,
        "conversations": {
            key: (
                conv.agent,
                conv.messages,
                conv.units,
                conv.tool_results,
                sorted(conv.tools_started),
                conv.agent_state,
            )
            for key, conv in sorted(state.conversations.items())
        },
    }


def _sample_commits(session: Session) -> None:
    """A short run's worth of commits: a prompt (not durable), an answer, a tool result, a unit and its position."""
    conv = "writer"
    session.commit([_message(conv, 0, "write a haiku")], path="prompt", durable=False)
    tool_use = {"toolUse": {"toolUseId": "t1", "name": "calc", "input": {"x": 1}}}
    answer = _message(conv, 1, "", role="assistant")
    answer["message"]["content"] = [{"text": "calling"}, tool_use]
    session.commit([answer], path="model")
    result = {"toolUseId": "t1", "status": "success", "content": [{"text": "2"}]}
    session.commit([events.tool_result(conv, result)], path="tool")
    results = _message(conv, 2, "")
    results["message"]["content"] = [{"toolResult": result}]
    session.commit([results], path="results", durable=False)
    session.commit([_message(conv, 3, "a haiku", role="assistant")], path="answer")
    session.commit(
        [
            events.unit("step[0]", {"status": "completed", "response": "a haiku"}),
            events.pattern_state({"current_step": 1, "step_history": [{"index": 0}]}),
        ],
        path="unit",
        durable=False,
    )


# -- the checks ---------------------------------------------------------------------------------------------------


def _reopen_equals_the_fold(factory: Any, store: SessionStore) -> None:
    session = store.create(_meta(), b"spec bytes")
    session_id = session.session_id
    _sample_commits(session)
    expected = _comparable(session.state)
    session.close()
    twin = _twin(factory, store)
    loaded = twin.load(session_id)
    expected["seq"] = loaded.seq  # close appends its mark; nothing else may differ
    _expect(_comparable(loaded) == expected, "load after close differs from the state the commits built")
    reopened = twin.open(session_id)
    try:
        _expect(_comparable(reopened.state) == _comparable(loaded), "open differs from load")
        _expect(reopened.spec_snapshot() == b"spec bytes", "the spec snapshot changed")
        reopened.commit([_message("critic", 0, "more")], path="more")
        after = _comparable(reopened.state)
    finally:
        reopened.close()
    again = _comparable(twin.load(session_id))
    after["seq"] = again["seq"]
    _expect(again == after, "a commit after reopening did not survive the next reopen")


def _nondurable_commits_survive_close(factory: Any, store: SessionStore) -> None:
    session = store.create(_meta(), b"")
    session.commit([_message("c.a", 0, "not durable")], path="p", durable=False)
    session.close()
    state = _twin(factory, store).load(session.session_id)
    _expect(len(state.conversations.get("c.a", _EMPTY).messages) == 1, "a non-durable commit was lost by close")


def _durable_commits_survive_power_loss(factory: Any, store: SessionStore) -> None:
    lose = _capability(factory, "lose_unsynced")
    session = store.create(_meta(), b"")
    session.commit([_message("c.a", 0, "durable")], path="d")
    durable_seq = session.state.seq
    session.commit([_message("c.a", 1, "not durable", role="assistant")], path="n", durable=False)
    lose(store, session)
    state = _twin(factory, store).load(session.session_id)
    messages = state.conversations.get("c.a", _EMPTY).messages
    _expect(len(messages) >= 1 and messages[0]["content"][0]["text"] == "durable", "a durable commit was lost")
    _expect(state.seq in (durable_seq, durable_seq + 1), f"after power loss seq is {state.seq}, not a prefix")


def _lease_exclusion(factory: Any, store: SessionStore) -> None:
    session = store.create(_meta(), b"")
    twin = _twin(factory, store)
    try:
        holder = twin.holder(session.session_id)
        _expect(holder is not None, "holder() says nobody holds a session that is open")
        for attempt in ("open", "delete"):
            try:
                getattr(twin, attempt)(session.session_id)
            except SessionInUse as exc:
                _expect(exc.exit_code == ExitCode.SESSION_UNUSABLE, f"{attempt}: exit {exc.exit_code}, not 17")
                _expect(
                    holder is not None and holder.describe() in str(exc),
                    f"{attempt}: {exc} does not name the holder ({holder and holder.describe()})",
                )
            else:
                raise _Failed(f"a second {attempt} of a held session was allowed")
    finally:
        session.close()
    _expect(twin.holder(session.session_id) is None, "the lease is still held after close")
    twin.open(session.session_id).close()


def _list_resolve_delete(factory: Any, store: SessionStore) -> None:
    first = store.create(_meta("first"), b"")
    first.commit([events.status("paused", "interrupted")], path="status")
    first.close()
    second = store.create(_meta("second"), b"")
    second.close()
    twin = _twin(factory, store)
    listed = {s.session_id: s for s in twin.list()}
    _expect(set(listed) == {first.session_id, second.session_id}, f"list holds {sorted(listed)}")
    _expect(listed[first.session_id].status == "paused", "list does not show the committed status")
    _expect(listed[first.session_id].workflow_name == "first", "list does not show the workflow name")
    _expect(sorted(twin.session_ids()) == sorted(listed), "session_ids and list disagree")
    _expect(twin.resolve(first.session_id) == first.session_id, "resolve of a full id")
    _expect(twin.resolve(first.session_id[:8].upper()) == first.session_id, "resolve of an 8-character prefix")
    for missing, error in (("ffffffff-ffff-4fff-8fff-ffffffffffff", SessionNotFound), ("0000", UsageError)):
        try:
            twin.resolve(missing)
        except error:
            pass
        else:
            raise _Failed(f"resolve({missing!r}) did not raise {error.__name__}")
    twin.delete(first.session_id)
    _expect(first.session_id not in twin.session_ids(), "a deleted session is still listed")
    for read in (twin.load, twin.resolve, twin.delete):
        try:
            read(first.session_id)
        except SessionNotFound:
            continue
        raise _Failed(f"{read.__name__} of a deleted session did not raise SessionNotFound")
    _expect(twin.load(second.session_id).meta["workflow_name"] == "second", "delete touched another session")


BAD_IDS = ("", "../x", "a/b", ".hidden", "-dash", "a..b", "a b", "x" * 129, "é")


def _ids(factory: Any, store: SessionStore) -> None:
    for bad in BAD_IDS:
        try:
            store.create(_meta(), b"", session_id=bad).close()
        except UsageError as exc:
            _expect(exc.exit_code == ExitCode.USAGE, f"id {bad!r}: exit {exc.exit_code}, not 2")
        else:
            raise _Failed(f"the bad id {bad!r} was accepted")
    chosen = store.create(_meta(), b"", session_id="Nightly.run_1-a")
    chosen.close()
    _expect(chosen.session_id == "Nightly.run_1-a", f"a chosen id became {chosen.session_id!r}")
    _expect(chosen.state.meta["session_id"] == chosen.session_id, "meta does not hold the chosen id")
    for clash in ("Nightly.run_1-a", "nightly.RUN_1-A"):
        try:
            store.create(_meta(), b"", session_id=clash).close()
        except UsageError:
            continue
        raise _Failed(f"{clash!r} was accepted beside the existing 'Nightly.run_1-a'")
    generated = store.create(_meta(), b"")
    generated.close()
    _expect(len(generated.session_id) == 36 and generated.session_id.count("-") == 4, "a generated id is no UUID")
    twin = _twin(factory, store)
    _expect(twin.resolve("Nightly.run_1-a") == "Nightly.run_1-a", "a chosen id does not resolve to itself")
    try:
        twin.resolve("Nightly.")
    except (SessionNotFound, UsageError):
        pass
    else:
        raise _Failed("a prefix of a chosen (non-UUID) id resolved: only UUID ids have prefixes")


def _concurrent_commits(factory: Any, store: SessionStore) -> None:
    session = store.create(_meta(), b"")
    threads_n, each = 4, 25
    errors: list[BaseException] = []
    seqs: list[int] = []

    def work(n: int) -> None:
        try:
            for i in range(each):
                role = "user" if i % 2 == 0 else "assistant"
                seqs.append(
                    session.commit([_message(f"t{n}.a", i, f"{n}-{i}", role)], path=f"t{n}", durable=i % 2 == 0)
                )
        except BaseException as exc:  # reported as the check's failure
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(threads_n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    _expect(not errors, f"a concurrent commit failed: {errors[:1]}")
    _expect(session.state.seq == threads_n * each, f"seq is {session.state.seq} after {threads_n * each} commits")
    _expect(sorted(seqs) == list(range(1, threads_n * each + 1)), "commits did not each return their own seq")
    expected = _comparable(session.state)
    session.close()
    loaded = _twin(factory, store).load(session.session_id)
    for n in range(threads_n):
        texts = [m["content"][0]["text"] for m in loaded.conversations[f"t{n}.a"].messages]
        _expect(texts == [f"{n}-{i}" for i in range(each)], f"thread {n}'s commits came back as {texts[:3]}...")
    expected["seq"] = loaded.seq
    _expect(_comparable(loaded) == expected, "the reloaded state differs from the one the threads built")


def _abandon_and_close(factory: Any, store: SessionStore) -> None:
    twin = _twin(factory, store)
    abandoned = store.create(_meta(), b"")
    abandoned.commit([_message("c.a", 0, "kept")], path="d")
    seq = abandoned.state.seq
    abandoned.abandon()
    state = twin.load(abandoned.session_id)
    _expect(state.seq == seq, f"abandon left seq {state.seq}, the commits reached {seq}")
    _expect(
        not state.views_trusted(machine_boot_id()), "abandon wrote a close's mark (it must leave what a crash leaves)"
    )
    _expect(twin.holder(abandoned.session_id) is None, "abandon did not release the lease")
    summary = next(s for s in twin.list() if s.session_id == abandoned.session_id)
    _expect(summary.status == "running" and summary.stale, "an abandoned running session is not shown as stale")
    closed = store.create(_meta(), b"")
    closed.commit([_message("c.a", 0, "kept")], path="d")
    closed.close()
    state = twin.load(closed.session_id)
    _expect(state.views_trusted(machine_boot_id()), "close did not end with a mark that its readable files are written")
    _expect(twin.holder(closed.session_id) is None, "close did not release the lease")
    closed.close()  # a second close is harmless


def _idle_status(factory: Any, store: SessionStore) -> None:
    session = store.create(_meta("agent"), b"")
    session.commit([events.status("idle")], path="idle")
    session.close()
    twin = _twin(factory, store)
    summary = next(s for s in twin.list() if s.session_id == session.session_id)
    _expect(summary.status == "idle" and not summary.stale, f"an idle session is listed as {summary.display_status}")
    _expect(twin.load(session.session_id).status == "idle", "load does not say idle")
    reopened = twin.open(session.session_id)
    reopened.commit([events.status("running")], path="invocation")
    reopened.commit([events.status("idle")], path="idle")
    reopened.close()
    _expect(twin.load(session.session_id).status == "idle", "idle does not survive a second invocation")


def _dead_holder_is_taken_over(factory: Any, store: SessionStore) -> None:
    kill = _capability(factory, "kill_holder")
    session = store.create(_meta(), b"")
    session.commit([_message("c.a", 0, "before the crash")], path="d")
    kill(store, session)
    twin = _twin(factory, store)
    _expect(twin.holder(session.session_id) is None, "a dead holder still holds the lease")
    summary = next(s for s in twin.list() if s.session_id == session.session_id)
    _expect(summary.stale, "a running session whose holder died is not shown as stale")
    taken = twin.open(session.session_id)
    try:
        _expect(len(taken.state.conversations["c.a"].messages) == 1, "the dead holder's durable commit is missing")
    finally:
        taken.close()


def _torn_tail_is_cut(factory: Any, store: SessionStore) -> None:
    damage = _capability(factory, "damage_tail")
    session = store.create(_meta(), b"")
    _sample_commits(session)
    session.close()
    twin = _twin(factory, store)
    expected = _comparable(twin.load(session.session_id))
    damage(store, session.session_id)
    _expect(_comparable(twin.load(session.session_id)) == expected, "a torn tail changed what load reads")
    reopened = twin.open(session.session_id)
    try:
        _expect(_comparable(reopened.state) == expected, "a torn tail changed what open reads")
        reopened.commit([_message("c.b", 0, "after the tear")], path="after")
    finally:
        reopened.close()
    state = twin.load(session.session_id)
    _expect(len(state.conversations["c.b"].messages) == 1, "a commit after a torn tail was lost")


def _expired_lease_is_fenced(factory: Any, store: SessionStore) -> None:
    expire = _capability(factory, "expire_lease")
    session = store.create(_meta(), b"")
    session.commit([_message("c.a", 0, "before expiry")], path="d")
    expire(store, session)
    taken = _twin(factory, store).open(session.session_id)
    try:
        try:
            session.commit([_message("c.a", 1, "from the fenced holder", role="assistant")], path="late")
        except DurableError as exc:
            _expect(exc.exit_code == ExitCode.SESSION_UNUSABLE, f"a fenced commit raised exit {exc.exit_code}")
        else:
            raise _Failed("the holder whose lease expired and was taken over could still commit")
    finally:
        taken.close()


def _foreign_entries_untouched(factory: Any, store: SessionStore) -> None:
    import datetime as dt

    from strands_durable.operations.cleanup import cleanup_sessions

    plant = _capability(factory, "plant_foreign")
    intact = plant(store)
    ours = store.create(_meta(), b"")
    ours.close()
    twin = _twin(factory, store)
    _expect(twin.session_ids() == [ours.session_id], f"session_ids reads {twin.session_ids()}")
    _expect([s.session_id for s in twin.list()] == [ours.session_id], "list shows a foreign entry")
    cleanup_sessions(twin, dt.timedelta(0), now=dt.datetime(2100, 1, 1, tzinfo=dt.timezone.utc))
    _expect(intact(), "cleanup touched an entry that is not a session")
    _expect(twin.session_ids() == [], "cleanup did not delete the old session beside the foreign entry")


def _replayable(factory: Any, store: SessionStore) -> None:
    """The durable records up to any moment (`journal_size` then, a prefix of `journal_bytes`), a session seeded
    from a prefix (it opens, loads and goes on as that prefix folds), and a store told a known prefix (it reads
    the same state, and never trusts a prefix whose bytes the journal does not begin with)."""
    from strands_durable.store.base import KnownJournal, read_journal_bytes
    from strands_durable.store.state import fold

    if not store.replayable:
        raise _NotApplicable("the store is not replayable")
    session = store.create(_meta("replayed"), b"spec bytes")
    source_id = session.session_id
    import copy

    sizes, states = [session.journal_size()], [copy.deepcopy(_comparable(session.state))]
    journals = [store.journal_bytes(source_id)]
    for index, text in enumerate(["a", "b", "c", "d"]):
        session.commit([_message("writer", index, text, role="user" if index % 2 == 0 else "assistant")])
        sizes.append(session.journal_size())
        states.append(copy.deepcopy(_comparable(session.state)))  # the live lists grow with the next commit
        journals.append(store.journal_bytes(source_id))  # as it is now (a compaction may rewrite it later)
    session.close()
    for size, state, journal in zip(sizes, states, journals, strict=True):
        contents = read_journal_bytes(journal[:size])
        _expect(contents.valid_length == size, f"journal_size {size} does not end a record")
        _expect(_comparable(fold(contents.records)) == state, f"the journal's first {size} bytes fold differently")
    data = journals[3]
    header = read_journal_bytes(data[: sizes[0]]).records[0]
    seeded_id = f"{source_id}-seeded"
    header["events"][0] = {**header["events"][0], "meta": {**header["events"][0]["meta"], "session_id": seeded_id}}
    journal = store.seed(seeded_id, header=header, tail=data[sizes[0] : sizes[3]], spec_snapshot=b"spec bytes")
    prefix_state = fold(read_journal_bytes(journal).records)
    twin = _twin(factory, store)
    _expect(twin.journal_bytes(seeded_id) == journal, "a seeded session's journal is not what seed returned")
    _expect(twin.spec_snapshot_bytes(seeded_id) == b"spec bytes", "a seeded session's spec snapshot differs")
    _expect(_comparable(twin.load(seeded_id)) == _comparable(prefix_state), "a seeded session loads differently")
    knowing = twin.knowing(KnownJournal(seeded_id, journal, prefix_state))
    with knowing.open(seeded_id) as reopened:
        _expect(_comparable(reopened.state) == _comparable(prefix_state), "a known prefix opens differently")
        reopened.commit([_message("writer", 3, "d", role="assistant")])
    _expect(
        _comparable(knowing.load(seeded_id)) == _comparable(twin.load(seeded_id)),
        "a store knowing a prefix reads the records after it differently",
    )
    bogus = fold(read_journal_bytes(journal).records)
    bogus.status = "failed"  # a state that is not the fold of those bytes: trusted only with the very bytes
    other = twin.knowing(KnownJournal(seeded_id, journal[:-2] + b"x\n", bogus))
    _expect(other.load(seeded_id).status != "failed", "a known prefix was trusted for bytes it does not name")


_EMPTY = type("_Empty", (), {"messages": []})()

CHECKS: dict[str, Callable[[Any, SessionStore], None]] = {
    "create, commit and reopen equal the fold": _reopen_equals_the_fold,
    "non-durable commits are durable after close": _nondurable_commits_survive_close,
    "durable commits survive a power loss": _durable_commits_survive_power_loss,
    "lease exclusion names the holder": _lease_exclusion,
    "list, resolve and delete": _list_resolve_delete,
    "ids: bad ones refused, chosen ones kept, UUID prefixes": _ids,
    "concurrent commits from threads": _concurrent_commits,
    "what abandon and close leave": _abandon_and_close,
    "idle sessions": _idle_status,
    "a dead holder's session is taken over": _dead_holder_is_taken_over,
    "a torn final record is cut off": _torn_tail_is_cut,
    "an expired lease is fenced out": _expired_lease_is_fenced,
    "entries that are not sessions are never touched": _foreign_entries_untouched,
    "replayable: journal prefixes, seeded sessions, known prefixes": _replayable,
}


def _twin(factory: Any, store: SessionStore) -> SessionStore:
    twin = getattr(factory, "twin", None)
    return twin(store) if twin is not None else store


def run(make_store: Callable[[], SessionStore], *, only: list[str] | None = None) -> ContractReport:
    """Run every check (or those named in `only`) against fresh stores from `make_store`."""
    report = ContractReport()
    for name, check in CHECKS.items():
        if only is not None and name not in only:
            continue
        try:
            check(make_store, make_store())
        except _NotApplicable as exc:
            report.results.append(CheckResult(name, "not applicable", str(exc)))
        except _Failed as exc:
            report.results.append(CheckResult(name, "fail", str(exc)))
        except Exception as exc:  # any other error is this check's failure, never the suite's
            where = traceback.extract_tb(exc.__traceback__)[-1]
            report.results.append(
                CheckResult(name, "fail", f"{type(exc).__name__}: {exc} (at {where.name}:{where.lineno})")
            )
        else:
            report.results.append(CheckResult(name, "pass"))
    return report
