"""The judge: every rule a resumed run is held to, each a small named check returning (rule, detail) problems.

Every fault class judges with these rules, choosing the ones that apply (the power class also holds "no commit
that returned durable is lost"; a resume stopped at convergence is judged on its durable state there instead of on
its end). The rule names are `Finding.rule`:

- `invalid-history`: a stored history a provider would reject (`stored_valid`), or a finished one that cannot be
  continued (`continuable`);
- `status`: the run did not end as the golden run did (`ended_as`);
- `identical`: the comparable view or the output directory differs from the golden run's (`identical`,
  `out_dir_matches`);
- `workspace`: the tools' workspace differs from the golden run's (`workspace_matches`);
- `durable-state`: a resume equal to the golden run in memory whose stored session differs (`durable_at`);
- `tool-rerun`: a committed tool ran again, or a non-idempotent one twice (`tool_reruns`, `tools_not_rerun`);
- `model-rerequest`: a committed model turn was requested again (`model_not_rerequested`);
- `synthesized-result`: a non-idempotent call whose outcome was unknown is not answered "outcome unknown"
  (`answered_unknown`);
- `secret-echo`: a file of the session holds a declared secret (`env.secrets`, as set in the environment) in any
  form redaction covers (`no_secret_echoes`, `declared_secrets`; history/secrets.py): checked on the golden run
  (kit/runs.py, so every class reports it) and on the sessions the real-fault classes resume (`completed_on_disk`).

Over a Python agent, Graph or Swarm (faults/agents/engine.py), what a fresh build of the user's factory finds:
`invalid-request` (`requests_valid`), `tool-rerun` (`stored_tools_not_rerun`), `model-rerequest`
(`stored_turns_not_rerequested`), `history` (`same_history`), `state` (`same_state`), `workspace`
(`same_workspace`), `identical` (`same_results`), and where a call was answered "outcome unknown" (a result whose
text holds `OUTCOME_UNKNOWN`, found in the stored conversation, `unknown_outcomes`) `unknown-outcome` instead of the
four before (`unknown_only_where_unstored`, `same_until_unknown`, `no_effect_twice`): what follows that result, and
so `agent.state`, is not compared.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from strands_durable.crashpoints import ToolCall, ToolKey
from strands_durable.errors import DurableError
from strands_durable.faults.kit.findings import INVALID_HISTORY, Finding
from strands_durable.faults.kit.golden import GoldenRun
from strands_durable.faults.kit.oracle import comparable, history_violations, readable_difference
from strands_durable.faults.kit.snapshot import SnapshotDigest, snapshot_view
from strands_durable.faults.kit.stores import store_at, stored_bytes
from strands_durable.faults.kit.workspace import WORKSPACE_RULE, Files, read_files, workspace_difference
from strands_durable.history import OUTCOME_UNKNOWN, normalize, synthesized_ids, validate
from strands_durable.history.secrets import find_secret_echoes
from strands_durable.store.state import SessionState

Problem = tuple[str, str]  # (rule, detail)
SECRET_ECHO = "secret-echo"


ValidHistories = dict[str, dict[int, tuple[list[dict[str, Any]], list[dict[str, Any]]]]]
"""The conversations found valid before: by key and length, the messages list validated and a copy of it."""

_VALID_KEPT = 1024  # validated lengths kept per conversation key (the oldest forgotten first)


def stored_valid(state: SessionState, when: str, valid: ValidHistories | None = None) -> list[Problem]:
    """Every stored history is valid as stored. `valid` caches the conversations found valid before (by key and
    length), so a history many runs share is validated once: the very list validated at that length (a state's
    messages list only grows by appending, and a repair replaces it whole), or a list of equal messages, or one
    equal to the start of a longer history found valid (`_starts_a_valid_history`)."""
    found: list[tuple[str, list[str]]] = []
    for key, conv in list(state.conversations.items()):
        messages = conv.messages
        known = valid.setdefault(key, {}) if valid is not None else None
        if known is not None and len(messages) in known:
            validated, copied = known[len(messages)]
            if validated is messages:
                continue
            if copied == messages:  # equal messages: this very list and its objects, compared by identity next time
                known[len(messages)] = (messages, list(messages))
                continue
        if known is not None and _starts_a_valid_history(known, messages):
            known[len(messages)] = (messages, list(messages))
            continue
        violations = history_violations(key, messages)
        if violations:
            found.append((key, violations))
        elif known is not None:
            known[len(messages)] = (messages, list(messages))
            if len(known) > _VALID_KEPT:
                del known[next(iter(known))]
    return [(INVALID_HISTORY, f"{when}: {v}") for _, violations in sorted(found) for v in violations]


def _starts_a_valid_history(known: dict[int, tuple[list[Any], list[Any]]], messages: list[Any]) -> bool:
    """Whether `messages` equals the start of the longest history of its key found valid as stored. Such a list is
    valid as stored too (`history_violations` validates under every provider's rules): no two messages in a row
    have the same role (V2), so a cut falls between turns, where the longer history's scan already made every check
    the cut's end makes (tests/history/test_history_properties.py holds it over generated histories). A crash point
    of a long conversation is read back at a new length each time, a cut of the history validated before it."""
    if not known:
        return False
    longest = max(known)
    return len(messages) < longest and known[longest][1][: len(messages)] == messages


def continuable(state: SessionState) -> list[str]:
    """What is wrong with the histories of a run that ended: a completed run must be continuable with a new
    prompt (nothing may dangle: every toolUse answered, no empty or misplaced block); a failed one may have
    stopped inside a unit, and is held to what may be stored."""
    if state.status != "completed":
        return [v for key, conv in sorted(state.conversations.items()) for v in history_violations(key, conv.messages)]
    follow_up = {"role": "user", "content": [{"text": "continue"}]}
    problems = []
    for key, conv in sorted(state.conversations.items()):
        for v in validate([*conv.messages, follow_up], mode="request"):
            problems.append(f"{key}: {v.rule} at message {v.message_index}: {v.message}")
    return problems


def ended_as(golden: GoldenRun, state: SessionState, label: str = "the resumed run") -> list[Problem]:
    """The run ended with the golden run's status."""
    expected = golden.comparable["status"]
    if state.status == expected:
        return []
    return [("status", f"{label} ended {state.status}, not {expected} as the golden run")]


def identical(golden: GoldenRun, state: SessionState) -> list[Problem]:
    """The comparable view (docs/contract.md#what-identical-means) equals the golden run's."""
    difference = readable_difference(golden.comparable, comparable(state))
    return [("identical", f"differs from the golden run at {difference}")] if difference else []


def out_dir_matches(out_dir: Path, state: SessionState) -> list[Problem]:
    """The output directory holds exactly the artifacts the session recorded."""
    on_disk = {str(p.relative_to(out_dir)) for p in out_dir.rglob("*") if p.is_file()}
    if on_disk == set(state.artifacts):
        return []
    return [("identical", f"output directory holds {sorted(on_disk)}, the session recorded {sorted(state.artifacts)}")]


def workspace_matches(expected: Files, scratch: Path | None) -> list[Problem]:
    """The tools' workspace equals the golden run's (lines of a file in any order: parallel tools append so)."""
    difference = workspace_difference(expected, read_files(scratch))
    if not difference:
        return []
    return [(WORKSPACE_RULE, f"the tools' workspace differs from the golden run's at {difference}")]


def durable_at(
    digester: SnapshotDigest, stored: SessionState, digest: str, expected: Callable[[], dict[str, Any]]
) -> list[Problem]:
    """A resume stopped where its state equalled the golden checkpoint `digest`: the session as stored up to that
    commit equals it too (concurrent units may have committed more before the run stopped). `expected` gives the
    golden checkpoint's snapshot view, read only when the two differ."""
    if digester.digest(stored) == digest:
        return []
    difference = readable_difference(expected(), snapshot_view(stored))
    return [("durable-state", f"the resumed run converged in memory but its stored session differs at {difference}")]


def answered_unknown(state: SessionState, unknown: set[str]) -> list[Problem]:
    """Each non-idempotent call whose outcome a crash left unknown is answered with the synthesized error."""
    found = outcome_unknown(state)
    return [
        (
            "synthesized-result",
            f"non-idempotent tool call {tool_use_id} started before the crash; its result is not the synthesized error",
        )
        for tool_use_id in sorted(unknown - found)
    ]


def outcome_unknown(state: SessionState) -> set[str]:
    """toolUseIds answered with the synthesized "outcome unknown" error (a non-idempotent tool died mid-call), as
    the results messages' `synthesized_tool_results` marker names them: such a run legitimately differs from the
    golden run, so only its validity and completion are judged."""
    return {i for conv in state.conversations.values() for message in conv.messages for i in synthesized_ids(message)}


def completed_like(golden: GoldenRun, state: SessionState, scratch: Path | None = None) -> list[Problem]:
    """A session that should now be completed and identical to the golden run (the rules of a run judged at its
    end from disk alone): stored histories valid, completed, and, unless a non-idempotent call's outcome was
    unknown, identical with the same workspace."""
    problems = stored_valid(state, "after the resume")
    if state.status != "completed":
        return [*problems, ("status", f"the session ended {state.status} ({state.reason}), not completed")]
    if not outcome_unknown(state):
        problems += identical(golden, state)
        if scratch is not None:
            problems += workspace_matches(golden.workspace.final, scratch)
    return problems


def completed_on_disk(golden: GoldenRun, sessions: Path, session_id: str, scratch: Path | None = None) -> list[Problem]:
    """The session `session_id` under `sessions`, read from disk after a resume: it loads, is what
    `completed_like` asks (completed and identical, with the golden run's workspace in `scratch`), and none of its
    files holds a declared secret."""
    store = store_at(sessions)
    try:
        state = store.load(session_id)
    except DurableError as exc:
        return [("resume-failed", f"the session cannot be loaded after the resume: {exc}")]
    secrets = declared_secrets(golden.secret_variables)
    return completed_like(golden, state, scratch) + no_secret_echoes(stored_bytes(store, session_id), secrets)


def declared_secrets(variables: dict[str, str]) -> dict[str, str]:
    """The declared secrets (name -> environment variable, `GoldenRun.secret_variables`) that are set in the
    environment: name -> value."""
    return {name: os.environ[variable] for name, variable in variables.items() if os.environ.get(variable)}


def no_secret_echoes(stored: dict[str, bytes], secrets: dict[str, str]) -> list[Problem]:
    """Nothing the store keeps of the session (`kit/stores.py: stored_bytes`: a local session's journal, readable
    files and backups, the tools' scratch/ being the tools' own; a session's journal on S3) holds a declared secret
    in any form redaction covers."""
    if not secrets:
        return []
    return [(SECRET_ECHO, echo.describe()) for echo in find_secret_echoes(stored, secrets)]


def tools_not_rerun(
    tools_run: Iterable[ToolCall], committed: set[ToolKey], executed: dict[ToolKey, int], label: str
) -> list[Problem]:
    """No tool call whose result was `committed` executed again, and no non-idempotent one more than once
    (`executed` counts every execution of the exploration so far and is updated)."""
    problems = []
    for call in tools_run:
        if call.key in committed:
            problems.append(("tool-rerun", f"{label}: committed tool call {call.path} executed again"))
        executed[call.key] = executed.get(call.key, 0) + 1
        if call.non_idempotent and executed[call.key] > 1:
            problems.append(
                ("tool-rerun", f"{label}: non-idempotent tool call {call.path} executed {executed[call.key]} times")
            )
    return problems


def tool_repeats(tools_run: list[ToolCall], where: str) -> list[Finding]:
    """A run without faults executes each tool call once."""
    seen: set[str] = set()
    problems = []
    for call in tools_run:
        if call.path in seen:
            problems.append(Finding("tool-rerun", f"{where}: tool call {call.path} executed twice"))
        seen.add(call.path)
    return problems


def tool_reruns(entries: Iterable[tuple[str, str]], non_idempotent: set[str]) -> list[Problem]:
    """Over (site, tool path) entries of every process of an exploration (`ToolLedger`): tool paths that ran after
    their result was committed, or non-idempotent ones that ran twice."""
    committed: set[str] = set()
    runs: Counter[str] = Counter()
    problems = []
    for site, path in entries:
        if site == "tool.committed":
            committed.add(path)
            continue
        runs[path] += 1
        if path in committed:
            problems.append(("tool-rerun", f"tool call {path} ran again after its result was committed"))
        elif path in non_idempotent and runs[path] > 1:
            problems.append(("tool-rerun", f"non-idempotent tool call {path} ran {runs[path]} times"))
    return problems


def non_idempotent_tools(golden: GoldenRun) -> set[str]:
    """Tool paths of the golden run's non-idempotent tool calls."""
    return {p.point.path for p in golden.points if isinstance(p.point, ToolCall) and p.point.non_idempotent}


def model_not_rerequested(
    before: SessionState, requests: list[tuple[int, list[dict[str, Any]]]], label: str
) -> list[Problem]:
    """No model turn committed in `before` was requested again (requests as (message count, messages))."""
    return [
        ("model-rerequest", f"{label}: a model turn committed before it started was requested again ({count} messages)")
        for count, messages in requests
        if _answer_committed(before, messages, count)
    ]


def _answer_committed(state: SessionState, request: list[dict[str, Any]], count: int) -> bool:
    """Whether `state` already holds an assistant answer to this exact request (normalised messages)."""
    if not request:
        return False
    last = {"role": request[-1].get("role"), "content": request[-1].get("content")}
    wanted = None
    for conv in state.conversations.values():
        messages = conv.messages
        for end in range(count, len(messages)):
            if messages[end].get("role") != "assistant":
                continue
            candidate = messages[end - 1]
            if candidate.get("role") != last["role"] or candidate.get("content") != last["content"]:
                continue
            if wanted is None:
                wanted = normalize(request)
            if normalize(messages[end - count : end]) == wanted:
                return True
    return False


# -- a Python agent, Graph or Swarm (faults/agents/engine.py): what a fresh build of the factory finds ----------------


def unknown_outcomes(messages: Iterable[dict[str, Any]]) -> dict[str, int]:
    """toolUseId -> the index of the message holding its result, for each tool result answered "outcome unknown":
    its text contains `OUTCOME_UNKNOWN` (the marker, whoever wrote the result: our synthesized one, an HTTP or MCP
    executor's, the user's own tool's)."""
    found: dict[str, int] = {}
    for index, message in enumerate(messages):
        for block in message.get("content", ()):
            result = block.get("toolResult") if isinstance(block, dict) else None
            if result and any(OUTCOME_UNKNOWN in str(part.get("text", "")) for part in result.get("content", ())):
                found.setdefault(result["toolUseId"], index)
    return found


def requests_valid(invalid: Iterable[tuple[int, str]], label: str) -> list[Problem]:
    """Every request the model received was valid for its provider ((index, first broken rule) of each invalid
    one)."""
    return [("invalid-request", f"{label} request {index}: {rule}") for index, rule in invalid]


def stored_tools_not_rerun(executions: Iterable[str], stored: Counter[str], golden: Counter[str]) -> list[Problem]:
    """No tool call whose result was stored before the crash ran again (call keys of the resume's real executions;
    `stored`: results stored at the crash, `golden`: executions of the golden run, by call key). A call may run
    again only as often as the golden run ran it beyond its stored results (a node visited afresh runs the same
    call once per visit; a plain agent's call runs once)."""
    ran = Counter(executions)
    return [
        ("tool-rerun", f"tool call {key} ran again although its result was stored before the crash")
        for key in sorted(ran)
        if stored[key] and ran[key] > max(golden[key], stored[key]) - stored[key]
    ]


def turn_key(agent: str, messages: list[dict[str, Any]]) -> str:
    """One model request of one agent (normalised messages), as the turn rules count them."""
    import hashlib
    import json

    return hashlib.sha256(json.dumps([agent, messages], sort_keys=True, default=str).encode()).hexdigest()


def stored_turns_not_rerequested(
    requests: Iterable[tuple[str, list[dict[str, Any]]]],
    stored: dict[str, list[list[dict[str, Any]]]],
    golden: Counter[str],
) -> list[Problem]:
    """No model turn stored before the crash was requested again. A request ((agent, normalised messages)) asks a
    stored turn when one of that agent's stored conversations holds those messages followed by an answer; asked
    more often than the golden run asked it (`golden`, by `turn_key`) beyond the answers stored, it was asked again
    (a node visited afresh asks the same turn once per visit; a plain agent's once). The first is reported."""
    asked: Counter[str] = Counter()
    for agent, messages in requests:
        n = len(messages)
        answered = sum(
            1
            for conv in stored.get(agent, ())
            if n < len(conv) and conv[n]["role"] == "assistant" and conv[:n] == messages
        )
        if not answered:
            continue
        key = turn_key(agent, messages)
        asked[key] += 1
        if asked[key] > max(golden[key], answered) - answered:
            where = f"node {agent}: " if agent else ""
            return [("model-rerequest", f"{where}the model turn stored as message {n} was requested again")]
    return []


def same_history(golden: dict[str, list[dict[str, Any]]], got: dict[str, list[dict[str, Any]]]) -> list[Problem]:
    """Each agent's conversation as a fresh build loads it (normalised) equals the golden run's (agent key -> its
    messages; "" is a plain Agent's)."""
    problems = []
    for key in sorted(golden.keys() | got.keys()):
        difference = history_difference(golden.get(key, []), got.get(key, []))
        if difference:
            problems.append(("history", f"node {key}: {difference}" if key else difference))
    return problems


def same_state(golden: dict[str, Any], got: dict[str, Any]) -> list[Problem]:
    """Each agent's `agent.state` as a fresh build loads it equals the golden run's (agent key -> state)."""
    problems = []
    for key in sorted(golden.keys() | got.keys()):
        difference = readable_difference(golden.get(key), got.get(key))
        if difference:
            where = f"node {key}'s agent.state" if key else "agent.state"
            problems.append(("state", f"{where} differs from the golden run's at {difference}"))
    return problems


def same_workspace(golden: Files, got: Files) -> list[Problem]:
    """The tools' workspace equals the golden run's (lines of a file in any order: concurrent tools append so)."""
    difference = workspace_difference(golden, got)
    return [(WORKSPACE_RULE, difference)] if difference else []


def unknown_only_where_unstored(unknown: Iterable[str], stored: Counter[str]) -> list[Problem]:
    """No call whose result was stored before the crash is answered "outcome unknown" (call keys)."""
    return [
        (
            "unknown-outcome",
            f"tool call {key} was answered 'outcome unknown' although its result was stored before the crash",
        )
        for key in sorted(set(unknown))
        if stored[key]
    ]


def same_until_unknown(
    golden: dict[str, list[dict[str, Any]]], stored: dict[str, list[dict[str, Any]]]
) -> list[Problem]:
    """Each stored conversation (normalised, by conversation key) that answers a call "outcome unknown" equals the
    golden run's up to that result; what follows it is not compared (docs/contract.md#what-identical-means)."""
    problems = []
    for key, messages in sorted(stored.items()):
        found = unknown_outcomes(messages)
        if not found:
            continue
        index = min(found.values())
        difference = history_difference(golden.get(key, [])[:index], messages[:index])
        if difference:
            problems.append(("unknown-outcome", f"{key}: before its 'outcome unknown' result, {difference}"))
    return problems


def no_effect_twice(golden: Files, workspace: Files) -> list[Problem]:
    """After a call was answered "outcome unknown", no line of the tools' workspace appears more often than in the
    golden run's (no effect happened twice). `workspace` is taken where the run left the golden run's path (when
    the model was first asked with the unknown outcome), so a later, legitimately different effect is no extra."""
    effects = workspace_difference(golden, workspace, at_most=True)
    return [("unknown-outcome", f"a non-idempotent tool's outcome was unknown, and {effects}")] if effects else []


def same_results(golden: list[dict[str, Any] | None], got: dict[int, dict[str, Any]]) -> list[Problem]:
    """What each call of a Graph or Swarm returned in the resume (task index -> status, node order, node results)
    equals what the golden run's call of that task returned."""
    problems = []
    for index, result in sorted(got.items()):
        want = golden[index] if index < len(golden) else None
        difference = readable_difference(want, result)
        if difference:
            problems.append(
                ("identical", f"task {index}'s result differs from the uninterrupted run's at {difference}")
            )
    return problems


def history_difference(golden: list[dict[str, Any]], got: list[dict[str, Any]]) -> str | None:
    """The first message where two normalised histories differ, or None."""
    if golden == got:
        return None
    for index in range(max(len(golden), len(got))):
        want = golden[index] if index < len(golden) else None
        have = got[index] if index < len(got) else None
        if want != have:
            return f"message {index}: golden {_short(want)}, resumed {_short(have)}"
    return None


def _short(message: Any, limit: int = 160) -> str:
    import json

    text = "nothing" if message is None else json.dumps(message, sort_keys=True, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."
