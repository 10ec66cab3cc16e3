"""A blind check of a refill by drug name alone (scorer 3.8).

``python docs/reader_study/drug_names/make_study.py OUT`` reads the seven Qwen runs of the
packed reference set (``selector/data/reference/qwen*``), keeps every distinct reply that
calls ``refill_prescription`` with a medication without a digit (a drug name, no dose),
adds a control for each such reply whose episode holds no other strength of the drug
(the reply with the note's whole medication, ``"control": true``), shuffles them with
``random.Random(2034)`` and writes ``OUT/cases.md`` (each case as the ``full`` prompt of its
decision and the reply: what a blind reader gets) and ``OUT/key.json``.  The replies do not
depend on the scorer, so the draw is the same under any scorer version.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import random
import re
from pathlib import Path

from lm_eval_memrisk.episodes.loader import load_episodes
from lm_eval_memrisk.running.runner import decision_prompts

_STUDIES = Path(__file__).resolve().parent.parent
_REPO = _STUDIES.parent.parent
_SPEC = importlib.util.spec_from_file_location("replies_v7_make_study", _STUDIES / "replies_v7" / "make_study.py")
assert _SPEC is not None and _SPEC.loader is not None
round1 = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(round1)
#: The two episodes whose drug-only refill names the user's one prescription of that drug.
UNIQUE_DRUG = ("R3-medium-08", "R3-hard-05")


def drug_only_replies() -> dict[tuple[str, str, str], str]:
    """(episode, decision, reply) -> the first run that wrote it (samples files in the order
    of their paths as text)."""
    seen: dict[tuple[str, str, str], str] = {}
    for path in sorted((_REPO / "selector" / "data" / "reference").glob("qwen*/samples_*.jsonl.gz"), key=str):
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            for line in fh:
                record = json.loads(line)["episodes"]
                for d in record["trace"]["decisions"]:
                    action = d["action"]
                    if action.get("kind") != "tool_call" or action.get("tool") != "refill_prescription":
                        continue
                    med = str((action.get("arguments") or {}).get("medication", ""))
                    if med and not re.search(r"\d", med):
                        seen.setdefault((record["episode_id"], d["decision_id"], action["text"]), path.parent.name)
    return seen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    episodes = {ep.id: ep for ep in load_episodes("v7")}
    rows = []
    for (episode, decision, reply), run in drug_only_replies().items():
        prompts = {p.decision_id: p.messages for p in decision_prompts(episodes[episode])}
        rows.append({"run": run, "episode": episode, "decision": decision, "reply": reply,
                     "messages": prompts[decision], "control": False})  # fmt: skip
    for row in [r for r in rows if r["episode"] in UNIQUE_DRUG]:
        reference = next(e for e in episodes[row["episode"]].events if e.id == row["decision"]).reference or {}
        pharmacy = json.loads(row["reply"])["arguments"].get("pharmacy")
        whole = {"medication": reference["arguments"]["medication"], "pharmacy": pharmacy}
        rows.append({**row, "reply": json.dumps({"tool": "refill_prescription", "arguments": whole}), "control": True})
    random.Random(2034).shuffle(rows)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "cases.md").write_text("# Cases\n\n" + "\n".join(round1._case_text(n, r) for n, r in enumerate(rows, 1)), encoding="utf-8")
    key = [{"case": n, **{k: v for k, v in r.items() if k != "messages"}} for n, r in enumerate(rows, 1)]
    (args.out / "key.json").write_text(json.dumps(key, indent=1) + "\n", encoding="utf-8")
    print(f"{len(rows)} cases -> {args.out}")


if __name__ == "__main__":
    main()
