"""Verification and inspection of local sessions: derived files against the journal, stored histories, and
the findings `sessions check` prints (`LocalStore.inspect`). Reads only; never writes."""

from __future__ import annotations

import hashlib
import os
from datetime import datetime
from pathlib import Path
from typing import Any

from strands_durable.errors import CorruptSession
from strands_durable.store import bounded_json, layout
from strands_durable.store.base import Finding, Severity
from strands_durable.store.fileops import FileOps, is_temp_file
from strands_durable.store.journal import (
    JOURNAL_NAME,
    JournalContents,
    damaged_last_detail,
    read_journal,
    written_on_boot,
)
from strands_durable.store.state import SessionState, fold
from strands_durable.store.views import agent_view, pattern_state_view, session_view

# session.json fields that must match the journal (updated_at and journal_seq lag by the closing record)
_SESSION_FIELDS = ("session_id", "workflow_name", "pattern", "status", "token_usage", "artifacts_written")


def read_json_object(path: Path) -> dict[str, Any] | None:
    """A file's JSON object, or None when it is missing, unreadable, not an object or nested too deeply
    (`bounded_json`): a readable file is derived, so any damage to it is one `sessions repair` writes again."""
    try:
        data = bounded_json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def spec_snapshot_matches(data: bytes, meta: dict[str, Any]) -> bool:
    """Whether spec_snapshot.yaml's bytes are the spec the session was created from (its recorded sha256; a
    session without one, a plain-Python agent's, has nothing to compare)."""
    recorded = meta.get("spec_hash")
    return not isinstance(recorded, str) or hashlib.sha256(data).hexdigest() == recorded


SNAPSHOT_MISSING = "missing (a resume needs it when the spec file is gone)"
SNAPSHOT_DIFFERS = "does not hold the spec this session was created from (its sha256 differs)"


def spec_snapshot_findings(directory: Path, fileops: FileOps, meta: dict[str, Any]) -> list[Finding]:
    """The spec snapshot a resume runs when the spec file is gone: present, readable, and the very bytes the
    session was created from."""
    name = layout.SPEC_SNAPSHOT
    try:
        data = fileops.read_bytes(directory / name)
    except FileNotFoundError:
        return [Finding("error", name, SNAPSHOT_MISSING)]
    except OSError as exc:
        return [Finding("error", name, f"cannot read: {exc.strerror or exc}")]
    if not spec_snapshot_matches(data, meta):
        return [Finding("error", name, SNAPSHOT_DIFFERS)]
    return []


def verify_views(directory: Path, state: SessionState, *, trusted: int) -> None:
    """Refuse a session whose trusted readable files disagree with the journal (CorruptSession names the file).

    `trusted` is `SessionState.trusted_seq`. After a clean close (it is the last record) every readable file was
    written and kept, so any damage is corruption. After a crash only message files of records up to it are
    checked; later files are re-derived.

    After a clean close a message file whose inode has not changed since a little before the close's mark
    (its ctime, which a write, rename or chmod moves and a user cannot set back) is the file that close flushed:
    one stat instead of reading and parsing it, so opening a long session costs a stat per message. Any file
    changed later, or written in the last moments before the mark, is read and compared in full; `sessions
    check` always compares every file's content.
    """
    clean = trusted == state.seq
    repair = f"; `strands sessions repair {state.session_id}` writes it again from the journal"
    if clean:
        for name in (layout.SESSION_JSON, layout.PATTERN_STATE_JSON):
            if read_json_object(directory / name) is None:
                raise CorruptSession(str(directory / name), f"missing or not a JSON object{repair}")
    trusted_before = _closed_at_ns(state) if clean else 0
    for key, conv in state.conversations.items():
        if not conv.seqs or conv.seqs[0] > trusted:
            continue  # none of its message files is trusted (after a crash, most conversations of a long session)
        messages_dir = f"{directory / layout.AGENTS_DIR / key / 'messages'}{os.sep}"
        for index, seq in enumerate(conv.seqs):
            if seq > trusted:
                break
            path = messages_dir + layout.message_file_name(index)
            if trusted_before:
                try:
                    if os.stat(path).st_ctime_ns < trusted_before:
                        continue
                except OSError:
                    pass  # read below, and named as missing
            view = read_json_object(Path(path))
            if view is None:
                raise CorruptSession(path, f"missing, truncated or not JSON{repair}")
            if view.get("message") != conv.messages[index] or view.get("message_id") != index:
                raise CorruptSession(path, f"does not match the session journal{repair}")


# how long before the close's mark's timestamp a file's ctime must be for the file to be trusted unread: file
# times come from the kernel's coarse clock, which may lag the clock that stamps records by a few milliseconds
_CTIME_MARGIN_NS = 50_000_000


def _closed_at_ns(state: SessionState) -> int:
    """The close's mark's time less the margin, in ns since the epoch (0: unknown, trust nothing)."""
    try:
        closed = datetime.fromisoformat(state.updated_at or "")
    except ValueError:
        return 0
    return max(0, int(closed.timestamp() * 1e9) - _CTIME_MARGIN_NS)


def verify_histories(directory: Path | str, state: SessionState, *, known: SessionState | None = None) -> None:
    """Every stored conversation must be valid as stored (a trailing toolUse awaiting results is allowed).
    Conversations `state` still shares with the known state it was folded onto (`KnownJournal`) are valid."""
    from strands_durable.history import validate

    for key, conv in state.conversations.items():
        if known is not None and key in state.shared and known.conversations.get(key) is conv:
            continue
        violations = validate(conv.messages, mode="stored")
        if violations:
            first = violations[0]
            raise CorruptSession(
                f"{directory}/{layout.AGENTS_DIR}/{key}",  # a directory, or an S3 store's `s3://...` location
                f"stored history breaks {first.rule} at message {first.message_index} "
                f"(run `strands sessions repair {state.session_id}`)",
            )


def check_committed_histories(state: SessionState, events: list[dict[str, Any]]) -> None:
    """A strict store's check after each commit: every conversation the commit's events touched is valid as
    stored; AssertionError (a bug in the caller, not bad input) when one is not."""
    from strands_durable.history import validate

    for key in {e["conv"] for e in events if e.get("type") in ("message", "generation")}:
        violations = validate(state.conversations[key].messages, mode="stored")
        if violations:
            raise AssertionError(f"strict store: invalid stored history for {key}: {violations[0]}")


def hand_edited_variables(directory: Path, state: SessionState) -> dict[str, Any] | None:
    """Variables a user edited in session.json (the document's advanced workflow), or None when unchanged."""
    view = read_json_object(directory / layout.SESSION_JSON)
    if view is None or not isinstance(view.get("variables"), dict):
        return None
    if view["variables"] != state.meta.get("variables", {}):
        return view["variables"]
    return None


def damaged_last_proof(
    directory: Path,
    contents: JournalContents,
    boot: str | None,
    earlier: tuple[str | None, ...] = (),
    *,
    first_seq: int = 0,
) -> str | None:
    """Why the journal's complete but damaged last line was once whole and durable, in words, or None (a torn
    tail a resume may cut): a record before it was written on this boot (`journal.written_on_boot`), or
    session.json was written from it or a later record (readable files are written only once the records they
    show are durable: they never lead the journal). `first_seq`: the seq of the first record `contents` may hold
    (a journal read after a known state)."""
    if not contents.damaged_last:
        return None
    proof = written_on_boot(contents.records, boot, earlier)
    if proof:
        return proof
    damaged_seq = contents.records[-1]["seq"] + 1 if contents.records else first_seq
    view = read_json_object(directory / layout.SESSION_JSON)
    shown = view.get("journal_seq") if view is not None else None
    if type(shown) is int and shown >= damaged_seq:
        return f"{layout.SESSION_JSON} shows record {shown} (readable files are written only from durable records)"
    return None


def read_journal_findings(directory: Path, fileops: FileOps, findings: list[Finding]) -> SessionState | None:
    """The journal's state, adding what is wrong with the journal to `findings` (None when it cannot be read).
    A torn tail is a warning; a complete last record that fails its checksum is an error when something proves it
    was once whole (`damaged_last_proof`: it was committed, and a resume refuses to drop it)."""
    path = directory / JOURNAL_NAME
    try:
        data = fileops.read_bytes(path)
        contents = read_journal(path, data)
    except CorruptSession as exc:
        findings.append(Finding("error", JOURNAL_NAME, str(exc)))
        return None
    except OSError as exc:
        reason = "missing" if isinstance(exc, FileNotFoundError) else f"cannot read: {exc.strerror or exc}"
        findings.append(Finding("error", JOURNAL_NAME, reason))
        return None
    if not contents.records:
        findings.append(Finding("error", JOURNAL_NAME, "no complete header record"))
        return None
    if contents.torn_tail:
        proof = damaged_last_proof(directory, contents, fileops.boot_id())
        if proof:
            findings.append(Finding("error", JOURNAL_NAME, damaged_last_detail(contents, proof)))
        else:
            findings.append(Finding("warning", JOURNAL_NAME, contents.describe_tail(len(data))))
    try:
        return fold(contents.records)
    except (KeyError, TypeError, ValueError) as exc:
        findings.append(Finding("error", JOURNAL_NAME, f"a record does not apply: {exc}"))
        return None


def readable_file_findings(directory: Path, state: SessionState, *, trusted: int) -> list[Finding]:
    """The readable files (session.json, pattern_state.json, agents/...) that disagree with the journal: an error
    up to record `trusted` (`SessionState.trusted_seq`), a warning after it (they may lag)."""
    clean = trusted == state.seq
    lag: Severity = "error" if clean else "warning"
    lag_note = "" if clean else " (written after the last flush; re-derived on the next resume or by `sessions repair`)"
    findings: list[Finding] = []

    view = read_json_object(directory / layout.SESSION_JSON)
    expected = session_view(state)
    if view is None:
        findings.append(Finding(lag, layout.SESSION_JSON, "missing or not a JSON object" + lag_note))
    else:
        for name in _SESSION_FIELDS:
            if view.get(name) != expected[name]:
                findings.append(
                    Finding(
                        lag,
                        layout.SESSION_JSON,
                        f"{name} is {view.get(name)!r}, the journal says {expected[name]!r}" + lag_note,
                    )
                )
        if isinstance(view.get("variables"), dict) and view["variables"] != expected["variables"]:
            findings.append(
                Finding("warning", layout.SESSION_JSON, "variables were edited by hand; the next resume uses them")
            )

    pattern_view = read_json_object(directory / layout.PATTERN_STATE_JSON)
    if pattern_view != pattern_state_view(state):
        what = "missing or not a JSON object" if pattern_view is None else "does not match the journal"
        findings.append(Finding(lag, layout.PATTERN_STATE_JSON, what + lag_note))

    agents_dir = directory / layout.AGENTS_DIR
    on_disk = set(os.listdir(agents_dir)) if agents_dir.is_dir() else set()
    for name in sorted(on_disk - set(state.conversations)):
        findings.append(Finding("error", f"agents/{name}", "has no conversation in the journal"))
    for key, conv in sorted(state.conversations.items()):
        agent_dir = agents_dir / key
        record = read_json_object(agent_dir / "agent.json")
        if record is None or record.get("message_count") != len(conv.messages):
            findings.append(Finding(lag, f"agents/{key}/agent.json", "missing or out of date" + lag_note))
        elif record != agent_view(conv):
            findings.append(Finding(lag, f"agents/{key}/agent.json", "does not match the journal" + lag_note))
        findings.extend(_message_file_findings(agent_dir / "messages", key, conv.messages, conv.seqs, trusted))
    return findings


def _message_file_findings(
    messages_dir: Path,
    key: str,
    messages: list[dict[str, Any]],
    seqs: list[int],
    trusted: int,
) -> list[Finding]:
    findings: list[Finding] = []
    names = [n for n in os.listdir(messages_dir) if not is_temp_file(n)] if messages_dir.is_dir() else []
    for name in sorted(names):
        index = _message_index(name)
        if index is None:
            findings.append(Finding("error", f"agents/{key}/messages/{name}", "not a message file"))
        elif index >= len(messages):
            findings.append(
                Finding("error", f"agents/{key}/messages/{name}", f"beyond the journal's {len(messages)} messages")
            )
    for index, message in enumerate(messages):
        where = f"agents/{key}/messages/{layout.message_file_name(index)}"
        durable = seqs[index] <= trusted
        view = read_json_object(messages_dir / layout.message_file_name(index))
        if view is None:
            detail = "missing or not JSON"
        elif view.get("message_id") != index or view.get("message") != message:
            detail = "does not match the journal"
        else:
            continue
        if durable:
            findings.append(Finding("error", where, detail))
        else:
            findings.append(Finding("warning", where, detail + " (written after the last flush; re-derived on resume)"))
    return findings


def _message_index(name: str) -> int | None:
    stem, dot, suffix = name.rpartition(".")
    prefix = "message_"
    if dot and suffix == "json" and stem.startswith(prefix) and stem[len(prefix) :].isdigit():
        return int(stem[len(prefix) :])
    return None
