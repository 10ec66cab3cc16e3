"""Write a Hugging Face Hub-ready dataset folder (``memrisk export-hf DIR``).

Layout: ``data/<config>.jsonl`` for the configs r1..r6, easy, medium, hard and
all, plus a dataset card (README.md) whose YAML header declares the configs, so
``datasets.load_dataset(DIR, "r3")`` — or the same id once pushed to the Hub —
gives the docs the lm-eval tasks use.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from lm_eval_memrisk.episodes.codec import fingerprint
from lm_eval_memrisk.episodes.doc_rows import to_rows
from lm_eval_memrisk.episodes.records import RISKS, TIERS, Episode

CARD = """\
---
license: mit
pretty_name: MemRiskBench
task_categories:
- text-generation
configs:
{configs}
---

# MemRiskBench episodes

Scripted long-horizon agent episodes for memory-risk evaluation (stale memory,
conflicting memory, cross-scope leakage, revoked memory reuse, constraint decay,
and the separate summary-contamination track R6). Each row carries the canonical
episode JSON in `episode_json`; score with the `lm_eval_memrisk` package
(`lm_eval --tasks memriskbench --metadata '{{"dataset": "<this repo id>"}}'`).

Dataset hash: `{dataset_hash}`. Episodes: {n_main} main track, {n_r6} R6 track.

| config | rows |
|---|---|
{rows}
"""


def configs_of(episodes: Sequence[Episode]) -> dict[str, list[Episode]]:
    out: dict[str, list[Episode]] = {"all": [e for e in episodes if e.track == "main"]}
    for risk in RISKS:
        out[risk.lower()] = [e for e in episodes if e.risk == risk]
    for tier in TIERS:
        out[tier] = [e for e in episodes if e.tier == tier and e.track == "main"]
    return {k: v for k, v in out.items() if v}


def export(episodes: Sequence[Episode], out_dir: Path) -> list[Path]:
    h = fingerprint(episodes)
    data = out_dir / "data"
    data.mkdir(parents=True, exist_ok=True)
    written = []
    configs = configs_of(episodes)
    for name, eps in configs.items():
        path = data / f"{name}.jsonl"
        path.write_text(
            "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in to_rows(eps, h)),
            encoding="utf-8",
        )
        written.append(path)
    yaml_configs = "".join(
        f"- config_name: {name}\n  data_files:\n  - split: test\n    path: data/{name}.jsonl\n"
        + ("  default: true\n" if name == "all" else "")
        for name in configs
    )
    card = CARD.format(
        configs=yaml_configs.rstrip("\n"), dataset_hash=h,
        n_main=sum(e.track == "main" for e in episodes), n_r6=sum(e.track == "r6" for e in episodes),
        rows="\n".join(f"| {k} | {len(v)} |" for k, v in configs.items()),
    )
    (out_dir / "README.md").write_text(card, encoding="utf-8")
    return written + [out_dir / "README.md"]
