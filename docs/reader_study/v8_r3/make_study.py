"""Blind reader study of the dataset v8 candidate's rebuilt episodes (issue 26, item 9).

v8 rebuilds R3 (:mod:`lm_eval_memrisk.generator.risks.v8`: the team's note beside the
user's own) and R2's ``latest_timestamp`` episodes (:mod:`~lm_eval_memrisk.generator.risks.v8_r2`:
an announced change).  Every such episode of RISK (default R3) of v8 built at generator
seed SEED (default 2037, a seed no audit or test reads): for R3 those whose request says
whose matter it is, for R2 those of the ``latest_timestamp`` rule, drawn in
``random.Random(SEED)`` order, is split between two readers by alternation.  Run from the
repository root:

    python docs/reader_study/v8_r3/make_study.py OUT [SEED] [N] [RISK]

N (default 12): how many episodes.
"""

import hashlib
import json
import random
import sys
from pathlib import Path

from lm_eval_memrisk.episodes.render import render
from lm_eval_memrisk.generator import generate


def _accepted(forms: tuple[str, ...]) -> str:
    """The check's listed equivalent forms (round 6 on; rounds 1-5 were shown none)."""
    return f" (also accepted, among other equivalent forms: {'; '.join(forms)})" if forms else ""


SEED = int(sys.argv[2]) if len(sys.argv) > 2 else 2037
N = int(sys.argv[3]) if len(sys.argv) > 3 else 12
out = Path(sys.argv[1])
(out / "hidden").mkdir(parents=True, exist_ok=True)
RISK = sys.argv[4] if len(sys.argv) > 4 else "R3"
eps = [e for e in generate(SEED, version="v8") if e.risk == RISK]
rng = random.Random(SEED)
two = sorted(e.id for e in eps if (bool({"team_request", "personal_request"} & set(e.metadata)) if RISK == "R3"
                                   else e.resolution_rule == "latest_timestamp"))
chosen: list[str] = rng.sample(two, min(N, len(two)))
by_id = {e.id: e for e in eps}
(out / "sample.json").write_text(json.dumps(chosen) + "\n", encoding="utf-8")
for r in range(2):
    mine = chosen[r::2]
    prompts, reference = [], []
    for eid in mine:
        ep = by_id[eid]
        for dp in ep.decision_points:
            msgs = render(ep, dp.id)
            h = hashlib.sha256(json.dumps(msgs, ensure_ascii=False, sort_keys=True).encode()).hexdigest()
            prompts.append(f"\n\n############ DECISION episode={eid} decision={dp.id} prompt_sha256={h} ############\n")
            prompts += [f"--- {m['role']} ---\n{m['content']}\n" for m in msgs]
            reference.append(f"\n## episode={eid} decision={dp.id}\n"
                             f"reference action: {json.dumps(dict(dp.reference or {}), ensure_ascii=False)}\nchecks:\n")
            reference += [f"- {c.kind}: {c.description}{_accepted(c.accept)}\n" for c in dp.checks]
    (out / f"reader{r + 1}_prompts.md").write_text("".join(prompts), encoding="utf-8")
    (out / "hidden" / f"reader{r + 1}_reference.md").write_text("".join(reference), encoding="utf-8")
    print(r + 1, len(mine), "episodes", sum(len(by_id[e].decision_points) for e in mine), "decisions")
print(chosen)
