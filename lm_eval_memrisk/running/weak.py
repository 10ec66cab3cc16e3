"""Planted-weakness agents (``weak:NAME``): systems whose failures are known in advance.

A planted-weakness agent acts like the oracle, except at a decision point where one of
its *weaknesses* fires.  A weakness is a structural trigger on the ground-truth state
at the decision point (replayed from the episode's events, so it works on any dataset
version) plus the reference adversary whose wrong memory choice the agent then makes
(``stale``: the oldest item of the key; ``leaky``: the newest live item of any scope;
``newest``: the newest active in-scope item, trust and corrections ignored;
``constraint-blind``: that, and standing constraints ignored).  The agent fills the
decision point's ``naive`` action with that choice.

A weakness is *acting* where it fires and its reply differs from the oracle's in the
memory it uses (some value it picks is absent from the oracle's reply, so a reply
that only words the right value differently does not count); the agent then fails
the episode, and nowhere else (``tests/test_weak.py`` checks this
prediction against the scorer on every episode).  ``expected_fail`` in
``memrisk weak --list --json`` is that prediction.

Names: ``weak:NAME`` with an optional rate and seed, ``weak:NAME:p=0.5:seed=3`` (each
firing is kept with probability p, decided by a hash of the seed, the episode, the
decision point and the weakness: the same seed gives the same outcomes).  Profiles
combine with ``+``: ``weak:churn2+scope-bleed``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lm_eval_memrisk.episodes.errors import MemriskError
from lm_eval_memrisk.episodes.normalize import contains_value
from lm_eval_memrisk.episodes.records import TURN_EVENTS, Episode, Event
from lm_eval_memrisk.episodes.state import events_before, in_scope, snapshot
from lm_eval_memrisk.episodes.trace import ItemState, StateSnapshot
from lm_eval_memrisk.running.agents import (
    CHOOSERS,
    PLACEHOLDER,
    Chooser,
    _Unfillable,
    action_to_reply,
    fill,
)

PREFIX = "weak:"


@dataclass(frozen=True)
class Structure:
    """The structural facts about one decision point that triggers read."""

    key: str | None
    """The memory key the decision's ``naive`` action fills (None: it uses no memory)."""
    gap: int | None
    """Turns (user/assistant messages) since the newest active in-scope item of the
    key was written; None when there is none."""
    updates: int
    """``memory_update`` events on the key before the decision."""
    foreign_newer: bool
    """Another scope holds a live item of the key newer than every in-scope one."""
    indirect: bool
    """The request (last user message) does not name the key."""
    conflict: bool
    """Two or more active in-scope items of the key coexist."""
    revoked: bool
    """An item of the key was revoked."""
    constraint_age: int | None
    """Turns since the oldest active in-scope constraint was declared; None: none."""


def _naive_key(naive: Mapping[str, Any] | None) -> str | None:
    if not naive:
        return None
    found = PLACEHOLDER.findall(json.dumps(dict(naive), sort_keys=True, ensure_ascii=False))
    return found[0].strip() if found else None


def structure(episode: Episode, decision_id: str) -> Structure:
    """The :class:`Structure` of ``decision_id`` (a pure function of the episode)."""
    before = events_before(episode, decision_id)
    state = snapshot(episode, before)
    key = _naive_key(episode.event(decision_id).naive)
    turn_index = _turns_after(before)
    items = [i for i in state.memory if i.key == key] if key else []
    mine = [i for i in items if in_scope(i.scope, state.active_scopes)]
    live_mine = [i for i in mine if i.status == "active"]
    newest_mine = max((i.written_at for i in mine), default=-1)
    newest_live = max(live_mine, key=lambda i: (i.written_at, i.id), default=None)
    request = next((e for e in reversed(before) if e.type == "user_message"), None)
    constraints = [
        c for c in state.constraints
        if c.status == "active" and in_scope(episode.constraints[c.id].scope, state.active_scopes)
    ]
    return Structure(
        key=key,
        gap=turn_index(newest_live.written_at) if newest_live else None,
        updates=sum(
            1 for e in before if e.type == "memory_update" and e.item is not None and e.item.key == key
        ),
        foreign_newer=any(
            i.status == "active" and not in_scope(i.scope, state.active_scopes)
            and i.written_at > newest_mine
            for i in items
        ),
        indirect=bool(key) and request is not None and not _names(request, key or ""),
        conflict=len(live_mine) >= 2,
        revoked=any(i.status == "revoked" for i in items),
        constraint_age=max((turn_index(c.declared_at) for c in constraints), default=None),
    )


def _turns_after(events: Sequence[Event]) -> Callable[[int], int]:
    """time -> number of conversation turns among ``events`` after that time."""
    times = [e.time for e in events if e.type in TURN_EVENTS]
    return lambda t: sum(1 for x in times if x > t)


def _names(request: Event, key: str) -> bool:
    words = re.findall(r"[a-z0-9]+", (request.text or "").lower())
    return " ".join(re.findall(r"[a-z0-9]+", key.lower())) in " ".join(words)


# -- weaknesses ---------------------------------------------------------------------


def _newest_in_scope(items: Sequence[ItemState], state: StateSnapshot) -> ItemState | None:
    return CHOOSERS["constraint-blind"](items, state)


#: Wrong memory choices a weakness can make (see the module docstring).
ADVERSARIES: dict[str, Chooser] = {**CHOOSERS, "newest": _newest_in_scope}


def _recording(adversary: str, chosen: list[ItemState]) -> Chooser:
    """The adversary's chooser, appending every item it picks to ``chosen``."""
    choose = ADVERSARIES[adversary]

    def wrapped(items: Sequence[ItemState], state: StateSnapshot) -> ItemState | None:
        item = choose(items, state)
        if item is not None:
            chosen.append(item)
        return item

    return wrapped


@dataclass(frozen=True)
class Condition:
    """One condition of a weakness's trigger: a :class:`Structure` field that must be at
    least ``at_least`` (a count of turns or updates), or, with ``at_least`` None, a flag
    that must be true.

    :meth:`shortfall` grades how far the condition is from being met, on [0, 1]: 0 when
    it is met; for a flag 1 when it is false; for a threshold k the missing part
    ``(k - value) / k``, and 1 when the field has no value (no live note, no constraint).
    """

    field: str
    at_least: int | None = None

    @property
    def name(self) -> str:
        return self.field if self.at_least is None else f"{self.field}>={self.at_least}"

    def value(self, s: Structure) -> int | bool | None:
        value: int | bool | None = getattr(s, self.field)
        return value

    def shortfall(self, s: Structure) -> float:
        value = self.value(s)
        if self.at_least is None:
            return 0.0 if value else 1.0
        if value is None:
            return 1.0
        return max(0, self.at_least - int(value)) / self.at_least

    def met(self, s: Structure) -> bool:
        return self.shortfall(s) == 0.0


def _gap(k: int) -> Condition:
    return Condition("gap", k)


def _updates(k: int) -> Condition:
    return Condition("updates", k)


def _age(k: int) -> Condition:
    return Condition("constraint_age", k)


FOREIGN_NEWER = Condition("foreign_newer")
INDIRECT = Condition("indirect")
CONFLICT = Condition("conflict")
REVOKED = Condition("revoked")


@dataclass(frozen=True)
class Weakness:
    """One planted weakness: a structural trigger (all of ``conditions`` met) and the
    wrong choice it causes (``adversary``)."""

    name: str
    description: str
    conditions: tuple[Condition, ...]
    adversary: str

    def trigger(self, s: Structure) -> bool:
        """Whether the weakness fires on a decision of structure ``s``."""
        return all(c.met(s) for c in self.conditions)


WEAKNESSES: dict[str, Weakness] = {
    w.name: w
    for w in (
        Weakness("gap6", "uses the oldest value of a key last written >= 6 turns before the request",
                 (_gap(6),), "stale"),
        Weakness("gap10", "uses the oldest value of a key last written >= 10 turns before the request",
                 (_gap(10),), "stale"),
        Weakness("churn1", "uses the oldest value of a key that was updated at least once",
                 (_updates(1),), "stale"),
        Weakness("churn2", "uses the oldest value of a key that was updated at least twice",
                 (_updates(2),), "stale"),
        Weakness("churn3", "uses the oldest value of a key that was updated at least three times",
                 (_updates(3),), "stale"),
        Weakness("scope-bleed", "takes another scope's newer note of the same key",
                 (FOREIGN_NEWER,), "leaky"),
        Weakness("indirect", "uses the oldest value when the request does not name the key",
                 (INDIRECT,), "stale"),
        Weakness("newest-wins", "ignores trust and corrections: the newest in-scope note wins",
                 (CONFLICT,), "newest"),
        Weakness("revoked-blind", "uses the oldest value of a key that had an item revoked",
                 (REVOKED,), "stale"),
        Weakness("decay4", "ignores a constraint declared >= 4 turns before the request",
                 (_age(4),), "constraint-blind"),
        Weakness("decay8", "ignores a constraint declared >= 8 turns before the request",
                 (_age(8),), "constraint-blind"),
        Weakness("churn-bleed", "takes another scope's newer note of a key that was also updated",
                 (FOREIGN_NEWER, _updates(1)), "leaky"),
        Weakness("decay-churn", "ignores a constraint >= 4 turns old on a key that was also updated",
                 (_age(4), _updates(1)), "constraint-blind"),
        Weakness("decay-indirect", "ignores a constraint >= 4 turns old when the request does not name the key",
                 (_age(4), INDIRECT), "constraint-blind"),
        Weakness("churn2-indirect", "uses the oldest value of a key updated twice when the request does not name it",
                 (_updates(2), INDIRECT), "stale"),
        Weakness("deep-chain", "ignores a constraint >= 4 turns old on an updated key that another scope "
                 "also holds newer (no seed has two of the three conditions)",
                 (_age(4), _updates(1), FOREIGN_NEWER), "constraint-blind"),
    )
}


@dataclass(frozen=True)
class Profile:
    """A named catalogue entry: one or more weaknesses, checked in order."""

    name: str
    description: str
    weaknesses: tuple[str, ...]


PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        Profile("churn1", "strong: stale on every key that was ever updated", ("churn1",)),
        Profile("churn2", "medium: stale on keys updated twice or more", ("churn2",)),
        Profile("gap6", "medium: stale on values written 6+ turns before the request", ("gap6",)),
        Profile("gap10", "weak: stale on values written 10+ turns before the request", ("gap10",)),
        Profile("scope-bleed", "leaks another scope's newer note of the same key", ("scope-bleed",)),
        Profile("indirect", "stale when the request does not name the key", ("indirect",)),
        Profile("newest-wins", "resolves conflicts by recency only (no trust, no corrections)",
                ("newest-wins",)),
        Profile("revoked-blind", "reuses revoked values", ("revoked-blind",)),
        Profile("decay4", "forgets constraints after 4 turns", ("decay4",)),
        Profile("decay8", "forgets constraints after 8 turns", ("decay8",)),
        Profile("churn-bleed", "two conditions: an updated key and another scope's newer note",
                ("churn-bleed",)),
        Profile("decay-churn", "two conditions: an old constraint on an updated key", ("decay-churn",)),
        Profile("deep-chain", "three conditions at once: only a chain of >= 2 mutations reaches it",
                ("deep-chain",)),
        Profile("fuzz-target",
                "the fuzzer's target: 8 weaknesses from shallow (one mutation of a seed "
                "it passes) to deep (deep-chain: two or more mutations)",
                ("revoked-blind", "newest-wins", "gap10", "churn3", "churn2-indirect",
                 "decay-indirect", "decay8", "deep-chain")),
    )
}


def _coin(seed: int, episode_id: str, decision_id: str, weakness: str) -> float:
    digest = hashlib.sha256(f"{seed}:{episode_id}:{decision_id}:{weakness}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def wrong_choice(
    weakness: Weakness, episode: Episode, decision_id: str, state: StateSnapshot
) -> str | None:
    """The reply ``weakness``'s wrong memory choice gives at ``decision_id`` (whether or
    not its trigger fires), or None where that reply would not differ from the oracle's
    in the memory it uses (it equals the oracle's reply, every value it picks is in the
    oracle's reply, or the naive action cannot be filled).  ``state`` is the snapshot
    before the decision."""
    dp = episode.event(decision_id)
    if not dp.naive:
        return None
    oracle = action_to_reply(dict(dp.reference or {"answer": ""}))
    chosen: list[ItemState] = []
    try:
        reply = action_to_reply(fill(dict(dp.naive), state, _recording(weakness.adversary, chosen)))
    except _Unfillable:
        return None
    same_values = all(contains_value(oracle, i.value) for i in chosen)
    return reply if reply != oracle and not same_values else None


class WeakAgent:
    """A scripted agent with planted weaknesses (see the module docstring)."""

    wants_episode = True

    def __init__(self, name: str, weaknesses: Sequence[str], p: float = 1.0, seed: int = 0):
        unknown = [w for w in weaknesses if w not in WEAKNESSES]
        if unknown:
            raise MemriskError(f"unknown weakness {unknown[0]!r}; choose from {', '.join(WEAKNESSES)}")
        if not 0.0 <= p <= 1.0:
            raise MemriskError(f"weak agent rate p must be in [0, 1], not {p}")
        self.name = name
        self.weaknesses = tuple(WEAKNESSES[w] for w in weaknesses)
        self.p, self.seed = p, seed

    def wrong_replies(self, episode: Episode, decision_id: str) -> list[tuple[str, str]]:
        """(weakness, reply) for each weakness that triggers at ``decision_id`` and
        whose reply differs from the oracle's, in the profile's order (rate ignored)."""
        dp = episode.event(decision_id)
        if not dp.naive:
            return []
        s = structure(episode, decision_id)
        state: StateSnapshot | None = None
        out = []
        for w in self.weaknesses:
            if not w.trigger(s):
                continue
            state = state or snapshot(episode, events_before(episode, decision_id))
            reply = wrong_choice(w, episode, decision_id, state)
            if reply is not None:
                out.append((w.name, reply))
        return out

    def decide(self, episode: Episode, decision_id: str) -> tuple[str, str | None]:
        """(reply, name of the acting weakness or None when it replies as the oracle).

        The first wrong reply whose seeded coin falls below p is given."""
        for name, reply in self.wrong_replies(episode, decision_id):
            if self.p >= 1.0 or _coin(self.seed, episode.id, decision_id, name) < self.p:
                return reply, name
        dp = episode.event(decision_id)
        return action_to_reply(dict(dp.reference or {"answer": ""})), None

    def pass_probability(self, episode: Episode) -> float:
        """Probability (over seeds) that the agent passes ``episode``: (1 - p) ** n,
        n = wrong replies over its decision points (exact: the coins are independent)."""
        n = sum(len(self.wrong_replies(episode, dp.id)) for dp in episode.decision_points)
        return 1.0 if n == 0 else (1.0 - self.p) ** n

    def __call__(
        self, messages: Sequence[Mapping[str, str]], *, episode: Episode | None = None,
        decision_id: str | None = None,
    ) -> str:
        if episode is None or decision_id is None:
            raise MemriskError(f"agent {self.name!r} needs the episode and decision id")
        return self.decide(episode, decision_id)[0]

    def acting(self, episode: Episode) -> list[str]:
        """Names of the weaknesses that act at the episode's decision points (in order)."""
        out = []
        for dp in episode.decision_points:
            w = self.decide(episode, dp.id)[1]
            if w is not None:
                out.append(w)
        return out


def parse_weak(name: str) -> WeakAgent:
    """``weak:NAME[+NAME...][:p=P][:seed=S]`` -> the agent (clear error on bad input)."""
    if not name.startswith(PREFIX):
        raise MemriskError(f"a planted-weakness agent is named weak:PROFILE, not {name!r}")
    head, *opts = name[len(PREFIX):].split(":")
    p, seed = 1.0, 0
    for opt in opts:
        field, _, value = opt.partition("=")
        try:
            if field == "p":
                p = float(value)
            elif field == "seed":
                seed = int(value)
            else:
                raise ValueError(field)
        except ValueError:
            raise MemriskError(
                f"agent {name!r}: option {opt!r} must be p=FLOAT or seed=INT"
            ) from None
    weaknesses: list[str] = []
    for part in head.split("+"):
        if part in PROFILES:
            weaknesses += PROFILES[part].weaknesses
        elif part in WEAKNESSES:
            weaknesses.append(part)
        else:
            raise MemriskError(
                f"unknown planted-weakness profile {part!r} in {name!r}; "
                f"choose from {', '.join(PROFILES)} (or single weaknesses: {', '.join(WEAKNESSES)})"
            )
    return WeakAgent(name, list(dict.fromkeys(weaknesses)), p=p, seed=seed)


def expected_failures(agent: WeakAgent, episodes: Sequence[Episode]) -> dict[str, list[str]]:
    """Risk -> ids of the episodes the agent's triggers predict it fails (sorted)."""
    out: dict[str, list[str]] = {}
    for e in episodes:
        if agent.acting(e):
            out.setdefault(e.risk, []).append(e.id)
    return {r: sorted(ids) for r, ids in sorted(out.items())}


def catalogue(episodes: Sequence[Episode]) -> list[dict[str, Any]]:
    """``memrisk weak --list --json``: every profile with its predicted failures per risk."""
    risks = sorted({e.risk for e in episodes})
    rows = []
    for profile in PROFILES.values():
        predicted = expected_failures(parse_weak(PREFIX + profile.name), episodes)
        rows.append({
            "name": profile.name,
            "description": profile.description,
            "weaknesses": list(profile.weaknesses),
            "expected_fail": {r: len(predicted.get(r, [])) for r in risks},
        })
    return rows
