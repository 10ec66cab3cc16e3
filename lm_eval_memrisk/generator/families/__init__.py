"""Scenario families (the ``family`` field of an episode), by name."""

from __future__ import annotations

from lm_eval_memrisk.generator.families import accounts, everyday, policy
from lm_eval_memrisk.generator.families.base import Family

FAMILIES: dict[str, Family] = {
    f.name: f for f in everyday.FAMILIES + accounts.FAMILIES + policy.FAMILIES
}


def family(name: str) -> Family:
    """The family called ``name``."""
    return FAMILIES[name]


__all__ = ["FAMILIES", "Family", "family"]
