"""A YAML spec's text is scanned and parsed once: the depth check and the composer read the same events
(spec/document.py), with the same errors and lines as when each parsed the text itself (test_spec_errors.py,
test_spec_limits.py)."""

from __future__ import annotations

import pytest
import yaml

from strands_durable.errors import SpecError
from strands_durable.spec.document import MAX_DEPTH, parse_document
from tests.plugin.support import RESEARCH


def _tokens_scanned(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    scanned = [0]
    get_token = yaml.scanner.Scanner.get_token

    def counted(self: yaml.scanner.Scanner) -> object:
        token = get_token(self)
        scanned[0] += token is not None
        return token

    monkeypatch.setattr(yaml.scanner.Scanner, "get_token", counted)
    return scanned


def test_a_yaml_spec_is_scanned_once(monkeypatch: pytest.MonkeyPatch) -> None:
    raw = RESEARCH.read_bytes()
    tokens = len(list(yaml.scan(raw.decode())))
    scanned = _tokens_scanned(monkeypatch)
    document = parse_document(raw, file=RESEARCH.name, json_format=False)
    assert scanned[0] == tokens
    assert document.data == yaml.safe_load(raw)
    pattern_line = next(n for n, line in enumerate(raw.decode().splitlines(), 1) if line.startswith("pattern:"))
    assert document.line_of(("pattern",)) == pattern_line


def test_the_composers_own_errors_come_after_the_whole_text_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    """An undefined alias (the composer's error) before a syntax error further down (the parser's): the parser's
    is reported, as when the depth check parsed the whole text before composing."""
    with pytest.raises(SpecError) as info:
        parse_document(b"a: *missing\nb: [1, 2\n", file="s.yaml", json_format=False)
    assert info.value.line == 3 and "invalid YAML" in info.value.detail
    with pytest.raises(SpecError, match="undefined alias"):
        parse_document(b"a: *missing\nb: [1, 2]\n", file="s.yaml", json_format=False)
    with pytest.raises(SpecError, match=f"nesting deeper than {MAX_DEPTH}"):
        parse_document(b"a: *missing\nb: " + b"[" * 70 + b"]" * 70 + b"\n", file="s.yaml", json_format=False)
