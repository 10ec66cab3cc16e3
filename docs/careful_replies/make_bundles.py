"""Prompt bundles for careful replies written blind (docs/datasets.md, "Careful replies").

Every decision of a dataset (main track and R6), rendered as the runner renders it for a
model (default presentation, scripted history), split by episode into BUNDLES files for
as many writers; each decision's header carries the prompt's sha256 that a replies file
records (``running.replay``).  Run from the repository root:

    PYTHONPATH=. python docs/careful_replies/make_bundles.py OUT [VERSION] [--since EPISODES]

VERSION is a packaged dataset (``v6``) or ``v7``/``v8`` (built by the generator at the shipped
seed).  Writers get only OUT/bundleN_prompts.md; their replies files, one JSON line per
decision ``{"episode", "decision", "prompt_sha256", "reply", "note"}``, are joined in
bundle order into the replies file that ``replay:FILE`` plays.  ``--since EPISODES`` (an
earlier build's file) writes one bundle of just the episodes with a decision whose prompt
differs from that build's: after a change to some prompts, their replies are rewritten
by a fresh writer and replace the old ones by (episode, decision).
"""

import sys
from pathlib import Path

from lm_eval_memrisk.episodes.loader import load_episodes
from lm_eval_memrisk.generator import generate
from lm_eval_memrisk.generator.seeding import DEFAULT_SEED
from lm_eval_memrisk.running.replay import prompt_sha256
from lm_eval_memrisk.running.runner import decision_prompts

BUNDLES = 6
args = sys.argv[1:]
since = None
if "--since" in args:  # only the episodes whose prompts changed since that episode file, one bundle
    at = args.index("--since")
    since, args = args[at + 1], args[:at] + args[at + 2 :]
out = Path(args[0])
version = args[1] if len(args) > 1 else "v7"
out.mkdir(parents=True, exist_ok=True)
episodes = generate(DEFAULT_SEED, version=version) if version in ("v7", "v8") else load_episodes(version, track="all")
bundles = BUNDLES
if since is not None:
    old = {(e.id, p.decision_id): prompt_sha256(p.messages) for e in load_episodes(since, track="all") for p in decision_prompts(e)}
    episodes = [e for e in episodes if any(old.get((e.id, p.decision_id)) != prompt_sha256(p.messages) for p in decision_prompts(e))]
    bundles = 1
per = -(-len(episodes) // bundles)
for b in range(bundles):
    parts: list[str] = []
    mine = episodes[b * per : (b + 1) * per]
    for ep in mine:
        for prompt in decision_prompts(ep):
            sha = prompt_sha256(prompt.messages)
            parts.append(f"\n\n############ DECISION episode={ep.id} decision={prompt.decision_id} prompt_sha256={sha} ############\n")
            parts += [f"--- {m['role']} ---\n{m['content']}\n" for m in prompt.messages]
    (out / f"bundle{b + 1}_prompts.md").write_text("".join(parts), encoding="utf-8")
    print(f"bundle{b + 1}: {len(mine)} episodes, {sum(len(e.decision_points) for e in mine)} decisions")
