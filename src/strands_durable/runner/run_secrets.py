"""Which values are a run's secrets: the spec's `env.secrets` (source `env`, read from the environment) and the
environment variables named like credentials (API keys, tokens, passwords). They are redacted from every text
the run stores or exports (`history/secrets.py` says in which forms) and kept out of `python_exec`."""

from __future__ import annotations

import os
from typing import Any

CREDENTIAL_NAME_ENDINGS = ("API_KEY", "_TOKEN", "_SECRET", "SECRET_ACCESS_KEY", "PASSWORD", "SESSION_TOKEN")


def secret_variables(spec: Any) -> dict[str, str]:
    """Placeholder name -> environment variable, from `env.secrets` (a name without an entry is its own variable)."""
    secrets = spec.env.secrets if spec is not None and spec.env is not None else []
    return {secret.name or secret.key: secret.key for secret in secrets if secret.source == "env"}


def is_credential_name(name: str) -> bool:
    """Whether an environment variable's name says it holds a credential."""
    return name.upper().endswith(CREDENTIAL_NAME_ENDINGS)


def secret_values(spec: Any) -> list[str]:
    """The values of the run's secrets that are set (the spec's `env.secrets` and credential-named variables)."""
    names = set(secret_variables(spec).values()) | {name for name in os.environ if is_credential_name(name)}
    return [os.environ[name] for name in sorted(names) if os.environ.get(name)]


__all__ = ["CREDENTIAL_NAME_ENDINGS", "is_credential_name", "secret_values", "secret_variables"]
