"""The disk model tears a long append in its middle (issue 39, item 2): every sector of the record lands but one,
which reads as zeros, so the record is complete and newline-terminated yet fails its checksum. After a power cut
(a new boot) the store must cut it as a torn tail and resume; on the boot that wrote it, the same bytes would be a
committed record damaged, which the store refuses (exit 17) instead of dropping."""

from __future__ import annotations

from pathlib import Path

import pytest

from strands_durable import LocalStore
from strands_durable.faults.classes import power
from strands_durable.faults.classes.disk_model import SECTOR, DiskModel, crash_states
from strands_durable.faults.classes.power import explore_power
from strands_durable.faults.classes.recording import Op
from strands_durable.faults.kit.target import ChaosTarget
from tests.faults.conftest import describe

pytestmark = pytest.mark.slow


def test_an_unsynced_long_append_may_land_whole_but_for_a_middle_sector(tmp_path: Path) -> None:
    log = tmp_path / "j"
    record = b"x" * (3 * SECTOR) + b"\n"
    model = DiskModel(tmp_path)
    ops = [Op("create", log), Op("fsync_dir", tmp_path), Op("append", log, data=b"one\n"), Op("fdatasync", log)]
    for index, op in enumerate([*ops, Op("append", log, data=record)]):
        model.apply(index, op)
    states = {state.kind: state.files[log] for state in crash_states(model, 99)}
    torn = states["torn-middle"]
    assert len(torn) == 4 + len(record) and torn.endswith(b"x\n")  # complete, newline and all
    assert torn[SECTOR : 2 * SECTOR] == bytes(SECTOR)  # the first whole sector after the append's first byte
    assert torn.replace(bytes(SECTOR), b"x" * SECTOR) == b"one\n" + record
    short = DiskModel(tmp_path / "short")
    for index, op in enumerate(
        [Op("create", log), Op("fsync_dir", tmp_path), Op("append", log, data=b"x" * SECTOR + b"\n")]
    ):
        short.apply(index, op)
    assert "torn-middle" not in {state.kind for state in crash_states(short, 99)}  # no sector strictly inside


LONG_ANSWER = """\
version: 0
name: long-answer
runtime: {{provider: synthetic}}
agents:
  writer:
    prompt: You summarise long notes.
pattern:
  type: chain
  config:
    steps:
      - agent: writer
        input: Draft a note.
      - type: hitl
        prompt: Your notes?
        default: "{notes}"
      - agent: writer
        input: "Summarise: {{{{ hitl_response }}}}"
"""


def test_a_record_torn_in_its_middle_is_a_torn_tail_after_the_cut_and_corruption_on_its_own_boot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the human's answer (the HITL default under chaos) is committed in one record of several sectors, and a status
    # change waits for it: at that fdatasync it is the last write, the one a power cut can tear in its middle
    spec = tmp_path / "long.strands.yaml"
    spec.write_text(LONG_ANSWER.format(notes="the tide comes in and goes out " * 100), encoding="utf-8")
    target = ChaosTarget(spec)
    rebooted = explore_power(target, tmp_path / "rebooted")
    assert not rebooted.findings, describe(rebooted.findings)
    # the same states opened on the boot that wrote them: a complete line failing its checksum is refused
    monkeypatch.setattr(power, "after_power_cut", lambda sessions: LocalStore(sessions))
    same_boot = explore_power(target, tmp_path / "same-boot")
    middle = [f for f in same_boot.findings if f.variant == "torn-middle"]
    assert middle, describe(same_boot.findings)
    assert all(f.rule == "needs-repair" and "is complete but fails its checksum" in f.detail for f in middle), describe(
        middle
    )
