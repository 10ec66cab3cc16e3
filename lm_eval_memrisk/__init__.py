"""MemRiskBench: trace-grounded memory-risk evaluation for long-horizon LLM agents.

Public API (imported lazily, so that ``import lm_eval_memrisk`` stays cheap — it runs
at every interpreter start through the lm-eval discovery hook)::

    from lm_eval_memrisk import load_episodes, render, parse_action, get_agent, run_episode, score

    episodes = load_episodes()                     # the 120 main-track episodes
    trace = run_episode(episodes[0], get_agent("oracle"))
    result = score(episodes[0], trace)             # .success, .score, .checks, ...
"""

TYPE_CHECKING = False  # no typing/__future__/importlib at start-up (the discovery hook)
if TYPE_CHECKING:
    from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "load_episodes": "lm_eval_memrisk.episodes.loader",
    "render": "lm_eval_memrisk.episodes.render",
    "parse_action": "lm_eval_memrisk.scoring.parse",
    "get_agent": "lm_eval_memrisk.running.agent_registry",
    "run_episode": "lm_eval_memrisk.running.runner",
    "score": "lm_eval_memrisk.scoring.scorer",
    "Episode": "lm_eval_memrisk.episodes.records",
    "Trace": "lm_eval_memrisk.episodes.trace",
    "ScoreResult": "lm_eval_memrisk.scoring.scorer",
    "MemriskError": "lm_eval_memrisk.episodes.errors",
    "EpisodeFormatError": "lm_eval_memrisk.episodes.errors",
}

#: The names of ``_EXPORTS`` plus ``__version__``, as a literal that static tools can read.
__all__ = [
    "Episode",
    "EpisodeFormatError",
    "MemriskError",
    "ScoreResult",
    "Trace",
    "__version__",
    "get_agent",
    "load_episodes",
    "parse_action",
    "render",
    "run_episode",
    "score",
]


def __getattr__(name: str) -> "Any":
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'lm_eval_memrisk' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
