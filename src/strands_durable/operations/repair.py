"""`repair_session`: give every conversation with a broken stored history a repaired new generation, and write
readable files that disagree with the journal again.

Uses `history.repair` with the conversation's committed tool results; each changed conversation is one commit of
a `generation` event (a store with derived files keeps the old ones: the local store moves them to
`backups/<timestamp>/`). Messages are never edited in place, and a valid history is left alone. Damaged derived
files (session.json, a message file) are written again from the commit record, which is the truth
(`Session.refresh_views`). The spec snapshot is not derived from it (the journal keeps only its sha256): a damaged
or missing one is CorruptSession naming it and what to do, never "nothing to repair".
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from strands_durable.errors import CorruptSession
from strands_durable.history import RepairAction, Strategy, repair, validate
from strands_durable.store import events
from strands_durable.store.base import Session, SessionStore


@dataclass
class ConversationRepair:
    """What repair changed in one conversation, and where the previous generation's files went."""

    conversation: str
    generation: int
    messages_before: int
    messages_after: int
    actions: list[RepairAction] = field(default_factory=list)
    backup: str | None = None  # where the store kept the previous generation (None: it keeps none)


@dataclass
class RepairReport:
    conversations: list[ConversationRepair] = field(default_factory=list)  # one per changed conversation
    rewritten: list[str] = field(default_factory=list)  # readable files found damaged and written again

    @property
    def changed(self) -> bool:
        return bool(self.conversations or self.rewritten)


def repair_session(store: SessionStore, session_id: str, strategy: Strategy = "synthesize") -> RepairReport:
    """Repair a session's histories and readable files (takes the lease: SessionInUse while a run holds it)."""
    full_id = store.resolve(session_id)
    report = RepairReport()
    done = report.conversations
    with store.open(full_id, check=False) as session:
        for key, conv in sorted(session.state.conversations.items()):
            repaired, actions = repair(conv.messages, journal=conv.tool_results, strategy=strategy)
            if not actions:
                continue
            remaining = validate(repaired, mode="stored")
            if remaining:
                raise CorruptSession(f"agents/{key}", f"repair left an invalid history: {remaining[0]}")
            before = len(conv.messages)
            event = events.generation(
                key,
                repaired,
                units_after_repair(conv.messages, conv.units, repaired),
                strategy=strategy,
                actions=[str(action) for action in actions],
            )
            session.commit([event], path=f"repair/{key}")
            after = session.state.conversations[key]
            done.append(
                ConversationRepair(key, after.generation, before, len(after.messages), actions, session.backup_of(key))
            )
        report.rewritten = session.refresh_views()
        _refuse_a_damaged_spec_snapshot(session)
    return report


def _refuse_a_damaged_spec_snapshot(session: Session) -> None:
    """CorruptSession (exit 17) naming the spec snapshot when it no longer holds the spec the session recorded the
    sha256 of: repair cannot write it again, and saying nothing would leave a session whose resume fails."""
    from strands_durable.spec import bytes_hash

    recorded = session.state.meta.get("spec_hash")
    if not isinstance(recorded, str):
        return  # a plain-Python agent's session keeps no spec
    try:
        intact = bytes_hash(session.spec_snapshot()) == recorded
        detail = "does not hold the spec this session was created from (its sha256 differs)"
    except CorruptSession as exc:
        intact, detail = False, exc.detail
    if not intact:
        spec_path = session.state.meta.get("spec_path", "the spec file")
        raise CorruptSession(
            session.spec_snapshot_name(),
            f"{detail}; `sessions repair` cannot write it again (the journal keeps only its sha256): a resume "
            f"still works while {spec_path} holds the session's spec; otherwise restore the snapshot from a "
            "backup, or delete the session",
        )


def units_after_repair(old: list[dict[str, Any]], old_units: list[str], new: list[dict[str, Any]]) -> list[str]:
    """The unit each repaired message belongs to: the unit of the original message it came from.

    A repaired message is matched to the first original (from the last match on) that shares a content block with
    it; an invented message (a separator, a synthesized results message) belongs to the unit before it, or to
    the first unit when it opens the history.
    """
    signatures = [{_block_signature(b) for b in m.get("content", ())} for m in old]
    units: list[str] = []
    position = 0
    for message in new:
        blocks = {_block_signature(b) for b in message.get("content", ())}
        match = next((i for i in range(position, len(old)) if blocks & signatures[i]), None)
        if match is not None:
            position = match
            units.append(old_units[match])
        else:
            units.append(units[-1] if units else (old_units[0] if old_units else ""))
    return units


def _block_signature(block: dict[str, Any]) -> str:
    if "toolUse" in block:
        return "toolUse:" + str(block["toolUse"].get("toolUseId"))
    if "toolResult" in block:
        return "toolResult:" + str(block["toolResult"].get("toolUseId"))
    return json.dumps(block, sort_keys=True, default=str)
