"""memrisk score TRACES: re-score saved traces without any model."""

from __future__ import annotations

import argparse
from pathlib import Path

from lm_eval_memrisk.cli._shared import add_episodes_argument, add_scoring_arguments, print_summary
from lm_eval_memrisk.episodes.errors import MemriskError

HELP = "score a traces.jsonl file (written by memrisk run) without re-running anything"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("traces", help="traces.jsonl")
    add_episodes_argument(p)
    add_scoring_arguments(p, expected=True)
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object")


def run(args: argparse.Namespace) -> int:
    from lm_eval_memrisk.episodes.codec import fingerprint
    from lm_eval_memrisk.episodes.errors import SamplesError
    from lm_eval_memrisk.episodes.loader import load_episodes
    from lm_eval_memrisk.episodes.trace import MISSING_PRESENTATION
    from lm_eval_memrisk.logs.recompute import replies_of_trace, score_replies
    from lm_eval_memrisk.running.run_store import parse_traces
    from lm_eval_memrisk.scoring.signature import signature

    everything = load_episodes(args.episodes, track="all")
    by_id = {e.id: e for e in everything}
    results = []
    settings: dict[str, set[str]] = {"agent": set(), "policy": set(), "mode": set(), "presentation": set(),
                                     "tools": set()}
    try:
        text = Path(args.traces).read_text(encoding="utf-8")
    except OSError as exc:
        raise MemriskError(f"cannot read {args.traces}: {exc.strerror}") from exc
    for lineno, trace in parse_traces(text, args.traces):
        episode = by_id.get(trace.episode_id)
        if episode is None:
            raise MemriskError(f"{args.traces}:{lineno}: unknown episode {trace.episode_id!r}")
        try:  # only the reply texts of a saved trace are trusted
            replies = replies_of_trace(trace.to_dict(), f"{args.traces}:{lineno}", agent=trace.agent)
        except SamplesError as exc:
            raise MemriskError(str(exc)) from exc
        for key, value in (("agent", replies.agent), ("policy", replies.memory_policy), ("mode", replies.mode),
                           ("presentation", replies.presentation), ("tools", replies.tools)):
            settings[key].add(value)
        results.append(score_replies(episode, replies, variant=args.variant, expected=args.expected)[1])
    # the run's own settings (several runs in one file: every value, comma-joined)
    seen = {key: ",".join(sorted(values)) for key, values in settings.items()}
    sig = signature(fingerprint(everything), variant=args.variant, expected=args.expected,
                    agent=seen["agent"] or None, policy=seen["policy"] or "full", mode=seen["mode"] or "scripted",
                    presentation=seen["presentation"] or MISSING_PRESENTATION, tools=seen["tools"] or "text")
    print_summary(results, args.variant, sig, args.json)
    return 0
