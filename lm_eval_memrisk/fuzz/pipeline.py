"""The fuzz pipeline as a library call: ``run_fuzz(FuzzOptions(...))``.

``memrisk fuzz`` (:mod:`lm_eval_memrisk.cli.fuzz`) only turns its arguments into a
:class:`FuzzOptions`; tests and scripts call :func:`run_fuzz` directly and get the
same outputs.  The recorded command is rebuilt from the options (never read from
``sys.argv``), so an in-process call records the command that reproduces it.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lm_eval_memrisk.episodes.errors import MemriskError
from lm_eval_memrisk.episodes.render import MemoryPolicy
from lm_eval_memrisk.fuzz.campaign import RunResult, run_campaign
from lm_eval_memrisk.fuzz.execute import Executor
from lm_eval_memrisk.fuzz.guidance import COMPARED, MARGIN_STRATEGIES, STRATEGIES
from lm_eval_memrisk.fuzz.margins import MarginSource, planted_source
from lm_eval_memrisk.fuzz.report import write_all
from lm_eval_memrisk.fuzz.seeds import make_seeds, select_episodes
from lm_eval_memrisk.running.runner import Generate
from lm_eval_memrisk.running.weak import WeakAgent


@dataclass(frozen=True)
class FuzzOptions:
    """Everything one ``memrisk fuzz`` invocation needs (see ``memrisk fuzz --help``)."""

    budget: int
    out: str
    agent: str | None = None
    model: str | None = None
    model_args: str = ""
    chat_template: bool = True
    memory_policy: str = "full"
    episodes: str | None = None
    risks: tuple[str, ...] = ()
    limit: int | None = None
    per_risk: int | None = None
    max_gen_toks: int = 128
    seeds: tuple[int, ...] = (0,)
    strategies: tuple[str, ...] = ("guided",)
    batch: int = 4
    max_depth: int = 3
    progress: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    def command(self) -> str:
        """The ``memrisk fuzz`` command line that reproduces these options."""
        argv = ["memrisk", "fuzz"]
        argv += ["--agent", self.agent] if self.agent else ["--model", str(self.model)]
        if self.model_args:
            argv += ["--model_args", self.model_args]
        if not self.chat_template:
            argv.append("--no-chat-template")
        if self.memory_policy != "full":
            argv += ["--memory-policy", self.memory_policy]
        if self.episodes:
            argv += ["--episodes", self.episodes]
        if self.risks:
            argv += ["--risk", ",".join(self.risks)]
        if self.limit is not None:
            argv += ["--limit", str(self.limit)]
        if self.per_risk is not None:
            argv += ["--per-risk", str(self.per_risk)]
        if self.max_gen_toks != 128:
            argv += ["--max-gen-toks", str(self.max_gen_toks)]
        argv += ["--budget", str(self.budget), "--seeds", ",".join(map(str, self.seeds))]
        if tuple(self.strategies) == COMPARED:
            argv.append("--compare")
        else:
            argv += ["--strategy", ",".join(self.strategies)]
        argv += ["--batch", str(self.batch), "--max-depth", str(self.max_depth), "--out", self.out]
        return " ".join(shlex.quote(a) for a in argv)


def system_under_test(options: FuzzOptions) -> tuple[Generate, str, WeakAgent | None, Any]:
    """(batch generate function, name, the planted-weakness agent or None, the loaded
    lm-eval model or None), built by the shared builder
    :func:`lm_eval_memrisk.running.systems.build_system`."""
    from lm_eval_memrisk.running.agent_registry import get_agent
    from lm_eval_memrisk.running.systems import build_system

    if options.agent:
        agent = get_agent(options.agent)
        planted = agent if isinstance(agent, WeakAgent) else None
        return build_system(agent=options.agent).generate, options.agent, planted, None
    if not options.model:
        raise MemriskError("fuzz needs an agent or a model as the system under test")
    system = build_system(model=options.model, model_args=options.model_args,
                          chat_template=options.chat_template,
                          gen_kwargs={"max_gen_toks": options.max_gen_toks})
    return system.generate, system.name, None, system.backend


def margin_source(
    options: FuzzOptions, planted: WeakAgent | None, backend: Any, policy: MemoryPolicy | None
) -> MarginSource | None:
    """The margins the campaigns read: a planted-weakness agent's (every strategy
    records them; they are free), else, when a margin strategy is asked for, the
    llama-cpp model's (:mod:`lm_eval_memrisk.fuzz.model_margins`; computed for the
    margin strategies' runs only, since each costs model time), else None."""
    if planted is not None:
        return planted_source(planted)
    if not any(s in MARGIN_STRATEGIES for s in options.strategies):
        return None
    if backend is None:
        raise MemriskError(
            "the margin strategies need a system under test that exposes margins: "
            "a planted-weakness agent (--agent weak:NAME) or --model llama-cpp"
        )
    from lm_eval_memrisk.fuzz.model_margins import lm_source

    return lm_source(backend, policy, options.chat_template)


def run_line(run: RunResult) -> dict[str, Any]:
    """The one-line JSON summary of a run printed by ``memrisk fuzz --json``."""
    s = run.summary()
    line = {k: s[k] for k in ("strategy", "budget", "seed", "unique_failures", "coverage")}
    line["first_detection"] = s["first_detection"]
    line["pairs"] = s["pairs"]
    if "planted" in s:
        line["planted"] = s["planted"]
        line["false_positives"] = s["false_positives"]
    if "margin_shrinks" in s:
        line["margin_shrinks"] = s["margin_shrinks"]
    if "margin_cost" in s:
        line["margin_cost"] = s["margin_cost"]
    return line


def run_fuzz(
    options: FuzzOptions, on_run: Callable[[RunResult], None] | None = None
) -> tuple[dict[str, Any], list[RunResult]]:
    """Run every (strategy, seed) campaign and write the outputs into ``options.out``;
    ``on_run`` hears of each campaign as it ends (a long model run shows its runs one by
    one, and a run stopped early keeps what it printed)."""
    from lm_eval_memrisk.episodes.loader import load_episodes
    from lm_eval_memrisk.running.policies import make_policy

    if options.budget < 1:
        raise MemriskError("--budget must be at least 1")
    bad = [s for s in options.strategies if s not in STRATEGIES]
    if bad:
        raise MemriskError(f"unknown strategy {bad[0]!r}; choose from {', '.join(STRATEGIES)}")
    episodes = select_episodes(
        load_episodes(options.episodes, track="all"),
        list(options.risks),
        options.limit,
        options.per_risk,
    )
    seeds, skipped = make_seeds(episodes)
    if not seeds:
        raise MemriskError(f"no usable seed checkpoints (skipped: {skipped})")
    policy = make_policy(options.memory_policy)
    generate, name, planted, backend = system_under_test(options)
    margins = margin_source(options, planted, backend, policy)
    batch = max(options.batch, 1)
    executor = Executor(generate, name, policy, chunk=batch)
    started = time.monotonic()
    runs: list[RunResult] = []
    for strategy in options.strategies:
        for s in options.seeds:
            reset = getattr(margins, "reset", None)  # a model's margins: start each run afresh
            if callable(reset):
                reset()
            runs.append(run_campaign(
                seeds, executor, strategy, options.budget, s, batch=batch,
                max_depth=options.max_depth, progress=options.progress, planted=planted,
                margins=margins if planted is not None or strategy in MARGIN_STRATEGIES else None,
            ))
            if on_run is not None:
                on_run(runs[-1])
    config = {
        "command": options.command(),
        "sut": name,
        "memory_policy": options.memory_policy,
        "budget": options.budget,
        "seeds": list(options.seeds),
        "strategies": list(options.strategies),
        "episodes": options.episodes or "shipped dataset",
        "risks": list(options.risks),
        "n_seed_episodes": len(episodes),
        "n_seeds": len(seeds),
        "skipped_seeds": skipped,
        "model_calls": executor.calls,
    }
    seconds = time.monotonic() - started
    out = Path(options.out)
    report = write_all(out, runs, config)
    if report["config"]["found"]:
        load_episodes(out / "found.jsonl", track="all")  # the found set must load as a dataset
    report["seconds"] = round(seconds, 1)  # returned, never written: outputs stay byte-stable
    return report, runs
