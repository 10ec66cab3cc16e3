"""Episodes logged ``valid: false`` in this process, reported at the end of the run.

A model that returns nothing (``None`` or an empty string) has failed, not answered:
``memrisk run`` stops with an :class:`~lm_eval_memrisk.running.runner.InfrastructureError`;
under lm-eval, where one sample cannot stop the run, the episode is logged with
``valid: false`` and an ``invalid_reason`` and noted here (as is a prompt cut by
``truncation=left``).  ``memrisk eval`` prints
:func:`summary` when lm-eval is done; under plain ``lm_eval`` it is printed at exit.
"""

from __future__ import annotations

import atexit
import sys

__all__ = ["no_reply_reason", "note", "summary", "take"]

_noted: dict[str, str] = {}


def no_reply_reason(decision_id: str) -> str:
    """The ``invalid_reason`` of an episode with no reply at ``decision_id``."""
    return (f"no reply at decision point {decision_id} (empty or null model output): "
            "an infrastructure failure, not the agent's answer")


def note(episode_id: str, reason: str) -> None:
    """Remember that ``episode_id`` was logged invalid (the first reason is kept)."""
    if not _noted:
        atexit.register(_report_at_exit)
    _noted.setdefault(episode_id, reason)


def take() -> dict[str, str]:
    """Episode id -> reason of every episode noted so far; forgets them."""
    noted = dict(_noted)
    _noted.clear()
    return noted


def summary(noted: dict[str, str]) -> str:
    """One line: how many episodes had an invalid reply, and the first of them."""
    first = min(noted)
    n = len(noted)
    return (f"{n} episode{'s' if n != 1 else ''} had an invalid reply and {'are' if n != 1 else 'is'} "
            f"logged with valid: false (e.g. {first}: {noted[first]}); "
            "do not read their scores as the model's answers")


def _report_at_exit() -> None:
    noted = take()
    if noted:
        print(f"memriskbench: {summary(noted)}", file=sys.stderr)
