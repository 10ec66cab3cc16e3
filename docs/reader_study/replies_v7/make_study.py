"""A blind check of the scorer on real model replies to dataset v7.

``python docs/reader_study/replies_v7/make_study.py OUT RUN_DIR... [--seed S] [--per-cell K]``
reads lm-eval runs (``--log_samples`` folders) on v7, scores every decision's reply with
the installed scorer (a decision passes when all its checks pass), draws ``K`` decisions
per (risk, verdict) cell with ``random.Random(S)`` and writes:

* ``OUT/cases.md``: per case, the prompt the model saw and its reply; no verdict, no
  check, no reference action (what a blind reader gets);
* ``OUT/key.json``: per case, the run, episode, decision, the scorer's verdict and the
  failing checks' evidence (opened only after the readers have written theirs).
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from lm_eval_memrisk.logs.runs import read_runs
from lm_eval_memrisk.running.runner import decision_prompts


def _decisions(roots: list[Path]) -> list[dict]:
    """Every (run, episode, decision) with its prompt, reply and the scorer's verdict."""
    rows = []
    for system in read_runs(roots):
        for sample in system.samples:
            ep, result = sample.episode, sample.results["pass"]
            prompts = {p.decision_id: p.messages for p in decision_prompts(ep)}
            for dp, texts in zip(ep.decision_points, sample.replies.texts):
                failed = [c for c in result.checks if c.decision_id == dp.id and not c.passed]
                rows.append({
                    "run": system.name, "episode": ep.id, "risk": ep.risk, "decision": dp.id,
                    "passed": not failed, "failing": [f"{c.check_id}: {c.evidence}" for c in failed],
                    "messages": prompts[dp.id], "reply": texts[-1] if texts else "",
                })  # fmt: skip
    return rows


def _case_text(n: int, row: dict) -> str:
    shown = "\n".join(f"--- {m['role']} ---\n{m['content']}" for m in row["messages"])
    return f"## Case {n}\n\n### What the assistant saw\n\n{shown}\n\n### The assistant's reply\n\n```\n{row['reply']}\n```\n"


def draw(rows: list[dict], seed: int, per_cell: int) -> list[dict]:
    """``per_cell`` passing and ``per_cell`` failing rows per risk, shuffled, with
    ``random.Random(seed)``."""
    rng = random.Random(seed)
    picked = []
    for risk in sorted({r["risk"] for r in rows}):
        for verdict in (True, False):
            cell = [r for r in rows if r["risk"] == risk and r["passed"] is verdict]
            picked += rng.sample(cell, min(per_cell, len(cell)))
    rng.shuffle(picked)
    return picked


def write_study(out: Path, picked: list[dict]) -> None:
    """``out/cases.md`` (what a blind reader gets) and ``out/key.json``."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "cases.md").write_text("# Cases\n\n" + "\n".join(_case_text(n, r) for n, r in enumerate(picked, 1)), encoding="utf-8")
    key = [{"case": n, **{k: v for k, v in r.items() if k != "messages"}} for n, r in enumerate(picked, 1)]
    (out / "key.json").write_text(json.dumps(key, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("runs", type=Path, nargs="+")
    parser.add_argument("--seed", type=int, default=2030)
    parser.add_argument("--per-cell", type=int, default=4)
    args = parser.parse_args()
    rows = _decisions(args.runs)
    picked = draw(rows, args.seed, args.per_cell)
    write_study(args.out, picked)
    print(f"{len(picked)} cases from {len(rows)} decisions -> {args.out}")


if __name__ == "__main__":
    main()
