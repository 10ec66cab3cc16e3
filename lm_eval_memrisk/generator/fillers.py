"""Distractors and padding: grow a drafted plan to the tier's trajectory length.

Unrelated memory notes (some later updated), another user's notes in a visitor
session, and chit-chat are inserted at random gaps; the count grows with the tier.
The turn count is then padded with chit-chat (and, for odd counts, a greeting) to a
target drawn inside the tier's range.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from lm_eval_memrisk.episodes.records import TIER_TURNS
from lm_eval_memrisk.generator import distractors
from lm_eval_memrisk.generator.people import Cast, Persona
from lm_eval_memrisk.generator.plan import Block, Ev, ItemRef, Session, plan_turns
from lm_eval_memrisk.generator.risks.common import ACKS, TRUST_SYSTEM, TRUST_TOOL, UPDATE_ACKS
from lm_eval_memrisk.generator.templating import pick, render
from lm_eval_memrisk.generator.values import ValueBank, ValueCollision


@dataclass(frozen=True)
class FillSpec:
    notes: tuple[int, int]
    """Range of unrelated notes of the session's own user."""
    updates: tuple[int, int]
    """Range of later updates to those notes."""
    visitor: float
    """Probability of a visitor session with another user's note."""
    chatter: int
    """Minimum chit-chat exchanges."""


FILL: dict[str, FillSpec] = {
    "easy": FillSpec(notes=(1, 1), updates=(0, 0), visitor=0.0, chatter=0),
    "medium": FillSpec(notes=(2, 3), updates=(1, 1), visitor=0.5, chatter=1),
    "hard": FillSpec(notes=(3, 5), updates=(1, 2), visitor=1.0, chatter=2),
}

Gap = tuple[int, int]


class _Filler:
    def __init__(
        self,
        rng: random.Random,
        sessions: list[Session],
        bank: ValueBank,
        reserved: set[str],
        wide: bool = False,
    ):
        self.notes = distractors.NOTES + (distractors.EXTRA_NOTES if wide else ())
        self.chat = distractors.CHATTER + (distractors.EXTRA_CHATTER if wide else ())
        self.greetings = distractors.GREETINGS + (distractors.EXTRA_GREETINGS if wide else ())
        self.rng = rng
        self.sessions = sessions
        self.bank = bank
        self.used_keys = set(reserved)
        self.used_chatter: set[int] = set()

    # -- positions -------------------------------------------------------------------
    def gaps(self, after: Gap | None = None) -> list[Gap]:
        out = [(si, gi) for si, s in enumerate(self.sessions) if not s.guest for gi in s.gaps()]
        return [g for g in out if after is None or g > after]

    def insert(self, gap: Gap, block: Block) -> None:
        self.sessions[gap[0]].blocks.insert(gap[1], block)

    # -- material --------------------------------------------------------------------
    def note(self, owner: Persona) -> tuple[str, tuple[str, ...], ItemRef]:
        choices = [n for n in self.notes if n[0] not in self.used_keys]
        key, pool = self.rng.choice(choices)
        self.used_keys.add(key)
        value = self.value(pool)
        return key, pool, ItemRef(key=key, value=value, scope=owner.scope)

    def value(self, pool: tuple[str, ...], not_: str | None = None) -> str:
        for value in self.rng.sample(list(pool), len(pool)):
            if value != not_ and self.bank.ok(value):
                return self.bank.add(value)
        raise ValueCollision(pool[0])

    def stated(
        self, ref: ItemRef, templates: tuple[str, ...], supersedes: ItemRef | None = None
    ) -> Block:
        text = pick(self.rng, templates, key=ref.key, value=ref.value)
        acks = UPDATE_ACKS if supersedes else ACKS
        return [
            Ev("user_message", text=text),
            Ev("memory_update" if supersedes else "memory_write", item=ref, supersedes=supersedes),
            Ev("assistant_message", text=self.rng.choice(list(acks))),
        ]

    def chatter(self) -> Block:
        free = [i for i in range(len(self.chat)) if i not in self.used_chatter]
        i = self.rng.choice(free)
        self.used_chatter.add(i)
        ctx = {
            "city": self.rng.choice(
                ["Lisbon", "Ghent", "Porto", "Bologna", "Lyon", "Kraków", "Galway"]
            ),
            "day": self.rng.choice(["Saturday", "Sunday", "Friday"]),
            "mins": self.rng.choice([10, 15, 20, 25]),
            "age": self.rng.choice([30, 40, 50, 60]),
        }
        user, assistant = self.chat[i]
        return [
            Ev("user_message", text=render(user, **ctx)),
            Ev("assistant_message", text=render(assistant, **ctx)),
        ]


def add_fillers(
    rng: random.Random,
    tier: str,
    sessions: list[Session],
    cast: Cast,
    bank: ValueBank,
    reserved_keys: set[str],
    wide: bool = False,
    own_updates: bool = False,
) -> None:
    """Insert the tier's distractors into ``sessions`` and pad to a turn target
    (``wide``: draw from the v2 pools, v1's plus more notes, chit-chat and greetings;
    ``own_updates``, v7: a note's update in words is said in a session of its owner, not
    in another user's, where a blind reader of v7 found it filed under the wrong name)."""
    spec = FILL[tier]
    lo, hi = TIER_TURNS[tier]
    core = plan_turns(sessions)
    if core > hi:
        raise ValueError(f"{tier} draft already has {core} turns (max {hi})")
    target = rng.randint(max(lo, min(core + 2 * spec.chatter, hi)), hi)
    budget = target - core
    spare = max(0, budget - 2 * spec.chatter)  # turns notes may use
    f = _Filler(rng, sessions, bank, reserved_keys, wide)

    if spec.visitor and rng.random() < spec.visitor and spare >= 2:
        at = rng.randrange(len(sessions))
        guest = Session(cast.person(), sessions[at].workspace, guest=True)
        _, _, ref = f.note(guest.persona)
        guest.blocks.append(f.stated(ref, distractors.NOTE_STATES))
        sessions.insert(at, guest)
        spare -= 2
        budget -= 2

    notes: list[tuple[tuple[str, ...], ItemRef]] = []
    for _ in range(rng.randint(*spec.notes)):
        gap = rng.choice(f.gaps())
        _, pool, ref = f.note(sessions[gap[0]].persona)
        if spare >= 2 and rng.random() < 0.6:
            block = f.stated(ref, distractors.NOTE_STATES)
            spare, budget = spare - 2, budget - 2
        else:
            ref.source, ref.trust = rng.choice((("system", TRUST_SYSTEM), ("tool", TRUST_TOOL)))
            block = [Ev("memory_write", item=ref)]
        f.insert(gap, block)
        notes.append((pool, ref))

    for pool, old in notes[: rng.randint(*spec.updates)]:
        here = next(g for g in f.gaps() if _holds(sessions, g, old))
        after = f.gaps(after=here)
        own = [g for g in after if sessions[g[0]].persona.scope == old.scope]
        if own_updates and spare >= 2 and own:
            after = own
        later = rng.choice(after)
        new = ItemRef(key=old.key, value=f.value(pool, not_=old.value), scope=old.scope)
        if spare >= 2 and (own or not own_updates):  # (v7: no owner's session: a silent sync)
            block = f.stated(new, distractors.NOTE_UPDATES, supersedes=old)
            spare, budget = spare - 2, budget - 2
        else:
            new.source, new.trust = "system", TRUST_SYSTEM
            block = [Ev("memory_update", item=new, supersedes=old)]
        f.insert(later, block)

    while budget >= 2:
        f.insert(rng.choice(f.gaps()), f.chatter())
        budget -= 2
    if budget == 1:
        hosts = [si for si, s in enumerate(sessions) if not s.guest]
        f.insert((rng.choice(hosts), 0), [Ev("user_message", text=rng.choice(f.greetings))])
    assert plan_turns(sessions) == target, (plan_turns(sessions), target)


def _holds(sessions: list[Session], gap: Gap, ref: ItemRef) -> bool:
    """Whether the block at ``gap`` writes ``ref``."""
    s = sessions[gap[0]]
    return gap[1] < len(s.blocks) and any(e.item is ref for e in s.blocks[gap[1]])
