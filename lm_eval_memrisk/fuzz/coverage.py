"""State coverage and parent/mutant divergence (the guidance's only feedback).

A coverage point is ``(risk, check kind, operator, memory item role, visibility)``:
for every check kind of the mutant's decision point and every memory item in the
store there, whether the item was ``shown`` to the agent under the memory policy or
``hidden`` (not retrieved).  Whether the reply *used* an item is deliberately not a
coverage state: under the ``full`` policy "an item to avoid was used" is the failure
label itself.  Besides these, every mutant covers one *shape* point: the bucketed
structure of its decision point (same-key updates, write-to-use distance, another
scope's newer note, indirect request, conflict, revocation, constraint age; see
:func:`lm_eval_memrisk.running.weak.structure`), which rewards reaching new memory states
(deeper update chains, older constraints, combined conditions).  Nothing here reads
the reply or whether a check passed.  Coverage at B = covered (risk, kind, operator,
role, visibility) points / the universe of those the operators can reach from the
seeds (:func:`universe`; ``hidden`` only counts under a policy that retrieves, since
``full`` shows every note); shape points steer the search but are not in Cov@B.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from lm_eval_memrisk.episodes.normalize import normalize
from lm_eval_memrisk.episodes.records import Episode
from lm_eval_memrisk.episodes.trace import DecisionRecord
from lm_eval_memrisk.fuzz.expectation import ROLES, Expectation, roles
from lm_eval_memrisk.fuzz.operators import OPERATORS
from lm_eval_memrisk.running.weak import structure

STATES = ("shown", "hidden")
SHAPE = "shape"
Point = tuple[str, ...]


def visibility(item_id: str, rec: DecisionRecord) -> str:
    return "shown" if item_id in rec.visible_items else "hidden"


def _bucket(value: int | None, edges: tuple[int, ...]) -> str:
    if value is None:
        return "-"
    return str(sum(value >= e for e in edges))


def shape(episode: Episode) -> Point:
    """The shape point of a checkpoint: its decision point's bucketed structure."""
    s = structure(episode, episode.decision_points[-1].id)
    return (
        SHAPE,
        episode.risk,
        str(min(s.updates, 3)),
        _bucket(s.gap, (4, 8, 12)),
        _bucket(s.constraint_age, (4, 8)),
        "".join(
            flag if on else "-"
            for flag, on in (("f", s.foreign_newer), ("i", s.indirect), ("c", s.conflict),
                             ("r", s.revoked))
        ),
    )


def points(episode: Episode, exp: Expectation, op: str, rec: DecisionRecord) -> frozenset[Point]:
    """Coverage points of one executed mutant (state only, never the reply)."""
    role = roles(episode, exp)
    kinds = sorted({c.kind for c in episode.decision_points[-1].checks})
    out: set[Point] = {
        (episode.risk, kind, op, role[i.id], visibility(i.id, rec))
        for kind in kinds
        for i in rec.state.memory
    }
    out.add(shape(episode))
    return frozenset(out)


def measured(covered: Iterable[Point]) -> int:
    """How many covered points count towards Cov@B (shape points do not)."""
    return sum(1 for p in covered if p[0] != SHAPE)


def static_keys(
    episode: Episode, exp: Expectation, op: str
) -> frozenset[tuple[str, str, str, str]]:
    """The (risk, check kind, operator, role) part of a mutant's points, known before it runs."""
    role = roles(episode, exp)
    kinds = {c.kind for c in episode.decision_points[-1].checks}
    return frozenset((episode.risk, k, op, r) for k in kinds for r in role.values())


def universe(seed_pairs: Iterable[tuple[str, str]]) -> frozenset[tuple[str, str, str]]:
    """Reachable (operator, risk, check kind) triples; × roles × states = the universe.

    Memory-state operators reach the (risk, kind) pairs they declare; the others keep
    their parent's, which are the seeds' pairs or any memory-state operator's.
    """
    declared = {(r, k) for op in OPERATORS.values() for r in op.risks for k in op.kinds}
    inherited = set(seed_pairs) | declared
    out = set()
    for name, op in OPERATORS.items():
        pairs = {(r, k) for r in op.risks for k in op.kinds} if op.risks else inherited
        out |= {(name, r, k) for r, k in pairs}
    return frozenset(out)


def universe_size(seed_pairs: Iterable[tuple[str, str]], retrieval: bool = False) -> int:
    """Number of coverage points; ``hidden`` counts only under a retrieving memory policy."""
    states = len(STATES) if retrieval else len(STATES) - 1
    return len(universe(seed_pairs)) * len(ROLES) * states


def _args(rec: DecisionRecord) -> str:
    args = {
        k: normalize(json.dumps(v, sort_keys=True)) for k, v in sorted(rec.action.arguments.items())
    }
    return json.dumps(args, sort_keys=True)


def divergence(parent: DecisionRecord, mutant: DecisionRecord) -> float:
    """Share of behaviour features that differ: action kind, tool, arguments, items used."""
    both_calls = parent.action.kind == mutant.action.kind == "tool_call"
    flags = (
        parent.action.kind != mutant.action.kind,
        parent.action.tool != mutant.action.tool,
        both_calls and _args(parent) != _args(mutant),
        set(parent.memory_used) != set(mutant.memory_used),
    )
    return sum(flags) / len(flags)
