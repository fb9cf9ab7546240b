"""The backend scorecard: real Strands session backends from PyPI, gated and measured on servers on loopback."""
