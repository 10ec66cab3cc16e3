"""Prompt bundles for careful replies written blind (docs/datasets.md, "Careful replies").

Every decision of a dataset (main track and R6), rendered as the runner renders it for a
model (default presentation, scripted history), split by episode into BUNDLES files for
as many writers; each decision's header carries the prompt's sha256 that a replies file
records (``running.replay``).  Run from the repository root:

    PYTHONPATH=. python docs/careful_replies/make_bundles.py OUT [VERSION]

VERSION is a packaged dataset (``v6``) or ``v7`` (built by the generator at the shipped
seed).  Writers get only OUT/bundleN_prompts.md; their replies files, one JSON line per
decision ``{"episode", "decision", "prompt_sha256", "reply", "note"}``, are joined in
bundle order into the replies file that ``replay:FILE`` plays.
"""

import sys
from pathlib import Path

from lm_eval_memrisk.episodes.loader import load_episodes
from lm_eval_memrisk.generator import generate
from lm_eval_memrisk.generator.seeding import DEFAULT_SEED
from lm_eval_memrisk.running.replay import prompt_sha256
from lm_eval_memrisk.running.runner import decision_prompts

BUNDLES = 6
out = Path(sys.argv[1])
version = sys.argv[2] if len(sys.argv) > 2 else "v7"
out.mkdir(parents=True, exist_ok=True)
episodes = generate(DEFAULT_SEED, version="v7") if version == "v7" else load_episodes(version, track="all")
per = -(-len(episodes) // BUNDLES)
for b in range(BUNDLES):
    parts: list[str] = []
    mine = episodes[b * per : (b + 1) * per]
    for ep in mine:
        for prompt in decision_prompts(ep):
            sha = prompt_sha256(prompt.messages)
            parts.append(f"\n\n############ DECISION episode={ep.id} decision={prompt.decision_id} prompt_sha256={sha} ############\n")
            parts += [f"--- {m['role']} ---\n{m['content']}\n" for m in prompt.messages]
    (out / f"bundle{b + 1}_prompts.md").write_text("".join(parts), encoding="utf-8")
    print(f"bundle{b + 1}: {len(mine)} episodes, {sum(len(e.decision_points) for e in mine)} decisions")
