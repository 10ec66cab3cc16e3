"""Re-derive a trace from the verified episode and the agent's raw reply texts only.

Nothing a reply or a stored sample *claims* about state, tool results, actions or
item statuses is trusted: a trace is rebuilt by replaying the episode with the reply
texts (scripted: one reply per decision point; interactive: the replies of every step,
fed to the deterministic interactive loop, whose tool stubs are deterministic too).

* :func:`trace_from_texts`: the lm-eval replies of one episode (plain replies, or
  ``<memrisk-decision>`` envelopes from the ``memrisk-agent`` wrapper).  A malformed or
  inconsistent envelope is an *invalid reply* with the reason as evidence; it never
  raises.
* :func:`rescore_sample`: one logged sample line -> :class:`~lm_eval_memrisk.scorer.ScoreResult`,
  with the episode found by id in the packaged (hash-verified) dataset.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any

from lm_eval_memrisk.codec import dumps_episode
from lm_eval_memrisk.errors import SamplesError
from lm_eval_memrisk.policies import make_policy
from lm_eval_memrisk.recompute import MAX_REPLAY_STEPS, Replies, trace_of_replies
from lm_eval_memrisk.records import Episode
from lm_eval_memrisk.render import DEFAULT_PRESENTATION, Presentation
from lm_eval_memrisk.runner import trace_from_replies
from lm_eval_memrisk.sample_record import ENVELOPE
from lm_eval_memrisk.scorer import UNJUDGEABLE, ScoreResult, score
from lm_eval_memrisk.trace import Action, Trace

__all__ = ["ENVELOPE", "MAX_REPLAY_STEPS", "rescore_sample", "retrace", "step_replies", "trace_from_texts"]

_MODES = ("scripted", "interactive")


class _Bad(ValueError):
    """A malformed envelope or sample (the message is the evidence)."""


def _str(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise _Bad(f"{what} must be a string")
    return value


def _decision_replies(decision: Any) -> list[str]:
    """The raw reply of every step of one decision record (only the texts)."""
    if not isinstance(decision, Mapping):
        raise _Bad("decision must be an object")
    steps = decision.get("steps") or []
    if not isinstance(steps, (list, tuple)):
        raise _Bad("steps must be a list")
    if steps:
        replies = [_str(s.get("raw_reply") if isinstance(s, Mapping) else None, "steps[].raw_reply") for s in steps]
    else:
        replies = [_str(decision.get("raw_reply"), "raw_reply")]
    if len(replies) > MAX_REPLAY_STEPS:
        raise _Bad(f"more than {MAX_REPLAY_STEPS} steps")
    return replies


def _envelope(text: str) -> tuple[str, str, list[str]]:
    """(mode, memory policy, step replies) of one envelope; raises :class:`_Bad`."""
    try:
        data = json.loads(text[len(ENVELOPE):])
    except (ValueError, RecursionError) as exc:
        raise _Bad(f"not JSON ({str(exc)[:80]})") from None
    if not isinstance(data, Mapping):
        raise _Bad("not a JSON object")
    mode = data.get("mode")
    if mode not in _MODES:
        raise _Bad(f"mode must be one of {_MODES}")
    policy = data.get("memory_policy", "full")
    return str(mode), _str(policy, "memory_policy"), _decision_replies(data.get("decision"))


def replay(
    episode: Episode, mode: str, replies: Sequence[Sequence[str]], *, agent: str, policy_spec: str = "full",
    presentation: Presentation = DEFAULT_PRESENTATION,
) -> Trace:
    """Rebuild the trace of ``episode`` from the agent's reply texts per decision point
    (:func:`lm_eval_memrisk.recompute.trace_of_replies`, the one replay every reader uses).

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


def step_replies(trace_dict: Any) -> tuple[str, str, list[list[str]]]:
    """(mode, memory policy, reply texts per decision) of a logged trace: only the
    raw reply texts are read; raises :class:`SamplesError` when they are missing."""
    try:
        if not isinstance(trace_dict, Mapping):
            raise _Bad("trace must be an object")
        mode = trace_dict.get("mode", "scripted")
        if mode not in _MODES:
            raise _Bad(f"mode must be one of {_MODES}")
        decisions = trace_dict.get("decisions")
        if not isinstance(decisions, (list, tuple)):
            raise _Bad("decisions must be a list")
        policy = _str(trace_dict.get("memory_policy", "full"), "memory_policy")
        return str(mode), policy, [_decision_replies(d) for d in decisions]
    except _Bad as exc:
        raise SamplesError(f"trace: {exc}") from None


def verified_episode(doc: Mapping[str, Any], episodes: Mapping[str, Episode]) -> Episode:
    """The packaged episode named by ``doc``, after checking the logged copy matches it."""
    eid = doc.get("episode_id")
    episode = episodes.get(eid) if isinstance(eid, str) else None
    if episode is None:
        raise SamplesError(f"episode {eid!r} is not in the verified dataset")
    logged = doc.get("episode_json")
    if logged is not None:
        try:
            same = json.loads(logged) == json.loads(dumps_episode(episode))
        except (TypeError, ValueError):
            same = False
        if not same:
            raise SamplesError(f"episode {eid}: the logged episode differs from the verified dataset")
    return episode


def rescore_sample(
    sample: Mapping[str, Any], episodes: Mapping[str, Episode], *, variant: str = "default",
    expected: str = "revised",
) -> ScoreResult:
    """Recompute one logged sample's score from the verified episode and the agent's
    raw reply texts; stored metrics, actions, states and statuses are ignored.

    ``episodes``: the verified dataset by id (e.g. ``{e.id: e for e in load_episodes(track="all")}``
    after checking its hash).  Raises :class:`SamplesError` when the sample names an
    unknown episode, its logged episode differs, or it holds no reply texts.
    """
    doc = sample.get("doc")
    if not isinstance(doc, Mapping):
        raise SamplesError("sample has no doc")
    episode = verified_episode(doc, episodes)
    record = sample.get("episodes")
    trace_dict = record.get("trace") if isinstance(record, Mapping) else None
    return score(episode, retrace(episode, trace_dict), variant=variant, expected=expected)


def retrace(episode: Episode, trace_dict: Any) -> Trace:
    """A logged trace (its JSON form) rebuilt from its reply texts alone: what it
    stores about actions, states, statuses and tool results is ignored."""
    mode, policy, replies = step_replies(trace_dict)
    agent = str(trace_dict.get("agent", "?")) if isinstance(trace_dict, Mapping) else "?"
    return replay(episode, mode, replies, agent=agent, policy_spec=policy)
