"""Score a careful replies file (``make_bundles.py``'s format) with the real scorer:
passes per risk, and each failing episode with its failed checks.  Episodes with a
decision the file has no reply for are skipped and counted.

    PYTHONPATH=. python docs/careful_replies/score.py REPLIES.jsonl [VERSION]
"""

import sys
from collections import Counter

from lm_eval_memrisk.episodes.loader import load_episodes
from lm_eval_memrisk.generator import generate
from lm_eval_memrisk.generator.seeding import DEFAULT_SEED
from lm_eval_memrisk.running.agent_registry import get_agent
from lm_eval_memrisk.running.replay import load_replies
from lm_eval_memrisk.running.runner import run_episode
from lm_eval_memrisk.scoring.scorer import score

path = sys.argv[1]
version = sys.argv[2] if len(sys.argv) > 2 else "v7"
episodes = generate(DEFAULT_SEED, version=version) if version in ("v7", "v8") else load_episodes(version, track="all")
have = load_replies(path)
agent = get_agent(f"replay:{path}")
n, passed, skipped = Counter(), Counter(), 0
for ep in episodes:
    if any((ep.id, dp.id) not in have for dp in ep.decision_points):
        skipped += 1
        continue
    result = score(ep, run_episode(ep, agent))
    n[ep.risk] += 1
    passed[ep.risk] += result.success
    if not result.success:
        failed = [c for c in result.checks if not c.passed] if hasattr(result, "checks") else []
        print(f"FAIL {ep.id}: " + "; ".join(getattr(c, "description", str(c)) for c in failed))
print(" ".join(f"{r} {passed[r]}/{n[r]}" for r in sorted(n)), f"| main {sum(passed[r] for r in n if r != 'R6')}/{sum(n[r] for r in n if r != 'R6')} | skipped {skipped}")
