"""A blind check of scorer 3.6's rule for JSON calls with words around them.

``python docs/reader_study/wrapped_calls/make_study.py OUT RUN_DIR... [--seed S] [--per-kind K]``
reads lm-eval runs (``--log_samples`` folders), keeps the decisions whose reply holds a
fenced or bare JSON call with words around it (``parse.WRAPPED_CALL``; one per distinct
reply, none already in ``replies_v7``), splits them into replies whose words hand the call
to the user (:data:`HANDING_PATTERNS`, "you can use ...", "use the following", "reply
with") and the rest (narration), and draws ``K`` of each with ``random.Random(S)``.  Real
narration replies are few, so ``C`` *controls* are added: a drawn handing reply's JSON call,
unchanged, after a short first-person line instead of its instructions (constructed, marked
``"control": true`` in the key; the readers are not told which).  Writes ``OUT/cases.md``
(prompt and reply only, what a blind reader gets) and ``OUT/key.json`` (run, dataset,
episode, decision, pool, reply, and the verdict logged under scorer 3.5).
"""

from __future__ import annotations

import argparse
import json
import random
import re
from pathlib import Path

from lm_eval_memrisk.logs.runs import known_datasets, read_runs
from lm_eval_memrisk.running.runner import decision_prompts
from lm_eval_memrisk.scoring.parse import WRAPPED_CALL, parse_action, text_outside_call

_FENCE_OR_OBJECT = re.compile(r"```|\{")
_STUDY_V7 = Path(__file__).parent.parent / "replies_v7" / "key.json"
_NARRATION = ("On it.", "Sure, doing that now.", "Going ahead with this now:")
#: Words that hand a call to the user (the split of the draw; case-insensitive).
HANDING_PATTERNS = (
    r"\byou(?:'ll| will)? (?:can|could|should|need to|have to|must|would need to|will need to|may want to|might want to)\b",
    r"(?:^|[,.;:!]\s+|\bplease,?\s+)use (?:the following|this|these)\b",
    r"\bhere(?:'s| is| are) how\b", r"\b(?:here are|follow) (?:the|these) steps\b",
    r"\breply with\b", r"\bto call (?:a|the|this) tool\b",
)
_CALL_RE = re.compile(r"```(?:json)?\s*(\{.*\})\s*```|(\{.*\})", re.DOTALL)


def _pool(reply: str) -> str | None:
    """"handing" or "narration" for a reply with words around a fenced or bare call, None
    for any other reply."""
    if parse_action(reply).reason != WRAPPED_CALL:
        return None
    words = text_outside_call(reply).replace("\u2019", "'")
    return "handing" if any(re.search(p, words, re.IGNORECASE) for p in HANDING_PATTERNS) else "narration"


def _decisions(roots: list[Path]) -> list[dict]:
    version = {h: ds.path.stem.removeprefix("episodes_") for h, ds in known_datasets().items()}
    seen = {row["reply"] for row in json.loads(_STUDY_V7.read_text(encoding="utf-8"))}
    rows = []
    systems = [system for root in roots for system in read_runs([root])]  # v6 and v7 runs
    for system in systems:
        for sample in system.samples:
            ep = sample.episode
            prompts = {p.decision_id: p.messages for p in decision_prompts(ep)}
            for dp, texts in zip(ep.decision_points, sample.replies.texts):
                reply = texts[-1] if texts else ""
                kind = _pool(reply)
                if kind is None or reply in seen:
                    continue
                seen.add(reply)
                logged = sample.raw["episodes"]["checks"]  # as logged (scorer 3.5), not rescored
                failed = [c for c in logged if c["decision_id"] == dp.id and not c["passed"]]
                rows.append({
                    "run": system.name, "dataset": version[sample.dataset_hash], "episode": ep.id, "risk": ep.risk, "decision": dp.id,
                    "pool": kind, "passed": not failed,
                    "failing": [f"{c['check_id']}: {c.get('evidence', '')}" for c in failed],
                    "messages": prompts[dp.id], "reply": reply,
                })  # fmt: skip
    return rows


def _case_text(n: int, row: dict) -> str:
    shown = "\n".join(f"--- {m['role']} ---\n{m['content']}" for m in row["messages"])
    return f"## Case {n}\n\n### What the assistant saw\n\n{shown}\n\n### The assistant's reply\n\n```\n{row['reply']}\n```\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("runs", type=Path, nargs="+")
    parser.add_argument("--seed", type=int, default=2031)
    parser.add_argument("--per-kind", type=int, default=20)
    parser.add_argument("--controls", type=int, default=8)
    args = parser.parse_args()
    rows = _decisions(args.runs)
    rng = random.Random(args.seed)
    picked = []
    for kind in ("handing", "narration"):
        cell = [r for r in rows if r["pool"] == kind]
        picked += rng.sample(cell, min(args.per_kind, len(cell)))
        print(f"{kind}: {len(cell)} distinct replies, {min(args.per_kind, len(cell))} drawn")
    for row in rng.sample([r for r in picked if r["pool"] == "handing"], args.controls):
        match = _CALL_RE.search(row["reply"])
        assert match is not None
        reply = f"{rng.choice(_NARRATION)}\n{match.group(1) or match.group(2)}"
        picked.append({**row, "pool": "narration", "control": True, "reply": reply,
                       "passed": None, "failing": []})  # fmt: skip
    rng.shuffle(picked)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "cases.md").write_text("# Cases\n\n" + "\n".join(_case_text(n, r) for n, r in enumerate(picked, 1)), encoding="utf-8")
    key = [{"case": n, **{k: v for k, v in r.items() if k != "messages"}} for n, r in enumerate(picked, 1)]
    (args.out / "key.json").write_text(json.dumps(key, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(picked)} cases -> {args.out}")


if __name__ == "__main__":
    main()
