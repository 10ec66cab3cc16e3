"""Personas and workspaces of an episode, and who owns a memory item."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from lm_eval_memrisk.generator import pools


def slugify(text: str) -> str:
    """``"Quarry Hill"`` -> ``"quarry-hill"``."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


@dataclass(frozen=True)
class Persona:
    first: str
    last: str

    @property
    def full(self) -> str:
        return f"{self.first} {self.last}"

    @property
    def scope(self) -> str:
        return f"user:{slugify(self.first)}"


@dataclass(frozen=True)
class Workspace:
    name: str
    domain: str

    @property
    def scope(self) -> str:
        return f"workspace:{slugify(self.name)}"


@dataclass(frozen=True)
class Owner:
    """Whose fact a memory item is: a user's own, or a workspace's shared one."""

    scope: str
    whose: str
    """Possessive as the owner says it: ``my`` or ``our``."""
    your: str
    """Possessive as the assistant says it: ``your``."""
    label: str
    """Third-person possessive: ``Alice's`` or ``Acme's``."""


def user_owner(p: Persona) -> Owner:
    """A user's own fact: "my"."""
    return Owner(scope=p.scope, whose="my", your="your", label=f"{p.first}'s")


def workspace_owner(w: Workspace) -> Owner:
    """A workspace's shared fact: "our"."""
    return Owner(scope=w.scope, whose="our", your="your", label=f"{w.name}'s")


class Cast:
    """Draws distinct personas and workspaces for one episode."""

    def __init__(self, rng: random.Random):
        self._rng = rng
        self._firsts: set[str] = set()
        self._lasts: set[str] = set()
        self._companies: set[str] = set()

    def person(self) -> Persona:
        """A persona whose first and last names are new in this episode."""
        first = self._rng.choice([n for n in pools.FIRST_NAMES if n not in self._firsts])
        last = self._rng.choice([n for n in pools.LAST_NAMES if n not in self._lasts])
        self._firsts.add(first)
        self._lasts.add(last)
        return Persona(first, last)

    def workspace(self) -> Workspace:
        """A workspace not used yet in this episode."""
        name, domain = self._rng.choice([c for c in pools.COMPANIES if c[0] not in self._companies])
        self._companies.add(name)
        return Workspace(name, domain)
