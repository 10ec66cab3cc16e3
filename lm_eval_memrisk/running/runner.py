"""Run an agent over an episode and record the trace (scripted mode).

In scripted mode the conversation is the episode's script: at each decision point
the agent sees the rendered messages, replies once, and its reply is parsed and
recorded with the ground-truth state.  The agent's replies are not carried forward
(interactive mode, which does, lives in :mod:`lm_eval_memrisk.running.interactive`).

An agent is any callable ``agent(messages) -> str``.  Agents that also want the
episode (the reference agents) set ``wants_episode = True`` and are called as
``agent(messages, episode=..., decision_id=...)``.  An exception raised by an agent,
and a reply that is ``None``, not text or empty, is an infrastructure failure
(:class:`InfrastructureError`): the run stops with a message naming the episode and
decision point, and nothing is scored as a wrong answer.

Replies are untrusted text: :func:`parse_reply` parses one and turns tool-call
arguments nested deeper than :data:`MAX_ARGUMENT_DEPTH` into an ``invalid`` action,
so no later step (memory-use check, trace writer, scorer) recurses without bound.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tqdm import tqdm

from lm_eval_memrisk.episodes.errors import MemriskError
from lm_eval_memrisk.episodes.records import Episode
from lm_eval_memrisk.episodes.render import (
    DEFAULT_PRESENTATION,
    DecisionView,
    MemoryPolicy,
    Presentation,
    decision_view,
    view_messages,
)
from lm_eval_memrisk.episodes.state import state_at
from lm_eval_memrisk.episodes.trace import Action, DecisionRecord, StateSnapshot, Step, Trace
from lm_eval_memrisk.running.generation import cut_at_stop
from lm_eval_memrisk.scoring.checks import memory_used
from lm_eval_memrisk.scoring.parse import parse_action

Agent = Callable[..., str]

#: Deepest nesting of tool-call arguments kept as a tool call (the tool stubs accept 32).
MAX_ARGUMENT_DEPTH = 32


class InfrastructureError(MemriskError):
    """The model or agent gave no usable reply (``None``, not text, empty): the run stops."""


def _depth(value: Any) -> int:
    """Nesting depth of JSON-like data, computed without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        if level > MAX_ARGUMENT_DEPTH:
            break
        if isinstance(node, Mapping):
            stack.extend((v, level + 1) for v in node.values())
        elif isinstance(node, (list, tuple)):
            stack.extend((v, level + 1) for v in node)
    return deepest


def parse_reply(text: str) -> Action:
    """:func:`parse_action` of the reply up to the first of the benchmark's stop sequences
    (what a backend that honours them returns; lm-eval's API models send only four, so a
    server may return the run-on), with too deeply nested tool-call arguments made
    ``invalid``."""
    action = parse_action(cut_at_stop(text))
    if action.kind == "tool_call" and _depth(action.arguments) > MAX_ARGUMENT_DEPTH:
        return Action(
            kind="invalid", text=action.text, tool=action.tool,
            reason=f"tool-call arguments nested more than {MAX_ARGUMENT_DEPTH} levels deep",
        )
    return action


def checked_reply(reply: Any, request: Request) -> str:
    """``reply`` if it is non-empty text; otherwise raise :class:`InfrastructureError`."""
    if isinstance(reply, str) and reply.strip():
        return reply
    what = "no reply (None)" if reply is None else (
        "an empty reply" if isinstance(reply, str) else f"a {type(reply).__name__}, not text"
    )
    raise InfrastructureError(
        f"the model gave {what} for episode {request.episode.id}, decision point "
        f"{request.decision_id}: an infrastructure failure, not an answer; the run stops "
        f"(finished episodes are kept; fix the model or server and rerun with --resume)"
    )


def checked_replies(replies: Sequence[Any], requests: Sequence[Request]) -> list[str]:
    """One checked reply per request (see :func:`checked_reply`)."""
    if len(replies) != len(requests):
        raise InfrastructureError(f"the model returned {len(replies)} replies for {len(requests)} requests")
    return [checked_reply(r, q) for r, q in zip(replies, requests)]


@dataclass(frozen=True)
class Request:
    """One pending model call: the episode, its decision point and the messages."""

    episode: Episode
    decision_id: str
    messages: list[dict[str, str]]


#: Answers a batch of requests, one reply per request, in order.
Generate = Callable[[Sequence[Request]], list[str]]


def agent_name(agent: Agent) -> str:
    return str(getattr(agent, "name", getattr(agent, "__name__", type(agent).__name__)))


def decision_record(
    episode: Episode,
    decision_id: str,
    messages: Sequence[Mapping[str, str]],
    reply: str,
    visible: Sequence[str] = (),
    steps: Sequence[Step] = (),
    state: StateSnapshot | None = None,
) -> DecisionRecord:
    """Parse ``reply`` and record it with the ground-truth state at ``decision_id``.

    ``state`` is that state when the caller has it already (``state_at`` otherwise).
    """
    text = reply if isinstance(reply, str) else str(reply)
    action = parse_reply(text)
    if state is None:
        state = state_at(episode, decision_id)
    return DecisionRecord(
        decision_id=decision_id,
        messages=tuple(dict(m) for m in messages),
        raw_reply=text,
        action=action,
        state=state,
        memory_used=memory_used(action, state.memory, active_scopes=state.active_scopes),
        visible_items=tuple(visible),
        steps=tuple(steps),
    )


@dataclass(frozen=True)
class Prompt:
    """One decision point's messages and the view they were rendered from."""

    decision_id: str
    messages: list[dict[str, str]]
    view: DecisionView

    def messages_copy(self) -> list[dict[str, str]]:
        """Fresh message dicts for a caller that might change them (an agent, a model)."""
        return [dict(m) for m in self.messages]


def decision_prompts(
    episode: Episode, policy: MemoryPolicy | None = None, presentation: Presentation = DEFAULT_PRESENTATION
) -> list[Prompt]:
    """One :class:`Prompt` per decision point, in order (one replay each)."""
    out = []
    for dp in episode.decision_points:
        view = decision_view(episode, dp.id, policy)
        out.append(Prompt(dp.id, view_messages(episode.tools, view, presentation), view))
    return out


def prompts(
    episode: Episode, policy: MemoryPolicy | None = None, presentation: Presentation = DEFAULT_PRESENTATION
) -> list[tuple[str, list[dict[str, str]]]]:
    """(decision id, messages) for every decision point, in order."""
    return [(p.decision_id, p.messages) for p in decision_prompts(episode, policy, presentation)]


def _trace(
    episode: Episode,
    rendered: Sequence[Prompt],
    replies: Mapping[str, str],
    agent: str,
    policy: MemoryPolicy | None,
    mode: str,
    presentation: Presentation = DEFAULT_PRESENTATION,
) -> Trace:
    records = [
        decision_record(
            episode, p.decision_id, p.messages, replies.get(p.decision_id, ""),
            [i.id for i in p.view.notes], state=p.view.state,
        )
        for p in rendered
    ]
    return Trace(
        episode_id=episode.id,
        episode_version=episode.version,
        agent=agent,
        decisions=tuple(records),
        mode=mode,
        memory_policy=getattr(policy, "name", "full") if policy else "full",
        presentation=presentation.name,
        tools=presentation.tools,
    )


def trace_from_replies(
    episode: Episode,
    replies: Mapping[str, str],
    agent: str,
    policy: MemoryPolicy | None = None,
    mode: str = "scripted",
    presentation: Presentation = DEFAULT_PRESENTATION,
) -> Trace:
    """Build a trace from one reply per decision point (used by the lm-eval task)."""
    rendered = decision_prompts(episode, policy, presentation)
    return _trace(episode, rendered, replies, agent, policy, mode, presentation)


def call_agent(agent: Agent, messages: list[dict[str, str]], episode: Episode, decision_id: str) -> str:
    if getattr(agent, "wants_episode", False):
        return agent(messages, episode=episode, decision_id=decision_id)
    return agent(messages)


def run_episode(
    episode: Episode, agent: Agent, policy: MemoryPolicy | None = None,
    presentation: Presentation = DEFAULT_PRESENTATION,
) -> Trace:
    """Run ``agent`` once at every decision point of ``episode`` (scripted mode)."""
    rendered = decision_prompts(episode, policy, presentation)
    replies: dict[str, Any] = {}
    for p in rendered:
        reply = call_agent(agent, p.messages_copy(), episode, p.decision_id)
        replies[p.decision_id] = checked_reply(reply, Request(episode, p.decision_id, p.messages))
    return _trace(episode, rendered, replies, agent_name(agent), policy, "scripted", presentation)


def run_scripted(
    episodes: Iterable[Episode],
    generate: Generate,
    agent: str,
    policy: MemoryPolicy | None = None,
    on_trace: Callable[[Trace], None] | None = None,
    chunk: int = 16,
    progress: bool = True,
    presentation: Presentation = DEFAULT_PRESENTATION,
) -> list[Trace]:
    """Scripted mode for a batch model: ``chunk`` episodes' decision points per call."""
    episodes = list(episodes)
    traces: list[Trace] = []
    bar = tqdm(total=len(episodes), desc=f"scripted {agent}", unit="ep", disable=not progress)
    for start in range(0, len(episodes), chunk):
        batch = episodes[start : start + chunk]
        rendered = [decision_prompts(ep, policy, presentation) for ep in batch]
        requests = [
            Request(ep, p.decision_id, p.messages_copy())
            for ep, ep_prompts in zip(batch, rendered)
            for p in ep_prompts
        ]
        replies = checked_replies(generate(requests), requests)
        by_episode: dict[str, dict[str, str]] = {}
        for req, reply in zip(requests, replies):
            by_episode.setdefault(req.episode.id, {})[req.decision_id] = reply
        for ep, ep_prompts in zip(batch, rendered):
            trace = _trace(ep, ep_prompts, by_episode.get(ep.id, {}), agent, policy, "scripted", presentation)
            traces.append(trace)
            if on_trace is not None:
                on_trace(trace)
            bar.update(1)
    bar.close()
    return traces
