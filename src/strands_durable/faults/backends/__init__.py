"""The durability gate for any Strands session backend (a SessionManager, SessionRepository or Storage):

    from strands_durable.faults.backends import run_backend_gate, GateContext, BackendReport

    report = run_backend_gate(my_factory)      # my_factory(ctx: GateContext) -> the backend
    print(report.table()); report.as_json()

Imports the fault kit's wings (kit/, classes/, agents/) and nothing above them. docs/backends.md explains it.
"""

from strands_durable.faults.backends.context import GateContext
from strands_durable.faults.backends.gate import run_backend_gate
from strands_durable.faults.backends.report import BackendReport

__all__ = ["BackendReport", "GateContext", "run_backend_gate"]
