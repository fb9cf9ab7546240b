"""Secrets in stored text: each form a secret's echo can take (raw, Python repr, JSON-escaped with and without
escaped slashes, URL-encoded, stripped of surrounding whitespace) is redacted, and `find_secret_echoes` (the chaos
judge's secret-echo check) finds each one by the secret's name; what cannot be caught is pinned here too."""

from __future__ import annotations

import base64
import json
from urllib.parse import quote, quote_plus

import pytest

from strands_durable.history.secrets import (
    MIN_SECRET_CHARS,
    REDACTED,
    find_secret_echoes,
    redact_secrets,
    redact_secrets_in_place,
)

SECRET = "sk-live/Ab12+Zq9=é"
PADDED = "  tok/Padded-9x\n"

ECHOES = {
    "raw": f"token={SECRET};",
    "repr": f"value {SECRET!r} refused",
    "bytes repr": f"Illegal header value {('Bearer ' + SECRET).encode()!r}",
    "JSON": json.dumps({"echo": SECRET}),
    "JSON (unicode)": json.dumps({"echo": SECRET}, ensure_ascii=False),
    "JSON (escaped slashes)": json.dumps({"echo": SECRET}).replace("/", "\\/"),
    "JSON (unicode, escaped slashes)": json.dumps({"echo": SECRET}, ensure_ascii=False).replace("/", "\\/"),
    "URL-encoded": f"https://x.test/?k={quote(SECRET, safe='')}",
    "URL-encoded (slashes kept)": f"https://x.test/{quote(SECRET)}",
    "URL-encoded (plus for space)": f"q={quote_plus(SECRET + ' more')}",
}


@pytest.mark.parametrize("form", sorted(ECHOES))
def test_every_stored_form_of_a_secret_is_redacted(form):
    text = ECHOES[form]
    redacted = redact_secrets({"content": [{"text": text}]}, [SECRET])["content"][0]["text"]
    assert REDACTED in redacted
    assert find_secret_echoes({"file": redacted}, {"API_TOKEN": SECRET}) == []
    (echo,) = find_secret_echoes({"file": text}, {"API_TOKEN": SECRET})
    assert (echo.where, echo.secret) == ("file", "API_TOKEN") and SECRET not in echo.describe()


def test_a_secret_with_surrounding_whitespace_is_redacted_stripped_too():
    text = "Illegal header value b'Bearer tok/Padded-9x\\n' and json " + json.dumps("tok/Padded-9x").replace("/", "\\/")
    assert find_secret_echoes({"journal": text}, {"T": PADDED})
    assert redact_secrets(text, [PADDED]) == f"Illegal header value b'Bearer {REDACTED}\\n' and json \"{REDACTED}\""
    assert find_secret_echoes({"journal": redact_secrets(text, [PADDED]).encode()}, {"T": PADDED}) == []


def test_redaction_in_place_reaches_every_string_of_a_message():
    message = {
        "role": "assistant",
        "content": [{"text": f"it is {SECRET}"}, {"toolUse": {"toolUseId": "t1", "name": "x", "input": {"q": SECRET}}}],
    }
    redact_secrets_in_place(message, [SECRET])
    assert find_secret_echoes({"message": json.dumps(message)}, {"S": SECRET}) == []
    assert message["content"][1]["toolUse"]["input"]["q"] == REDACTED


def test_what_cannot_be_caught_is_documented_and_left_alone():
    short = "a" * (MIN_SECRET_CHARS - 1)
    assert redact_secrets(f"x{short}x", [short]) == f"x{short}x"  # too short: it would match ordinary text
    assert find_secret_echoes({"f": short}, {"S": short}) == []
    encoded = base64.b64encode(SECRET.encode()).decode()
    split = f"{SECRET[:6]} ... {SECRET[6:]}"
    assert redact_secrets([encoded, split], [SECRET]) == [encoded, split]  # base64 and split echoes stay


def test_no_secrets_leave_values_untouched():
    value = {"a": ["b", 1, None]}
    assert redact_secrets(value, []) is value
