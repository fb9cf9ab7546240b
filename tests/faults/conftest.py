"""Shared fixtures of the real-fault tests: the example workflow, one golden run per session, broken stores."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from strands_durable.faults.kit.golden import WorkflowGoldenRun
from strands_durable.faults.kit.runs import run_golden
from strands_durable.faults.kit.target import ChaosTarget
from tests.conftest import EXAMPLES

CHAIN = EXAMPLES / "chain-research.strands.yaml"


@pytest.fixture(autouse=True)
def _quiet_sdk_logs():
    """Injected failures make the SDK log errors; the harness judges outcomes, so keep the output readable."""
    logging.disable(logging.CRITICAL)
    yield
    logging.disable(logging.NOTSET)


@pytest.fixture(scope="session")
def chain_target() -> ChaosTarget:
    return ChaosTarget(CHAIN)


@pytest.fixture(scope="session")
def chain_golden(chain_target: ChaosTarget, tmp_path_factory: pytest.TempPathFactory) -> WorkflowGoldenRun:
    return run_golden(chain_target, tmp_path_factory.mktemp("golden"))


def rules(findings) -> set[str]:
    return {f.rule for f in findings}


def describe(findings) -> str:
    return "\n".join(str(f) for f in findings[:10])


def workdir(tmp_path: Path) -> Path:
    return tmp_path / "work"
