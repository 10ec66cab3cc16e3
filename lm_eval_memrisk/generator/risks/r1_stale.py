"""R1 stale memory: a fact is updated (one or more times); the agent must use the newest.

The first-written item of the key is always superseded, so an agent that acts on
the oldest note fails.  Hard episodes may ask twice, with another update in between.
"""

from __future__ import annotations

from lm_eval_memrisk.generator.plan import Block, CheckSpec, DecisionSpec, ItemRef, Session
from lm_eval_memrisk.generator.risks.common import (
    TRUST_SYSTEM,
    Ctx,
    Draft,
    answer_reference,
    ask,
    done_ack,
    fresh_value,
    item,
    lookup_write,
    me,
    naive_answer,
    new_task,
    silent_write,
    statement,
    times,
    tool_decision,
    value_check,
)
from lm_eval_memrisk.generator.templating import pick

_N_UPDATES = {"easy": (1, 1), "medium": (1, 2), "hard": (2, 3)}


def _update_block(ctx: Ctx, old: ItemRef, new: ItemRef) -> Block:
    """The update as the user says it, as a silent profile sync, or as a records lookup."""
    how = ctx.rng.choices(("user", "sync", "lookup"), weights=(7, 2, 1))[0]
    if how == "user":
        return statement(ctx, me(ctx), new, supersedes=old)
    new.source, new.trust = ("system" if how == "sync" else "tool"), TRUST_SYSTEM
    if how == "sync":
        return silent_write(new, supersedes=old)
    return lookup_write(ctx, new, ctx.main.full, supersedes=old)


def _decision(ctx: Ctx, ref: ItemRef, answer: bool) -> DecisionSpec:
    checks = [
        value_check(ctx, ref.value, "uses the current value"),
        CheckSpec("memory_not_used", "no superseded note is used", status="superseded"),
    ]
    if answer:
        checks[0] = CheckSpec("text_contains", f"answers with {ref.value}", value=ref.value)
        return DecisionSpec(
            checks=checks,
            reference=answer_reference(ctx, me(ctx), ref.value),
            naive=naive_answer(ctx, me(ctx)),
            uses=(ref,),
        )
    return tool_decision(ctx, ref.value, ref, checks)


def build(ctx: Ctx) -> Draft:
    """Draft an R1 episode (see the module docstring)."""
    rng, owner = ctx.rng, me(ctx)
    n_updates = rng.randint(*_N_UPDATES[ctx.tier])
    two = ctx.tier == "hard" and ctx.variant % 2 == 1
    answer = not two and ctx.variant % 4 == 2

    first = item(ctx, owner, fresh_value(ctx))
    sessions = [Session(ctx.main, ctx.ws, blocks=[statement(ctx, owner, first)])]
    refs = [first]
    for k in range(1, n_updates + 1):
        if two and k == n_updates:  # first decision before the last update
            sessions[-1].blocks.append(ask(ctx, owner, _decision(ctx, refs[-1], False)))
            sessions[-1].blocks[-1].extend(done_ack(ctx))  # same block: nothing slips in between
            new_task(ctx)
        if rng.random() < 0.6:
            sessions.append(Session(ctx.main, ctx.ws))
        new = item(ctx, owner, fresh_value(ctx, old=refs[-1].value))
        sessions[-1].blocks.append(_update_block(ctx, refs[-1], new))
        refs.append(new)
    if rng.random() < 0.5:
        sessions.append(Session(ctx.main, ctx.ws))
    pool = ctx.fam.questions if answer else None
    sessions[-1].blocks.append(ask(ctx, owner, _decision(ctx, refs[-1], answer), pool=pool))
    sessions[-1].sealed = True
    noun = ctx.fam.noun
    desc = pick(
        rng,
        (
            "Stale memory: {{ name }}'s {{ noun }} changed {{ n }}; act on the current value.",
            (
                "The {{ noun }} was updated {{ n }} since it was first saved; the oldest note is "
                "stale."
            ),
        ),
        name=ctx.main.first,
        noun=noun,
        n=times(n_updates),
    )
    return Draft(
        sessions=sessions, description=desc, tools=[ctx.fam.tool.name], reserved_keys={ctx.fam.key}
    )
