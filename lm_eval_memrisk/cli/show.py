"""memrisk show EPISODE_ID: what the model sees at each decision point."""

from __future__ import annotations

import argparse
import json

from lm_eval_memrisk.cli._shared import add_episodes_argument
from lm_eval_memrisk.episodes.errors import MemriskError

HELP = "print the messages an agent sees at each decision point of an episode"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("episode_id")
    add_episodes_argument(p)
    p.add_argument("--json", action="store_true", help="print the messages as JSON")


def run(args: argparse.Namespace) -> int:
    from lm_eval_memrisk.episodes.loader import load_episodes
    from lm_eval_memrisk.episodes.render import render

    by_id = {e.id: e for e in load_episodes(args.episodes, track="all")}
    episode = by_id.get(args.episode_id)
    if episode is None:
        close = [i for i in sorted(by_id) if args.episode_id.lower() in i.lower()][:5]
        raise MemriskError(f"no episode {args.episode_id!r}" + (f"; did you mean {', '.join(close)}?" if close else ""))
    shown = {dp.id: render(episode, dp.id) for dp in episode.decision_points}
    if args.json:
        print(json.dumps(shown, ensure_ascii=False, indent=2))
        return 0
    print(f"{episode.id} · {episode.risk} · {episode.tier} · {episode.family}: {episode.description}")
    for dp_id, messages in shown.items():
        print(f"\n===== decision point {dp_id} =====")
        for m in messages:
            print(f"--- {m['role']} ---\n{m['content']}")
    return 0
