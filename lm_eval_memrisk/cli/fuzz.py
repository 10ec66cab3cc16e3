"""memrisk fuzz: grow the benchmark with validated, failure-inducing mutants.

Seeds are the memory checkpoints of the episodes (``--episodes``, default the shipped
dataset); mutants are validated (validator, oracle passes, the targeted risk's
adversary fails) before they run on the system under test (``--agent``, e.g. a
planted-weakness agent ``weak:fuzz-target``, or ``--model``/``--model_args``).  The
pipeline itself is :func:`lm_eval_memrisk.fuzz.pipeline.run_fuzz`; this module only
turns the arguments into its options.  See :mod:`lm_eval_memrisk.fuzz`.

Example::

    memrisk fuzz --model llama-cpp --model_args model=smollm2-135m \\
        --budget 30 --seeds 0,1,2 --compare --out runs/fuzz
    lm_eval --model llama-cpp --model_args model=smollm2-135m --tasks memriskbench_r1 \\
        --metadata '{"episodes": "runs/fuzz/found.jsonl"}'
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from lm_eval_memrisk.episodes.errors import MemriskError
from lm_eval_memrisk.running.generation import MAX_GEN_TOKS

if TYPE_CHECKING:
    from lm_eval_memrisk.fuzz.pipeline import FuzzOptions

HELP = "fuzz memory use: mutate checkpoints, validate, run, report failure-inducing episodes"


def add_arguments(p: argparse.ArgumentParser) -> None:
    from lm_eval_memrisk.fuzz.guidance import STRATEGIES
    from lm_eval_memrisk.running.agent_registry import agent_name
    from lm_eval_memrisk.running.agents import AGENT_NAMES

    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument(
        "--agent",
        type=agent_name,
        metavar="|".join(AGENT_NAMES) + "|weak:NAME",
        help="a reference or planted-weakness agent as the system under test",
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
        default=MAX_GEN_TOKS,
        help=f"reply length limit (default {MAX_GEN_TOKS}, as the lm-eval tasks)",
    )
    p.add_argument("--budget", type=int, required=True, help="mutant executions per run (B)")
    p.add_argument("--seed", type=int, default=0, help="search seed")
    p.add_argument("--seeds", help="comma-separated search seeds, e.g. 0,1,2 (overrides --seed)")
    p.add_argument(
        "--strategy",
        default="guided",
        help=f"{' | '.join(STRATEGIES)} (comma-separated for several; margin and "
        "margin-only need a planted-weakness agent, weak:NAME, or --model llama-cpp)",
    )
    p.add_argument(
        "--compare", action="store_true", help="run guided, random and coverage at the same budget"
    )
    p.add_argument("--batch", type=int, default=4, help="mutants sent to the model per call")
    p.add_argument("--max-depth", type=int, default=3, help="longest operator chain")
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument(
        "--json",
        action="store_true",
        help="no progress bar; print one JSON line per run (strategy, budget, seed, "
        "unique_failures, coverage, planted)",
    )


def _int_list(text: str, what: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError as exc:
        raise MemriskError(f"{what} must be comma-separated integers, not {text!r}") from exc


def options_from(args: argparse.Namespace) -> FuzzOptions:
    from lm_eval_memrisk.fuzz.guidance import COMPARED
    from lm_eval_memrisk.fuzz.pipeline import FuzzOptions

    strategies = (
        list(COMPARED)
        if args.compare
        else [s.strip() for s in args.strategy.split(",") if s.strip()]
    )
    return FuzzOptions(
        budget=args.budget,
        out=args.out,
        agent=args.agent,
        model=args.model,
        model_args=args.model_args,
        chat_template=not args.no_chat_template,
        memory_policy=args.memory_policy,
        episodes=args.episodes,
        risks=tuple(r.strip() for r in args.risk.split(",") if r.strip()),
        limit=args.limit,
        per_risk=args.per_risk,
        max_gen_toks=args.max_gen_toks,
        seeds=tuple(_int_list(args.seeds, "--seeds") if args.seeds else [args.seed]),
        strategies=tuple(strategies),
        batch=args.batch,
        max_depth=args.max_depth,
        progress=not args.json,
    )


def run(args: argparse.Namespace) -> int:
    from lm_eval_memrisk.fuzz.campaign import RunResult
    from lm_eval_memrisk.fuzz.pipeline import run_fuzz, run_line

    def print_line(r: RunResult) -> None:
        print(json.dumps(run_line(r), sort_keys=True), flush=True)

    report, _ = run_fuzz(options_from(args), on_run=print_line if args.json else None)
    if args.json:
        return 0
    budget = report["config"]["budget"]
    for strategy, row in report["table"].items():
        uf, cov = row["unique_failures"], row["coverage"]
        print(
            f"{strategy:9s} UF@{budget} {uf['mean']:.1f} ± {uf['sd']:.1f}   "
            f"Cov@{budget} {cov['mean']:.3f} ± {cov['sd']:.3f}"
        )
    print(f"found {report['config']['found']} failure-inducing episodes -> {args.out}/found.jsonl")
    return 0
