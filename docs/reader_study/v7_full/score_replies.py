"""Score the readers' blind phase-1 replies with the real scorer (issue 26, item 9).

Each reader wrote, before seeing any check, the exact reply a careful assistant would
send at every decision of its episodes.  Replayed as that episode's replies, each
decision's checks judge them: a decision whose checks fail a reply the reader wrote
blind (and later agreed with the reference's action) is a check stricter than a
careful reader.  Run from the repository root, with the episodes the readers read
(``round1/episodes.jsonl.gz``: their prompts' sha256 match it):

    python docs/reader_study/v7_full/score_replies.py STUDY_DIR EPISODES
"""

import collections
import gzip
import json
import sys
import tempfile
from pathlib import Path

from lm_eval_memrisk.episodes.loader import load_episodes
from lm_eval_memrisk.running.runner import trace_from_replies
from lm_eval_memrisk.scoring.scorer import score

study = Path(sys.argv[1])
with tempfile.TemporaryDirectory() as tmp:
    plain = Path(tmp) / "episodes.jsonl"
    plain.write_bytes(gzip.decompress(Path(sys.argv[2]).read_bytes()))
    episodes = {e.id: e for e in load_episodes(plain, track="all")}
per_risk: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
failed = []
for phase1 in sorted(study.glob("reader*_phase1.jsonl")):
    rows = [json.loads(line) for line in phase1.read_text(encoding="utf-8").splitlines() if line.strip()]
    by_episode: dict[str, dict[str, str]] = collections.defaultdict(dict)
    for row in rows:
        by_episode[row["episode"]][row["decision"]] = row["reply"]
    for eid, replies in by_episode.items():
        ep = episodes[eid]
        result = score(ep, trace_from_replies(ep, dict(replies), phase1.stem))
        for dp in ep.decision_points:
            checks = [c for c in result.checks if c.decision_id == dp.id]
            ok = all(c.passed for c in checks)
            per_risk[ep.risk]["passed" if ok else "failed"] += 1
            if not ok:
                failed.append((phase1.stem, eid, dp.id, [c.evidence for c in checks if not c.passed], replies[dp.id]))
total = sum(sum(c.values()) for c in per_risk.values())
passed = sum(c["passed"] for c in per_risk.values())
print(f"decisions whose checks pass the reader's blind reply: {passed}/{total}")
for risk in sorted(per_risk):
    print(f"  {risk}: {per_risk[risk]['passed']}/{sum(per_risk[risk].values())}")
for reader, eid, did, evidence, reply in failed:
    print(f"\nFAILED {reader} {eid} {did}: {evidence}\n  reply: {reply}")
