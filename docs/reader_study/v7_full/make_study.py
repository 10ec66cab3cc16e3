"""Blind reader study of a dataset version on full prompts (issue 26, item 9).

8 main-track episodes per risk drawn with ``random.Random(SEED)`` from VERSION (default
v7) built at the shipped generator seed, split between READERS readers (default 2) by
alternation.  Run from the repository root (writes the readers' prompt and hidden
reference files to OUT):

    python docs/reader_study/v7_full/make_study.py OUT [SEED [VERSION [READERS [all|only:ID,ID,...]]]]

v8's round (``docs/reader_study/v8_full``) drew 2048 from v8 for four readers.  With
``all`` every main-track episode is read: shuffled with ``random.Random(SEED)`` and dealt
by alternation (v9's round, ``docs/reader_study/v9_full``: seed 2049, eight readers); with
``only:ID,…`` just those episodes, shuffled and dealt the same way (v10's re-read of the
episodes changed after its round).

SEED (default 2027, rounds 1-4) draws the sample; round 5 drew a fresh one with 2028,
round 6 with 2029.  From round 6 each check in the hidden reference lists the equivalent
forms it also accepts (round 5's TOO STRICT verdicts were guesses that a check matches
one string exactly).
"""

import hashlib
import json
import random
import sys
from pathlib import Path

from lm_eval_memrisk.episodes.render import render
from lm_eval_memrisk.generator import generate
from lm_eval_memrisk.generator.seeding import DEFAULT_SEED


def _accepted(forms: tuple[str, ...]) -> str:
    """The check's listed equivalent forms (round 6 on; rounds 1-5 were shown none)."""
    return f" (also accepted, among other equivalent forms: {'; '.join(forms)})" if forms else ""


SEED = int(sys.argv[2]) if len(sys.argv) > 2 else 2027
VERSION = sys.argv[3] if len(sys.argv) > 3 else "v7"
READERS = int(sys.argv[4]) if len(sys.argv) > 4 else 2
EVERY = len(sys.argv) > 5 and sys.argv[5] == "all"
ONLY = sys.argv[5][len("only:") :].split(",") if len(sys.argv) > 5 and sys.argv[5].startswith("only:") else None
out = Path(sys.argv[1])
(out / "hidden").mkdir(parents=True, exist_ok=True)
eps = [e for e in generate(DEFAULT_SEED, version=VERSION) if e.track == "main"]
rng = random.Random(SEED)
chosen: list[str] = []
if ONLY is not None:
    chosen = rng.sample(sorted(ONLY), len(ONLY))
elif EVERY:
    chosen = rng.sample(sorted(e.id for e in eps), len(eps))
else:
    for risk in ("R1", "R2", "R3", "R4", "R5"):
        chosen += rng.sample(sorted(e.id for e in eps if e.risk == risk), 8)
by_id = {e.id: e for e in eps}
(out / "sample.json").write_text(json.dumps(chosen) + "\n", encoding="utf-8")
for r in range(READERS):
    mine = chosen[r::READERS]
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
