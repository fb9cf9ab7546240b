"""Our implementations of strands-cli's native tools that need no network (deterministic where it matters).

Each is a real Strands tool, built once per process; the run's clock, scratch directory and file layer reach it
through the agent call's `invocation_state`. Files written by `file_write` go through the file-operations layer
and, offline, are confined to the session's scratch directory; offline, `current_time` is the session's clock.
"""

from __future__ import annotations

import ast
import datetime as _dt
import functools
import math
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from strands_durable.store.fileops import FileOps

_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type, Callable[[Any], Any]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}

MAX_RESULT_BITS = 10_000
"""The largest integer the calculator computes, in bits (about 3,000 decimal digits): an operation whose result
would be larger is refused before it runs (`(((9**100)**100)**100)**100` would take minutes and gigabytes)."""


def _check_result_size(op: ast.operator, left: Any, right: Any) -> None:
    """Refuse an integer operation whose result would exceed MAX_RESULT_BITS, from its operands' sizes."""
    if not (isinstance(left, int) and isinstance(right, int)):
        return  # float arithmetic is bounded by the float range (OverflowError)
    if isinstance(op, ast.Pow):
        bits = int(math.log2(abs(left)) * right) + 1 if right > 0 and abs(left) > 1 else 1
    elif isinstance(op, ast.Mult):
        bits = left.bit_length() + right.bit_length()
    else:
        bits = max(left.bit_length(), right.bit_length()) + 1
    if bits > MAX_RESULT_BITS:
        raise ValueError(
            f"the result would have about {bits} bits, more than the calculator's limit of {MAX_RESULT_BITS} bits "
            f"(about {int(MAX_RESULT_BITS * 0.30103)} digits)"
        )


def evaluate_arithmetic(expression: str) -> float | int:
    """Evaluate + - * / // % ** and parentheses over numbers; anything else is a ValueError, and so is an
    integer result larger than MAX_RESULT_BITS (refused before it is computed)."""
    if len(expression) > 500:
        raise ValueError("expression too long")
    return _arithmetic(ast.parse(expression.strip() or "0", mode="eval"))


def _arithmetic(node: ast.AST) -> Any:
    """The value of one node of an arithmetic expression (a module function: a nested one calling itself is a
    cycle, its closure holding it, left for the collector by every evaluation)."""
    if isinstance(node, ast.Expression):
        return _arithmetic(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _arithmetic(node.left), _arithmetic(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > 100:
            raise ValueError("exponent too large")
        _check_result_size(node.op, left, right)
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_arithmetic(node.operand))
    raise ValueError(f"unsupported expression element: {type(node).__name__}")


@dataclass(frozen=True)
class NativeToolEnvironment:
    """What the native tools of one run need: its clock, its scratch directory (offline runs), its file layer.

    The tools are built once per process (Strands' @tool builds pydantic models, which is slow) and read the
    run's environment from the agent call's `invocation_state` under ENVIRONMENT_KEY.
    """

    clock: Callable[[], _dt.datetime]
    scratch_dir: Path | None
    fileops: FileOps
    skills: Mapping[str, Path] = field(default_factory=dict)  # the spec's skills: id -> directory (read-only)


ENVIRONMENT_KEY = "strands_durable.native_tools"


def _environment(tool_context: Any) -> NativeToolEnvironment:
    environment = (tool_context.invocation_state or {}).get(ENVIRONMENT_KEY)
    if environment is None:
        raise RuntimeError("native tool called outside a strands-durable run")
    return environment


def tool_workspace(tool_context: Any) -> Path | None:
    """The directory where a tool of this run keeps files (`@tool(context=True)`; offline runs: the session's
    scratch directory or `RunOptions.scratch_dir`, under chaos each explored run's own copy); None when the run
    confines no files (a real provider)."""
    return _environment(tool_context).scratch_dir


def _confined(environment: NativeToolEnvironment, path: str, *, writing: bool = False) -> Path:
    """`path` inside the scratch directory (symlinks resolved), or a ValueError; a path to write must name a file
    strictly inside it, never the scratch directory itself (`.`, `a/..`), which a write would replace."""
    scratch = environment.scratch_dir
    if scratch is None:
        return Path(path)
    root = scratch.resolve()
    candidate = (scratch / path.lstrip("/")).resolve()
    if root not in (candidate, *candidate.parents):
        raise ValueError(f"path {path!r} escapes the scratch directory")
    if writing and candidate == root:
        raise ValueError(f"path {path!r} is the scratch directory itself; name a file inside it")
    if writing and candidate.is_dir():
        raise ValueError(f"path {path!r} is a directory; name a file")
    return candidate


def _read_text(environment: NativeToolEnvironment, path: str) -> str:
    target = _confined(environment, path)
    if not target.is_file():
        raise ValueError(f"no such file: {path}")
    return target.read_text(encoding="utf-8", errors="replace")[:100_000]


NATIVE_TOOL_NAMES = frozenset(
    {
        "calculator",
        "current_time",
        "file_read",
        "file_write",
        "head",
        "tail",
        "grep",
        "search",
        "spec_verify",
        "python_exec",
        "Skill",
    }
)
"""The names `native_tools()` provides, known without building the tools (checks before a run)."""


MAX_REGEX_MEMORY = 8 << 20
"""The memory a compiled grep/search pattern may use (RE2's `max_mem`); a larger pattern is refused."""


def linear_regex(pattern: str, *, ignore_case: bool = False, literal: bool = False) -> Any:
    """A compiled RE2 pattern: matching takes time linear in the text whatever the pattern (no backtracking, so a
    model-chosen `(a+)+$` cannot hang a run). RE2 syntax: no backreferences or look-around; `\\w`, `\\d` and
    `\\b` are ASCII (`\\pL` matches a letter of any script). A pattern it refuses, or one larger than
    MAX_REGEX_MEMORY, is a ValueError saying so."""
    import re2

    options = re2.Options()
    options.log_errors = False  # RE2 would print every refused pattern on stderr
    options.case_sensitive = not ignore_case
    options.literal = literal
    options.max_mem = MAX_REGEX_MEMORY
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        reason = exc.args[0].decode(errors="replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        if "pattern too large" in reason:
            reason = f"the pattern needs more than {MAX_REGEX_MEMORY >> 20} MiB, the regex engine's limit"
        raise ValueError(
            f"Invalid regex pattern: {reason} (RE2 syntax, which matches in linear time: no backreferences or "
            "look-around)"
        ) from None


def search_text(text: str, query: str, path: str, is_regex: bool, ignore_case: bool, max_matches: int) -> str:
    """strands-cli's `search` output: a header, then `<line> | <text>` with each match wrapped in >>> <<<."""
    pattern = linear_regex(query, ignore_case=ignore_case, literal=not is_regex)
    limit = max(1, max_matches)
    matches = [(n, line) for n, line in enumerate(text.splitlines(), start=1) if pattern.search(line)][:limit]
    if not matches:
        return f"No matches found for '{query}' in {path}"
    lines = [f"Found {len(matches)} match(es) for '{query}' in {path}:\n"]
    lines += [f"{n:4d} | {pattern.sub(lambda m: f'>>>{m.group()}<<<', line)}" for n, line in matches]
    if len(matches) >= limit:
        lines.append(f"\n(Showing first {limit} matches only)")
    return "\n".join(lines)


@functools.cache
def native_tools() -> dict[str, Any]:
    """name -> Strands tool for every native tool we provide locally (built once per process)."""
    from strands import tool

    # the two tools that only compute are coroutines: Strands awaits them on the invocation's loop instead of
    # handing each call to a pool thread and back (`asyncio.to_thread`), which cost more than the call itself
    @tool
    async def calculator(expression: str) -> str:
        """Evaluate an arithmetic expression (+, -, *, /, //, %, ** and parentheses) and return the result.

        Args:
            expression: The arithmetic expression, for example "(2 + 3) * 4".
        """
        try:
            return str(evaluate_arithmetic(expression))
        except (ValueError, ZeroDivisionError, OverflowError, SyntaxError) as exc:
            raise ValueError(f"cannot evaluate {expression!r}: {exc}") from None

    @tool(context=True)
    async def current_time(tool_context: Any, timezone: str = "UTC") -> str:
        """Return the current date and time in ISO 8601 format.

        Args:
            timezone: Only "UTC" is supported.
        """
        return _environment(tool_context).clock().astimezone(_dt.timezone.utc).isoformat()

    @tool(context=True)
    def file_read(path: str, tool_context: Any) -> str:
        """Read a UTF-8 text file and return its contents.

        Args:
            path: The file to read.
        """
        return _read_text(_environment(tool_context), path)

    @tool(context=True)
    def file_write(path: str, content: str, tool_context: Any) -> str:
        """Write UTF-8 text to a file, replacing it atomically.

        Args:
            path: The file to write.
            content: The text to write.
        """
        environment = _environment(tool_context)
        target = _confined(environment, path, writing=True)
        environment.fileops.makedirs(target.parent)
        environment.fileops.write_atomic(target, content.encode("utf-8"))
        return f"wrote {len(content.encode('utf-8'))} bytes to {path}"

    @tool(context=True)
    def head(path: str, tool_context: Any, lines: int = 10) -> str:
        """Return the first lines of a text file.

        Args:
            path: The file to read.
            lines: How many lines.
        """
        return "\n".join(_read_text(_environment(tool_context), path).splitlines()[: max(lines, 0)])

    @tool(context=True)
    def tail(path: str, tool_context: Any, lines: int = 10) -> str:
        """Return the last lines of a text file.

        Args:
            path: The file to read.
            lines: How many lines.
        """
        return "\n".join(_read_text(_environment(tool_context), path).splitlines()[-max(lines, 1) :])

    @tool(context=True)
    def grep(pattern: str, path: str, tool_context: Any) -> str:
        """Return the lines of a text file that match a regular expression.

        Args:
            pattern: The regular expression (RE2 syntax: no backreferences or look-around).
            path: The file to search.
        """
        regex = linear_regex(pattern)
        text = _read_text(_environment(tool_context), path)
        return "\n".join(line for line in text.splitlines() if regex.search(line))

    @tool(context=True)
    def spec_verify(spec_content: str, tool_context: Any) -> str:
        """Validate a strands workflow spec given as YAML text; return "valid" or the first error.

        Args:
            spec_content: The spec's YAML text.
        """
        from strands_durable.errors import SpecError
        from strands_durable.spec import load_spec_text

        try:
            loaded = load_spec_text(spec_content, source_path=Path("spec_verify.yaml"))
        except SpecError as exc:
            return f"invalid: {exc.detail}"
        return f"valid {loaded.pattern.type} workflow '{loaded.name}'"

    @tool(context=True)
    def search(
        query: str,
        path: str,
        tool_context: Any,
        is_regex: bool = False,
        ignore_case: bool = True,
        max_matches: int = 50,
    ) -> str:
        """Search a text file for a keyword or regular expression; return the matching lines with line numbers.

        Args:
            query: The text (or regular expression) to find.
            path: The file to search.
            is_regex: Read the query as a regular expression.
            ignore_case: Match regardless of case.
            max_matches: At most this many matches.
        """
        return search_text(
            _read_text(_environment(tool_context), path), query, path, is_regex, ignore_case, max_matches
        )

    @tool(context=True)
    def python_exec(code: str, tool_context: Any, timeout: int = 5) -> str:
        """Execute Python code (a restricted set of builtins, no imports) and return what it prints.

        Args:
            code: The Python code to execute.
            timeout: Seconds before the execution is stopped.
        """
        from strands_durable.runner.python_exec import run_python

        environment = _environment(tool_context)
        if environment.scratch_dir is not None:
            environment.fileops.makedirs(environment.scratch_dir)
        return run_python(code, timeout_s=timeout, cwd=environment.scratch_dir)

    @tool(name="Skill", context=True)
    def skill(skill_id: str, tool_context: Any) -> str:
        """Load the detailed instructions of a skill from the Available Skills list, or one of its modules.

        Args:
            skill_id: The skill's id, or skill-id/module to load one module (e.g. strands-spec/patterns).
        """
        from strands_durable.runner.skills import load_skill

        return load_skill(_environment(tool_context).skills, skill_id)

    tools = [calculator, current_time, file_read, file_write, head, tail, grep, search, spec_verify, python_exec, skill]
    return {t.tool_name: t for t in tools}


# tools of strands-cli's native list that need the network, and where ours come from
NETWORK_TOOLS = {
    "http_request": "strands_tools.http_request",
    "web_fetch": "strands_durable.runner.web_tools:web_fetch",
    "duckduckgo_search": "strands_durable.runner.web_tools:duckduckgo_search",
    "tavily_search": "strands_tools.tavily",
}
