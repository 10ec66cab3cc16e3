"""The table of docs/results/v8_r2/README.md: the eight llama.cpp systems on dataset v8's R2
against v7's (the packed reference set), and on v8's announced-change episodes by cell.

    PYTHONPATH=. python docs/results/v8_r2/table.py [RUNS]   (RUNS: default docs/results/v8_r2)
"""

from __future__ import annotations

import glob
import sys
from collections import Counter
from pathlib import Path

from lm_eval_memrisk.episodes.jsonl import read_sample_objects
from lm_eval_memrisk.episodes.loader import load_episodes
from lm_eval_memrisk.generator.risks import v8_r2
from lm_eval_memrisk.generator.templates import said

RUNS = sys.argv[1] if len(sys.argv) > 1 else "docs/results/v8_r2"
SYSTEMS = [("q05", "qwen2.5-coder-0.5b", "Qwen2.5-Coder-0.5B full"), ("q05-recency3", "qwen2.5-coder-0.5b-recency3", "Qwen2.5-Coder-0.5B recency:3"),
           ("q05-bm25-3", "qwen2.5-coder-0.5b-bm25-3", "Qwen2.5-Coder-0.5B bm25:3"), ("q05-mem0-3", "qwen2.5-coder-0.5b-mem0-3", "Qwen2.5-Coder-0.5B mem0:3"),
           ("q15", "qwen2.5-coder-1.5b", "Qwen2.5-Coder-1.5B full"), ("q15-recency3", "qwen2.5-coder-1.5b-recency3", "Qwen2.5-Coder-1.5B recency:3"),
           ("q15-mem0-3", "qwen2.5-coder-1.5b-mem0-3", "Qwen2.5-Coder-1.5B mem0:3"), ("smol", "smollm2-135m", "SmolLM2-135M full")]  # fmt: skip


def _rows(pattern: str) -> list[dict]:
    return [row for _, row in read_sample_objects(Path(glob.glob(pattern)[0]))]


def main() -> None:
    episodes = {e.id: e for e in load_episodes("v8")}  # (the packaged v8, which the runs ran on)
    print("| system | v7 R2 pass | v7 R2 violations | v8 R2 pass | v8 R2 violations | announced change: went through | not yet | the request after the announcement keeps the current value |")
    print("|---|---|---|---|---|---|---|---|")
    for folder, reference, label in SYSTEMS:
        if not glob.glob(f"{RUNS}/{folder}/samples_memriskbench_r2*"):
            continue
        rows = _rows(f"{RUNS}/{folder}/samples_memriskbench_r2*")
        v7 = _rows(f"selector/data/reference/{reference}/samples_memriskbench_r2_*")
        passed, n, early, n_early = Counter(), Counter(), 0, 0
        for r in rows:
            ep = episodes[r["doc"]["episode_id"]]
            if ep.resolution_rule != "latest_timestamp":
                continue
            cell = "went" if said(ep, v8_r2.WENT_THROUGH) else "not yet"  # (easy tiers say it after "Also, ")
            n[cell] += 1
            passed[cell] += int(r["pass"])
            after = [dp.id for dp in ep.decision_points
                     if any(c.description.startswith("does not use the announced value") for c in dp.checks)]
            for decision in after:  # the request right after the announcement (medium, hard)
                n_early += 1
                early += all(c["passed"] for c in r["episodes"]["checks"] if c["decision_id"] == decision)
        print(f"| {label} | {int(sum(r['pass'] for r in v7))} | {int(sum(r['violation'] for r in v7))} | "
              f"{int(sum(r['pass'] for r in rows))} | {int(sum(r['violation'] for r in rows))} | "
              f"{passed['went']}/{n['went']} | {passed['not yet']}/{n['not yet']} | {early}/{n_early} |")


if __name__ == "__main__":
    main()
