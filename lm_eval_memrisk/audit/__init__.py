"""Shortcut audit: shallow agents that read only what the model sees, and a cue table.

``audit(episodes)`` returns the agent x risk pass table and the cue table
(``memrisk audit``).  Modules: ``view`` (rendered messages -> notes and text),
``shortcuts`` (the agents), ``cues`` (the cue table), ``run`` (scoring, tables).
"""

from __future__ import annotations

from lm_eval_memrisk.audit.run import audit, format_tables
from lm_eval_memrisk.audit.shortcuts import SHORTCUTS, Shortcut

__all__ = ["SHORTCUTS", "Shortcut", "audit", "format_tables"]
