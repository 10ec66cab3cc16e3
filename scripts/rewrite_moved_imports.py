"""Rewrite references to the modules moved by the layer split (issue 28, item 5).

``python scripts/rewrite_moved_imports.py`` in a checkout turns ``lm_eval_memrisk.X`` and
``lm_eval_memrisk/X.py`` of every moved module into its new place (``episodes/``,
``scoring/``, ``running/``, ``logs/``) in every tracked text file; then run
``ruff check --fix --select I .`` to re-sort the import blocks.  For branches begun before
the split: merge it, take your side of a conflicted import block, run this.  It does not
know the later cycle breaks: ``get_agent``/``agent_name`` now come from
``running.agent_registry``, ``wilson_interval`` from ``scoring.intervals``,
``MAX_REPLAY_STEPS`` from ``episodes.trace``.  Delete it once no branch needs it.
"""
import re
import subprocess
import sys
from pathlib import Path

SUB = {}
for sub, mods in {
    "episodes": "records trace errors jsonl codec loader validate normalize patterns action_checks state render tools doc_rows episode_features subsets export_hf",
    "scoring": "equivalence frames acts echo parse checks scorer decisions summary signature attribution sample_record",
    "running": "agents weak visible_oracle replay runner generation interactive policies embedding systems pipeline run_store run_lock memory",
    "logs": "runs recompute rederive rescore invalid_replies safe_text",
}.items():
    for m in mods.split():
        SUB[m] = sub
ALT = "|".join(sorted(SUB, key=len, reverse=True))
DOTTED = re.compile(rf"(?<![\w.])lm_eval_memrisk\.({ALT})(?![\w])")
PATH = re.compile(rf"(?<![\w.])lm_eval_memrisk/({ALT})(\.py|/|(?![\w]))")
FROM = re.compile(rf"^(\s*)from lm_eval_memrisk import ({ALT})\b(.*)$", re.M)

def fix(text: str) -> str:
    text = FROM.sub(lambda m: f"{m[1]}from lm_eval_memrisk.{SUB[m[2]]} import {m[2]}{m[3]}", text)
    text = DOTTED.sub(lambda m: f"lm_eval_memrisk.{SUB[m[1]]}.{m[1]}", text)
    text = PATH.sub(lambda m: f"lm_eval_memrisk/{SUB[m[1]]}/{m[1]}{m[2]}", text)
    return text

#: Files that name the old paths on purpose.
SKIP = {"tests/test_architecture.py", "scripts/rewrite_moved_imports.py"}
files = subprocess.run(["git", "ls-files"], capture_output=True, text=True, check=True).stdout.split()
exts = (".py", ".md", ".yaml", ".cfg", ".toml", ".sh", ".pth", ".txt", ".ini", ".json")
changed = []
for f in files:
    p = Path(f)
    if not (f.endswith(exts) or p.name in ("_memriskbench_common", "run")) or f.startswith(("lm_eval_memrisk/data/", "selector/data/")):
        continue
    if not p.is_file() or f in SKIP:
        continue
    try:
        old = p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        continue
    new = fix(old)
    if new != old:
        p.write_text(new, encoding="utf-8")
        changed.append(f)
print("\n".join(changed))
print(len(changed), "files", file=sys.stderr)
