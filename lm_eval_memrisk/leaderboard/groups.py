"""Real systems and reference systems, told apart by what each run recorded.

The leaderboard ranks the two groups in separate tables, real systems first, so a
scripted agent built from the ground truth never sits above a model as if it were one.
The group comes from the run's own settings (``results["config"]``), never its name.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

from lm_eval_memrisk.leaderboard.records import Group
from lm_eval_memrisk.logs.runs import model_args
from lm_eval_memrisk.running.replay import PREFIX as REPLAY_PREFIX

#: The lm-eval model that answers with a scripted agent (``memrisk eval --model memrisk-agent``).
AGENT_MODEL = "memrisk-agent"
#: The agent ``memrisk-agent`` runs when its model_args name none.
DEFAULT_AGENT = "oracle"
#: Folder of a replies file (``replay:FILE``) -> who wrote the replies.
REPLAY_AUTHORS: Mapping[str, str] = {
    "careful_assistant": "replies written blind by a capable assistant, not a model run",
}

GROUP_TITLES: Mapping[Group, str] = {"real": "Real systems", "reference": "Reference systems"}
GROUP_TEXTS: Mapping[Group, str] = {
    "real": (
        "Models run through lm-eval (llama.cpp or any other backend, with or without a memory policy), "
        "and replayed replies written outside any model (marked as such). Ranked among themselves."
    ),
    "reference": (
        "Scripted agents that check the benchmark itself, not models: reference agents derived from "
        "the ground truth (stale, leaky, constraint-blind, ...) and planted-weakness profiles (the "
        "oracle with one weakness at probability p). Ranked among themselves; their ranks are not "
        "comparable with the real systems' ranks."
    ),
}


def scripted_agent(config: Mapping[str, Any]) -> str | None:
    """The agent spec (``stale``, ``weak:churn1:p=0.7:seed=0``, ``replay:FILE``) of a run that
    answered with a memrisk agent and no wrapped model, else None.

    Such a run is ``memrisk eval --model memrisk-agent`` (config ``model`` is
    ``memrisk-agent``; the agent is in ``model_args.agent`` or ``memrisk_agent``) or
    ``memrisk run --agent NAME`` (no ``model``; config ``agent``). A ``base`` model_arg
    means memrisk-agent wrapped a model (a memory policy around it): a model run.
    """
    args = model_args(config)
    model = config.get("model")
    if args.get("base") or model not in (None, AGENT_MODEL):
        return None
    agent = args.get("agent") or config.get("memrisk_agent") or config.get("agent")
    if isinstance(agent, str) and agent:
        return agent
    return DEFAULT_AGENT if model == AGENT_MODEL else None


def system_group(config: Mapping[str, Any]) -> Group:
    """``reference`` for a scripted agent, ``real`` for everything else.

    ``config`` is the run's ``results["config"]`` (``{}`` when it has no results file).
    A reference system is a run of a scripted memrisk agent (:func:`scripted_agent`)
    other than a replay: the reference agents (oracle, stale, leaky, constraint-blind,
    amnesiac, ablated-Rk, ...) and the planted-weakness profiles (``weak:...``), whose
    replies are computed from the episodes' ground truth.

    Real: any other lm-eval model (``llama-cpp``, ``hf``, ``vllm``, an API model),
    memrisk-agent wrapping a model (``base=...``), and ``replay:FILE`` — replies written
    outside the benchmark and replayed (the careful-assistant row; :func:`system_note`
    marks them as not a model run).

    A run whose settings say nothing either way (no results file, an unknown model) is
    real. That is the safer default: the only way to get scripted replies is the
    memrisk agent, which always records itself, so an unrecognised run is far more
    likely a model; and a model filed among the references would have its result
    hidden from the comparison it was run for, while a mis-filed script among the real
    systems stays in plain view with its signature.
    """
    agent = scripted_agent(config)
    return "reference" if agent is not None and not agent.startswith(REPLAY_PREFIX) else "real"


def system_note(config: Mapping[str, Any]) -> str:
    """What the leaderboard says next to a replayed system's name ("" for the others)."""
    agent = scripted_agent(config)
    if agent is None or not agent.startswith(REPLAY_PREFIX):
        return ""
    replies = PurePosixPath(agent[len(REPLAY_PREFIX):].replace("\\", "/"))
    return REPLAY_AUTHORS.get(replies.parent.name, f"replayed replies ({replies.name}), not a model run")
