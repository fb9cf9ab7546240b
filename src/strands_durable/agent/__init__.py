"""Where a real `strands.Agent` meets the store: committed messages, the tool-result journal, exact replay."""
