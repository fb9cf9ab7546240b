"""The chaos kit behind `pytest --strands-chaos`, `strands chaos` and the CI gate (never on the normal run path).

Private: every `strands_durable.faults.*` path may move; the public faces are the pytest plugin (`pytest_strands`),
the `strands chaos` command and `strands_durable.testing`. Three wings, each importing only those before it:

- `kit/`: the one vocabulary (target, golden run, observer, judge, tool ledger, workspace, shared runs, findings);
- `classes/`: one module per fault class and the registry that names them (`classes/registry.py`);
- `agents/`: chaos for Python agents and multi-agent systems over the same kit and registry.

The drivers the faces call stay here at the top: `suite.py` (a pytest session's work), `soak.py` (`strands
chaos`) and `golden_file.py` (golden runs shared between a session's processes).
"""
