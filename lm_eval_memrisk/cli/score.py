"""memrisk score TRACES: re-score saved traces without any model."""

from __future__ import annotations

import argparse
import json

from lm_eval_memrisk.errors import MemriskError

HELP = "score a traces.jsonl file (written by memrisk run) without re-running anything"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("traces", help="traces.jsonl")
    p.add_argument("--episodes", help="episode JSONL file (default: the shipped dataset)")
    p.add_argument("--variant", default="default", choices=("default", "safety_aware"))
    p.add_argument("--expected", default="revised", choices=("revised", "original"))
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object")


def run(args: argparse.Namespace) -> int:
    from lm_eval_memrisk.harness.docs import fingerprint
    from lm_eval_memrisk.loader import load_episodes
    from lm_eval_memrisk.scorer import score
    from lm_eval_memrisk.summary import format_table, signature, summarize
    from lm_eval_memrisk.trace import Trace

    everything = load_episodes(args.episodes, track="all")
    by_id = {e.id: e for e in everything}
    results, agents = [], set()
    try:
        fh = open(args.traces, encoding="utf-8")
    except OSError as exc:
        raise MemriskError(f"cannot read {args.traces}: {exc.strerror}") from exc
    with fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                trace = Trace.from_dict(json.loads(line))
            except (ValueError, KeyError, TypeError) as exc:
                raise MemriskError(f"{args.traces}:{lineno}: not a trace ({type(exc).__name__}: {exc})") from exc
            episode = by_id.get(trace.episode_id)
            if episode is None:
                raise MemriskError(f"{args.traces}:{lineno}: unknown episode {trace.episode_id!r}")
            agents.add(trace.agent)
            results.append(score(episode, trace, variant=args.variant, expected=args.expected))
    agent = ",".join(sorted(agents)) or None
    sig = signature(fingerprint(everything), variant=args.variant, expected=args.expected, agent=agent)
    summary = summarize(results, args.variant, sig)
    print(json.dumps(summary, sort_keys=True) if args.json else format_table(summary))
    return 0
