"""Chaos for Python agents and multi-agent systems over the kit's vocabulary and the registry's fault names: the
engine behind `strands_chaos.run_agent` (`engine.py`, one instrumented run in `run.py`, what it leaves on disk in
`place.py`), the conversations the docs and tests share, and the comparison tables of the docs."""
