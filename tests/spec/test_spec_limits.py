"""Hostile or broken files are refused cheaply: size, alias bombs, deep nesting, unsafe tags, duplicates."""

from __future__ import annotations

import time

import pytest

from strands_durable.errors import SpecError
from strands_durable.spec import load_spec
from strands_durable.spec.document import MAX_BYTES, MAX_DEPTH, parse_document


def refused(path) -> SpecError:
    with pytest.raises(SpecError) as info:
        load_spec(path)
    return info.value


def test_oversize_file_is_refused_before_parsing(write_spec):
    path = write_spec("name: x\n" + "# padding\n" * (MAX_BYTES // 10 + 1))
    assert "limited to" in refused(path).detail


def test_alias_bomb_is_refused_quickly(write_spec):
    lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    for previous, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{previous}"] * 9) + "]")
    started = time.monotonic()
    error = refused(write_spec("\n".join(lines) + "\n"))
    assert "alias" in error.detail
    assert time.monotonic() - started < 5


def test_merge_key_bomb_is_not_multiplied(write_spec):
    lines = ["a0: &a0 {k: 1}"]
    for level in range(1, 30):
        lines.append(f"a{level}: &a{level} {{<<: [" + ", ".join([f"*a{level - 1}"] * 9) + "]}")
    document = parse_document("\n".join(lines).encode(), file="m.yaml", json_format=False)
    assert document.data["a29"] == {"k": 1}


def test_merge_keys_let_own_keys_win(write_spec):
    text = b"base: &base {a: 1, b: 2}\nderived:\n  <<: *base\n  b: 3\n"
    assert parse_document(text, file="m.yaml", json_format=False).data["derived"] == {"a": 1, "b": 3}


def test_deep_nesting_is_refused(write_spec):
    error = refused(write_spec("x: " + "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5) + "\n"))
    assert "nesting deeper" in error.detail and error.line == 1


def test_very_deep_nesting_does_not_overflow_the_stack(write_spec):
    assert "nesting deeper" in refused(write_spec("[" * 200_000)).detail


def test_deep_json_is_refused(write_spec):
    assert "nesting deeper" in refused(write_spec("[" * 100 + "]" * 100, "deep.json")).detail


def test_recursive_alias_is_refused(write_spec):
    assert "nesting deeper" in refused(write_spec("a: &a [*a]\n")).detail


def test_python_tags_are_refused(write_spec):
    error = refused(write_spec("a: !!python/object/apply:os.system ['true']\n"))
    assert "tag" in error.detail and "python/object" in error.detail and error.line == 1


def test_duplicate_keys_are_refused(write_spec):
    error = refused(write_spec("name: a\nname: b\n"))
    assert (error.detail, error.line) == ("duplicate key 'name'", 2)


def test_not_utf8_is_refused(write_spec, tmp_path):
    path = tmp_path / "latin1.yaml"
    path.write_bytes("name: caf\xe9\n".encode("latin-1"))
    assert "UTF-8" in refused(path).detail
