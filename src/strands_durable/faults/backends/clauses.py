"""The crash clauses, judged over one crash point and resume style (`judge_point`): each problem is
(clause, detail). The rules of faults/kit/judge.py do the comparing where one fits."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from strands_durable.faults.backends import conversation
from strands_durable.faults.backends.explore import Golden, PointRun
from strands_durable.faults.kit import judge
from strands_durable.history import validate

Problem = tuple[str, str]
SDK_PLACEHOLDER = "Tool was interrupted."  # the SDK's in-memory answer to an orphan toolUse on load


def judge_point(golden: Golden, run: PointRun) -> list[Problem]:
    problems: list[Problem] = [("liveness", f"the {what} did not end within the per-run limit") for what in run.overran]
    crash, resume = run.crash, run.resume
    if crash is None or not crash.get("fired") or resume is None:
        if not run.overran and crash is not None and crash.get("fired"):
            problems.append(("liveness", "the resume ended without a record (it died)"))
        return problems
    problems += acknowledged_kept(golden, crash, resume)
    if not problems:
        problems += durable_kept(crash, resume)
    problems += history_valid(resume)
    problems += ids_fresh(resume)
    problems += tools_once(crash, resume, run)
    return problems


def acknowledged_kept(golden: Golden, crash: dict[str, Any], resume: dict[str, Any]) -> list[Problem]:
    """Every message of a prompt whose call returned before the kill is what a fresh agent restores."""
    if "restored" not in resume:
        return []
    count = golden.ends[crash["acknowledged"]]
    difference = judge.history_difference(golden.history[:count], resume["restored"][:count])
    if difference is None:
        return []
    return [("acknowledged-not-lost", f"{crash['acknowledged']} prompt(s) had returned; restored {difference}")]


def durable_kept(crash: dict[str, Any], resume: dict[str, Any]) -> list[Problem]:
    """Every message whose MessageAddedEvent had returned before the kill is restored."""
    if "restored" not in resume:
        return []
    durable = crash["durable"]
    difference = judge.history_difference(durable, resume["restored"][: len(durable)])
    if difference is None:
        return []
    return [("durable-per-message", f"{len(durable)} message(s) had been added; restored {difference}")]


def history_valid(resume: dict[str, Any]) -> list[Problem]:
    """The resume ran, every request it sent was valid, and the stored history continued with a prompt is valid."""
    if "error" in resume:
        return [("valid-history", f"the resume failed: {resume['error']}")]
    problems = [("valid-history", f"a resumed request broke {rule}") for rule in resume["invalid"][:1]]
    follow_up = {"role": "user", "content": [{"text": "continue"}]}
    broken = validate([*resume["stored"], follow_up], provider="bedrock", mode="request", tools_configured=True)
    problems += [
        ("valid-history", f"the stored history continued: {v.rule} at message {v.message_index}") for v in broken[:1]
    ]
    return problems


def ids_fresh(resume: dict[str, Any]) -> list[Problem]:
    """No message id a restored message held is created again, and no two stored messages hold one id (the proxy
    saw the ids listed and created)."""
    listed = {tuple(i) for i in resume.get("listed", ())}
    again = sorted({tuple(i) for i in resume.get("created", ())} & listed)
    stored = [tuple(i) for i in resume.get("stored_ids", ())]
    twice = sorted({i for i in stored if stored.count(i) > 1})
    if twice:
        agent, message = twice[0]
        return [("ids-not-reused", f"two stored messages of agent {agent} hold id {message}")]
    return [
        ("ids-not-reused", f"message id {m} of agent {a} was stored and given to a new message") for a, m in again[:1]
    ]


def tools_once(crash: dict[str, Any], resume: dict[str, Any], run: PointRun) -> list[Problem]:
    """A tool whose result was recorded (restored, or committed by our manager) does not run again; a
    non-idempotent one that started does not run again and its call is answered with an error."""
    notes = conversation.executions(run.place.workspace)
    before = [n for n in notes if n["phase"] == "crash" and n["event"] == "start"]
    after = Counter(n["id"] for n in notes if n["phase"].startswith("resume") and n["event"] == "start")
    recorded = set(crash.get("committed", ())) | results_in(resume.get("restored_raw", ()), real_only=True)
    problems = [
        ("tool-results-once", f"tool call {i} ran again although its result was recorded before the kill")
        for i in sorted(recorded & set(after))
    ]
    for n in before:
        if n["tool"] not in conversation.NON_IDEMPOTENT or n["id"] in recorded:
            continue
        if after[n["id"]]:
            problems.append(
                ("tool-results-once", f"non-idempotent tool call {n['id']} started before the kill ran again")
            )
        elif "stored_raw" in resume and results_in(resume["stored_raw"], real_only=False, ok_only=True) & {n["id"]}:
            problems.append(("tool-results-once", f"non-idempotent tool call {n['id']} is answered as a success"))
    return problems[:1]


def results_in(messages: Any, *, real_only: bool, ok_only: bool = False) -> set[str]:
    """toolUseIds answered in `messages` (without the SDK's in-memory placeholder when `real_only`; only successful
    results when `ok_only`)."""
    found = set()
    for message in messages:
        for block in message.get("content", ()):
            result = block.get("toolResult") if isinstance(block, dict) else None
            if not result:
                continue
            if real_only and SDK_PLACEHOLDER in json.dumps(result):
                continue
            if ok_only and result.get("status") == "error":
                continue
            found.add(result["toolUseId"])
    return found
