"""Time the whole selector pipeline (issue 4 §8); a benchmark script, not a timed test.

Two workloads, both synthetic and seeded (item-response model: system ability theta_s,
episode difficulty b_e, pass ~ Bernoulli(sigmoid(theta_s - b_e))):

* 120 episodes x 5 systems, written as lm-eval samples files and read back (I/O included);
* 10,000 episodes x 20 systems, built in memory.

Each runs features, the selector, 7 methods at 3 fractions with 1,000 bootstrap draws,
the feature ablation and the held-out check for every system.  Goals: < 10 s and < 60 s.

    python benchmarks/bench_selector.py [--bootstrap 1000] [--only small|large]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from selector.evaluate import Settings, ablation, compare_methods, held_out, select_subset
from selector.io import STRUCT_FIELDS, TIERS, TRACE_METRICS, RunMatrix, load_runs

HASH = "sha256:" + "ab" * 32


def synthetic(n_ep: int, n_sys: int, seed: int) -> RunMatrix:
    """A seeded synthetic RunMatrix (5 risks, 3 tiers)."""
    rng = np.random.default_rng(seed)
    tiers = rng.integers(0, 3, n_ep)
    b = rng.normal(0.0, 1.0, n_ep) + 0.6 * (tiers - 1)
    theta = np.linspace(0.4, 2.0, n_sys)
    p = 1.0 / (1.0 + np.exp(-(theta[None, :] - b[:, None])))
    passed = rng.random((n_ep, n_sys)) < p
    score = np.where(passed, 1.0, rng.integers(0, 3, (n_ep, n_sys)) / 3.0)
    risks = np.arange(n_ep) % 5
    width = len(str(n_ep))
    ids = tuple(f"R{r + 1}-{TIERS[t][0].upper()}-{i:0{width}d}" for i, (r, t) in enumerate(zip(risks, tiers)))
    order = np.argsort(ids)
    structure = np.column_stack([5 + 5 * tiers + rng.integers(0, 5, n_ep)]
                                + [rng.integers(0, 6, n_ep) for _ in STRUCT_FIELDS[1:]]).astype(float)
    trace = rng.integers(0, 40, (n_ep, n_sys, len(TRACE_METRICS))).astype(float)
    return RunMatrix(
        episode_ids=tuple(ids[i] for i in order), risks=tuple(f"R{risks[i] + 1}" for i in order),
        tiers=tuple(TIERS[tiers[i]] for i in order), tasks=tuple(f"memriskbench_r{risks[i] + 1}" for i in order),
        doc_ids=(np.arange(n_ep) // 5)[order], systems=tuple(f"sys{s:02d}" for s in range(n_sys)),
        passed=passed[order], score=score[order], structure=structure[order], trace=trace[order],
        dataset_hash=HASH, scorer_version="1.0",
    )


def write_runs(m: RunMatrix, root: Path) -> list[Path]:
    """Write ``m`` as lm-eval samples files, one run folder per system."""
    dirs = []
    for s, name in enumerate(m.systems):
        model_dir = root / f"run_{name}" / name
        model_dir.mkdir(parents=True)
        files: dict[str, list[str]] = {}
        for e, ep in enumerate(m.episode_ids):
            passed = bool(m.passed[e, s])
            feats = dict(zip(STRUCT_FIELDS, m.structure[e].tolist()))
            action = {"kind": "tool_call" if passed else "answer", "text": "x"}
            decision = {"decision_id": "d1", "raw_reply": "x" * int(m.trace[e, s, 2]), "action": action,
                        "memory_used": ["m"] * int(m.trace[e, s, 0] % 4)}
            line = {"doc_id": int(m.doc_ids[e]), "filter": "none",
                    "doc": {"episode_id": ep, "risk": m.risks[e], "tier": m.tiers[e]},
                    "pass": float(passed), "score": float(m.score[e, s]),
                    "episodes": {"episode_id": ep, "dataset_hash": HASH, "scorer_version": "1.0",
                                 "features": feats, "checks": [], "trace": {"decisions": [decision]}}}
            files.setdefault(m.tasks[e], []).append(json.dumps(line))
        for task, lines in files.items():
            (model_dir / f"samples_{task}_2026-01-01T00-00-00.000000.jsonl").write_text("\n".join(lines) + "\n")
        dirs.append(root / f"run_{name}")
    return dirs


def run(m: RunMatrix, settings: Settings, label: str, load_s: float = 0.0) -> float:
    times = {"load": load_s}
    cpu = time.process_time()
    t = time.perf_counter()
    x, order, _ = select_subset(m, settings)
    times["features+select"] = time.perf_counter() - t
    t = time.perf_counter()
    rows = compare_methods(m, x, order, settings)
    times["7 methods x 3 fractions"] = time.perf_counter() - t
    t = time.perf_counter()
    abl = ablation(m, x, order, settings)
    times["ablation"] = time.perf_counter() - t
    t = time.perf_counter()
    held = held_out(m, settings)
    times["held-out"] = time.perf_counter() - t
    total = sum(times.values())
    cpu = time.process_time() - cpu
    rp = next(r for r in rows if r["method"] == "Risk-Preserving" and r["fraction"] == settings.fraction)
    print(f"{label}: total {total:.2f} s wall, {cpu:.2f} s CPU  ("
          + ", ".join(f"{k} {v:.2f}" for k, v in times.items()) + ")")
    print(f"    Risk-Preserving @ {settings.fraction}: rho {rp['spearman']['point']:.3f}, "
          f"fail cov {rp['fail_coverage']['point']:.3f}; {len(abl)} ablation rows, {len(held)} held-out rows")
    return total


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--only", choices=("small", "large"))
    args = ap.parse_args()
    settings = Settings(bootstrap=args.bootstrap, progress=False)
    ok = True
    if args.only in (None, "small"):
        small = synthetic(120, 5, seed=1)
        with tempfile.TemporaryDirectory() as tmp:
            dirs = write_runs(small, Path(tmp))
            t = time.perf_counter()
            loaded = load_runs(dirs)
            load_s = time.perf_counter() - t
        assert loaded.episode_ids == small.episode_ids and (loaded.passed == small.passed).all()
        ok &= run(loaded, settings, "120 episodes x 5 systems", load_s) < 10.0
    if args.only in (None, "large"):
        ok &= run(synthetic(10_000, 20, seed=2), settings, "10,000 episodes x 20 systems") < 60.0
    print("goals met" if ok else "goal missed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
