"""The run pipeline under ``memrisk run``: run a system, store its traces, score, sign.

:func:`run_benchmark` is the library entry point the CLI and the tests call::

    system = build_system(agent="oracle")            # or model="llama-cpp", model_args=...
    result = run_benchmark(system, episodes, dataset_hash=fingerprint(all_episodes),
                           mode="interactive", memory_policy="bm25:3", out=Path("runs/x"))
    result.results, result.signature

With ``out`` the run is resumable (:class:`run_store.RunStore`): a manifest of the
settings is written before the first trace and ``resume=True`` refuses a folder
whose manifest differs or whose traces are another system's; the folder is held
(:func:`run_lock.hold_folder`) for the whole run, so a second run into it is refused.
Model provenance (e.g. ``llama_cpp_stats``) is read after
the run, so its counters are the run's.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lm_eval_memrisk.episodes.errors import MemriskError
from lm_eval_memrisk.episodes.records import Episode
from lm_eval_memrisk.episodes.render import DEFAULT_PRESENTATION, Presentation, make_presentation
from lm_eval_memrisk.episodes.trace import MODES, Trace
from lm_eval_memrisk.running.generation import generation_settings
from lm_eval_memrisk.running.interactive import DEFAULT_MAX_STEPS, check_max_steps, run_interactive
from lm_eval_memrisk.running.policies import make_policy, policy_description
from lm_eval_memrisk.running.run_lock import hold_folder
from lm_eval_memrisk.running.run_store import RunStore
from lm_eval_memrisk.running.runner import run_scripted
from lm_eval_memrisk.running.systems import System
from lm_eval_memrisk.scoring.attribution import attribute
from lm_eval_memrisk.scoring.scorer import ScoreResult, score
from lm_eval_memrisk.scoring.signature import signature

__all__ = ["MODES", "RunResult", "run_benchmark", "run_manifest", "select_episodes"]


@dataclass(frozen=True)
class RunResult:
    """What :func:`run_benchmark` returns."""

    results: list[ScoreResult]
    """One score per episode, in episode order."""
    traces: list[Trace]
    """One trace per episode, in episode order (resumed ones included)."""
    signature: str
    manifest: dict[str, Any]
    attribution: list[dict[str, Any]]
    """Per episode: which failures a memory policy caused (:mod:`lm_eval_memrisk.scoring.attribution`)."""


def select_episodes(
    episodes: Sequence[Episode], track: str = "main", risk: str | None = None, limit: int | None = None
) -> list[Episode]:
    """The episodes of ``track`` (``all`` = every track), of ``risk``, the first ``limit``."""
    chosen = [e for e in episodes if track == "all" or e.track == track]
    if risk:
        chosen = [e for e in chosen if e.risk == risk.upper()]
    if limit is not None:
        if limit < 1:
            raise MemriskError(f"--limit must be >= 1, got {limit}")
        chosen = chosen[:limit]
    return chosen


def run_manifest(
    system: System, *, dataset_hash: str, mode: str, memory_policy: str, max_steps: int,
    presentation: Presentation = DEFAULT_PRESENTATION,
) -> dict[str, Any]:
    """The settings that decide a run's traces (compared on ``--resume``)."""
    return {
        "system": system.name, **dict(system.settings), "mode": mode,
        "memory_policy": memory_policy, "max_steps": max_steps, "dataset_hash": dataset_hash,
        "presentation": presentation.name, "tools": presentation.tools,
    }


def system_generation(system: System) -> dict[str, Any]:
    """The effective generation settings of ``system`` for the signature: {} for a
    reference agent (it does not generate); for a model, the task defaults with its
    ``gen_kwargs`` and its model_args' sampling settings applied, and its seed (the
    model's provenance, e.g. llama-cpp's ``seed``)."""
    settings = dict(system.settings)
    if "model" not in settings:
        return {}
    raw = settings.get("model_args") or ""
    pairs = (p.partition("=") for p in str(raw).split(",") if p.strip())
    args = {k.strip(): v.strip() for k, sep, v in pairs if sep}
    seed = system.info().get("seed")
    return generation_settings(settings.get("gen_kwargs"), args, seed if isinstance(seed, int) else None)


def run_benchmark(
    system: System,
    episodes: Sequence[Episode],
    *,
    dataset_hash: str,
    mode: str = "scripted",
    memory_policy: str = "full",
    max_steps: int = DEFAULT_MAX_STEPS,
    variant: str = "default",
    presentation: str | None = None,
    tools: str | None = None,
    out: Path | None = None,
    resume: bool = False,
    progress: bool = True,
) -> RunResult:
    """Run ``system`` over ``episodes``, store (with ``out``), score and sign; see the module doc."""
    if mode not in MODES:
        raise MemriskError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    check_max_steps(max_steps)
    if resume and out is None:
        raise MemriskError("--resume needs --out (the folder of the interrupted run)")
    policy = make_policy(memory_policy)
    shown = make_presentation(presentation, tools)
    described = policy_description(policy)
    manifest = run_manifest(
        system, dataset_hash=dataset_hash, mode=mode, memory_policy=memory_policy,
        max_steps=max_steps, presentation=shown,
    )
    manifest["policy_filters_by_status"] = described["filters_by_status"]
    manifest["memory_policy_config"] = described  # e.g. mem0's active rankers: checked on --resume too
    with hold_folder(out) if out is not None else nullcontext():
        store = RunStore(out, resume=resume) if out is not None else None
        if store is not None:
            store.start(manifest)
        todo = [e for e in episodes if store is None or e.id not in store.finished]
        on_trace = store.append if store is not None else None
        if mode == "interactive":
            fresh = run_interactive(
                todo, system.generate, system.name, max_steps=max_steps, policy=policy,
                episode_major=system.episode_major, on_trace=on_trace, progress=progress, presentation=shown,
            )
        else:
            fresh = run_scripted(todo, system.generate, system.name, policy, on_trace=on_trace, progress=progress,
                                 presentation=shown)
        by_id = {t.episode_id: t for t in fresh}
        if store is not None:
            by_id = {**store.finished, **by_id}
        traces = [by_id[e.id] for e in episodes]
        results = [score(e, t, variant=variant) for e, t in zip(episodes, traces)]
        attributed = [attribute(e, t, r) for e, t, r in zip(episodes, traces, results)]
        generation = system_generation(system)
        sig = signature(
            dataset_hash, variant=variant, policy=described["signature"], mode=mode, agent=system.name,
            presentation=shown.name, tools=shown.tools, generation=generation,
        )
        if store is not None:
            config = {**manifest, **system.info(), **({"generation": generation} if generation else {})}
            store.finalize(episodes, results, attributed, dataset_hash, system.name, config, generation)
    return RunResult(results, traces, sig, manifest, attributed)
