"""The fault classes this package ships, by name, with the module declaring each: data alone, so `strands chaos
--help` names them without importing the kit (`registry.py` turns a name into its class)."""

from __future__ import annotations

# one line each (name -> the module declaring its `FaultClass` as FAULT_CLASS)
BUILT_IN: dict[str, str] = {
    "interrupt": "strands_durable.faults.classes.interrupt",
    "kill": "strands_durable.faults.classes.kill",
    "power": "strands_durable.faults.classes.power",
    "disk": "strands_durable.faults.classes.disk",
    "concurrent": "strands_durable.faults.classes.concurrent",
    "stream": "strands_durable.faults.classes.stream",
    "compound": "strands_durable.faults.classes.compound",
    "hostile": "strands_durable.faults.classes.hostile",
}
FAULT_CLASSES = tuple(BUILT_IN)
