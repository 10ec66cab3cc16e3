"""Fuzzer comparison on a real model (issue #30 item 4): margin-guided against random
search (and any other strategy) at one budget over several report seeds.

1. The seed episodes are the ones the model passes in a reference run (its lm-eval
   samples, ``--reference``), copied from the packaged dataset: a unique failure needs a
   parent the model passes.
2. One ``memrisk fuzz`` process per strategy, ``--jobs`` at a time (one thread each),
   each with the same budget and seeds.
3. ``table.md`` and ``results.json`` in ``--out``: unique failures per seed, pairs,
   failing mutants, roots used, margin cost and wall time per strategy, and the ratio
   of each strategy's mean to random's.

    python scripts/fuzz_real_model.py --out runs/fuzz-real             # Qwen-0.5B, B = 48, seeds 0-2
    python scripts/fuzz_real_model.py --out runs/smoke --budget 2 --seeds 0
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def passed_episode_ids(reference: Path) -> list[str]:
    """Episode ids the run in ``reference`` (an lm-eval output folder) passes."""
    ids: list[str] = []
    files = sorted(reference.glob("samples_*.jsonl*"))
    if not files:
        raise SystemExit(f"{reference}: no samples_*.jsonl(.gz) files")
    for path in files:
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt", encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                row = json.loads(line)
                try:
                    if row["pass"] == 1.0:
                        ids.append(row["episodes"]["episode_id"])
                except (KeyError, TypeError) as exc:
                    raise SystemExit(f"{path}:{n}: no 'pass' or 'episodes.episode_id' field") from exc
    return sorted(ids)


def write_seeds(ids: list[str], dataset: Path, out: Path) -> int:
    """Copy the episodes named in ``ids`` from ``dataset`` into ``out``."""
    wanted, kept = set(ids), []
    for line in dataset.read_text(encoding="utf-8").splitlines():
        if line.strip() and json.loads(line)["id"] in wanted:
            kept.append(line + "\n")
    missing = wanted - {json.loads(x)["id"] for x in kept}
    if missing:
        raise SystemExit(f"{dataset}: lacks the reference run's episodes {sorted(missing)}")
    out.write_text("".join(kept), encoding="utf-8")
    return len(kept)


def _pm(values: list[float], digits: int = 1) -> str:
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.fmean(values):.{digits}f} ± {sd:.{digits}f}"


def summarise(strategy: str, folder: Path, wall_s: float) -> dict[str, Any]:
    report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    runs = [r for r in report["runs"] if r["strategy"] == strategy]
    mutants = [json.loads(x) for x in (folder / "mutants.jsonl").read_text(encoding="utf-8").splitlines()]
    cost = [r.get("margin_cost") for r in runs]
    return {
        "strategy": strategy,
        "seeds": [r["seed"] for r in runs],
        "unique_failures": [r["unique_failures"] for r in runs],
        "pairs": [r["pairs"] for r in runs],
        "failing_mutants": [r["failures"] for r in runs],
        "executed": [r["executed"] for r in runs],
        "roots_used": [r["roots_used"] for r in runs],
        "rejected": [sum(r.get("rejected", {}).values()) for r in runs],
        "root_causes": sorted({u["root_cause"] for r in runs for u in r["unique"]}),
        "margin_cost": cost if any(c is not None for c in cost) else None,
        "margins": [m["margin"] for m in mutants if m.get("margin")],
        "wall_s": round(wall_s, 1),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--model", default="qwen2.5-coder-0.5b", help="embedded model name or GGUF path")
    p.add_argument("--reference", type=Path,
                   help="the model's lm-eval output folder (default: selector/data/reference/MODEL)")
    p.add_argument("--dataset", type=Path, default=REPO / "lm_eval_memrisk" / "data" / "episodes_v6.jsonl")
    p.add_argument("--budget", type=int, default=48)
    p.add_argument("--seeds", default="0,1,2")
    p.add_argument("--strategies", default="margin,random")
    p.add_argument("--jobs", type=int, default=2, help="strategies run at once (one thread each)")
    args = p.parse_args(argv)
    reference = args.reference or REPO / "selector" / "data" / "reference" / args.model
    args.out.mkdir(parents=True, exist_ok=True)
    seeds_file = args.out / "seeds.jsonl"
    n = write_seeds(passed_episode_ids(reference), args.dataset, seeds_file)
    print(f"{n} seed episodes the model passes in {reference}", file=sys.stderr)
    strategies = [s.strip() for s in args.strategies.split(",") if s.strip()]
    pending, running, walls = list(strategies), {}, {}
    while pending or running:
        while pending and len(running) < args.jobs:
            s = pending.pop(0)
            cmd = [sys.executable, "-m", "lm_eval_memrisk.cli", "fuzz", "--model", "llama-cpp",
                   "--model_args", f"model={args.model},n_threads=1", "--episodes", str(seeds_file),
                   "--budget", str(args.budget), "--seeds", args.seeds, "--strategy", s,
                   "--batch", "4", "--out", str(args.out / s), "--json"]
            log = open(args.out / f"{s}.log", "w", encoding="utf-8")  # noqa: SIM115 (closed below)
            running[s] = (subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT), time.monotonic(), log)
        time.sleep(5)
        for s, (proc, t0, log) in list(running.items()):
            if proc.poll() is not None:
                log.close()
                if proc.returncode:
                    raise SystemExit(f"{s}: memrisk fuzz exited {proc.returncode}; see {args.out / (s + '.log')}")
                walls[s] = time.monotonic() - t0
                del running[s]
    rows = [summarise(s, args.out / s, walls[s]) for s in strategies]
    (args.out / "results.json").write_text(
        json.dumps({"model": args.model, "budget": args.budget, "seed_episodes": n, "rows": rows},
                   indent=1, sort_keys=True) + "\n", encoding="utf-8")
    lines = ["| strategy | B | unique failures per seed | mean ± sd | pairs | failing mutants | roots used "
             "| rejected (invalid) | wall (s) |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['strategy']} | {args.budget} | {', '.join(map(str, r['unique_failures']))} | "
                     f"{_pm(r['unique_failures'])} | {_pm(r['pairs'])} | {_pm(r['failing_mutants'])} | "
                     f"{_pm(r['roots_used'])} | {_pm(r['rejected'])} | {r['wall_s']:.0f} |")
    base = next((statistics.fmean(r["unique_failures"]) for r in rows if r["strategy"] == "random"), None)
    if base:
        lines += ["", "; ".join(f"{r['strategy']}/random = {statistics.fmean(r['unique_failures']) / base:.2f}"
                                for r in rows if r["strategy"] != "random")]
    (args.out / "table.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
