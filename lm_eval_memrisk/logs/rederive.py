"""Re-derive a trace from the verified episode and the agent's raw reply texts only.

Nothing a reply or a stored sample *claims* about state, tool results, actions or
item statuses is trusted: a trace is rebuilt by replaying the episode with the reply
texts (scripted: one reply per decision point; interactive: the replies of every step,
fed to the deterministic interactive loop, whose tool stubs are deterministic too).

* :func:`trace_from_texts`: the lm-eval replies of one episode (plain replies, or
  ``<memrisk-decision>`` envelopes from the ``memrisk-agent`` wrapper).  A malformed or
  inconsistent envelope is an *invalid reply* with the reason as evidence; it never
  raises.

An envelope's decision record is parsed by :func:`lm_eval_memrisk.logs.recompute.replies_of_trace`,
the one parser of logged replies (a logged sample line is read by
:func:`lm_eval_memrisk.logs.runs.read_sample`, a traces.jsonl line by ``memrisk score``).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence

from lm_eval_memrisk.episodes.errors import SamplesError
from lm_eval_memrisk.episodes.records import Episode
from lm_eval_memrisk.episodes.render import DEFAULT_PRESENTATION, Presentation
from lm_eval_memrisk.episodes.trace import MAX_REPLAY_STEPS, Action, Trace
from lm_eval_memrisk.logs.recompute import (
    Replies,
    replies_of_trace,
    trace_of_replies,
)
from lm_eval_memrisk.running.policies import make_policy
from lm_eval_memrisk.running.runner import trace_from_replies
from lm_eval_memrisk.scoring.sample_record import ENVELOPE
from lm_eval_memrisk.scoring.scorer import UNJUDGEABLE

__all__ = ["ENVELOPE", "MAX_REPLAY_STEPS", "replay", "trace_from_texts"]


class _Bad(ValueError):
    """A malformed envelope (the message is the evidence)."""


def _envelope(text: str) -> tuple[str, str, list[str]]:
    """(mode, memory policy, step replies) of one envelope; raises :class:`_Bad`.

    The envelope's decision record is read as a one-decision trace by
    :func:`~lm_eval_memrisk.logs.recompute.replies_of_trace` (the one parser of logged replies).
    """
    try:
        data = json.loads(text[len(ENVELOPE):])
    except (ValueError, RecursionError) as exc:
        raise _Bad(f"not JSON ({str(exc)[:80]})") from None
    if not isinstance(data, Mapping):
        raise _Bad("not a JSON object")
    trace = {"mode": data.get("mode"), "memory_policy": data.get("memory_policy", "full"),
             "decisions": [data.get("decision")]}
    try:
        parsed = replies_of_trace(trace, "envelope", field="envelope")
    except SamplesError as exc:
        raise _Bad(str(exc).removeprefix("envelope: ")) from None
    return parsed.mode, parsed.memory_policy, list(parsed.texts[0])


def replay(
    episode: Episode, mode: str, replies: Sequence[Sequence[str]], *, agent: str, policy_spec: str = "full",
    presentation: Presentation = DEFAULT_PRESENTATION,
) -> Trace:
    """Rebuild the trace of ``episode`` from the agent's reply texts per decision point
    (:func:`lm_eval_memrisk.logs.recompute.trace_of_replies`, the one replay every reader uses).

    Scoring needs no memory policy (state comes from the episode), so none is run here:
    ``policy_spec`` only labels the trace.
    """
    texts = tuple(tuple(r) for r in replies)
    return trace_of_replies(episode, Replies(mode=mode, memory_policy=policy_spec[:100], agent=agent, texts=texts,
                                             presentation=presentation.name, tools=presentation.tools))


def _invalid(trace: Trace, bad: Mapping[int, str], texts: Sequence[str]) -> Trace:
    decisions = list(trace.decisions)
    for i, why in bad.items():
        if i < len(decisions):
            action = Action(kind="invalid", text=texts[i][:2000], reason=f"{UNJUDGEABLE}: {why}")
            decisions[i] = dataclasses.replace(decisions[i], action=action, steps=())
    return dataclasses.replace(trace, decisions=tuple(decisions))


def trace_from_texts(
    episode: Episode, texts: Sequence[str], *, agent: str, policy_spec: str | None = None,
    presentation: Presentation = DEFAULT_PRESENTATION,
) -> Trace:
    """The trace for one episode's lm-eval replies (see the module docstring).

    ``presentation`` is how the prompts were shown; it is recorded in the trace (and
    plain replies are re-rendered under it), it never changes the ground truth.
    """
    texts = [t if isinstance(t, str) else "" for t in texts]
    if not texts or not any(t.startswith(ENVELOPE) for t in texts):
        policy = make_policy(policy_spec)
        dp_ids = [dp.id for dp in episode.decision_points]
        return trace_from_replies(episode, dict(zip(dp_ids, texts)), agent=agent, policy=policy,
                                  presentation=presentation)
    parsed: list[tuple[str, str, list[str]] | None] = []
    bad: dict[int, str] = {}
    for i, text in enumerate(texts):
        try:
            if not text.startswith(ENVELOPE):
                raise _Bad("a plain reply among envelopes")
            parsed.append(_envelope(text))
        except _Bad as exc:
            parsed.append(None)
            bad[i] = str(exc)
    good = [p for p in parsed if p is not None]
    modes = {p[0] for p in good}
    policies = {p[1] for p in good}
    if len(modes) > 1 or len(policies) > 1:
        bad = {i: "envelopes disagree on mode or memory policy" for i in range(len(texts))}
    mode = modes.pop() if len(modes) == 1 and not bad else "scripted"
    policy_spec = policies.pop() if len(policies) == 1 else "full"
    if bad and mode == "interactive":  # one bad step breaks the replay of the rest
        mode = "scripted"
    replies = [p[2] if p is not None else [] for p in parsed]
    trace = replay(episode, mode, replies, agent=agent, policy_spec=policy_spec, presentation=presentation)
    return _invalid(trace, bad, texts) if bad else trace
