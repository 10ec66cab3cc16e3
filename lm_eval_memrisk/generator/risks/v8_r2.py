"""Dataset v8's R2 ``latest_timestamp`` episodes: a change the user *announced*.

In v7 the rule's winner was always said in the same words ("Since last month my K is
V"), its losers in others (the first statement, "back before May last year ... was"), so
the words around a value told which one holds (a learned reader passed 30 of 32 of these
episodes on four builds).  In v8 the user first gives the current value, then announces
a change that is not in force yet (:data:`ANNOUNCED`), and in a later session, in words
that name no value, says either that the change has gone through (:data:`WENT_THROUGH`)
or that it has not yet (:data:`NOT_YET`):

==================  ==================  ==================
                    went through        not yet
==================  ==================  ==================
the current value   loses               holds
the announced one   holds               loses
==================  ==================  ==================

So the same two sentences introduce the winner half the time; only the status message,
with no value near it, decides.  A request right after the announcement, while the
announced value is the key's newest note, uses the current one (the change is not in
force yet) in both cells, and the backdated note (v6's, about an earlier time) stays the
newest note at the final request, so the recency-alone oracle (ablated-R2) fails every
such episode.
"""

from __future__ import annotations

from collections.abc import Callable

from lm_eval_memrisk.generator.people import Owner
from lm_eval_memrisk.generator.plan import Block, CheckSpec, Ev, ItemRef, Session
from lm_eval_memrisk.generator.risks.common import (
    Ctx,
    ask,
    done_ack,
    me,
    new_task,
    statement,
    tool_decision,
    value_check,
)
from lm_eval_memrisk.generator.templating import pick

#: The user announces a change that is not in force yet.
ANNOUNCED: tuple[str, ...] = (
    "Heads-up: {{ whose }} {{ noun }} is about to change to {{ value }}. I'll tell you when the switch is done; until then the current one stays.",
    "{{ Whose }} {{ noun }} will become {{ value }}, but not yet. I'll let you know once it takes effect.",
    "I'm in the middle of switching {{ whose }} {{ noun }} to {{ value }}. Don't use it until I say the switch has gone through.",
)
ANNOUNCED_ACKS: tuple[str, ...] = (
    "Noted. I'll keep using the current one until you tell me the switch is done.",
    "Got it: the new one is noted, and the current one stays until you say otherwise.",
)
#: Later, in words that name no value: the change is in force ...
WENT_THROUGH: tuple[str, ...] = (
    "The {{ noun }} switch I mentioned has gone through, so the new one is in use now.",
    "The change to my {{ noun }} is done; the new one applies from today.",
    "That {{ noun }} switch I told you about is complete now.",
)
WENT_THROUGH_ACKS: tuple[str, ...] = ("Thanks, I'll use the new one from now on.", "Good to know; the new one it is.")
#: ... or it is not.
NOT_YET: tuple[str, ...] = (
    "The {{ noun }} switch I mentioned is delayed, so the current one is still in use.",
    "The change to my {{ noun }} hasn't gone through yet; nothing changes for now.",
    "That {{ noun }} switch I told you about is on hold for a few more weeks.",
)
NOT_YET_ACKS: tuple[str, ...] = ("Understood, I'll stay with the current one.", "Thanks, the current one stays for now.")


def announced_change(
    ctx: Ctx, owner: Owner, sessions: list[Session], later: Callable[[], Session], current: ItemRef, announced: ItemRef
) -> tuple[ItemRef, ItemRef, Block | None]:
    """Plan the current value (in ``sessions[0]``) and the announced change; on medium
    and hard tiers a request right after it that uses the current value, and the status
    message in a session of its own.  Returns (the note that holds at the end, the other
    one, the status message and its acknowledgement where an easy episode has no room
    for a session of its own: the caller says it later, else None)."""
    rng = ctx.rng
    went_through = rng.random() < 0.5
    sessions[0].blocks.append(statement(ctx, owner, current))
    here = later()
    here.blocks.append(statement(ctx, owner, announced, pool=ANNOUNCED, acks=ANNOUNCED_ACKS))
    said = pick(rng, WENT_THROUGH if went_through else NOT_YET, noun=ctx.fam.noun)
    won = (announced, current) if went_through else (current, announced)
    if ctx.tier != "easy":
        saved = ctx.task
        new_task(ctx)
        early = tool_decision(ctx, current.value, current, [
            value_check(ctx, current.value, "uses the current value: the announced change is not in force yet"),
            CheckSpec("memory_not_used", "does not use the announced value before it takes effect", item=announced),
        ], naive_key=current.key)  # fmt: skip
        here.blocks.append(ask(ctx, me(ctx), early) + done_ack(ctx))
        ctx.task = saved
    ack = rng.choice(WENT_THROUGH_ACKS if went_through else NOT_YET_ACKS)
    status: Block = [Ev("user_message", text=said), Ev("assistant_message", text=ack)]
    if ctx.tier == "easy":
        return (*won, status)
    sessions.append(Session(ctx.main, ctx.ws, blocks=[status]))
    return (*won, None)


__all__ = ["ANNOUNCED", "ANNOUNCED_ACKS", "NOT_YET", "NOT_YET_ACKS", "WENT_THROUGH", "WENT_THROUGH_ACKS", "announced_change"]
