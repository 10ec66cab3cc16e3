"""Interactive mode: the agent's own replies are carried forward.

At each decision point the agent may take up to ``max_steps`` steps.  A tool call
goes to the deterministic tool stubs and the agent sees the result; an unknown
tool or invalid arguments gives an error result it can react to; the decision
point ends with a final answer, a clarification, a successful call of a terminal
tool, or the step limit.  The agent's exchanges stay in its history for later
decision points.  The script's own assistant turns right after a decision point
(its stand-in for the agent's action there, e.g. "Email sent.") are dropped: the
agent's own reply replaces them and is never merged with them.  Tool stubs answer
with what the script's own calls of that tool returned (:func:`tools.call_tool`).

Throughput: every round collects the pending step of *all* running episodes and
sends them to the model in one batch (``episode_major=False``); for in-process
llama.cpp, ``episode_major=True`` runs one episode at a time so consecutive turns
extend the previous prompt and reuse the KV cache.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tqdm import tqdm

from lm_eval_memrisk.episodes.errors import MemriskError
from lm_eval_memrisk.episodes.jsonl import escape_surrogates, json_line
from lm_eval_memrisk.episodes.records import Episode, Event
from lm_eval_memrisk.episodes.render import (
    DEFAULT_PRESENTATION,
    DecisionView,
    MemoryPolicy,
    Presentation,
    compose,
    decision_view,
    script_message,
)
from lm_eval_memrisk.episodes.state import drops_stand_in, message_text, ordered_events
from lm_eval_memrisk.episodes.tools import call_tool
from lm_eval_memrisk.episodes.trace import MAX_REPLAY_STEPS, DecisionRecord, Step, Trace
from lm_eval_memrisk.running.runner import (
    Generate,
    Request,
    call_agent,
    checked_replies,
    parse_reply,
)
from lm_eval_memrisk.scoring.checks import memory_used

Message = dict[str, str]
DEFAULT_MAX_STEPS = 4


def check_max_steps(max_steps: Any) -> int:
    """``max_steps`` if it is an integer from 1 to :data:`~lm_eval_memrisk.episodes.trace.MAX_REPLAY_STEPS`
    (the most steps a log reader replays), else a :class:`MemriskError`."""
    if isinstance(max_steps, bool) or not isinstance(max_steps, int) or not 1 <= max_steps <= MAX_REPLAY_STEPS:
        raise MemriskError(f"max_steps must be an integer >= 1 and <= {MAX_REPLAY_STEPS} "
                           f"(model calls per decision point), got {max_steps!r}")
    return max_steps


def tool_result_message(tool: str, result: Mapping[str, Any]) -> Message:
    return {"role": "user", "content": f"[tool result: {escape_surrogates(tool)}] {json_line(dict(result))}"}


@dataclass
class EpisodeRun:
    """The state of one episode in interactive mode (a small state machine)."""

    episode: Episode
    max_steps: int = DEFAULT_MAX_STEPS
    policy: MemoryPolicy | None = None
    presentation: Presentation = DEFAULT_PRESENTATION
    conversation: list[Message] = field(default_factory=list)
    _session_start: int = 0
    _anchor: int = 0
    records: list[DecisionRecord] = field(default_factory=list)
    _events: list[Event] = field(default_factory=list)
    _cursor: int = 0
    _dp_index: int = 0
    _steps: list[Step] = field(default_factory=list)
    _first_messages: list[Message] = field(default_factory=list)
    _view: DecisionView | None = None
    _after_decision: bool = False

    def __post_init__(self) -> None:
        check_max_steps(self.max_steps)
        self._events = ordered_events(self.episode)
        self._advance_script()

    @property
    def done(self) -> bool:
        return self._dp_index >= len(self.episode.decision_points)

    @property
    def decision(self) -> Event:
        return self.episode.decision_points[self._dp_index]

    def _advance_script(self) -> None:
        """Append the scripted messages up to the next decision point."""
        self._view = None
        if self.done:
            return
        while self._cursor < len(self._events) and self._events[self._cursor].id != self.decision.id:
            event = self._events[self._cursor]
            previous = self._events[self._cursor - 1] if self._cursor else None
            shown = message_text(event)
            if event.type == "scope_switch":
                self._session_start = len(self.conversation)
            if shown is not None:
                dropped, self._after_decision = drops_stand_in(event, self._after_decision)
                if not dropped:
                    self.conversation.append(script_message(previous, event, *shown))
            self._cursor += 1
        self._cursor += 1  # past the decision point itself
        self._anchor = len(self.conversation)

    def _decision_view(self) -> DecisionView:
        """State and visible notes of the pending decision point (one replay per decision)."""
        if self._view is None:
            self._view = decision_view(self.episode, self.decision.id, self.policy)
        return self._view

    def messages(self) -> list[Message]:
        return compose(
            self.episode.tools, self._decision_view(), self.presentation,
            conversation=self.conversation, session_start=self._session_start, anchor=self._anchor,
        )

    def request(self) -> Request:
        msgs = self.messages()
        if not self._steps:
            self._first_messages = msgs
        return Request(self.episode, self.decision.id, msgs)

    def feed(self, reply: str) -> None:
        """Take the agent's reply for the pending step and move the state on."""
        text = reply if isinstance(reply, str) else str(reply)
        action = parse_reply(text)
        self.conversation.append({"role": "assistant", "content": escape_surrogates(text)})
        result = None
        finished = action.kind in ("answer", "clarification")
        if action.kind == "tool_call":
            result = call_tool(self.episode.tools, action.tool or "", action.arguments, self._scripted_records())
            self.conversation.append(tool_result_message(action.tool or "", result))
            finished = bool(result.get("ok")) and self._is_terminal(action.tool or "")
        elif action.kind == "invalid":
            result = {"ok": False, "error": f"could not parse your reply: {action.reason}"}
            self.conversation.append({"role": "user", "content": escape_surrogates(f"[error] {result['error']}")})
        self._steps.append(Step(raw_reply=text, action=action, tool_result=result))
        if finished or len(self._steps) >= self.max_steps:
            self._close_decision()

    def _scripted_records(self) -> dict[str, list[dict[str, Any]]]:
        """Tool name -> what the script's own calls of it returned before this decision point."""
        out: dict[str, list[dict[str, Any]]] = {}
        for entry in self._decision_view().state.tool_log:
            if entry.by == "script" and entry.result:
                out.setdefault(entry.tool, []).append(dict(entry.result))
        return out

    def _is_terminal(self, tool: str) -> bool:
        if self.decision.terminal_tool:
            return tool == self.decision.terminal_tool or any(
                t.name == tool and t.terminal for t in self.episode.tools
            )
        return any(t.name == tool and t.terminal for t in self.episode.tools)

    def _close_decision(self) -> None:
        dp = self.decision
        view = self._decision_view()
        state = view.state
        final = self._steps[-1]
        self.records.append(
            DecisionRecord(
                decision_id=dp.id,
                messages=tuple(self._first_messages),
                raw_reply=final.raw_reply,
                action=final.action,
                state=state,
                memory_used=memory_used(final.action, state.memory, active_scopes=state.active_scopes),
                visible_items=tuple(i.id for i in view.notes),
                steps=tuple(self._steps),
            )
        )
        self._steps = []
        self._dp_index += 1
        self._after_decision = True  # the script's reply at the decision point is the agent's now
        self._advance_script()

    def trace(self, agent: str) -> Trace:
        return Trace(
            episode_id=self.episode.id, episode_version=self.episode.version, agent=agent,
            decisions=tuple(self.records), mode="interactive",
            memory_policy=getattr(self.policy, "name", "full") if self.policy else "full",
            presentation=self.presentation.name, tools=self.presentation.tools,
        )


def run_interactive(
    episodes: Iterable[Episode],
    generate: Generate,
    agent: str,
    *,
    max_steps: int = DEFAULT_MAX_STEPS,
    policy: MemoryPolicy | None = None,
    episode_major: bool = False,
    on_trace: Callable[[Trace], None] | None = None,
    progress: bool = True,
    presentation: Presentation = DEFAULT_PRESENTATION,
) -> list[Trace]:
    """Run every episode interactively; returns traces in input order."""
    check_max_steps(max_steps)
    runs = [EpisodeRun(ep, max_steps=max_steps, policy=policy, presentation=presentation) for ep in episodes]
    bar = tqdm(total=len(runs), desc=f"interactive {agent}", unit="ep", disable=not progress)
    groups = [[r] for r in runs] if episode_major else [runs]
    for group in groups:
        finished: set[int] = set()
        while True:
            for i, r in enumerate(group):
                if r.done and i not in finished:
                    finished.add(i)
                    bar.update(1)
                    if on_trace is not None:
                        on_trace(r.trace(agent))
            pending = [r for r in group if not r.done]
            if not pending:
                break
            requests = [r.request() for r in pending]
            replies = checked_replies(generate(requests), requests)
            for r, reply in zip(pending, replies):
                r.feed(reply)
    bar.close()
    return [r.trace(agent) for r in runs]


def agent_generate(agent: Callable[..., str]) -> Generate:
    """A Generate function for a plain agent callable (reference agents included)."""

    def generate(batch: Sequence[Request]) -> list[str]:
        return [call_agent(agent, req.messages, req.episode, req.decision_id) for req in batch]

    return generate
