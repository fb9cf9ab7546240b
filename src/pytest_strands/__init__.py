"""pytest-strands: the `pytest --strands-chaos` durability gate for strands-durable workflows (see `plugin`)."""
