"""Reader study for dataset v6: 8 episodes per main risk (random seed 2026), two readers."""
import hashlib
import json
import random

from lm_eval_memrisk.episodes.loader import load_episodes
from lm_eval_memrisk.episodes.render import render

SEED = 2026
eps = load_episodes("v6", track="main")
rng = random.Random(SEED)
chosen = []
for risk in ("R1", "R2", "R3", "R4", "R5"):
    pool = sorted(e.id for e in eps if e.risk == risk)
    chosen += rng.sample(pool, 8)
by_id = {e.id: e for e in eps}
json.dump(chosen, open("/work/study/sample.json", "w"))
for r in range(2):
    mine = chosen[r::2]
    with open(f"/work/study/reader{r+1}_prompts.md", "w") as f, open(f"/work/study/reader{r+1}_reference.md", "w") as g:
        for eid in mine:
            ep = by_id[eid]
            for dp in ep.decision_points:
                msgs = render(ep, dp.id)
                h = hashlib.sha256(json.dumps(msgs, ensure_ascii=False, sort_keys=True).encode()).hexdigest()
                f.write(f"\n\n############ DECISION episode={eid} decision={dp.id} prompt_sha256={h} ############\n")
                for m in msgs:
                    f.write(f"--- {m['role']} ---\n{m['content']}\n")
                g.write(f"\n## episode={eid} decision={dp.id}\nreference action: {json.dumps(dict(dp.reference or {}), ensure_ascii=False)}\nchecks:\n")
                for c in dp.checks:
                    g.write(f"- {c.kind}: {c.description}\n")
    print(r + 1, len(mine), "episodes")
print(chosen)
