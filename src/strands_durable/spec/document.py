"""Parse spec bytes (YAML or JSON) into plain data, safely and within limits, with the line of every key.

The limits stop hostile or broken files before they cost memory: file size, nesting depth, and the number of
values after alias expansion (a "billion laughs" document is refused, not expanded). Duplicate keys are an
error rather than a silent override.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from typing import Any

import yaml

from strands_durable.errors import SpecError

MAX_BYTES = 1024 * 1024
"""Largest spec file accepted (1 MiB; the biggest real spec is about 30 KiB)."""
MAX_DEPTH = 64
"""Deepest nesting of mappings and sequences accepted."""
MAX_VALUES = 100_000
"""Most values (scalars, mappings, sequences) a document may expand to, aliases counted each time used."""

KeyPath = tuple[str | int, ...]
_PLAIN_KEY = re.compile(r"^[A-Za-z0-9_$:-]+$")


def format_key_path(path: KeyPath) -> str:
    """`('pattern', 'config', 'steps', 0, 'agent')` -> `pattern.config.steps[0].agent`."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        elif _PLAIN_KEY.match(part):
            text += f".{part}" if text else part
        else:
            text += f"[{part!r}]"
    return text


@dataclass
class Document:
    """Parsed spec data plus the line (1-based) where each key path starts, where known."""

    data: Any
    lines: dict[KeyPath, int] = field(default_factory=dict)
    text_lines: dict[KeyPath, int] = field(default_factory=dict)
    """For each text value: the line its text starts on (the line after `|` or `>` for a block)."""

    def line_in_text(self, path: KeyPath, text_line: int) -> int | None:
        """The file line of line `text_line` (1-based) of the text value at `path`, when known."""
        start = self.text_lines.get(path)
        return None if start is None else start + text_line - 1

    def line_of(self, path: KeyPath) -> int | None:
        """The line of `path`, or of its nearest ancestor that has one."""
        for end in range(len(path), -1, -1):
            line = self.lines.get(tuple(path[:end]))
            if line is not None:
                return line
        return None


def check_size(size: int, file: str) -> None:
    if size > MAX_BYTES:
        raise SpecError(file, f"file is {size} bytes; specs are limited to {MAX_BYTES} bytes")


def parse_document(raw: bytes, *, file: str, json_format: bool) -> Document:
    """Parse `raw` as JSON (when `json_format`) or YAML; any failure is a SpecError naming `file`."""
    check_size(len(raw), file)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SpecError(file, f"not UTF-8 text (byte {exc.start})") from None
    if json_format:
        return _parse_json(text, file)
    return _YamlBuilder(text, file).build()


def _parse_json(text: str, file: str) -> Document:
    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in items:
            if key in out:
                raise SpecError(file, f"duplicate key '{key}'")
            out[key] = value
        return out

    try:
        data = json.loads(text, object_pairs_hook=pairs)
    except json.JSONDecodeError as exc:
        raise SpecError(file, f"invalid JSON: {exc.msg} (column {exc.colno})", line=exc.lineno) from None
    except RecursionError:
        raise SpecError(file, f"nesting deeper than {MAX_DEPTH} levels") from None
    except ValueError:  # a number too long to convert: the YAML reading of the same text names its key
        _YamlBuilder(text, file).build()
        raise SpecError(file, f"an integer longer than {sys.get_int_max_str_digits()} digits") from None
    _check_depth(data, file)
    try:  # JSON is (nearly) YAML: borrow the YAML node tree for line numbers when it parses
        lines = _YamlBuilder(text, file).build().lines
    except SpecError:
        lines = {}
    return Document(data, lines)


def _check_depth(data: Any, file: str) -> None:
    stack: list[tuple[Any, int]] = [(data, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict | list):
            if depth >= MAX_DEPTH:
                raise SpecError(file, f"nesting deeper than {MAX_DEPTH} levels")
            children = value.values() if isinstance(value, dict) else value
            stack.extend((child, depth + 1) for child in children)


def _mark_line(mark: Any) -> int | None:
    return None if mark is None else mark.line + 1


class _YamlBuilder:
    """Builds Python data from the YAML node tree itself, counting values and recording key lines."""

    def __init__(self, text: str, file: str) -> None:
        self.text = text
        self.file = file
        self.lines: dict[KeyPath, int] = {}
        self.text_lines: dict[KeyPath, int] = {}
        self.count = 0
        self.pair_cache: dict[int, list[tuple]] = {}

    def fail(self, detail: str, mark: Any = None) -> SpecError:
        return SpecError(self.file, detail, line=_mark_line(mark))

    def build(self) -> Document:
        loader = _RecordedEvents(self._checked_events())
        try:
            node = loader.get_single_node()
            if node is None:
                raise self.fail("the file is empty; a spec is a mapping")
            self.lines[()] = node.start_mark.line + 1
            data = self._value(loader, node, (), 0)
        except yaml.MarkedYAMLError as exc:
            raise self._yaml_error(exc) from None
        except yaml.YAMLError as exc:
            raise self.fail(f"invalid YAML: {exc}") from None
        finally:
            loader.dispose()
        return Document(data, self.lines, self.text_lines)

    def _yaml_error(self, exc: yaml.MarkedYAMLError) -> SpecError:
        mark = exc.problem_mark or exc.context_mark
        detail = f"invalid YAML: {exc.problem or exc.context or 'cannot parse'}"
        if exc.context and exc.problem and exc.context_mark is not None:
            detail += f" ({exc.context} on line {exc.context_mark.line + 1})"
        return self.fail(detail, mark)

    def _checked_events(self) -> list[yaml.Event]:
        """The document's parse events, the whole text parsed once; deep nesting is refused here, before
        composing (the composer recurses once per level), and `build` composes from these same events."""
        events: list[yaml.Event] = []
        depth = 0
        try:
            for event in yaml.parse(self.text, Loader=yaml.SafeLoader):
                if isinstance(event, yaml.CollectionStartEvent):
                    depth += 1
                    if depth > MAX_DEPTH:
                        raise self.fail(f"nesting deeper than {MAX_DEPTH} levels", event.start_mark)
                elif isinstance(event, yaml.CollectionEndEvent):
                    depth -= 1
                events.append(event)
        except yaml.MarkedYAMLError as exc:
            raise self._yaml_error(exc) from None
        except yaml.YAMLError as exc:
            raise self.fail(f"invalid YAML: {exc}") from None
        return events

    def _value(self, loader: _RecordedEvents, node: yaml.Node, path: KeyPath, depth: int) -> Any:
        self.count += 1
        if self.count > MAX_VALUES:
            raise self.fail(f"more than {MAX_VALUES} values after expanding aliases (an alias bomb?)", node.start_mark)
        if depth > MAX_DEPTH:
            raise self.fail(f"nesting deeper than {MAX_DEPTH} levels (a recursive alias?)", node.start_mark)
        if isinstance(node, yaml.MappingNode):
            return self._mapping(loader, node, path, depth)
        if isinstance(node, yaml.SequenceNode):
            if node.tag not in ("tag:yaml.org,2002:seq",):
                raise self.fail(f"unsupported tag {node.tag}", node.start_mark)
            items = []
            for index, child in enumerate(node.value):
                item_path = (*path, index)
                self.lines.setdefault(item_path, child.start_mark.line + 1)
                items.append(self._value(loader, child, item_path, depth + 1))
            return items
        if node.tag == "tag:yaml.org,2002:str":
            block = 1 if node.style in ("|", ">") else 0
            self.text_lines.setdefault(path, node.start_mark.line + 1 + block)
        return self._scalar(loader, node, path)

    def _scalar(self, loader: _RecordedEvents, node: yaml.Node, path: KeyPath) -> Any:
        """A scalar's value; a number too long to convert (Python refuses integers of more than
        `sys.get_int_max_str_digits()` digits) is a SpecError naming its key."""
        try:
            return loader.construct_object(node, deep=True)
        except ValueError as exc:
            text = str(node.value)
            if node.tag == "tag:yaml.org,2002:int":
                limit = sys.get_int_max_str_digits()
                detail = f"an integer of {len(text)} characters (integers are limited to {limit} digits)"
            else:
                detail = f"cannot read {text[:40]!r}{'...' if len(text) > 40 else ''}: {exc}"
            key = format_key_path(path) or None
            raise SpecError(self.file, detail, key_path=key, line=_mark_line(node.start_mark)) from None

    def _mapping(self, loader: _RecordedEvents, node: yaml.MappingNode, path: KeyPath, depth: int) -> Any:
        out: dict[Any, Any] = {}
        for key, key_node, value_node in self._pairs(loader, node, set()):
            key_path = (*path, key if isinstance(key, str) else str(key))
            self.lines.setdefault(key_path, key_node.start_mark.line + 1)
            out[key] = self._value(loader, value_node, key_path, depth + 1)
        return out

    def _pairs(self, loader: _RecordedEvents, node: yaml.MappingNode, seen: set[int]) -> list[tuple]:
        """(key, key node, value node) of a mapping: its own keys, then `<<` merged keys it lacks.

        Merged keys are deduplicated as they are collected, so merging one mapping many times costs no
        more than merging it once (PyYAML's own flattening would multiply them).
        """
        if node.tag != "tag:yaml.org,2002:map":
            raise self.fail(f"unsupported tag {node.tag}", node.start_mark)
        cached = self.pair_cache.get(id(node))
        if cached is not None:
            return cached
        if id(node) in seen:
            raise self.fail("a mapping merges itself (recursive `<<` alias)", node.start_mark)
        seen = seen | {id(node)}
        own: dict[Any, tuple] = {}
        merged: list[yaml.Node] = []
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
                for source in sources:
                    if not isinstance(source, yaml.MappingNode):
                        raise self.fail("`<<` merges mappings only", source.start_mark)
                    merged.append(source)
                continue
            if not isinstance(key_node, yaml.ScalarNode):
                raise self.fail("a mapping key must be a plain value", key_node.start_mark)
            key = self._scalar(loader, key_node, ())
            try:
                duplicate = key in own
            except TypeError:
                raise self.fail("a mapping key must be a plain value", key_node.start_mark) from None
            if duplicate:
                raise self.fail(f"duplicate key '{key}'", key_node.start_mark)
            own[key] = (key, key_node, value_node)
        pairs = list(own.values())
        for source in merged:
            for entry in self._pairs(loader, source, seen):
                if entry[0] not in own:
                    own[entry[0]] = entry
                    pairs.append(entry)
        self.pair_cache[id(node)] = pairs
        return pairs


__all__ = ["MAX_BYTES", "MAX_DEPTH", "MAX_VALUES", "Document", "KeyPath", "format_key_path", "parse_document"]


class _RecordedEvents(yaml.composer.Composer, yaml.constructor.SafeConstructor, yaml.resolver.Resolver):
    """PyYAML's safe loader without its reader, scanner and parser: composes nodes (and constructs scalars) from
    events already parsed, in the order the parser gave them, so the composer's errors are the same as when it
    pulls them from a parser of its own."""

    def __init__(self, events: list[yaml.Event]) -> None:
        yaml.composer.Composer.__init__(self)
        yaml.constructor.SafeConstructor.__init__(self)
        yaml.resolver.Resolver.__init__(self)
        self.events = events
        self.next = 0

    def check_event(self, *choices: type[yaml.Event]) -> bool:
        if self.next >= len(self.events):
            return False
        return not choices or isinstance(self.events[self.next], choices)

    def peek_event(self) -> yaml.Event | None:
        return self.events[self.next] if self.next < len(self.events) else None

    def get_event(self) -> yaml.Event | None:
        event = self.peek_event()
        self.next += 1
        return event

    def dispose(self) -> None:
        self.events = []
