"""Self-tests of the pytest plugin run inner pytest sessions with `pytester`."""

pytest_plugins = ["pytester"]
