"""Run an agent over an episode and record the trace (scripted mode).

In scripted mode the conversation is the episode's script: at each decision point
the agent sees the rendered messages, replies once, and its reply is parsed and
recorded with the ground-truth state.  The agent's replies are not carried forward
(interactive mode, which does, lives in :mod:`lm_eval_memrisk.interactive`).

An agent is any callable ``agent(messages) -> str``.  Agents that also want the
episode (the reference agents) set ``wants_episode = True`` and are called as
``agent(messages, episode=..., decision_id=...)``.  An exception raised by an agent
is an infrastructure failure: it propagates and is never scored as a wrong answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

from tqdm import tqdm

from lm_eval_memrisk.checks import memory_used
from lm_eval_memrisk.parse import parse_action
from lm_eval_memrisk.records import Episode
from lm_eval_memrisk.render import MemoryPolicy, render, visible_notes
from lm_eval_memrisk.state import state_at
from lm_eval_memrisk.trace import DecisionRecord, Step, Trace

Agent = Callable[..., str]


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
) -> DecisionRecord:
    """Parse ``reply`` and record it with the ground-truth state at ``decision_id``."""
    text = reply if isinstance(reply, str) else str(reply)
    action = parse_action(text)
    state = state_at(episode, decision_id)
    return DecisionRecord(
        decision_id=decision_id,
        messages=tuple(dict(m) for m in messages),
        raw_reply=text,
        action=action,
        state=state,
        memory_used=memory_used(action, state.memory),
        visible_items=tuple(visible),
        steps=tuple(steps),
    )


def prompts(episode: Episode, policy: MemoryPolicy | None = None) -> list[tuple[str, list[dict[str, str]]]]:
    """(decision id, messages) for every decision point, in order."""
    return [(dp.id, render(episode, dp.id, policy)) for dp in episode.decision_points]


def trace_from_replies(
    episode: Episode,
    replies: Mapping[str, str],
    agent: str,
    policy: MemoryPolicy | None = None,
    mode: str = "scripted",
) -> Trace:
    """Build a trace from one reply per decision point (used by the lm-eval task)."""
    records = []
    for dp_id, messages in prompts(episode, policy):
        visible = [i.id for i in visible_notes(episode, dp_id, policy)]
        records.append(decision_record(episode, dp_id, messages, replies.get(dp_id, ""), visible))
    return Trace(
        episode_id=episode.id,
        episode_version=episode.version,
        agent=agent,
        decisions=tuple(records),
        mode=mode,
        memory_policy=getattr(policy, "name", "full") if policy else "full",
    )


def call_agent(agent: Agent, messages: list[dict[str, str]], episode: Episode, decision_id: str) -> str:
    if getattr(agent, "wants_episode", False):
        return agent(messages, episode=episode, decision_id=decision_id)
    return agent(messages)


def run_episode(episode: Episode, agent: Agent, policy: MemoryPolicy | None = None) -> Trace:
    """Run ``agent`` once at every decision point of ``episode`` (scripted mode)."""
    replies: dict[str, Any] = {}
    for dp_id, messages in prompts(episode, policy):
        replies[dp_id] = call_agent(agent, messages, episode, dp_id)
    return trace_from_replies(episode, replies, agent_name(agent), policy)


def run_scripted(
    episodes: Iterable[Episode],
    generate: Generate,
    agent: str,
    policy: MemoryPolicy | None = None,
    on_trace: Callable[[Trace], None] | None = None,
    chunk: int = 16,
    progress: bool = True,
) -> list[Trace]:
    """Scripted mode for a batch model: ``chunk`` episodes' decision points per call."""
    episodes = list(episodes)
    traces: list[Trace] = []
    bar = tqdm(total=len(episodes), desc=f"scripted {agent}", unit="ep", disable=not progress)
    for start in range(0, len(episodes), chunk):
        batch = episodes[start : start + chunk]
        requests = [Request(ep, dp_id, msgs) for ep in batch for dp_id, msgs in prompts(ep, policy)]
        replies = generate(requests)
        if len(replies) != len(requests):
            raise RuntimeError(f"model returned {len(replies)} replies for {len(requests)} requests")
        by_episode: dict[str, dict[str, str]] = {}
        for req, reply in zip(requests, replies):
            by_episode.setdefault(req.episode.id, {})[req.decision_id] = reply
        for ep in batch:
            trace = trace_from_replies(ep, by_episode.get(ep.id, {}), agent, policy)
            traces.append(trace)
            if on_trace is not None:
                on_trace(trace)
            bar.update(1)
    bar.close()
    return traces
