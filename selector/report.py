"""Outputs of ``memrisk select``: subset.json, samples.json, report.json, report.md (+ plots).

Every output carries the signature line (dataset hash, scorer version, variant, selector
settings, seed and a fingerprint of the input runs) and is byte-identical for the same
inputs: no timestamps, sorted keys, floats rounded to 6 places.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np

from lm_eval_memrisk.logs.safe_text import md_cell
from selector.evaluate import METHODS, PipelineResult, Settings
from selector.features import FAMILIES, FEATURE_NAMES
from selector.io import RunMatrix
from selector.objective import METRICS
from selector.stats import counts_from_matrix, wilson_table

SIGNATURE_PREFIX = "memrisk-select:v1"
METRIC_TITLES: dict[str, str] = {
    "spearman": "Spearman ρ", "fail_coverage": "Fail Cov.", "risk_coverage": "Risk Cov.", "high_risk": "Hi-Risk Det.",
}
DEFINITIONS: tuple[str, ...] = (
    ("Spearman ρ: rank correlation of the systems' mean pass on the subset vs the full set "
    "(average ranks for ties; 0 when either ranking is constant)."),
    ("Fail Cov.: share of all failing (episode, system) pairs of the full set whose episode is in the subset "
    "(a uniform 20% subset expects 0.20)."),
    "Risk Cov.: fraction of the risk types with at least one episode in the subset.",
    ("Hi-Risk Det.: recall of the bottom-k systems by full-set pass rate among the subset's bottom-k "
    "(ties share the free slots)."),
)


def _num(x: float) -> str:
    """A number in its shortest general form (``0.2``, ``1000``)."""
    return format(x, "g")


def runs_fingerprint(m: RunMatrix) -> str:
    """sha256 (16 hex) over episode ids, systems, pass flags, scores and structure."""
    data = {
        "episodes": list(m.episode_ids), "systems": list(m.systems),
        "passed": ["".join("1" if v else "0" for v in row) for row in m.passed],
        "score": np.round(m.score, 6).tolist(), "structure": m.structure.tolist(),
    }
    blob = json.dumps(data, sort_keys=True, separators=(",", ":")).encode()
    return "sha256:" + hashlib.sha256(blob).hexdigest()[:16]


def signature(m: RunMatrix, s: Settings) -> str:
    """The one-line signature of a selection."""
    w = s.weights
    held = "all" if s.held_out is None else ",".join(sorted(s.held_out))
    parts = [
        SIGNATURE_PREFIX, f"data={m.dataset_hash}", f"scorer={m.scorer_version}", f"variant={m.variant}",
        f"alpha={_num(w.alpha)}", f"beta={_num(w.beta)}", f"gamma={_num(w.gamma)}", f"high_risk_k={w.high_risk_k}",
        f"fraction={_num(s.fraction)}", f"fractions={','.join(_num(f) for f in s.all_fractions())}",
        f"bootstrap={s.bootstrap}", f"seed={s.seed}", f"held_out={held}",
        f"systems={len(m.systems)}", f"runs={runs_fingerprint(m)}",
    ]
    return "|".join(parts)


def settings_dict(s: Settings) -> dict[str, Any]:
    w = s.weights
    return {"alpha": w.alpha, "beta": w.beta, "gamma": w.gamma, "high_risk_k": w.high_risk_k,
            "fraction": s.fraction, "fractions": list(s.all_fractions()), "bootstrap": s.bootstrap,
            "seed": s.seed, "held_out": None if s.held_out is None else sorted(s.held_out)}


def clean(obj: Any) -> Any:
    """JSON-ready copy: numpy scalars to Python, floats rounded to 6 places (no -0.0)."""
    if isinstance(obj, dict):
        return {str(k): clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [clean(v) for v in obj]
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return round(float(obj), 6) + 0.0
    return obj


def dumps(obj: Any) -> str:
    return json.dumps(clean(obj), sort_keys=True, indent=2, ensure_ascii=False) + "\n"


# ----------------------------------------------------------------------------- documents


def subset_doc(r: PipelineResult) -> dict[str, Any]:
    m = r.matrix
    episodes = [{"episode_id": m.episode_ids[i], "risk": m.risks[i], "tier": m.tiers[i],
                 "task": m.tasks[i], "doc_id": int(m.doc_ids[i])} for i in r.subset]
    counts = {risk: sum(1 for e in episodes if e["risk"] == risk) for risk in m.risk_names}
    k = len(r.subset)
    return {"signature": signature(m, r.settings), "fraction": r.settings.fraction, "size": k,
            "n_episodes": len(m.episode_ids), "systems": list(m.systems), "settings": settings_dict(r.settings),
            "risk_counts": counts, "episodes": episodes,
            "selection_order": [m.episode_ids[i] for i in r.order[:k]]}


def samples_doc(r: PipelineResult) -> dict[str, list[int]]:
    """lm-eval ``--samples``: task -> sorted doc indices of the subset episodes."""
    m = r.matrix
    out: dict[str, list[int]] = {t: [] for t in sorted(set(m.tasks))}
    for i in r.subset:
        out[m.tasks[i]].append(int(m.doc_ids[i]))
    return {t: sorted(v) for t, v in out.items()}


def report_doc(r: PipelineResult) -> dict[str, Any]:
    m = r.matrix
    return {
        "signature": signature(m, r.settings),
        "settings": settings_dict(r.settings),
        "dataset": {"dataset_hash": m.dataset_hash, "scorer_version": m.scorer_version, "variant": m.variant,
                    "n_episodes": len(m.episode_ids), "systems": list(m.systems), "risks": list(m.risk_names)},
        "features": {"names": list(FEATURE_NAMES), "families": {k: list(v) for k, v in FAMILIES.items()}},
        "subset": {"fraction": r.settings.fraction, "size": len(r.subset),
                   "episode_ids": [m.episode_ids[i] for i in r.subset],
                   "risk_counts": subset_doc(r)["risk_counts"]},
        "comparison": r.comparison, "ablation": r.ablation, "held_out": r.held_out, "drift": r.drift,
        "psi_steps": r.psi_steps,
        "per_system_risk": wilson_table(counts_from_matrix(m)),
        "definitions": list(DEFINITIONS), "notes": list(m.notes),
    }


# ----------------------------------------------------------------------------- markdown


def _fixed3(x: float) -> str:
    """A metric with three decimals (``-0.000`` printed as ``0.000``)."""
    return f"{0.0 if abs(x) < 5e-4 else x:.3f}"


def _cell(v: dict[str, float]) -> str:
    if "na" in v:
        return "n/a (tied bottom-k)"
    if "point" in v:
        return _fixed3(v["point"])
    return f"{_fixed3(v['mean'])} [{_fixed3(v['lo'])}, {_fixed3(v['hi'])}]"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def render_markdown(r: PipelineResult) -> str:
    m, s = r.matrix, r.settings
    doc = report_doc(r)
    out = ["# MemRiskBench risk-preserving subset", "", f"`{doc['signature']}`", "",
           (f"{len(m.episode_ids)} episodes x {len(m.systems)} systems ({', '.join(md_cell(x) for x in m.systems)}); "
           f"risks {', '.join(m.risk_names)}; variant {m.variant}."), "",
           f"Subset at {_num(s.fraction)}: {len(r.subset)} episodes; per risk "
           + ", ".join(f"{k} {v}" for k, v in doc["subset"]["risk_counts"].items()) + ".", ""]
    out += ["## Method comparison (paper §6.5)", "",
            ("Stochastic methods: mean [95% percentile interval] over "
            f"{s.bootstrap} seeds; deterministic methods: point estimate."), ""]
    header = ["Method"] + [METRIC_TITLES[k] for k in METRICS]
    full = [row for row in r.comparison if row["method"] == "Full"]
    for f in s.all_fractions():
        rows = [[f"Full ({len(m.episode_ids)} ep)"] + [_cell(full[0][k]) for k in METRICS]]
        for method in METHODS:
            row = next(x for x in r.comparison if x["method"] == method and x["fraction"] == f)
            rows.append([method + (" (ours)" if method == "Risk-Preserving" else "")
                         + (f" ({row['note']})" if "note" in row else "")]
                        + [_cell(row[k]) for k in METRICS])
        out += [f"### {_num(round(f * 100, 6))}% subset ({_size(r, f)} episodes)", ""]
        out += _table(header, rows) + [""]
    out += ["## Feature ablation (Risk-Preserving, one family dropped)", ""]
    if r.psi_steps is not None:
        ps = r.psi_steps
        out += [(f"At {_num(s.fraction)} ({ps['size']} episodes): {ps['seed_picks']} seed-phase picks, then "
                 f"{ps['raised']} greedy picks that raised Ψ and {ps['tied']} that tied (chosen by feature "
                 f"priority); Ψ = {_fixed3(ps['psi'])}. Dropping a family can only change the tied picks "
                 "and the seed phase."), ""]
    rows = [[row["dropped"] if row["dropped"] == "none" else "− " + row["dropped"], _num(row["fraction"])]
            + [_fixed3(row[k]) for k in METRICS] for row in r.ablation]
    out += _table(["Dropped", "Fraction"] + [METRIC_TITLES[k] for k in METRICS], rows) + [""]
    out += [f"## Held-out system (select without it at {_num(s.fraction)}; features leave-one-system-out)", ""]
    rows = [[md_cell(h["system"]), _fixed3(h["spearman_reference"]), _fixed3(h["spearman_all"]), _fixed3(h["pass_subset"]),
             _fixed3(h["pass_full"]), _num(h["rank_subset"]), _num(h["rank_full"]), _fixed3(h["high_risk_subset"]),
             _fixed3(h["high_risk_full"]), _fixed3(h["risk_coverage"])] for h in r.held_out]
    out += _table(["Held out", "ρ (others)", "ρ (all)", "Pass subset", "Pass full", "Rank subset",
                   "Rank full", "High-risk subset", "High-risk full", "Risk Cov."], rows) + [""]
    if r.drift is not None:
        d = r.drift
        verdict = "rank preserved" if d["rank_preserved"] else "DRIFT: the subset ranks it differently"
        out += ["## Drift check", "",
                (f"New system {md_cell(d['system'])}: rank {_num(d['rank_subset'])} of {d['n_systems']} on the subset vs "
                f"{_num(d['rank_full'])} on the full set ({verdict}); pass {_fixed3(d['pass_subset'])} "
                f"[{_fixed3(d['pass_subset_lo'])}, {_fixed3(d['pass_subset_hi'])}] on the subset vs {_fixed3(d['pass_full'])} "
                f"on the full set; ρ over all systems {_fixed3(d['spearman_all'])}."), ""]
    out += ["## Per-(system, risk) pass rates (Wilson 95%)", ""]
    rows = [[md_cell(c["model"]), c["risk"], f"{c['passes']}/{c['n']}", _fixed3(c["rate"]), f"[{_fixed3(c['lo'])}, {_fixed3(c['hi'])}]"]
            for c in doc["per_system_risk"]]
    out += _table(["System", "Risk", "Passes", "Rate", "95% CI"], rows) + [""]
    out += ["## Definitions", ""] + [f"- {d}" for d in DEFINITIONS] + [""]
    if m.notes:
        out += ["## Notes", ""] + [f"- {n}" for n in m.notes] + [""]
    return "\n".join(out)


def _size(r: PipelineResult, f: float) -> int:
    return int(next(x["size"] for x in r.comparison if x["method"] == "Risk-Preserving" and x["fraction"] == f))


# ----------------------------------------------------------------------------- writing


def write_outputs(r: PipelineResult, out_dir: Path, plots: bool = True) -> list[Path]:
    """Write every output into ``out_dir``; returns the paths written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    files = {
        "subset.json": dumps(subset_doc(r)), "samples.json": dumps(samples_doc(r)),
        "report.json": dumps(report_doc(r)), "report.md": render_markdown(r),
    }
    written = []
    for name, text in files.items():
        path = out_dir / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    if plots:
        from selector.plots import write_plots

        written += write_plots(r, out_dir)
    return written
