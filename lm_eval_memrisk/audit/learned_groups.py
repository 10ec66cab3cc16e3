"""Where the learned surface reader's skill comes from (``memrisk audit --learned-groups``).

The reader of :mod:`.learned` is retrained on the same training episodes with only some
families of its features, and tested on the audited file as before.  A family that
alone passes most of the benchmark is a tell the generator gives away; a family whose
removal costs nothing carries none.  The families partition every feature
:mod:`.features` makes:

* ``words``: the words around each place a value is named (``L:``/``R:``/``W:``, with or
  without their message kind) and the words of the request (``ask:w:``);
* ``labels``: what the value's notes say of themselves (``src:``, ``trust:``, ``scope:``);
* ``order``: where the value stands in time (its rank among the key's notes, overall and
  in scope, how many notes and mentions it has, the sessions it was named in, whether it
  was named last);
* ``messages``: the kinds of message that name it (user turn, tool result, session
  header, an earlier call).

The *frame* (``ask``, how many in-scope values the key has, same key or another key) is
kept in every row, so that every reader can ask.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from lm_eval_memrisk.audit.features import Option
from lm_eval_memrisk.audit.learned import (
    DEFAULT_TRAIN_SEED,
    reader,
    train,
    training_episodes,
)
from lm_eval_memrisk.audit.run import GROUPS, passes, tally
from lm_eval_memrisk.episodes.records import Episode

FAMILIES = ("words", "labels", "order", "messages")
_ORDER = ("rank", "scope-rank", "notes", "named", "named-last", "first-session", "last-session")
_MESSAGES = ("msg", "first-msg", "last-msg", "called")


def family(feature: str) -> str:
    """The family of one feature: one of :data:`FAMILIES`, or ``frame``."""
    head, _, rest = feature.partition(":")
    if head in ("L", "R", "W") or (rest[:2] in ("L:", "R:", "W:") and head not in _ORDER):
        return "words"
    if head == "ask":
        return "words" if rest.startswith("w:") else "frame"
    if head == "key":
        return "frame"
    if head in ("src", "trust", "scope"):
        return "labels"
    if head in _ORDER:
        return "order"
    if head in _MESSAGES:
        return "messages"
    raise ValueError(f"feature {feature!r} belongs to no family")


def _keeping(families: frozenset[str]) -> Callable[[str], bool]:
    return lambda f: family(f) in families or family(f) == "frame"


def row_names() -> list[tuple[str, frozenset[str]]]:
    """(row name, families kept) of every row, in table order."""
    every = frozenset(FAMILIES)
    rows = [("all", every)]
    rows += [(f"only {f}", frozenset({f})) for f in FAMILIES]
    rows += [(f"without {f}", every - {f}) for f in FAMILIES]
    return rows


def learned_groups(
    episodes: Sequence[Episode], train_seed: int = DEFAULT_TRAIN_SEED
) -> dict[str, Any]:
    """``{"learned_groups": {ROW: {R1..R6, "main": cell}}, "learned_setup": {...}}``."""
    train_set = training_episodes(episodes, train_seed)
    cache: dict[str, list[tuple[Option, bool]]] = {}
    table: dict[str, Any] = {}
    for name, kept in row_names():
        table[name] = tally(episodes, partial(passes, reader(train(train_set, cache, keep=_keeping(kept)))))
    return {
        "learned_groups": table,
        "learned_setup": {"train_seed": train_seed, "train_episodes": len(train_set), "families": list(FAMILIES)},
    }


def format_learned_groups(result: dict[str, Any]) -> str:
    """The rows as a Markdown table (risk columns present in the rows)."""
    table = result["learned_groups"]
    groups = [g for g in GROUPS if any(g in row for row in table.values())]
    seed = result.get("learned_setup", {}).get("train_seed", "?")
    lines = [f"learned reader trained on seed {seed} with some feature families only", "",
             "| features | " + " | ".join(groups) + " |", "|---|" + "---|" * len(groups)]
    for name, row in table.items():
        cells = [f"{row[g]['passed']}/{row[g]['n']}" if g in row else "-" for g in groups]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
