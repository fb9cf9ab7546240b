"""The fault classes, one module each behind `FaultClass` (named in `names.py`, with the explorers and disk models
they need), and the registry that turns a name into its class (`registry.py`; another package adds a class through
the `strands_durable.fault_classes` entry-point group). Imports only the kit."""
