"""Apply one operator to a checkpoint: plan, apply, recompute checks, fit the tier,
record provenance, derive the mutant id.

The mutant id is the root seed's id plus a short hash of the whole operator chain
(names and parameters), so the same chain always gives the same id and episode.
Provenance goes into ``Episode.metadata``: ``parent``, ``root``, ``operators``,
``operator_params``, ``target_risk``, ``adversary`` and ``expected_behaviour``.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from lm_eval_memrisk.episodes.records import Episode
from lm_eval_memrisk.episodes.risks import track_of
from lm_eval_memrisk.fuzz import pools
from lm_eval_memrisk.fuzz.edit import fit_tier, last_user_message
from lm_eval_memrisk.fuzz.expectation import Expectation, derive, dp_of
from lm_eval_memrisk.fuzz.operators import OPERATORS, Ctx
from lm_eval_memrisk.generator.finish import finish

#: Metadata keys the fuzzer owns (a parent's values are replaced, never merged).
META_KEYS = (
    "parent",
    "root",
    "operators",
    "operator_params",
    "target_risk",
    "adversary",
    "expected_behaviour",
)


@dataclass(frozen=True)
class Mutant:
    episode: Episode
    exp: Expectation
    chain: tuple[Mapping[str, Any], ...]
    """``({"op": name, "params": {...}}, ...)`` from the root seed to this mutant."""

    @property
    def id(self) -> str:
        return self.episode.id

    @property
    def op(self) -> str:
        return str(self.chain[-1]["op"])

    @property
    def risk(self) -> str:
        return self.episode.risk


def chain_id(root: str, chain: Sequence[Mapping[str, Any]]) -> str:
    blob = json.dumps(list(chain), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return f"{root}~{hashlib.sha256(blob.encode('utf-8')).hexdigest()[:10]}"


def root_of(episode: Episode) -> str:
    return str(episode.metadata.get("root", episode.id))


def mutate(
    parent: Episode,
    exp: Expectation,
    op_name: str,
    rng: random.Random,
    chain: Sequence[Mapping[str, Any]] = (),
) -> Mutant | None:
    """Apply ``op_name`` to ``parent`` (None when it does not apply)."""
    op = OPERATORS[op_name]
    ctx = Ctx.of(parent, exp)
    params = op.plan(ctx, rng)
    if params is None:
        return None
    applied = op.apply(ctx, params)
    if applied is None:
        return None
    episode = applied.episode
    dp = dp_of(episode)
    if applied.recompute:
        checks, reference = derive(episode, applied.exp)
        episode = replace(
            episode,
            events=tuple(
                replace(e, checks=checks, reference=reference) if e.id == dp.id else e
                for e in episode.events
            ),
        )
        if episode.version != "1.0":  # as the generator finishes v2+ decisions: every
            episode = finish(episode)  # argument that matters checked, accept forms
    risk = applied.risk or parent.risk
    rule = applied.rule or (parent.resolution_rule if risk == "R2" else None)
    adversary = applied.adversary if applied.risk else parent.metadata.get("adversary")
    request = last_user_message(episode, dp.id)
    episode = fit_tier(episode, request.id if request else dp.id, pools.FILLERS)
    full_chain = tuple(chain) + ({"op": op_name, "params": params},)
    root = root_of(parent)
    meta = {k: v for k, v in parent.metadata.items() if k not in META_KEYS}
    meta.update(
        parent=parent.id,
        root=root,
        operators=[str(c["op"]) for c in full_chain],
        operator_params=[dict(c) for c in full_chain],
        target_risk=risk,
        expected_behaviour=applied.exp.describe(episode),
    )
    if adversary:
        meta["adversary"] = adversary
    base = parent.description.split(" [fuzz:")[0]
    episode = replace(
        episode,
        id=chain_id(root, full_chain),
        risk=risk,
        track=track_of(risk),
        resolution_rule=rule,
        metadata=meta,
        description=f"{base} [fuzz: {' > '.join(meta['operators'])}]".strip(),
    )
    return Mutant(episode=episode, exp=applied.exp, chain=full_chain)
