"""Re-score lm-eval --log_samples output without re-running the model.

Each sample line names its episode and carries the agent's raw reply texts, so any
scoring variant can be applied afterwards (the paper's strict-matching revision,
§4.3).  Ground truth comes from the packaged dataset only: the episode is found by id
and the logged copy must match it; the trace (scripted and interactive alike) is
replayed from the reply texts (:mod:`lm_eval_memrisk.rederive`), so stored actions,
states and item statuses are never trusted.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lm_eval_memrisk.errors import SamplesError
from lm_eval_memrisk.jsonl import numbered_lines
from lm_eval_memrisk.loader import DEFAULT_DATASET, VERSION_FIELDS, load_episodes
from lm_eval_memrisk.records import Episode
from lm_eval_memrisk.rederive import rescore_sample as score_sample


@dataclass
class Audit:
    """Per (model, risk): how many episodes changed, and in which direction."""

    rows: dict[tuple[str, str], Counter[str]] = field(default_factory=dict)

    def add(self, model: str, risk: str, before: bool, after: bool) -> None:
        c = self.rows.setdefault((model, risk), Counter())
        c["n"] += 1
        if before != after:
            c["pass->fail" if before else "fail->pass"] += 1

    def table(self) -> str:
        lines = [f"{'model':<32}{'risk':<6}{'n':>5}{'changed':>9}{'fail->pass':>12}{'pass->fail':>12}"]
        for (model, risk), c in sorted(self.rows.items()):
            changed = c["fail->pass"] + c["pass->fail"]
            lines.append(f"{model:<32}{risk:<6}{c['n']:>5}{changed:>9}{c['fail->pass']:>12}{c['pass->fail']:>12}")
        return "\n".join(lines)

    def to_dict(self) -> list[dict[str, Any]]:
        return [{"model": m, "risk": r, **dict(c)} for (m, r), c in sorted(self.rows.items())]


def sample_files(root: Path) -> list[Path]:
    files = sorted(p for p in root.rglob("samples_memriskbench_*.jsonl") if ".rescored" not in p.name)
    if not files:
        raise SamplesError(f"{root}: no samples_memriskbench_*.jsonl files (was lm_eval run with --log_samples?)")
    return files


def read_samples(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    for lineno, line in numbered_lines(path.read_text(encoding="utf-8")):
        try:
            sample = json.loads(line)
            sample["doc"]["episode_json"], sample["episodes"]["trace"]
        except (ValueError, KeyError, TypeError) as exc:
            raise SamplesError(
                f"{path}:{lineno}: not a MemRiskBench sample line ({exc!r})"
            ) from exc
        yield lineno, sample


def packaged_episodes(version: str = DEFAULT_DATASET) -> dict[str, Episode]:
    """A shipped dataset version (``v1``, ``v2``) by episode id (every track), loaded and
    validated once."""
    if version not in _PACKAGED:
        _PACKAGED[version] = {e.id: e for e in load_episodes(version, track="all")}
    return _PACKAGED[version]


def _packaged_for(sample: Mapping[str, Any]) -> dict[str, Episode]:
    """The packaged dataset a sample was run on, by its doc's ``version`` field (ids
    repeat across versions, so a v1 sample is verified against v1, never v2)."""
    doc = sample.get("doc")
    field = doc.get("version") if isinstance(doc, Mapping) else None
    return packaged_episodes(VERSION_FIELDS.get(str(field), DEFAULT_DATASET))


_PACKAGED: dict[str, dict[str, Episode]] = {}


def rescore_sample(
    sample: dict[str, Any], variant: str, expected: str, episodes: Mapping[str, Episode] | None = None
) -> dict[str, Any]:
    """The sample with its metrics recomputed from the verified episode and its reply
    texts (:func:`lm_eval_memrisk.rederive.rescore_sample`); stored metrics are ignored."""
    packaged = episodes if episodes is not None else _packaged_for(sample)
    result = score_sample(sample, packaged, variant=variant, expected=expected)
    out = dict(sample)
    out["pass"] = float(result.success)
    out["score"] = result.score
    out["episodes"] = dict(sample["episodes"], success=result.success, score=result.score,
                           violations=list(result.violations),
                           checks=[dict(c.__dict__) for c in result.checks],
                           scorer_version=result.scorer_version,
                           rescored={"variant": variant, "expected": expected})
    return out


def free_path(path: Path) -> Path:
    """``path`` if unused, else path with .1, .2, ... before the suffix (never overwrite)."""
    candidate, n = path, 0
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.stem}.{n}{path.suffix}")
    return candidate


def rescore_dir(root: Path, variant: str = "default", expected: str = "revised") -> tuple[Audit, list[Path]]:
    audit, written = Audit(), []
    for path in sample_files(root):
        model = path.parent.name
        target = free_path(path.with_name(f"{path.stem}.rescored-{variant}-{expected}{path.suffix}"))
        lines = []
        for lineno, sample in read_samples(path):
            try:
                new = rescore_sample(sample, variant, expected)
            except SamplesError as exc:
                raise SamplesError(f"{path}:{lineno}: {exc}") from None
            audit.add(model, sample["doc"].get("risk", "?"), bool(sample.get("pass")), bool(new["pass"]))
            lines.append(json.dumps(new, ensure_ascii=False, sort_keys=True))
        tmp = target.with_suffix(target.suffix + ".tmp")
        tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
        tmp.replace(target)
        written.append(target)
    return audit, written
