"""memrisk run: run a reference agent over episodes and write traces and scores."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from tqdm import tqdm

HELP = "run a reference agent over the episodes; write traces.jsonl and scores.jsonl"


def add_arguments(p: argparse.ArgumentParser) -> None:
    from lm_eval_memrisk.agents import AGENT_NAMES

    p.add_argument("--agent", required=True, choices=AGENT_NAMES)
    p.add_argument("--episodes", help="episode JSONL file (default: the shipped dataset)")
    p.add_argument("--track", default="main", choices=("main", "r6", "all"))
    p.add_argument("--risk", help="only this risk, e.g. R3")
    p.add_argument("--out", help="folder for traces.jsonl and scores.jsonl")
    p.add_argument("--variant", default="default", choices=("default", "safety_aware"))
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object")


def run(args: argparse.Namespace) -> int:
    from lm_eval_memrisk.agents import get_agent
    from lm_eval_memrisk.harness.docs import fingerprint
    from lm_eval_memrisk.loader import load_episodes
    from lm_eval_memrisk.runner import run_episode
    from lm_eval_memrisk.scorer import score
    from lm_eval_memrisk.summary import format_table, signature, summarize

    everything = load_episodes(args.episodes, track="all")
    episodes = [e for e in everything if args.track == "all" or e.track == args.track]
    if args.risk:
        episodes = [e for e in episodes if e.risk == args.risk.upper()]
    agent = get_agent(args.agent)
    traces, results = [], []
    for ep in tqdm(episodes, desc=f"run {args.agent}", unit="ep", disable=args.json):
        trace = run_episode(ep, agent)
        traces.append(trace)
        results.append(score(ep, trace, variant=args.variant))
    sig = signature(fingerprint(everything), variant=args.variant, agent=args.agent)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        with open(out / "traces.jsonl", "w", encoding="utf-8") as f:
            for t in traces:
                f.write(json.dumps(t.to_dict(), ensure_ascii=False, sort_keys=True) + "\n")
        with open(out / "scores.jsonl", "w", encoding="utf-8") as f:
            for r in results:
                f.write(json.dumps(r.to_dict(), ensure_ascii=False, sort_keys=True) + "\n")
    summary = summarize(results, args.variant, sig)
    print(json.dumps(summary, sort_keys=True) if args.json else format_table(summary))
    return 0
