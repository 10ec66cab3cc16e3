"""Every scripted agent by name: :func:`get_agent` and ``--agent``'s argparse type.

A name is a reference agent (:data:`~lm_eval_memrisk.running.agents.AGENT_NAMES`, among
them ``visible-oracle``), a planted-weakness agent ``weak:PROFILE`` or ``replay:FILE``.
The registry sits above the agents it builds, so :mod:`.agents` imports none of them
(the agents -> weak / visible_oracle -> agents cycle is gone; tests/test_architecture.py).
"""

from __future__ import annotations

from typing import Any

from lm_eval_memrisk.episodes.errors import MemriskError
from lm_eval_memrisk.running.agents import ReferenceAgent
from lm_eval_memrisk.running.replay import ReplayAgent
from lm_eval_memrisk.running.visible_oracle import VisibleOracle
from lm_eval_memrisk.running.weak import parse_weak

__all__ = ["agent_name", "get_agent"]


def get_agent(name: str) -> Any:
    """The scripted agent called ``name``: a reference agent (see
    :data:`~lm_eval_memrisk.running.agents.AGENT_NAMES`), a planted-weakness agent
    ``weak:PROFILE`` (see :mod:`lm_eval_memrisk.running.weak`) or ``replay:FILE``, replies
    written beforehand (see :mod:`lm_eval_memrisk.running.replay`)."""
    if name.startswith("weak:"):
        return parse_weak(name)
    if name == "visible-oracle":
        return VisibleOracle()
    if name.startswith("replay:"):
        return ReplayAgent(name.removeprefix("replay:"))
    return ReferenceAgent(name)


def agent_name(text: str) -> str:
    """argparse ``type=`` for ``--agent``: a reference agent or ``weak:PROFILE``."""
    import argparse

    try:
        get_agent(text)
    except MemriskError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text
