"""memrisk run: run a reference agent or any lm-eval model over the episodes.

Scripted mode replies once per decision point; interactive mode carries the
agent's replies and tool results forward (see lm_eval_memrisk.running.interactive).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from lm_eval_memrisk.cli._shared import add_episodes_argument, add_scoring_arguments, print_summary
from lm_eval_memrisk.episodes.errors import MemriskError
from lm_eval_memrisk.episodes.loader import TRACK_CHOICES

HELP = "run an agent or lm-eval model over the episodes; write traces, scores and lm-eval style samples"


def add_arguments(p: argparse.ArgumentParser) -> None:
    from lm_eval_memrisk.running.agent_registry import agent_name
    from lm_eval_memrisk.running.agents import AGENT_NAMES

    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument("--agent", type=agent_name, metavar="|".join(AGENT_NAMES) + "|weak:NAME",
                     help="a reference agent or a planted-weakness agent (memrisk weak --list)")
    who.add_argument("--model", help="an lm-eval model name, e.g. llama-cpp, hf, local-chat-completions")
    p.add_argument("--model_args", default="", help="lm-eval model_args, e.g. model=smollm2-135m")
    p.add_argument("--mode", default="scripted", choices=("scripted", "interactive"))
    p.add_argument("--max-steps", type=_positive_int, default=4, help="interactive: model calls per decision point (>= 1)")
    p.add_argument("--memory-policy", default="full", help="full | recency:K | bm25:K | embedding:K | mem0:K | reference:K | reference-embedding:K")
    p.add_argument("--presentation", default="history", choices=("chat", "history", "session"),
                   help="how earlier sessions are shown (see docs/presentation.md)")
    p.add_argument("--tools", default="text", choices=("text", "native"),
                   help="text: tools in the system message; native: passed to the model's chat template")
    p.add_argument("--no-chat-template", action="store_true", help="send flattened transcripts")
    add_episodes_argument(p)
    p.add_argument("--track", default="main", choices=TRACK_CHOICES)
    p.add_argument("--risk", help="only this risk, e.g. R3")
    p.add_argument("--limit", type=_positive_int, help="only the first N episodes")
    p.add_argument("--out", help="output folder (traces.jsonl, scores.jsonl, lm-eval style samples)")
    p.add_argument("--resume", action="store_true", help="continue an interrupted run in --out")
    add_scoring_arguments(p)
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {value}")
    return value


def run(args: argparse.Namespace) -> int:
    from lm_eval_memrisk.episodes.codec import fingerprint
    from lm_eval_memrisk.episodes.loader import load_episodes
    from lm_eval_memrisk.running.pipeline import run_benchmark, select_episodes
    from lm_eval_memrisk.running.systems import build_system

    if args.resume and not args.out:
        raise MemriskError("--resume needs --out (the folder of the interrupted run)")
    everything = load_episodes(args.episodes, track="all")
    episodes = select_episodes(everything, args.track, args.risk, args.limit)
    system = build_system(args.agent, args.model, args.model_args, chat_template=not args.no_chat_template,
                          tools=args.tools)
    result = run_benchmark(
        system, episodes, dataset_hash=fingerprint(everything), mode=args.mode,
        memory_policy=args.memory_policy, max_steps=args.max_steps, variant=args.variant,
        presentation=args.presentation, tools=args.tools,
        out=Path(args.out) if args.out else None, resume=args.resume, progress=not args.json,
    )
    print_summary(result.results, args.variant, result.signature, args.json, result.attribution)
    return 0
