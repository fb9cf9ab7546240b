"""The chaos plugin's self-tests run pytest inside this process (`runpytest_inprocess`), and pytester removes from
`sys.modules` whatever an inner run imported first when that run ends. Strands is imported here, before any inner
run, so all of them share one copy of it: the native tools are built once per process, and a tool built with an
earlier run's copy is not an `AgentTool` of a later copy, which the SDK drops from the agent with only a warning
(the agents of the later runs then had no tools, and which tests saw it depended on the order they ran in)."""

import strands  # noqa: F401
