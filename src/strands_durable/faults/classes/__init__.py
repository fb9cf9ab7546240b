"""The fault classes, one module each behind `FaultClass` (interrupt, kill, power, disk, concurrent, stream,
compound, with the explorers and disk models they need), and the registry that names them (`registry.py`; another
package adds a class through the `strands_durable.fault_classes` entry-point group). Imports only the kit."""
