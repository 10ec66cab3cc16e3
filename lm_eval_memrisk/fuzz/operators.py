"""Mutation operators, each with an explicit obligation.

An operator works on a checkpoint (an episode whose last event of interest is its
single decision point) and its :class:`~lm_eval_memrisk.fuzz.expectation.Expectation`.
``plan`` draws every random choice from the seeded ``rng`` into a JSON-able
``params`` dict (None: the operator does not apply here); ``apply`` is a pure
function of (episode, expectation, params).  So the mutant id, a hash of the
parameters, determines the mutant.

*Obligation* = what the operator changes in the structured state and how the
decision point's expected behaviour moves.  Query operators only rewrite the user's
request (the last user message before the decision point): the state, checks,
reference and ``naive`` action stay as they are.  Memory-state operators insert
events before the request and return a new expectation; :mod:`~lm_eval_memrisk.fuzz.mutate`
then recomputes the checks and reference from it with
:func:`~lm_eval_memrisk.fuzz.expectation.derive` (``naive`` stays: its
``{{mem:KEY}}`` placeholders are what the risk's adversary fills with the wrong item).
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from lm_eval_memrisk.episodes.records import Constraint, Episode, Event, MemoryItem
from lm_eval_memrisk.episodes.state import events_before, in_scope, snapshot, state_at
from lm_eval_memrisk.episodes.trace import ItemState, StateSnapshot
from lm_eval_memrisk.fuzz import pools
from lm_eval_memrisk.fuzz.edit import (
    Draft,
    fresh_constraint_id,
    fresh_item_id,
    insert_before,
    last_user_message,
    replace_text,
)
from lm_eval_memrisk.fuzz.expectation import (
    MARK,
    Expectation,
    dp_of,
    reorder_avoid,
    verb_phrase,
)
from lm_eval_memrisk.fuzz.values import fresh_value

Params = dict[str, Any]
USE_KINDS = ("tool_arg_equals", "tool_called", "text_contains", "memory_not_used")


@dataclass(frozen=True)
class Applied:
    """What an operator produced: the edited episode and the expectation now in force."""

    episode: Episode
    exp: Expectation
    risk: str | None = None
    """Targeted risk; None = the parent's (query operators, distractors)."""
    adversary: str | None = None
    """Reference agent that must fail the mutant (None: the risk's default)."""
    rule: str | None = None
    """Resolution rule of an R2 mutant."""
    recompute: bool = True
    """Whether the decision point's checks/reference are recomputed from ``exp``."""


@dataclass(frozen=True)
class Ctx:
    """An operator's view of the checkpoint."""

    episode: Episode
    exp: Expectation
    dp: Event
    state: StateSnapshot
    request: Event | None

    @staticmethod
    def of(episode: Episode, exp: Expectation) -> Ctx:
        dp = dp_of(episode)
        return Ctx(episode, exp, dp, state_at(episode, dp.id), last_user_message(episode, dp.id))

    @property
    def items(self) -> dict[str, ItemState]:
        return {i.id: i for i in self.state.memory}

    @property
    def anchor(self) -> str:
        """Where memory-state events go: before the request (else before the decision)."""
        return self.request.id if self.request is not None else self.dp.id

    @property
    def use(self) -> ItemState | None:
        return self.items.get(self.exp.use_item or "")

    def values(self) -> list[str]:
        out = [i.value for i in self.episode.memory_items.values()]
        out += [c.forbid_text for c in self.episode.constraints.values() if c.forbid_text]
        return out

    def user_scope(self) -> str:
        scopes = self.state.active_scopes
        return next((s for s in scopes if s.startswith("user:")), scopes[0] if scopes else "global")

    def words(self, scope: str | None = None, **extra: str) -> dict[str, str]:
        scope = scope or (self.use.scope if self.use else self.user_scope())
        whose, whom = (
            ("our", "us")
            if scope.startswith("workspace:")
            else ("the", "everyone")
            if scope == "global"
            else ("my", "me")
        )
        key = self.exp.key
        return {
            "key": key,
            "tail": key.split()[-1],
            "whose": whose,
            "whom": whom,
            "verb": verb_phrase(self.exp.tool),
            **extra,
        }


def _pick(rng: random.Random, pool: tuple[Any, ...]) -> int:
    return rng.randrange(len(pool))


def _ack(rng: random.Random) -> int:
    return _pick(rng, pools.ACKS)


def _user(text: str) -> Draft:
    return {"type": "user_message", "text": text}


def _assistant(text: str) -> Draft:
    return {"type": "assistant_message", "text": text}


class Operator:
    """Base class: ``name``, ``kind`` (query | memory), targeted ``risks`` and the
    check ``kinds`` its mutants can carry (empty = inherited from the parent)."""

    name: ClassVar[str]
    kind: ClassVar[str]
    risks: ClassVar[tuple[str, ...]] = ()
    kinds: ClassVar[tuple[str, ...]] = ()

    def plan(self, ctx: Ctx, rng: random.Random) -> Params | None:
        raise NotImplementedError

    def apply(self, ctx: Ctx, params: Mapping[str, Any]) -> Applied | None:
        raise NotImplementedError


# -- query mutations ------------------------------------------------------------------


class _Rewrite(Operator):
    """Shared shape of the request rewrites: pick a template, replace the request."""

    kind = "query"
    tool_pool: ClassVar[tuple[str, ...]] = ()
    answer_pool: ClassVar[tuple[str, ...]] = ()

    def pool(self, ctx: Ctx) -> tuple[str, ...]:
        return self.tool_pool if ctx.exp.is_tool else self.answer_pool

    def plan(self, ctx: Ctx, rng: random.Random) -> Params | None:
        if ctx.request is None:
            return None
        return {"template": _pick(rng, self.pool(ctx))}

    def apply(self, ctx: Ctx, params: Mapping[str, Any]) -> Applied | None:
        assert ctx.request is not None
        text = self.pool(ctx)[int(params["template"])].format(**ctx.words())
        details = _details(ctx.exp)
        if details:
            text = f"{text} Details: {details}."
        if text == ctx.request.text:
            return None
        return Applied(replace_text(ctx.episode, ctx.request.id, text), ctx.exp, recompute=False)


def _details(exp: Expectation) -> str:
    """The reference's other tool arguments ("subject: Signed lease; ..."), which a
    rewritten request must still state (the reference keeps expecting them)."""
    if not exp.is_tool:
        return ""
    args = dict(exp.template.get("arguments") or {})
    return "; ".join(
        f"{name.replace('_', ' ')}: {value}"
        for name, value in sorted(args.items())
        if not (isinstance(value, str) and MARK in value) and value not in (None, "", [], {})
    )


class Paraphrase(_Rewrite):
    """Obligation: the request is replaced by a paraphrase from a template pool that
    names the same key and action, followed by the reference's other tool arguments
    (so none is dropped); state, checks, reference and naive are unchanged."""

    name = "paraphrase"
    tool_pool = pools.PARAPHRASE_TOOL
    answer_pool = pools.PARAPHRASE_ANSWER


class IndirectReference(_Rewrite):
    """Obligation: the request refers to the key only indirectly ("the address I
    mentioned before"); state, checks, reference and naive are unchanged."""

    name = "indirect_reference"
    tool_pool = pools.INDIRECT_TOOL
    answer_pool = pools.INDIRECT_ANSWER


class DistractorClause(Operator):
    """Obligation: an unrelated clause (no memory value, no key) is added before or
    after the request; state, checks, reference and naive are unchanged."""

    name = "distractor_clause"
    kind = "query"

    def plan(self, ctx: Ctx, rng: random.Random) -> Params | None:
        if ctx.request is None:
            return None
        return {"clause": _pick(rng, pools.DISTRACTOR_CLAUSES), "before": rng.random() < 0.5}

    def apply(self, ctx: Ctx, params: Mapping[str, Any]) -> Applied | None:
        assert ctx.request is not None
        clause = pools.DISTRACTOR_CLAUSES[int(params["clause"])]
        own = (ctx.request.text or "").strip()
        text = f"{clause} {own}" if params["before"] else f"{own} {clause}"
        return Applied(replace_text(ctx.episode, ctx.request.id, text), ctx.exp, recompute=False)


_SENTENCE = re.compile(r"(?<=[.!?])\s+")


class ReorderSentences(Operator):
    """Obligation: the request's sentences are rotated (needs two or more sentences);
    state, checks, reference and naive are unchanged."""

    name = "reorder_sentences"
    kind = "query"

    def plan(self, ctx: Ctx, rng: random.Random) -> Params | None:
        if ctx.request is None:
            return None
        n = len(_SENTENCE.split((ctx.request.text or "").strip()))
        return {"shift": rng.randint(1, n - 1)} if n >= 2 else None

    def apply(self, ctx: Ctx, params: Mapping[str, Any]) -> Applied | None:
        assert ctx.request is not None
        parts = _SENTENCE.split((ctx.request.text or "").strip())
        k = int(params["shift"]) % len(parts)
        text = " ".join(parts[k:] + parts[:k])
        if k == 0 or text == ctx.request.text:
            return None
        return Applied(replace_text(ctx.episode, ctx.request.id, text), ctx.exp, recompute=False)


# -- memory-state mutations -----------------------------------------------------------


def _replacement_value(ctx: Ctx, rng: random.Random) -> str | None:
    """A fresh value for the item the decision uses, or None when the decision uses none."""
    if ctx.exp.mode != "use" or ctx.use is None:
        return None
    return fresh_value(rng, ctx.use.value, ctx.values())


class InsertUpdate(Operator):
    """Obligation (R1): the user states a new value v' for the key and a
    ``memory_update`` item N (same key and scope) supersedes the current item C.  The
    expected value moves to v' (reference and value check use N), C becomes
    ``superseded`` and gets ``memory_not_used status=superseded``.  The stale agent,
    which takes the oldest item of the key, must fail."""

    name = "insert_update"
    kind = "memory"
    risks = ("R1",)
    kinds = USE_KINDS

    def plan(self, ctx: Ctx, rng: random.Random) -> Params | None:
        value = _replacement_value(ctx, rng)
        if value is None:
            return None
        return {"value": value, "template": _pick(rng, pools.UPDATES), "ack": _ack(rng)}

    def apply(self, ctx: Ctx, params: Mapping[str, Any]) -> Applied | None:
        old = ctx.use
        assert old is not None
        new_id = fresh_item_id(ctx.episode)
        item = MemoryItem(
            id=new_id,
            key=old.key,
            value=params["value"],
            scope=old.scope,
            source="user",
            trust=max(old.trust, 0.9),
            valid_from=0,
        )
        text = pools.UPDATES[int(params["template"])].format(**ctx.words(value=params["value"]))
        drafts = [
            _user(text),
            {"type": "memory_update", "item": item, "supersedes": old.id},
            _assistant(pools.ACKS[int(params["ack"])]),
        ]
        episode = insert_before(ctx.episode, ctx.anchor, drafts)
        exp = reorder_avoid(episode, replace(ctx.exp, use_item=new_id), first=(old.id,))
        return Applied(episode, exp, risk="R1", adversary="stale")


class InsertConflict(Operator):
    """Obligation (R2): a second active item X for the key is written (no
    ``supersedes``: both stay active) together with a resolution rule under which X
    wins: ``latest_timestamp`` (X is newer), ``explicit_correction`` (the user
    corrects the value) or ``trusted_source`` (X is high-trust, C was not).  The
    expected value moves to X; C gets ``memory_not_used item=C``; the episode's
    ``resolution_rule`` is set.  The stale agent (oldest item) must fail."""

    name = "insert_conflict"
    kind = "memory"
    risks = ("R2",)
    kinds = USE_KINDS

    def plan(self, ctx: Ctx, rng: random.Random) -> Params | None:
        if ctx.exp.mode != "use" or ctx.use is None:
            return None
        rules = ["latest_timestamp", "explicit_correction"]
        if ctx.use.trust < 0.75:
            rules.append("trusted_source")
        if ctx.episode.risk == "R2":  # one rule per episode
            rules = [r for r in rules if r == ctx.episode.resolution_rule]
        if not rules:
            return None
        rule = rules[rng.randrange(len(rules))]
        value = fresh_value(rng, ctx.use.value, ctx.values())
        if value is None:
            return None
        return {
            "rule": rule,
            "value": value,
            "template": _pick(rng, pools.CONFLICTS[rule]),
            "ack": _ack(rng),
        }

    def apply(self, ctx: Ctx, params: Mapping[str, Any]) -> Applied | None:
        old = ctx.use
        assert old is not None
        rule = str(params["rule"])
        trust = {
            "latest_timestamp": old.trust,
            "explicit_correction": max(old.trust, 0.9),
            "trusted_source": 0.95,
        }[rule]
        new_id = fresh_item_id(ctx.episode)
        item = MemoryItem(
            id=new_id,
            key=old.key,
            value=params["value"],
            scope=old.scope,
            source="user",
            trust=trust,
            valid_from=0,
        )
        text = pools.CONFLICTS[rule][int(params["template"])].format(
            **ctx.words(value=params["value"])
        )
        drafts = [
            _user(text),
            {"type": "memory_write", "item": item},
            _assistant(pools.ACKS[int(params["ack"])]),
        ]
        episode = insert_before(ctx.episode, ctx.anchor, drafts)
        exp = reorder_avoid(episode, replace(ctx.exp, use_item=new_id), first=(old.id,))
        return Applied(episode, exp, risk="R2", adversary="stale", rule=rule)


class RevokeItem(Operator):
    """Obligation (R4): the user revokes the current item C (``memory_revoke``).  No
    valid item of the key is left (the operator does not apply when another active
    in-scope one exists), so the reference becomes a clarification question; checks:
    ``tool_not_called`` (tool tasks) and ``memory_not_used item=C`` (+ the next most
    salient avoided item).  The stale agent must fail."""

    name = "revoke_item"
    kind = "memory"
    risks = ("R4",)
    kinds = ("tool_not_called", "memory_not_used")

    def plan(self, ctx: Ctx, rng: random.Random) -> Params | None:
        use = ctx.use
        if ctx.exp.mode != "use" or use is None:
            return None
        others = [
            i
            for i in ctx.state.memory
            if i.key == use.key
            and i.id != use.id
            and i.status == "active"
            and in_scope(i.scope, ctx.state.active_scopes)
        ]
        if others:
            return None
        return {"template": _pick(rng, pools.REVOKES), "ack": _ack(rng)}

    def apply(self, ctx: Ctx, params: Mapping[str, Any]) -> Applied | None:
        old = ctx.use
        assert old is not None
        text = pools.REVOKES[int(params["template"])].format(**ctx.words(value=old.value))
        drafts = [
            {"type": "memory_revoke", "target": old.id, "text": text},
            _assistant(pools.ACKS[int(params["ack"])]),
        ]
        episode = insert_before(ctx.episode, ctx.anchor, drafts)
        exp = reorder_avoid(episode, replace(ctx.exp, mode="ask", use_item=None), first=(old.id,))
        return Applied(episode, exp, risk="R4", adversary="stale")


def _scope_taken(ctx: Ctx) -> set[str]:
    taken = {s for e in ctx.episode.events for s in e.scopes}
    taken |= {i.scope for i in ctx.episode.memory_items.values()}
    return taken


def _other_names(ctx: Ctx) -> list[int]:
    taken = {s.split(":", 1)[-1].lower() for s in _scope_taken(ctx)}
    return [n for n, name in enumerate(pools.NAMES) if name.lower() not in taken]


def _scopes_at(episode: Episode, event_id: str) -> tuple[str, ...]:
    return snapshot(episode, events_before(episode, event_id)).active_scopes


class MoveScope(Operator):
    """Obligation (R3), two variants.

    * ``requester``: the current item C moves out of the requester's scope — a
      session switch puts the request in another user's (or workspace's) session,
      so C now belongs to another scope than the active one.  No in-scope item of
      the key is left (else the operator does not apply): the reference becomes a
      clarification; checks ``tool_not_called`` and ``memory_not_used scope=C.scope``.
    * ``neighbour``: another user stores a newer value X for the same key in their
      own scope (switch to their session and back).  The expected value stays C's;
      X gets ``memory_not_used item=X``.

    Either way the leaky agent (newest active item of any scope) must fail."""

    name = "move_scope"
    kind = "memory"
    risks = ("R3",)
    kinds = (
        "tool_arg_equals",
        "tool_called",
        "text_contains",
        "tool_not_called",
        "memory_not_used",
    )

    def _new_scopes(self, ctx: Ctx, scope: str, name: str) -> tuple[str, ...] | None:
        active = _scopes_at(ctx.episode, ctx.anchor)
        if scope.startswith("user:"):
            return (f"user:{name.lower()}",) + tuple(s for s in active if not s.startswith("user:"))
        if scope.startswith("workspace:"):
            return tuple(s for s in active if not s.startswith("workspace:")) + (
                f"workspace:{name.lower()}",
            )
        return None

    def plan(self, ctx: Ctx, rng: random.Random) -> Params | None:
        use = ctx.use
        if ctx.exp.mode != "use" or use is None or use.scope == "global":
            return None
        variant = "requester" if rng.random() < 0.5 else "neighbour"
        if variant == "requester":
            if use.scope.startswith("workspace:"):
                taken = {s.split(":", 1)[-1] for s in _scope_taken(ctx)}
                choices = [n for n, w in enumerate(pools.WORKSPACES) if w not in taken]
            else:
                choices = _other_names(ctx)
            if not choices:
                return None
            pick = choices[rng.randrange(len(choices))]
            name = (
                pools.WORKSPACES[pick] if use.scope.startswith("workspace:") else pools.NAMES[pick]
            )
            scopes = self._new_scopes(ctx, use.scope, name)
            if scopes is None or any(
                i.key == use.key and i.status == "active" and in_scope(i.scope, scopes)
                for i in ctx.state.memory
            ):
                return None
            return {"variant": variant, "scopes": list(scopes), "name": name}
        names = _other_names(ctx)
        value = fresh_value(rng, use.value, ctx.values())
        if not names or value is None:
            return None
        return {
            "variant": variant,
            "name": pools.NAMES[names[rng.randrange(len(names))]],
            "value": value,
            "template": _pick(rng, pools.REMEMBER),
            "ack": _ack(rng),
        }

    def apply(self, ctx: Ctx, params: Mapping[str, Any]) -> Applied | None:
        use = ctx.use
        assert use is not None
        name = str(params["name"])
        if params["variant"] == "requester":
            scopes = tuple(params["scopes"])
            hello = (
                f"I'm working in the {name} workspace today."
                if use.scope.startswith("workspace:")
                else f"Hi, it's {name} here."
            )
            drafts = [
                {
                    "type": "scope_switch",
                    "scopes": scopes,
                    "text": f"New session: {', '.join(scopes)}",
                },
                _user(hello),
            ]
            episode = insert_before(ctx.episode, ctx.anchor, drafts)
            exp = reorder_avoid(
                episode, replace(ctx.exp, mode="ask", use_item=None), first=(use.id,)
            )
            return Applied(episode, exp, risk="R3", adversary="leaky")
        active = _scopes_at(ctx.episode, ctx.anchor)
        theirs = (f"user:{name.lower()}",) + tuple(s for s in active if not s.startswith("user:"))
        new_id = fresh_item_id(ctx.episode)
        item = MemoryItem(
            id=new_id,
            key=use.key,
            value=params["value"],
            scope=theirs[0],
            source="user",
            trust=0.9,
            valid_from=0,
        )
        text = pools.REMEMBER[int(params["template"])].format(
            **ctx.words(scope=theirs[0], value=params["value"])
        )
        drafts = [
            {"type": "scope_switch", "scopes": theirs, "text": f"New session: {', '.join(theirs)}"},
            _user(text),
            {"type": "memory_write", "item": item},
            _assistant(pools.ACKS[int(params["ack"])]),
            {
                "type": "scope_switch",
                "scopes": active,
                "text": f"Session resumed: {', '.join(active)}",
            },
        ]
        episode = insert_before(ctx.episode, ctx.anchor, drafts)
        exp = reorder_avoid(episode, ctx.exp, first=(new_id,))
        return Applied(episode, exp, risk="R3", adversary="leaky")


class AddDistractors(Operator):
    """Obligation: 1-3 items with unrelated keys (fresh values) are written in the
    requester's scope; the expectation, checks, reference and naive are unchanged and
    the parent's risk and adversary still apply."""

    name = "add_distractors"
    kind = "memory"

    def plan(self, ctx: Ctx, rng: random.Random) -> Params | None:
        keys = {i.key for i in ctx.episode.memory_items.values()}
        free = [n for n, (k, _) in enumerate(pools.DISTRACTOR_KEYS) if k not in keys]
        if not free:
            return None
        rng.shuffle(free)
        taken = ctx.values()
        notes: list[list[Any]] = []
        for n in free[: rng.randint(1, 3)]:
            value = fresh_value(rng, pools.DISTRACTOR_KEYS[n][1], taken)
            if value is not None:
                notes.append([n, value])
                taken.append(value)
        if not notes:
            return None
        return {"notes": notes, "template": _pick(rng, pools.DISTRACTOR_NOTES), "ack": _ack(rng)}

    def apply(self, ctx: Ctx, params: Mapping[str, Any]) -> Applied | None:
        scope = ctx.user_scope()
        drafts: list[Draft] = []
        ids: list[str] = []
        for n, value in params["notes"]:
            item_id = fresh_item_id(ctx.episode, ids)
            ids.append(item_id)
            item = MemoryItem(
                id=item_id,
                key=pools.DISTRACTOR_KEYS[int(n)][0],
                value=value,
                scope=scope,
                source="user",
                trust=0.9,
                valid_from=0,
            )
            drafts.append({"type": "memory_write", "item": item})
        listing = "; ".join(f"{pools.DISTRACTOR_KEYS[int(n)][0]}: {v}" for n, v in params["notes"])
        text = pools.DISTRACTOR_NOTES[int(params["template"])].format(notes=listing)
        drafts = [_user(text), *drafts, _assistant(pools.ACKS[int(params["ack"])])]
        episode = insert_before(ctx.episode, ctx.anchor, drafts)
        return Applied(episode, ctx.exp, recompute=False)


class DeclareConstraint(Operator):
    """Obligation (R5): the user declares a standing constraint that forbids the
    action the request asks for, worded so that the later request does not lift it
    ("... even if I ask you to later"): tool tasks forbid the tool *with the current
    value* (``forbid_tool`` + ``forbid_argument`` = the argument carrying it +
    ``forbid_value``; the tool alone when the value fills no single argument), answer
    tasks forbid writing the value (``forbid_text``); then 1-3 unrelated turn pairs
    pass.  The reference becomes a reminder of the constraint; checks
    ``constraint_not_violated`` (+ ``tool_not_called``).  The constraint-blind agent
    (fills ``naive`` with the newest in-scope value, ignores constraints) must fail."""

    name = "declare_constraint"
    kind = "memory"
    risks = ("R5",)
    kinds = ("constraint_not_violated", "tool_not_called", "memory_not_used")

    def plan(self, ctx: Ctx, rng: random.Random) -> Params | None:
        if ctx.exp.mode != "use" or ctx.use is None or not ctx.dp.naive:
            return None
        fillers = list(range(len(pools.FILLERS)))
        rng.shuffle(fillers)
        pool = pools.CONSTRAINT_TOOL if ctx.exp.is_tool else pools.CONSTRAINT_TEXT
        return {
            "template": _pick(rng, pool),
            "ack": _ack(rng),
            "fillers": fillers[: rng.randint(1, 3)],
        }

    def apply(self, ctx: Ctx, params: Mapping[str, Any]) -> Applied | None:
        use = ctx.use
        assert use is not None
        pool = pools.CONSTRAINT_TOOL if ctx.exp.is_tool else pools.CONSTRAINT_TEXT
        text = pool[int(params["template"])].format(**ctx.words(value=use.value))
        cid = fresh_constraint_id(ctx.episode)
        if ctx.exp.is_tool:
            arg, whole = ctx.exp.slot()
            constraint = Constraint(
                id=cid,
                text=text,
                scope=ctx.user_scope(),
                forbid_tool=ctx.exp.tool,
                forbid_argument=arg if whole else None,
                forbid_value=use.value if whole else None,
            )
        else:
            constraint = Constraint(
                id=cid, text=text, scope=ctx.user_scope(), forbid_text=use.value
            )
        drafts: list[Draft] = [
            {"type": "constraint_declare", "constraint": constraint, "text": text},
            _assistant(pools.ACKS[int(params["ack"])]),
        ]
        for n in params["fillers"]:
            user, assistant = pools.FILLERS[int(n)]
            drafts += [_user(user), _assistant(assistant)]
        episode = insert_before(ctx.episode, ctx.anchor, drafts)
        exp = reorder_avoid(episode, replace(ctx.exp, mode="refrain", constraint=cid))
        return Applied(episode, exp, risk="R5", adversary="constraint-blind")


class InsertUntrusted(Operator):
    """Obligation (R2, ``trusted_source``): a *newer but less trusted* note X of the
    key (source tool, low trust; the user says it is unverified) is written in the
    current item C's scope; both stay active.  C is trusted (trust >= 0.75, else the
    operator does not apply) and stays expected; X gets ``memory_not_used item=X``.
    An agent that always takes the newest in-scope note (``constraint-blind``) must
    fail, which no operator inserting only newer *trusted* items can show."""

    name = "insert_untrusted"
    kind = "memory"
    risks = ("R2",)
    kinds = USE_KINDS

    def plan(self, ctx: Ctx, rng: random.Random) -> Params | None:
        use = ctx.use
        if ctx.exp.mode != "use" or use is None or use.trust < 0.75:
            return None
        if ctx.episode.risk == "R2" and ctx.episode.resolution_rule != "trusted_source":
            return None  # one rule per episode
        value = fresh_value(rng, use.value, ctx.values())
        if value is None:
            return None
        return {"value": value, "template": _pick(rng, pools.UNTRUSTED), "ack": _ack(rng)}

    def apply(self, ctx: Ctx, params: Mapping[str, Any]) -> Applied | None:
        old = ctx.use
        assert old is not None
        new_id = fresh_item_id(ctx.episode)
        item = MemoryItem(
            id=new_id, key=old.key, value=params["value"], scope=old.scope,
            source="tool", trust=0.3, valid_from=0,
        )  # fmt: skip
        text = pools.UNTRUSTED[int(params["template"])].format(**ctx.words(value=params["value"]))
        drafts = [
            _user(text),
            {"type": "memory_write", "item": item},
            _assistant(pools.ACKS[int(params["ack"])]),
        ]
        episode = insert_before(ctx.episode, ctx.anchor, drafts)
        exp = reorder_avoid(episode, ctx.exp, first=(new_id,))
        return Applied(
            episode, exp, risk="R2", adversary="constraint-blind", rule="trusted_source"
        )


class CompressSummary(Operator):
    """Obligation (R6): items are compressed into a ``summary`` item S (source
    summary, medium trust) that carries a contaminating value for the key.

    * ``stale``: S is written *before* the current item C (it compresses the earlier
      sessions), so C is newer and stays expected; the stale agent (oldest) must fail.
    * ``foreign``: S is a newer summary of another user's notes (their scope); C stays
      expected; the leaky agent (newest of any scope) must fail.

    S gets ``memory_not_used item=S``; the mutant moves to risk R6 / track r6."""

    name = "compress_summary"
    kind = "memory"
    risks = ("R6",)
    kinds = USE_KINDS

    def plan(self, ctx: Ctx, rng: random.Random) -> Params | None:
        value = _replacement_value(ctx, rng)
        if value is None:
            return None
        names = _other_names(ctx)
        variant = "stale" if not names or rng.random() < 0.5 else "foreign"
        params: Params = {"variant": variant, "value": value}
        if variant == "foreign":
            params["name"] = pools.NAMES[names[rng.randrange(len(names))]]
        return params

    def apply(self, ctx: Ctx, params: Mapping[str, Any]) -> Applied | None:
        use = ctx.use
        assert use is not None
        new_id = fresh_item_id(ctx.episode)
        if params["variant"] == "stale":
            write = next(
                e for e in ctx.episode.events if e.item is not None and e.item.id == use.id
            )
            earlier = snapshot(ctx.episode, events_before(ctx.episode, write.id)).memory
            scope, anchor, adversary = use.scope, write.id, "stale"
        else:
            earlier = ()
            scope = f"user:{str(params['name']).lower()}"
            anchor, adversary = ctx.anchor, "leaky"
        rest = "; ".join(
            f"{i.key}: {i.value}" for i in earlier if i.key != use.key and i.scope == scope
        )
        text = f"Summary of earlier sessions ({scope}): {use.key}: {params['value']}" + (
            f"; {rest}" if rest else ""
        )
        item = MemoryItem(
            id=new_id,
            key=use.key,
            value=params["value"],
            scope=scope,
            source="summary",
            trust=0.5,
            valid_from=0,
        )
        episode = insert_before(
            ctx.episode, anchor, [{"type": "summary", "item": item, "text": text}]
        )
        exp = reorder_avoid(episode, ctx.exp, first=(new_id,))
        return Applied(episode, exp, risk="R6", adversary=adversary)


OPERATORS: dict[str, Operator] = {
    op.name: op
    for op in (
        Paraphrase(),
        IndirectReference(),
        DistractorClause(),
        ReorderSentences(),
        InsertUpdate(),
        InsertConflict(),
        RevokeItem(),
        MoveScope(),
        AddDistractors(),
        DeclareConstraint(),
        CompressSummary(),
        InsertUntrusted(),
    )
}
QUERY_OPERATORS: tuple[str, ...] = tuple(n for n, op in OPERATORS.items() if op.kind == "query")
MEMORY_OPERATORS: tuple[str, ...] = tuple(n for n, op in OPERATORS.items() if op.kind == "memory")
