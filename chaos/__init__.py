"""The chaos soak runner (`python -m chaos SPEC... --budget 10m`) and its scenario specs (chaos/scenarios/).

The machinery lives in the package (`strands_durable.faults`), so `strands chaos` and the pytest plugin use the
same code; this is the repository's entry point for long soaks.
"""
