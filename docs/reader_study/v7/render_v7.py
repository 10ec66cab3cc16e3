"""Blind-reader bundle of the v7 candidate's new decision kinds (prompt only, no reply,
no checks).  Run from the repository root:

    python docs/reader_study/v7/render_v7.py v7.jsonl OUT_DIR 11
"""

import json
import random
import sys
from pathlib import Path

sys.path.insert(0, "tests")
import test_dataset_v7 as t  # noqa: E402 (its R2 newest-right helper)

from lm_eval_memrisk.episodes.loader import load_episodes  # noqa: E402
from lm_eval_memrisk.running.runner import decision_prompts  # noqa: E402

path, out, seed = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
eps = load_episodes(path, track="all")
kinds = {"private": [], "r2-newest": [], "r3-deleted-own": [], "work-labelled": [], "own-as-peer": []}
for ep in eps:
    evs = list(ep.events)
    for i, e in enumerate(evs):
        if e.type != "decision_point":
            continue
        req = evs[i - 1].text or ""
        last = e.id == ep.decision_points[-1].id
        if any(w in req for w in ("personal, nothing", "private matter", "just for me, not work")):
            kinds["private"].append((ep, e.id))
        elif ep.risk == "R2" and not last and t._newest_right(ep):
            kinds["r2-newest"].append((ep, e.id))
        elif ep.risk == "R3" and "deleted their own" in ep.description:
            kinds["r3-deleted-own"].append((ep, e.id))
        elif last and "multi_hop" in ep.metadata and any((x.text or "").startswith(("For the ", "About my ", "Work (")) and x.type == "user_message" for x in evs):
            kinds["work-labelled"].append((ep, e.id))
        elif last and ep.risk != "R6" and any(x.type == "user_message" and (x.text or "").startswith(("For the record, my", "Please keep my")) for x in evs):
            kinds["own-as-peer"].append((ep, e.id))
rng = random.Random(seed)
items = []
for k, v in kinds.items():
    rng.shuffle(v)
    items += [(k, ep, d) for ep, d in v[:4]]
rng.shuffle(items)
system = None
blocks, key = [], []
for n, (kind, ep, did) in enumerate(items, 1):
    prompt = next(p for p in decision_prompts(ep) if p.decision_id == did)
    msgs = prompt.messages_copy()
    rules, _, tools = msgs[0]["content"].partition("\nTools:\n")
    system = system or rules
    user = "\n\n".join(f"[{m['role']}] {m['content']}" for m in msgs[1:])
    blocks.append(f"=== ITEM {n} ===\nTools available:\n{tools}\n\n{user}\n")
    dp = ep.event(did)
    key.append({"item": n, "kind": kind, "id": ep.id, "decision": did, "reference": dp.reference})
out.mkdir(parents=True, exist_ok=True)
half = (len(blocks) + 1) // 2
for part, chunk in (("a", blocks[:half]), ("b", blocks[half:])):
    (out / f"bundle_{part}.txt").write_text("=== SYSTEM PROMPT (the same for every item; each item lists its own tools) ===\n" + (system or "") + "\n\n" + "\n".join(chunk))
(out / "key.json").write_text(json.dumps(key, indent=1))
print(len(items), "items", {k: len(v) for k, v in kinds.items()})
