"""Generate whole datasets: counts per (risk, tier), family cycles, ids, ordering, output.

``generate(DEFAULT_SEED)`` reproduces the shipped ``data/episodes_v8.jsonl`` (and with
``version="v1"``..``"v7"`` the older files, ``"v9"`` the next) byte for byte: every draw comes from a :class:`random.Random` seeded from ``(seed, risk,
tier, index, attempt)`` (see :mod:`~lm_eval_memrisk.generator.seeding`).
"""

from __future__ import annotations

import dataclasses
import os
import random
from collections.abc import Callable, Mapping
from functools import partial

from lm_eval_memrisk.episodes import risks
from lm_eval_memrisk.episodes.codec import dumps_episode
from lm_eval_memrisk.episodes.errors import MemriskError
from lm_eval_memrisk.episodes.loader import VERSION_FIELDS
from lm_eval_memrisk.episodes.records import (
    RESOLUTION_RULES,
    TIERS,
    Episode,
    Event,
    Tool,
)
from lm_eval_memrisk.episodes.validate import MAX_CHECKS
from lm_eval_memrisk.generator import phrasing
from lm_eval_memrisk.generator.acks import vary_acks
from lm_eval_memrisk.generator.early_foils import carry_foils
from lm_eval_memrisk.generator.families import FAMILIES, Family
from lm_eval_memrisk.generator.families.tools import DECOYS, TOOLS
from lm_eval_memrisk.generator.fates import template_uses
from lm_eval_memrisk.generator.fillers import add_fillers
from lm_eval_memrisk.generator.finish import finish
from lm_eval_memrisk.generator.people import Cast
from lm_eval_memrisk.generator.plan import compile_plan
from lm_eval_memrisk.generator.polish import polished
from lm_eval_memrisk.generator.polish.v10 import polished as polished_v10
from lm_eval_memrisk.generator.risks import (
    BUILDERS,
    R2_SCOPE_FAMILIES,
    Ctx,
    Draft,
    builder_module,
    families_of,
)
from lm_eval_memrisk.generator.risks.common import CONTRAST_VERSIONS, PRE_V6, task_for
from lm_eval_memrisk.generator.risks.v2 import BUILDERS as V2_BUILDERS
from lm_eval_memrisk.generator.risks.v3 import BUILDERS as V3_BUILDERS
from lm_eval_memrisk.generator.risks.v3 import V4_BUILDERS, V5_BUILDERS, V7_BUILDERS, V8_BUILDERS
from lm_eval_memrisk.generator.risks.v6 import R2_RULES as V6_R2_RULES
from lm_eval_memrisk.generator.risks.v6 import V6_BUILDERS
from lm_eval_memrisk.generator.seeding import DEFAULT_SEED, rng_for
from lm_eval_memrisk.generator.values import ValueBank, ValueCollision
from lm_eval_memrisk.generator.verify import MIN_GAP, Rejected, verify

#: Dataset versions the generator can build: name -> the episodes' ``version`` field
#: (the inverse of the loader's table, which names the packaged file of each field).
VERSIONS: dict[str, str] = {name: field for field, name in VERSION_FIELDS.items()}
DEFAULT_VERSION = "v8"
#: Versions whose phrasing is counterbalanced (built twice: :mod:`.phrasing`): those with v7's contrast.
COUNTERBALANCED = CONTRAST_VERSIONS
VERSION = VERSIONS[DEFAULT_VERSION]
#: Dataset version -> its risk builders (drafts before fillers).
DRAFT_BUILDERS: dict[str, Mapping[str, Callable[[Ctx], Draft]]] = {
    "v1": BUILDERS, "v2": V2_BUILDERS, "v3": V3_BUILDERS, "v4": V4_BUILDERS, "v5": V5_BUILDERS,
    "v6": V6_BUILDERS, "v7": V7_BUILDERS, "v8": V8_BUILDERS,
}  # fmt: skip
#: Versions that rebuild only some risks of an earlier one: version -> (base, the rebuilt
#: risks in stages).  Each stage's phrasing is dealt beside the base's other episodes and
#: the earlier stages' (which stay as they were built).  v8 is v7 with R3 rebuilt
#: (:mod:`.risks.v8`), then R2's announced changes (:mod:`.risks.v8_r2`): a model's
#: replies to v7's other episodes stand.
REBUILT: dict[str, tuple[str, tuple[frozenset[str], ...]]] = {"v8": ("v7", (frozenset({"R3"}), frozenset({"R2"})))}
#: Versions that are an earlier version's episodes reworded, version -> (base, rewording):
#: v9 is v8 in the words blind readers of the whole of v8 asked for (:mod:`.polish`), v10
#: is v9 with the history readers of v9 asked for (:mod:`.polish.v10`).
POLISHED: dict[str, tuple[str, Callable[[list[Episode], str], list[Episode]]]] = {
    "v9": ("v8", polished), "v10": ("v9", polished_v10),
}
#: Versions whose earlier requests carry the final request's foil checks (:func:`carry_foils`).
CARRIED_FOILS = frozenset({"v5", "v6", "v7", "v8"})
#: Versions built and packaged under scorer 3.1, whose check of the notes a reference
#: names read its arguments as one text (see :func:`~.verify.verify`): they keep that
#: reading so that they rebuild byte for byte.
SCORER_31_BUILT = frozenset({"v1", "v2", "v3", "v4", "v5", "v6"})
Counts = Mapping[tuple[str, str], int]

#: Paper Table 4: episodes per tier (easy, medium, hard) of each main risk (the registry's
#: ``tiers``; snapshots, the functions below read the registry at call time).
MAIN_TIERS: dict[str, tuple[int, int, int]] = {s.risk: s.tiers for s in risks.specs() if s.main}
R6_TIERS: tuple[int, int, int] = risks.spec("R6").tiers
#: Episodes of the main track whose value checks keep a strict "label: value" form.
STRICT_SHARE = 20 / 120
#: Label of the strict form when the checked argument is not the family's own.
ARG_LABELS: dict[str, str] = {"to": "email", "airline": "airline", "when": "slot", "dish": "dish"}
MAX_ATTEMPTS = 40
#: Attempts spent looking for request texts not used yet in the risk (then repeats are allowed).
UNIQUE_ATTEMPTS = 8


class GenerationError(MemriskError):
    """An episode could not be generated (a generator bug, not a user error)."""


def _scale(tiers: tuple[int, int, int], n: int) -> tuple[int, ...]:
    """Largest-remainder split of ``n`` in the proportions of ``tiers``."""
    total = sum(tiers)
    quotas = [n * t / total for t in tiers]
    out = [int(q) for q in quotas]
    order = sorted(range(3), key=lambda i: (-(quotas[i] - out[i]), i))
    for i in order[: n - sum(out)]:
        out[i] += 1
    return tuple(out)


def scaled_counts(n_per_risk: int) -> dict[tuple[str, str], int]:
    """Counts with ``n_per_risk`` episodes per risk (R6 included), tiers in the registry's
    proportions."""
    if n_per_risk < 1:
        raise ValueError("n_per_risk must be at least 1")
    table = {s.risk: s.tiers for s in risks.specs()}
    return {
        (risk, tier): k
        for risk, tiers in table.items()
        for tier, k in zip(TIERS, _scale(tiers, n_per_risk))
    }


def default_counts() -> dict[tuple[str, str], int]:
    """The shipped counts (the registry's ``tiers``): 120 main-track episodes and 24 R6
    episodes."""
    return risks.tier_counts()


# -- one episode ------------------------------------------------------------------------


def _tools(rng_pick: random.Random, draft: Draft, events: tuple[Event, ...]) -> tuple[Tool, ...]:
    """The tools the episode needs, plus 0-3 unrelated ones (2-4 in all)."""
    needed = list(dict.fromkeys(draft.tools + [e.tool for e in events if e.tool]))
    free = [d for d in DECOYS if d not in needed]
    k = rng_pick.randint(
        max(1 if len(needed) == 1 else 0, 2 - len(needed)), max(0, 4 - len(needed))
    )
    return tuple(TOOLS[n] for n in needed + rng_pick.sample(free, k))


def _attempt(
    seed: int,
    risk: str,
    tier: str,
    index: int,
    fam: Family,
    variant: int,
    rule: str | None,
    attempt: int,
    version: str = "v1",
) -> Episode:
    """One seeded attempt at an episode (may raise ValueCollision or Rejected)."""
    rng = rng_for(seed, risk, tier, index, attempt)
    cast = Cast(rng)
    main, ws = cast.person(), cast.workspace()
    ctx = Ctx(
        rng=rng,
        tier=tier,
        fam=fam,
        cast=cast,
        bank=ValueBank(rng, main, ws),
        task=task_for(fam, rng, version),
        main=main,
        ws=ws,
        variant=variant,
        rule=rule,
        version=version,
    )
    draft = draft_builder(version, risk)(ctx)
    draft.sessions = [s for s in draft.sessions if s.blocks]
    add_fillers(rng, tier, draft.sessions, cast, ctx.bank, draft.reserved_keys, wide=version != "v1",
                own_updates=version in CONTRAST_VERSIONS)  # fmt: skip
    events = compile_plan(draft.sessions, rng)
    if version != "v1":
        events = vary_acks(events, rng)
    episode = Episode(
        id=f"{risk}-{tier}-{index + 1:02d}",
        version=VERSIONS[version],
        risk=risk,
        tier=tier,
        track=risks.track_of(risk),
        family=fam.name,
        description=draft.description,
        tools=_tools(rng, draft, events),
        events=events,
        resolution_rule=draft.resolution_rule,
        metadata={"generator_seed": seed, **draft.extra},
    )
    if version != "v1":
        episode = finish(episode)
    if version in CARRIED_FOILS:
        episode = carry_foils(episode)
    if any(len(dp.checks) > MAX_CHECKS for dp in episode.decision_points):
        raise Rejected(f"a decision point has more than {MAX_CHECKS} checks")
    v2 = version != "v1"
    verify(episode, draft.decisions(), same_values_ok=v2, min_gap=MIN_GAP[tier] if v2 else 0,
           joined_arguments=version in SCORER_31_BUILT)
    return episode


def request_texts(episode: Episode) -> list[str]:
    """The user messages that immediately precede the decision points."""
    ev = episode.events
    return [ev[i - 1].text or "" for i, e in enumerate(ev) if e.type == "decision_point" and i > 0]


def build_episode(
    seed: int,
    risk: str,
    tier: str,
    index: int,
    family: str,
    variant: int = 0,
    rule: str | None = None,
    taken: set[str] | None = None,
    version: str = DEFAULT_VERSION,
) -> Episode:
    """Episode ``index`` (0-based) of ``(risk, tier)``; retries rejected attempts.

    ``taken`` holds request texts already used by other episodes of the risk; an
    attempt that repeats one is rejected, and the new requests are added on success.
    """
    problems: list[str] = []
    fallback: Episode | None = None
    phrasing.building(f"{risk}-{tier}-{index + 1:02d}")
    for attempt in range(MAX_ATTEMPTS):
        try:
            episode = _attempt(
                seed, risk, tier, index, FAMILIES[family], variant, rule, attempt, version
            )
        except (ValueCollision, Rejected) as exc:
            problems.append(str(exc))
            continue
        asks = request_texts(episode)
        fresh = taken is None or not (set(asks) & taken or len(set(asks)) < len(asks))
        if fresh or attempt >= UNIQUE_ATTEMPTS:
            chosen = episode if fresh else (fallback or episode)
            if taken is not None:
                taken.update(request_texts(chosen))
            return chosen
        fallback = fallback or episode
    raise GenerationError(
        f"{risk}-{tier}-{index + 1}: no valid episode in {MAX_ATTEMPTS} attempts: {problems[-1]}"
    )


# -- a dataset --------------------------------------------------------------------------


class _Cycle:
    """Endless seeded reshuffles of a list (every entry once per round)."""

    def __init__(self, seed: int, items: tuple[str, ...], *labels: object):
        self._rng = rng_for(seed, *labels)
        self._items = items
        self._queue: list[str] = []

    def next(self) -> str:
        if not self._queue:
            self._queue = self._rng.sample(list(self._items), len(self._items))
        return self._queue.pop(0)


def draft_builder(version: str, risk: str) -> Callable[[Ctx], Draft]:
    """The draft builder of ``risk`` in dataset ``version``: the version's table, or for a
    risk only the registry knows, its v1 builder module's ``build`` (a new risk is built
    the same way in every version until a version changes it)."""
    table = DRAFT_BUILDERS[version]
    if risk in table:
        return table[risk]
    build: Callable[[Ctx], Draft] = builder_module(risk).build
    return build


def _risk_episodes(seed: int, risk: str, counts: Counts, version: str) -> list[Episode]:
    """All episodes of one risk: families cycle, R2 rules cycle per tier."""
    families = _Cycle(seed, families_of(risk), risk, "families")
    scoped = _Cycle(seed, R2_SCOPE_FAMILIES, risk, "scope-families")
    out: list[Episode] = []
    taken: set[str] = set()
    for tier in TIERS:
        rules = _Cycle(seed, RESOLUTION_RULES if version in PRE_V6 else V6_R2_RULES, risk, tier, "rules")
        for index in range(counts.get((risk, tier), 0)):
            rule = rules.next() if risk == "R2" else None
            family = scoped.next() if rule == "scope" else families.next()
            # v2 cycles its mechanism patterns over the whole risk, not per tier
            variant = index if version == "v1" else len(out)
            out.append(
                build_episode(seed, risk, tier, index, family, variant, rule, taken, version)
            )
    return out


def _strict(episode: Episode) -> Episode:
    """Give every tool_arg_equals check the strict ``label: value`` original form."""
    fam = FAMILIES[episode.family]

    def label(tool: str | None, arg: str | None) -> str:
        if tool == fam.tool.name and arg == fam.arg:
            return fam.label
        return ARG_LABELS.get(arg or "", arg or "value")

    events = tuple(
        dataclasses.replace(
            e,
            checks=tuple(
                dataclasses.replace(
                    c, expected_original=f"{label(c.tool, c.argument)}: {c.expected}"
                )
                if c.kind == "tool_arg_equals"
                else c
                for c in e.checks
            ),
        )
        if e.type == "decision_point"
        else e
        for e in episode.events
    )
    return dataclasses.replace(episode, events=events)


def _mark_strict(seed: int, episodes: list[Episode], counts: Counts) -> list[Episode]:
    """Give ~1/6 of each main risk's episodes the strict label form (seeded choice)."""
    out = list(episodes)
    for risk in risks.main_risks():
        n_risk = sum(counts.get((risk, t), 0) for t in TIERS)
        eligible = [
            i
            for i, ep in enumerate(out)
            if ep.risk == risk
            and any(c.kind == "tool_arg_equals" for dp in ep.decision_points for c in dp.checks)
        ]
        k = min(round(n_risk * STRICT_SHARE), len(eligible))
        for i in sorted(rng_for(seed, risk, "strict").sample(eligible, k)):
            out[i] = _strict(out[i])
    return out


def generate(
    seed: int = DEFAULT_SEED,
    counts: Counts | None = None,
    version: str = DEFAULT_VERSION,
    *,
    counterbalance: bool = True,
) -> list[Episode]:
    """All episodes of dataset ``version`` (``v1``, ``v2`` or ``v3``) for ``counts`` (default:
    the shipped counts), main track first, then R6; each ordered by risk, tier (easy,
    medium, hard) and index.  ``counterbalance=False`` draws a :data:`COUNTERBALANCED`
    version's phrasing at random instead (to measure what counterbalancing changes)."""
    if version not in VERSIONS:
        raise ValueError(
            f"unknown dataset version {version!r} (expected one of {sorted(VERSIONS)})"
        )
    if version in POLISHED:
        base, reword = POLISHED[version]
        return reword(generate(seed, counts, base, counterbalance=counterbalance), VERSIONS[version])
    counts = dict(default_counts() if counts is None else counts)
    order = risks.risk_ids()
    unknown = [k for k in counts if k[0] not in order or k[1] not in TIERS]
    if unknown:
        raise ValueError(f"unknown (risk, tier) in counts: {unknown}")
    for risk in sorted({r for (r, _), k in counts.items() if k}):
        try:
            draft_builder(version, risk)
            families_of(risk)
        except (ImportError, AttributeError, LookupError) as exc:
            raise GenerationError(f"dataset {version} has no builder for {risk}: {exc}") from None

    if version in REBUILT:
        return _rebuilt(seed, counts, version, counterbalance)
    return _built(seed, counts, version, counterbalance)[0]


def _built(
    seed: int, counts: Counts, version: str, counterbalance: bool, context: phrasing.Dealt | None = None
) -> tuple[list[Episode], phrasing.Dealt | None]:
    """The episodes of ``counts`` built by ``version``'s builders, and what their
    counterbalanced phrasing dealt (None where the version is not counterbalanced);
    ``context``: the phrasing of the dataset's other episodes, dealt alongside."""

    build = partial(_build, seed, counts, version)
    if version not in COUNTERBALANCED or not counterbalance:
        return build(), None
    return phrasing.counterbalanced(build, template_uses, context)


def _build(seed: int, counts: Counts, version: str) -> list[Episode]:
    """One build of the episodes of ``counts`` (phrasing as the active one deals it)."""
    episodes: list[Episode] = []
    for risk in risks.risk_ids():
        if any(counts.get((risk, tier), 0) for tier in TIERS):
            episodes.extend(_risk_episodes(seed, risk, counts, version))
    return _mark_strict(seed, episodes, counts)


def _rebuilt(seed: int, counts: Counts, version: str, counterbalance: bool) -> list[Episode]:
    """A :data:`REBUILT` version: its base version's episodes (only the ``version`` field
    changed), those of the rebuilt risks built anew stage by stage, each stage's phrasing
    dealt alongside the sentences of every episode not in it (the base's other episodes
    and the earlier stages', which stay byte for byte what they were), then
    :func:`_mended` where a template is still out of the band."""
    base, stages = REBUILT[version]
    kept, dealt = _built(seed, counts, base, counterbalance)
    fresh: dict[str, Episode] = {}
    ids: set[str] = set()
    for stage in stages:
        ids = {ep.id for ep in kept if ep.risk in stage}
        context = dealt.without(ids) if dealt else None
        new, new_dealt = _built(seed, {k: n for k, n in counts.items() if k[0] in stage}, version, counterbalance, context)
        fresh.update((ep.id, ep) for ep in new)
        if context is not None and new_dealt is not None:
            dealt = context.plus(new_dealt)
    field = VERSIONS[version]
    episodes = [fresh.get(ep.id) or dataclasses.replace(ep, version=field) for ep in kept]
    return episodes if dealt is None else _mended(seed, counts, version, episodes, dealt, ids)


def _mended(
    seed: int, counts: Counts, version: str, episodes: list[Episode], dealt: phrasing.Dealt, last: set[str]
) -> list[Episode]:
    """A :data:`REBUILT` version's episodes with :func:`~.phrasing.mend`'s sentences
    rendered anew (each risk that has one built again, in its own version, every other
    sentence as dealt): the same episodes where every template is in the band."""
    given = phrasing.mend(dealt, phrasing.fates(template_uses(episodes)), last)
    base, stages = REBUILT[version]
    out = {ep.id: ep for ep in episodes}
    for risk in sorted({out[s[0]].risk for s in given}):
        built = partial(_build, seed, {k: n for k, n in counts.items() if k[0] == risk},
                        version if any(risk in stage for stage in stages) else base)  # fmt: skip
        for ep in phrasing.rendered(built, {**dealt.given, **given}):
            out[ep.id] = dataclasses.replace(ep, version=VERSIONS[version])
    return [out[ep.id] for ep in episodes]


def write_dataset(path: str | os.PathLike[str], episodes: list[Episode]) -> None:
    """One canonical JSON line per episode (``codec.dumps_episode``), ``\\n``-terminated."""
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.writelines(dumps_episode(episode) + "\n" for episode in episodes)
