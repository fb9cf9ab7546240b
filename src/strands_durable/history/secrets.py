"""Secrets in stored text: every form in which a secret's value can be echoed into text we store is replaced by
`[REDACTED]`, and `find_secret_echoes` says where one still is (the chaos judge's secret-echo check).

The forms, for a secret and for the secret stripped of surrounding whitespace: raw; Python `repr` (of the text
and of its UTF-8 bytes: `'tok\\n'`, `b'Bearer tok\\n'`); JSON-escaped (ASCII-only and not, each with and without
escaped slashes: `sk-live\\/Ab12`); URL-encoded (`quote` with and without `/` kept, `quote_plus`). What cannot be
caught: a secret shorter than `MIN_SECRET_CHARS` (it would match ordinary text; the HTTP executors refuse to send
one), and echoes that transform it otherwise (base64 or another encoding, hashing, a secret split across texts
or interleaved with other characters, case changes). Pure functions; a message is changed in place only by
`redact_secrets_in_place`.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, quote_plus

REDACTED = "[REDACTED]"
MIN_SECRET_CHARS = 4
"""A secret shorter than this (once stripped of surrounding whitespace) is never redacted."""


def secret_forms(secret: str) -> dict[str, str]:
    """form name -> the text of that form of `secret` (empty when the secret is too short to redact). Forms that
    equal another are listed once, under the first name."""
    forms: dict[str, str] = {}
    for prefix, value in (("", secret), ("stripped ", secret.strip())):
        if len(value.strip()) < MIN_SECRET_CHARS:
            continue
        json_ascii = json.dumps(value)[1:-1]
        json_text = json.dumps(value, ensure_ascii=False)[1:-1]
        candidates = {
            "raw": value,
            "repr": repr(value)[1:-1],
            "bytes repr": repr(value.encode("utf-8"))[2:-1],
            "JSON": json_ascii,
            "JSON (unicode)": json_text,
            "JSON (escaped slashes)": json_ascii.replace("/", "\\/"),
            "JSON (unicode, escaped slashes)": json_text.replace("/", "\\/"),
            "URL-encoded": quote(value, safe=""),
            "URL-encoded (slashes kept)": quote(value),
            "URL-encoded (plus for space)": quote_plus(value),
        }
        for name, text in candidates.items():
            if text not in forms.values():
                forms[prefix + name] = text
    return forms


@functools.lru_cache(maxsize=64)
def _pattern(secrets: tuple[str, ...]) -> re.Pattern[str] | None:
    texts = {text for secret in secrets for text in secret_forms(secret).values()}
    if not texts:
        return None
    return re.compile("|".join(re.escape(text) for text in sorted(texts, key=len, reverse=True)))


def redact_secrets(value: Any, secrets: Iterable[str]) -> Any:
    """`value` with every form of every secret replaced by [REDACTED] in every string inside it (dict keys and
    values, lists, tuples); other values as they are."""
    pattern = _pattern(tuple(sorted(set(secrets))))
    return value if pattern is None else _redacted(value, pattern)


def _redacted(value: Any, pattern: re.Pattern[str]) -> Any:
    if isinstance(value, str):
        return pattern.sub(REDACTED, value)
    if isinstance(value, dict):
        return {_redacted(k, pattern): _redacted(v, pattern) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_redacted(v, pattern) for v in value)
    return value


def redact_secrets_in_place(value: dict[str, Any] | list[Any], secrets: Iterable[str]) -> None:
    """Replace every form of every secret in the strings of a message (or any dict or list) in place, so that
    what a live agent holds equals what a resumed one reads back."""
    pattern = _pattern(tuple(sorted(set(secrets))))
    if pattern is not None:
        _redact_in_place(value, pattern)


def _redact_in_place(value: dict[str, Any] | list[Any], pattern: re.Pattern[str]) -> None:
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, item in list(items):
        if isinstance(item, str):
            value[key] = pattern.sub(REDACTED, item)  # type: ignore[index]
        elif isinstance(item, (dict, list)):
            _redact_in_place(item, pattern)


@dataclass(frozen=True)
class SecretEcho:
    """A declared secret found in stored text: where, which secret (by name, never its value) and in which form."""

    where: str
    secret: str
    form: str

    def describe(self) -> str:
        return f"{self.where} holds secret {self.secret} ({self.form})"


def find_secret_echoes(stored: Mapping[str, str | bytes], secrets: Mapping[str, str]) -> list[SecretEcho]:
    """Every (stored text, secret, form) where a form of a declared secret occurs; `stored` maps a name (a file,
    a record) to its text or bytes (decoded as UTF-8), `secrets` a secret's name to its value. A secret too
    short to redact is not looked for. One echo per text and secret: its longest form found."""
    echoes = []
    for where, content in sorted(stored.items()):
        text = content.decode("utf-8", errors="replace") if isinstance(content, bytes) else content
        for name, value in sorted(secrets.items()):
            forms = sorted(secret_forms(value).items(), key=lambda item: len(item[1]), reverse=True)
            found = next((form for form, form_text in forms if form_text in text), None)
            if found is not None:
                echoes.append(SecretEcho(where, name, found))
    return echoes


__all__ = [
    "MIN_SECRET_CHARS",
    "REDACTED",
    "SecretEcho",
    "find_secret_echoes",
    "redact_secrets",
    "redact_secrets_in_place",
    "secret_forms",
]
