"""Fault machinery shared by the tests, the pytest plugin and the chaos harness (never on the normal run path)."""
