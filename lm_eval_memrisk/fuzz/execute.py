"""Run parents and mutants on the system under test and judge the mutants.

:class:`Executor` wraps a batch ``Generate`` function (a reference agent through
:func:`lm_eval_memrisk.running.interactive.agent_generate`, or any lm-eval model through
:func:`lm_eval_memrisk.harness.lm_adapter.lm_generate`) and runs episodes with
:func:`lm_eval_memrisk.running.runner.run_scripted`.  Traces are cached by the episode's
canonical JSON (and the memory policy), so a parent shared by many mutants, or a
mutant met again in another run of the same process, is executed once; the system
under test must be deterministic (greedy decoding) for that to be sound.

:func:`judge` is the only place that scores: its labels go to the report and are
never handed to the guidance.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from lm_eval_memrisk.episodes.codec import dumps_episode
from lm_eval_memrisk.episodes.records import Check, Episode
from lm_eval_memrisk.episodes.render import MemoryPolicy
from lm_eval_memrisk.episodes.state import in_scope
from lm_eval_memrisk.episodes.trace import DecisionRecord, Trace
from lm_eval_memrisk.fuzz.expectation import Expectation, roles
from lm_eval_memrisk.running.runner import Generate, run_scripted
from lm_eval_memrisk.scoring.scorer import score

#: Most telling role first, when a failing check names no item itself.
ROLE_SALIENCE = (
    "revoked",
    "superseded",
    "other-scope",
    "summary",
    "conflict",
    "distractor",
    "current",
)


class Executor:
    """Executes episodes on the system under test, with a content-keyed trace cache."""

    def __init__(
        self, generate: Generate, name: str, policy: MemoryPolicy | None = None, chunk: int = 8
    ):
        self.generate = generate
        self.name = name
        self.policy = policy
        self.chunk = chunk
        self.calls = 0
        """Decision points actually sent to the system under test."""
        self._cache: dict[str, Trace] = {}

    def _key(self, episode: Episode) -> str:
        policy = getattr(self.policy, "name", "full") if self.policy else "full"
        blob = f"{policy}\n{dumps_episode(episode)}".encode()
        return hashlib.sha256(blob).hexdigest()

    def run(self, episodes: Sequence[Episode]) -> list[Trace]:
        """One trace per episode, in order; only uncached episodes reach the model."""
        todo: dict[str, Episode] = {}
        for ep in episodes:
            key = self._key(ep)
            if key not in self._cache and key not in todo:
                todo[key] = ep
        if todo:
            fresh = run_scripted(
                list(todo.values()),
                self.generate,
                self.name,
                self.policy,
                chunk=self.chunk,
                progress=False,
            )
            for key, trace in zip(todo, fresh):
                self._cache[key] = trace
            self.calls += sum(len(ep.decision_points) for ep in todo.values())
        return [self._cache[self._key(ep)] for ep in episodes]


def last_record(episode: Episode, trace: Trace) -> DecisionRecord:
    """The record of the checkpoint's decision point."""
    rec = trace.decision(episode.decision_points[-1].id)
    assert rec is not None, f"trace of {episode.id} lacks its decision point"
    return rec


@dataclass(frozen=True)
class Judgement:
    passed: bool
    failing: tuple[tuple[str, str], ...] = ()
    """(check kind, memory item role) of every failing check."""


def implicated_role(check: Check, rec: DecisionRecord, role: dict[str, str]) -> str:
    """The role of the memory item a failing check is about (``none``: no item)."""
    if check.item:
        return role.get(check.item, "none")
    if check.status:
        return check.status
    if check.scope:
        return "current" if in_scope(check.scope, rec.state.active_scopes) else "other-scope"
    used = {role.get(i, "none") for i in rec.memory_used}
    return next((r for r in ROLE_SALIENCE if r in used), "none")


def judge(episode: Episode, exp: Expectation, trace: Trace) -> Judgement:
    """Score the mutant's trace; failing checks are labelled with the implicated role."""
    result = score(episode, trace)
    if result.success:
        return Judgement(True)
    rec = last_record(episode, trace)
    role = roles(episode, exp)
    checks = {c.id: c for c in episode.decision_points[-1].checks}
    failing = tuple(
        (r.kind, implicated_role(checks[r.check_id], rec, role))
        for r in result.checks
        if not r.passed and r.check_id in checks
    )
    return Judgement(False, failing)
