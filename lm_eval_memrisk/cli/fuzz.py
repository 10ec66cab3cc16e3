"""memrisk fuzz: grow the benchmark with validated, failure-inducing mutants.

Seeds are the memory checkpoints of the episodes (``--episodes``, default the shipped
dataset); mutants are validated (validator, oracle passes, the targeted risk's
adversary fails) before they run on the system under test (``--agent`` or
``--model``/``--model_args``).  See :mod:`lm_eval_memrisk.fuzz`.

Example::

    memrisk fuzz --model llama-cpp --model_args model=smollm2-135m \\
        --budget 30 --seeds 0,1,2 --compare --out runs/fuzz
    lm_eval --model llama-cpp --model_args model=smollm2-135m --tasks memriskbench_r1 \\
        --metadata '{"episodes": "runs/fuzz/found.jsonl"}'
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from lm_eval_memrisk.errors import MemriskError

if TYPE_CHECKING:
    from lm_eval_memrisk.runner import Generate

HELP = "fuzz memory use: mutate checkpoints, validate, run, report failure-inducing episodes"


def add_arguments(p: argparse.ArgumentParser) -> None:
    from lm_eval_memrisk.agents import AGENT_NAMES
    from lm_eval_memrisk.fuzz.guidance import STRATEGIES

    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument(
        "--agent", choices=AGENT_NAMES, help="a reference agent as the system under test"
    )
    who.add_argument(
        "--model", help="an lm-eval model name, e.g. llama-cpp, hf, local-chat-completions"
    )
    p.add_argument("--model_args", default="", help="lm-eval model_args, e.g. model=smollm2-135m")
    p.add_argument("--no-chat-template", action="store_true", help="send flattened transcripts")
    p.add_argument(
        "--memory-policy", default="full", help="full | recency:K | bm25:K | embedding:K"
    )
    p.add_argument("--episodes", help="seed episode JSONL (default: the shipped dataset)")
    p.add_argument(
        "--risk", default="", help="comma-separated risks of the seed episodes, e.g. R1,R3"
    )
    p.add_argument("--limit", type=int, help="only the first N seed episodes")
    p.add_argument("--per-risk", type=int, help="only the first N seed episodes of each risk")
    p.add_argument(
        "--max-gen-toks",
        type=int,
        default=128,
        help="reply length limit (the lm-eval tasks use 128)",
    )
    p.add_argument("--budget", type=int, required=True, help="mutant executions per run (B)")
    p.add_argument("--seed", type=int, default=0, help="search seed")
    p.add_argument("--seeds", help="comma-separated search seeds, e.g. 0,1,2 (overrides --seed)")
    p.add_argument("--strategy", default="guided", choices=STRATEGIES)
    p.add_argument(
        "--compare", action="store_true", help="run guided, random and coverage at the same budget"
    )
    p.add_argument("--batch", type=int, default=4, help="mutants sent to the model per call")
    p.add_argument("--max-depth", type=int, default=3, help="longest operator chain")
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument(
        "--json", action="store_true", help="print the result table as JSON, no progress bar"
    )


def _sut(args: argparse.Namespace) -> tuple[Generate, str]:
    from lm_eval_memrisk.agents import get_agent
    from lm_eval_memrisk.interactive import agent_generate

    if args.agent:
        return agent_generate(get_agent(args.agent)), args.agent
    from lm_eval_memrisk.harness.lm_adapter import lm_generate, load_lm

    lm = load_lm(args.model, args.model_args)
    name = (args.model + "-" + args.model_args.replace("=", "-").replace(",", "_")).strip("-")
    gen = lm_generate(
        lm, {"max_gen_toks": args.max_gen_toks}, apply_chat_template=not args.no_chat_template
    )
    return gen, name


def _int_list(text: str, what: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError as exc:
        raise MemriskError(f"{what} must be comma-separated integers, not {text!r}") from exc


def run(args: argparse.Namespace) -> int:
    from lm_eval_memrisk.fuzz.campaign import run_campaign
    from lm_eval_memrisk.fuzz.execute import Executor
    from lm_eval_memrisk.fuzz.guidance import STRATEGIES
    from lm_eval_memrisk.fuzz.report import write_all
    from lm_eval_memrisk.fuzz.seeds import make_seeds, select_episodes
    from lm_eval_memrisk.loader import load_episodes
    from lm_eval_memrisk.policies import make_policy

    if args.budget < 1:
        raise MemriskError("--budget must be at least 1")
    seeds_list = _int_list(args.seeds, "--seeds") if args.seeds else [args.seed]
    strategies = list(STRATEGIES) if args.compare else [args.strategy]
    risks = [r.strip() for r in args.risk.split(",") if r.strip()]
    episodes = select_episodes(
        load_episodes(args.episodes, track="all"), risks, args.limit, args.per_risk
    )
    seeds, skipped = make_seeds(episodes)
    if not seeds:
        raise MemriskError(f"no usable seed checkpoints (skipped: {skipped})")
    policy = make_policy(args.memory_policy)
    generate, name = _sut(args)
    executor = Executor(generate, name, policy, chunk=max(args.batch, 1))
    started = time.monotonic()
    runs = [
        run_campaign(
            seeds,
            executor,
            strategy,
            args.budget,
            s,
            batch=max(args.batch, 1),
            max_depth=args.max_depth,
            progress=not args.json,
        )
        for strategy in strategies
        for s in seeds_list
    ]
    config = {
        "command": "memrisk fuzz " + " ".join(shlex.quote(a) for a in sys.argv[2:])
        if sys.argv[1:2] == ["fuzz"]
        else "",
        "sut": name,
        "memory_policy": args.memory_policy,
        "budget": args.budget,
        "seeds": seeds_list,
        "strategies": strategies,
        "episodes": args.episodes or "shipped dataset",
        "risks": risks,
        "n_seed_episodes": len(episodes),
        "n_seeds": len(seeds),
        "skipped_seeds": skipped,
        "model_calls": executor.calls,
        "seconds": round(time.monotonic() - started, 1),
    }
    out = Path(args.out)
    report = write_all(out, runs, config)
    if report["config"]["found"]:
        load_episodes(out / "found.jsonl", track="all")  # the found set must load as a dataset
    if args.json:
        print(json.dumps(report["table"], sort_keys=True))
    else:
        for strategy, row in report["table"].items():
            uf, cov = row["unique_failures"], row["coverage"]
            print(
                f"{strategy:9s} UF@{args.budget} {uf['mean']:.1f} ± {uf['sd']:.1f}   "
                f"Cov@{args.budget} {cov['mean']:.3f} ± {cov['sd']:.3f}"
            )
        print(
            f"found {report['config']['found']} failure-inducing episodes -> {out / 'found.jsonl'}"
        )
    return 0
