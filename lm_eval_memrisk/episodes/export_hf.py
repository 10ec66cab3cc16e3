"""Write a Hugging Face Hub-ready dataset folder (``memrisk export-hf DIR``).

Layout: ``data/<config>.jsonl`` for the configs r1..r6, easy, medium, hard and
all, plus a dataset card (README.md) whose YAML header declares the configs, so
``datasets.load_dataset(DIR, "r3")`` — or the same id once pushed to the Hub —
gives the docs the lm-eval tasks use.

Each row's keys are written in the order of :data:`doc_rows.COLUMNS`, the order of the
packaged docs, so a doc loaded from the export serialises as the packaged one does and
lm-eval logs the same ``doc_hash`` for it (lm-eval hashes ``json.dumps(doc)`` without
sorting keys).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from lm_eval_memrisk.episodes import risks
from lm_eval_memrisk.episodes.codec import fingerprint
from lm_eval_memrisk.episodes.doc_rows import COLUMNS, to_rows
from lm_eval_memrisk.episodes.records import TIERS, Episode

#: What each column of a row holds (the card's field table; every column of
#: :data:`doc_rows.COLUMNS` must be described, which the tests check).
FIELDS: dict[str, tuple[str, str]] = {
    "episode_id": ("string", "the episode's id, e.g. `R3-hard-02` (risk, tier, number)"),
    "risk": ("string", "`R1` stale memory, `R2` conflict misresolution, `R3` cross-scope leakage, "
             "`R4` revoked memory reuse, `R5` constraint decay, `R6` summary contamination"),
    "tier": ("string", "`easy`, `medium` or `hard` (5-8, 10-14 or 15-25 user and assistant messages)"),
    "track": ("string", "`main` (R1-R5, the scored benchmark) or `r6` (the separate R6 track)"),
    "family": ("string", "the scenario family the episode was generated from, e.g. `door_code`, `email_address`, `medication`"),
    "version": ("string", "the episode format and dataset version, e.g. `5.0` for dataset v5"),
    "dataset_hash": ("string", "`sha256:` fingerprint of all episodes of the export (the same in every "
                     "row); result signatures carry it"),
    "episode_json": ("string", "the whole episode as canonical JSON: timestamped events (memory writes, "
                     "updates, revocations, messages, tool calls, constraints, scope switches, "
                     "summaries) and decision points with their checks and reference actions; schema "
                     "`lm_eval_memrisk/schema/episode.schema.json`"),
}

CITATION = """\
@misc{jiang2026memriskbench,
  title         = {MemRiskBench: Trace-Aware Risk-Preserving Evaluation for Long-Horizon LLM Agents},
  author        = {Jiang, Jianhua and Yuan, Dongbo and Li, Weihua},
  year          = {2026},
  eprint        = {2609.14976},
  archivePrefix = {arXiv},
  primaryClass  = {cs.AI}
}"""

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

Dataset version: {version}. Dataset hash: `{dataset_hash}`.
Episodes: {n_main} main track, {n_r6} R6 track.

| config | rows |
|---|---|
{rows}

## Fields

Every config has one split, `test`, with these string columns:

| field | type | description |
|---|---|---|
{fields}

## Citation

The benchmark follows the paper *MemRiskBench: Trace-Aware Risk-Preserving Evaluation
for Long-Horizon LLM Agents* (Jianhua Jiang, Dongbo Yuan, Weihua Li; arXiv 2609.14976).
These episodes are generated anew by the `lm_eval_memrisk` package, not taken from the
paper's release.

```bibtex
{citation}
```
"""


def configs_of(episodes: Sequence[Episode]) -> dict[str, list[Episode]]:
    out: dict[str, list[Episode]] = {"all": [e for e in episodes if e.track == "main"]}
    for risk in risks.risk_ids():
        out[risk.lower()] = [e for e in episodes if e.risk == risk]
    for tier in TIERS:
        out[tier] = [e for e in episodes if e.tier == tier and e.track == "main"]
    return {k: v for k, v in out.items() if v}


def version_of(episodes: Sequence[Episode], dataset_hash: str) -> str:
    """The card's version line: the packaged dataset these episodes are, else their version fields."""
    from lm_eval_memrisk.episodes.loader import VERSION_FIELDS
    from lm_eval_memrisk.episodes.loader import dataset_hash as packaged_hash

    fields = sorted({e.version for e in episodes})
    listed = ", ".join(f"`{v}`" for v in fields)
    if len(fields) == 1 and fields[0] in VERSION_FIELDS:
        name = VERSION_FIELDS[fields[0]]
        if packaged_hash(name) == dataset_hash:
            return f"{name} (episode `version` {listed}; the packaged `episodes_{name}.jsonl`)"
        return f"episode `version` {listed} (not the packaged {name} file: a generated or edited set)"
    return f"episode `version` {listed}"


def export(episodes: Sequence[Episode], out_dir: Path) -> list[Path]:
    h = fingerprint(episodes)
    data = out_dir / "data"
    data.mkdir(parents=True, exist_ok=True)
    written = []
    configs = configs_of(episodes)
    for name, eps in configs.items():
        path = data / f"{name}.jsonl"
        path.write_text(  # keys in COLUMNS order (no sort_keys): the packaged docs' order
            "".join(json.dumps({c: r[c] for c in COLUMNS}, ensure_ascii=False) + "\n" for r in to_rows(eps, h)),
            encoding="utf-8",
        )
        written.append(path)
    yaml_configs = "".join(
        f"- config_name: {name}\n  data_files:\n  - split: test\n    path: data/{name}.jsonl\n"
        + ("  default: true\n" if name == "all" else "")
        for name in configs
    )
    card = CARD.format(
        configs=yaml_configs.rstrip("\n"), dataset_hash=h, version=version_of(episodes, h),
        n_main=sum(e.track == "main" for e in episodes), n_r6=sum(e.track == "r6" for e in episodes),
        rows="\n".join(f"| {k} | {len(v)} |" for k, v in configs.items()),
        fields="\n".join(f"| `{c}` | {FIELDS[c][0]} | {FIELDS[c][1]} |" for c in COLUMNS),
        citation=CITATION,
    )
    (out_dir / "README.md").write_text(card, encoding="utf-8")
    return written + [out_dir / "README.md"]
