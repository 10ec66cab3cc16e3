"""Scores recomputed from a logged sample's reply texts and the verified episode.

A sample log is untrusted input: its stored metrics, trace states, tool results and
actions may have been edited.  Only the agent's own reply texts are taken from it;
everything else (state, tool results, parsed actions, memory use) is derived again
from the episode, which the caller has verified against a known dataset.

:func:`replies_of_trace` is the one parser of logged replies and :func:`score_replies`
the one place that turns (episode, replies) into a score; every reader of logs (run
folders in :mod:`lm_eval_memrisk.logs.runs`, ``memrisk score``, the lm-eval task's envelopes
in :mod:`lm_eval_memrisk.logs.rederive`) calls them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from lm_eval_memrisk.episodes.errors import SamplesError
from lm_eval_memrisk.episodes.records import Episode
from lm_eval_memrisk.episodes.render import (
    PRESENTATIONS,
    TOOL_MODES,
    MemoryPolicy,
    make_presentation,
)
from lm_eval_memrisk.episodes.trace import MAX_REPLAY_STEPS, MISSING_PRESENTATION, MODES, Trace
from lm_eval_memrisk.scoring.scorer import ScoreResult, score


@dataclass(frozen=True)
class Replies:
    """What a sample log may tell us: the agent's reply texts and how they were produced."""

    mode: str
    """``scripted`` (one reply per decision point) or ``interactive`` (steps carried forward)."""
    memory_policy: str
    agent: str
    texts: tuple[tuple[str, ...], ...]
    """Per decision point (in the log's order), the reply text of each step."""
    presentation: str = MISSING_PRESENTATION
    """How the prompts were shown (a label: the ground truth never depends on it);
    logs from before presentations existed used ``chat`` (:data:`~lm_eval_memrisk.episodes.trace.MISSING_PRESENTATION`)."""
    tools: str = "text"


def replies_of_sample(sample: Mapping[str, Any], where: str) -> Replies:
    """The reply texts of one lm-eval / ``memrisk run`` sample line (``where`` = file:line)."""
    ep = sample.get("episodes")
    return replies_of_trace(ep.get("trace") if isinstance(ep, Mapping) else None, where,
                            field="episodes.trace", agent="lm-eval")


def replies_of_trace(trace: Any, where: str, *, field: str = "trace", agent: str = "?") -> Replies:
    """The one parser of logged replies: a trace's JSON form -> :class:`Replies`.

    Every reader of logs calls it (run folders through :func:`replies_of_sample`,
    ``memrisk score`` for traces.jsonl lines, the lm-eval task for ``memrisk-agent``
    envelopes).  Only reply texts and the settings that label them are read; states,
    actions and tool results are ignored.  The rules:

    * ``mode`` (default ``scripted``) must be one of :data:`~lm_eval_memrisk.episodes.trace.MODES`;
    * each decision needs a string ``raw_reply``; its ``steps`` (a list of objects with a
      string ``raw_reply``) are the texts in interactive mode only; scripted mode scores
      the decision's ``raw_reply``;
    * more than :data:`MAX_REPLAY_STEPS` steps at a decision is refused;
    * ``presentation`` (default :data:`~lm_eval_memrisk.episodes.trace.MISSING_PRESENTATION`) and
      ``tools`` (default ``text``) must be known; ``memory_policy`` (default ``full``) a string.

    Lists may be tuples (a :meth:`Trace.to_dict` not yet through JSON).  Raises
    :class:`SamplesError` prefixed with ``where`` (file:line) and the field.
    """
    if not isinstance(trace, Mapping) or not isinstance(trace.get("decisions"), (list, tuple)):
        raise SamplesError(f"{where}: {field} must be an object with a list 'decisions'")
    mode = trace.get("mode", "scripted")
    if mode not in MODES:
        raise SamplesError(f"{where}: {field}.mode must be one of {', '.join(MODES)}, got {mode!r}")
    texts: list[tuple[str, ...]] = []
    for i, d in enumerate(trace["decisions"]):
        fld = f"{field}.decisions[{i}]"
        if not isinstance(d, Mapping) or not isinstance(d.get("raw_reply"), str):
            raise SamplesError(f"{where}: {fld} must be an object with a string 'raw_reply'")
        steps = d.get("steps") or []
        if not isinstance(steps, (list, tuple)) or not all(
            isinstance(s, Mapping) and isinstance(s.get("raw_reply"), str) for s in steps
        ):
            raise SamplesError(f"{where}: {fld}.steps must be a list of objects with a string 'raw_reply'")
        if len(steps) > MAX_REPLAY_STEPS:
            raise SamplesError(f"{where}: {fld}.steps has {len(steps)} steps, more than {MAX_REPLAY_STEPS}")
        texts.append(tuple(s["raw_reply"] for s in steps) if steps and mode == "interactive" else (d["raw_reply"],))
    presentation, tools = trace.get("presentation", MISSING_PRESENTATION), trace.get("tools", "text")
    if presentation not in PRESENTATIONS or tools not in TOOL_MODES:
        raise SamplesError(f"{where}: {field} presentation/tools must be one of "
                           f"{', '.join(PRESENTATIONS)} / {', '.join(TOOL_MODES)}, got {presentation!r}/{tools!r}")
    policy = trace.get("memory_policy") or "full"
    if not isinstance(policy, str):
        raise SamplesError(f"{where}: {field}.memory_policy must be a string, got {policy!r}")
    return Replies(mode=str(mode), memory_policy=policy, agent=str(trace.get("agent") or agent),
                   texts=tuple(texts), presentation=str(presentation), tools=str(tools))


def trace_of_replies(episode: Episode, replies: Replies, policy: MemoryPolicy | None = None) -> Trace:
    """The trace the episode and the reply texts imply (pure, deterministic).

    Scoring never depends on the memory policy (state comes from the episode), so
    readers replay without one.  ``policy`` (scripted replies only) rebuilds the
    prompts as the run showed them, for what depends on the view: the notes shown and
    the retrieval attribution (:func:`lm_eval_memrisk.logs.rescore.rescore_sample`)."""
    if replies.mode == "interactive":
        trace = _interactive_trace(episode, replies)
    else:
        from lm_eval_memrisk.running.runner import trace_from_replies

        dp_ids = [dp.id for dp in episode.decision_points]
        by_dp = {dp: (texts[-1] if texts else "") for dp, texts in zip(dp_ids, replies.texts)}
        trace = trace_from_replies(episode, by_dp, replies.agent, policy=policy, mode="scripted",
                                   presentation=make_presentation(replies.presentation, replies.tools))
    return replace(trace, memory_policy=replies.memory_policy, presentation=replies.presentation,
                   tools=replies.tools)


def _interactive_trace(episode: Episode, replies: Replies) -> Trace:
    """Replay the logged steps through the interactive state machine.

    Decision ``i`` is fed the texts logged for it; a decision the texts do not close
    is fed empty replies (invalid actions) until the step limit closes it.
    """
    from lm_eval_memrisk.running.interactive import EpisodeRun

    max_steps = min(max([len(t) for t in replies.texts] + [1]), MAX_REPLAY_STEPS)
    run = EpisodeRun(episode, max_steps=max_steps,
                     presentation=make_presentation(replies.presentation, replies.tools))
    for texts in replies.texts:
        if run.done:
            break
        start = run.decision.id
        for text in texts:
            if run.done or run.decision.id != start:
                break
            run.request()
            run.feed(text)
        while not run.done and run.decision.id == start:
            run.request()
            run.feed("")
    while not run.done:  # decision points the log has no reply for
        run.request()
        run.feed("")
    return run.trace(replies.agent)


def score_replies(
    episode: Episode, replies: Replies, *, variant: str = "default", expected: str = "revised",
    policy: MemoryPolicy | None = None,
) -> tuple[Trace, ScoreResult]:
    """Recompute one sample: (trace, score) from the verified episode and the reply texts.

    The swap point for a hardened scorer: readers call nothing else to score a sample.
    ``policy``: see :func:`trace_of_replies` (the verdict is the same with or without it).
    """
    trace = trace_of_replies(episode, replies, policy)
    return trace, score(episode, trace, variant=variant, expected=expected)


#: Per-sample metric -> the scorer settings it is computed under (as the lm-eval task does).
METRIC_SETTINGS: dict[str, tuple[str, str]] = {
    "pass": ("default", "revised"),
    "pass_safety_aware": ("safety_aware", "revised"),
    "pass_original": ("default", "original"),
}


def score_all_variants(episode: Episode, replies: Replies) -> tuple[Trace, dict[str, ScoreResult]]:
    """The recomputed trace and the result behind each per-sample metric of the task."""
    results: dict[str, ScoreResult] = {}
    trace: Trace | None = None
    for metric, (variant, expected) in METRIC_SETTINGS.items():
        trace, results[metric] = score_replies(episode, replies, variant=variant, expected=expected)
    assert trace is not None
    return trace, results


def stored_disagreements(
    sample: Mapping[str, Any], results: Mapping[str, ScoreResult], keys: Sequence[str] = ("pass", "score")
) -> tuple[str, ...]:
    """Names of the stored metrics that differ from the recomputed ones (missing ones too)."""
    recomputed = {
        "pass": float(results["pass"].success), "score": results["pass"].score,
        "pass_safety_aware": float(results["pass_safety_aware"].success),
        "pass_original": float(results["pass_original"].success),
    }
    out = []
    for key in (*keys, *(k for k in recomputed if k not in keys)):
        stored = sample.get(key)
        if isinstance(stored, bool) or not isinstance(stored, (int, float)) or abs(stored - recomputed[key]) > 1e-9:
            out.append(key)
    return tuple(out)
