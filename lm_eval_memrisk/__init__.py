"""MemRiskBench: trace-grounded memory-risk evaluation for long-horizon LLM agents."""

from __future__ import annotations

__version__ = "0.1.0"
