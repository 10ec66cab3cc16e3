"""v2 acknowledgements: many short replies built from parts, so that no single string
makes up more than a few percent of the assistant turns (models copy repeated acks)."""

from __future__ import annotations

import dataclasses
import random

from lm_eval_memrisk.episodes.records import Event
from lm_eval_memrisk.generator.risks.common import ACKS, REVOKE_ACKS, RULE_ACKS, UPDATE_ACKS

_OPEN = ("Got it", "Okay", "Sure", "Understood", "Right", "Thanks", "Noted", "All right",
         "Perfect", "Will do")  # fmt: skip
_KIND: dict[str, tuple[str, ...]] = {
    "ack": ("I've saved that.", "it's in my notes.", "I'll remember it.", "that's stored.",
            "I've written it down.", "saved for later."),
    "update": ("I've updated it.", "the new one is on file.", "I've changed it.",
               "I'll use the new one from now on.", "the note is updated."),
    "revoke": ("it's been removed.", "I won't use it again.", "I've taken it out of my notes.",
               "that's deleted."),
    "rule": ("I'll stick to that.", "that's a standing rule now.", "I'll keep to it.",
             "I'll follow that from now on."),
}  # fmt: skip
_POOLS = {**dict.fromkeys(ACKS, "ack"), **dict.fromkeys(UPDATE_ACKS, "update"),
          **dict.fromkeys(REVOKE_ACKS, "revoke"), **dict.fromkeys(RULE_ACKS, "rule")}  # fmt: skip


def vary_acks(events: tuple[Event, ...], rng: random.Random) -> tuple[Event, ...]:
    """Replace each stock acknowledgement by a drawn "<opening> — <kind phrase>"."""
    out = []
    for e in events:
        kind = _POOLS.get(e.text or "") if e.type == "assistant_message" else None
        if kind is not None:
            text = f"{rng.choice(_OPEN)} — {rng.choice(_KIND[kind])}"
            e = dataclasses.replace(e, text=text)
        out.append(e)
    return tuple(out)
