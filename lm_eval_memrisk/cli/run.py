"""memrisk run: run a reference agent or any lm-eval model over the episodes.

Scripted mode replies once per decision point; interactive mode carries the
agent's replies and tool results forward (see lm_eval_memrisk.interactive).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from lm_eval_memrisk.cli._shared import add_episodes_argument, add_scoring_arguments, print_summary
from lm_eval_memrisk.errors import MemriskError

HELP = "run an agent or lm-eval model over the episodes; write traces, scores and lm-eval style samples"


def add_arguments(p: argparse.ArgumentParser) -> None:
    from lm_eval_memrisk.agents import AGENT_NAMES

    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument("--agent", choices=AGENT_NAMES, help="a reference agent")
    who.add_argument("--model", help="an lm-eval model name, e.g. llama-cpp, hf, local-chat-completions")
    p.add_argument("--model_args", default="", help="lm-eval model_args, e.g. model=smollm2-135m")
    p.add_argument("--mode", default="scripted", choices=("scripted", "interactive"))
    p.add_argument("--max-steps", type=int, default=4, help="interactive: model calls per decision point")
    p.add_argument("--memory-policy", default="full", help="full | recency:K | bm25:K | embedding:K | mem0:K | reference:K | reference-embedding:K")
    p.add_argument("--presentation", default="history", choices=("chat", "history", "session"),
                   help="how earlier sessions are shown (see README, What the agent sees)")
    p.add_argument("--tools", default="text", choices=("text", "native"),
                   help="text: tools in the system message; native: passed to the model's chat template")
    p.add_argument("--no-chat-template", action="store_true", help="send flattened transcripts")
    add_episodes_argument(p)
    p.add_argument("--track", default="main", choices=("main", "r6", "all"))
    p.add_argument("--risk", help="only this risk, e.g. R3")
    p.add_argument("--limit", type=int, help="only the first N episodes")
    p.add_argument("--out", help="output folder (traces.jsonl, scores.jsonl, lm-eval style samples)")
    p.add_argument("--resume", action="store_true", help="continue an interrupted run in --out")
    add_scoring_arguments(p)
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object")


def _generate(args: argparse.Namespace) -> tuple[Any, str, dict[str, Any], bool]:
    """(batch Generate function, system name, results config, episode-major order)."""
    from lm_eval_memrisk.agents import get_agent
    from lm_eval_memrisk.interactive import agent_generate

    if args.agent:
        return agent_generate(get_agent(args.agent)), args.agent, {"agent": args.agent}, False
    from lm_eval_memrisk.harness.lm_adapter import lm_generate, load_lm

    lm = load_lm(args.model, args.model_args)
    info = dict(getattr(lm, "get_model_info", dict)() or {})
    name = (args.model + "-" + args.model_args.replace("=", "-").replace(",", "_")).strip("-")
    config = {"model": args.model, "model_args": args.model_args, **info}
    generate = lm_generate(lm, apply_chat_template=not args.no_chat_template, tools=args.tools)
    return generate, name, config, args.model == "llama-cpp"


def run(args: argparse.Namespace) -> int:
    from lm_eval_memrisk.harness.docs import fingerprint
    from lm_eval_memrisk.interactive import run_interactive
    from lm_eval_memrisk.loader import load_episodes
    from lm_eval_memrisk.policies import make_policy
    from lm_eval_memrisk.run_store import RunStore
    from lm_eval_memrisk.runner import run_scripted
    from lm_eval_memrisk.scorer import score
    from lm_eval_memrisk.summary import signature

    if args.resume and not args.out:
        raise MemriskError("--resume needs --out (the folder of the interrupted run)")
    everything = load_episodes(args.episodes, track="all")
    episodes = [e for e in everything if args.track == "all" or e.track == args.track]
    if args.risk:
        episodes = [e for e in episodes if e.risk == args.risk.upper()]
    if args.limit:
        episodes = episodes[: args.limit]
    from lm_eval_memrisk.render import make_presentation

    policy = make_policy(args.memory_policy)
    presentation = make_presentation(args.presentation, args.tools)
    generate, name, config, episode_major = _generate(args)
    config.update(mode=args.mode, memory_policy=args.memory_policy, max_steps=args.max_steps,
                  presentation=args.presentation, tools=args.tools)
    store = RunStore(Path(args.out), resume=args.resume) if args.out else None
    todo = [e for e in episodes if store is None or e.id not in store.finished]
    on_trace = store.append if store else None
    if args.mode == "interactive":
        traces = run_interactive(
            todo, generate, name, max_steps=args.max_steps, policy=policy,
            episode_major=episode_major, on_trace=on_trace, progress=not args.json, presentation=presentation,
        )
    else:
        traces = run_scripted(todo, generate, name, policy, on_trace=on_trace, progress=not args.json,
                              presentation=presentation)
    dataset_hash = fingerprint(everything)
    if store:
        results = store.finalize(episodes, dataset_hash, name, config, variant=args.variant)
    else:
        by_id = {t.episode_id: t for t in traces}
        results = [score(e, by_id[e.id], variant=args.variant) for e in episodes]
    sig = signature(dataset_hash, variant=args.variant, policy=args.memory_policy, mode=args.mode, agent=name,
                    presentation=args.presentation, tools=args.tools)
    print_summary(results, args.variant, sig, args.json)
    return 0

