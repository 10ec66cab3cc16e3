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

The seed episodes come from the dataset the reference run names (the packaged
reference run is on the default dataset; docs/fuzzer.md says how to rerun the v6
campaign from its v6 reference run).
    python scripts/fuzz_real_model.py --out runs/smoke --budget 2 --seeds 0
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def passed_episode_ids(reference: Path, dataset_hash: str) -> list[str]:
    """Episode ids the run in ``reference`` (an lm-eval output folder) passes; every row
    must have been scored on the dataset whose hash is ``dataset_hash``."""
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
                    passed, info = row["pass"] == 1.0, row["episodes"]
                    ran_on = info["dataset_hash"]
                    if passed:
                        ids.append(info["episode_id"])
                except (KeyError, TypeError) as exc:
                    raise SystemExit(f"{path}:{n}: no 'pass' or 'episodes' field with "
                                     "'episode_id' and 'dataset_hash'") from exc
                if ran_on != dataset_hash:
                    raise SystemExit(f"{path}:{n}: field episodes.dataset_hash is {ran_on}, but --dataset "
                                     f"is {dataset_hash}: the run was scored on another dataset")
    return sorted(ids)


def run_dataset(reference: Path) -> Path:
    """The packaged episode file the run in ``reference`` was scored on (by the dataset
    hash its first sample names)."""
    from lm_eval_memrisk.logs.runs import known_datasets

    path = next(iter(sorted(reference.glob("samples_*.jsonl*"))), None)
    if path is None:
        raise SystemExit(f"{reference}: no samples_*.jsonl(.gz) files")
    with (gzip.open if path.suffix == ".gz" else open)(path, "rt", encoding="utf-8") as fh:
        try:
            ran_on = json.loads(fh.readline())["episodes"]["dataset_hash"]
        except (ValueError, KeyError, TypeError) as exc:
            raise SystemExit(f"{path}:1: no field episodes.dataset_hash") from exc
    known = known_datasets()
    if ran_on not in known:
        raise SystemExit(f"{path}:1: dataset {ran_on} is no packaged dataset; pass --dataset")
    return known[ran_on].path


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


def summarise(strategy: str, folders: list[Path], wall_s: float | None) -> dict[str, Any]:
    """One strategy's row, over the runs of every folder (process) that ran it."""
    runs, mutants = [], []
    for folder in folders:
        report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
        runs += [r for r in report["runs"] if r["strategy"] == strategy]
        mutants += [json.loads(x) for x in (folder / "mutants.jsonl").read_text(encoding="utf-8").splitlines()]
    runs.sort(key=lambda r: r["seed"])
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
        "margin_vs_verdict": margin_vs_verdict(mutants),
        "wall_s": round(wall_s, 1) if wall_s is not None else None,
    }


def cause_union(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The root causes found by any run of any strategy (a lower bound on what this model
    and seed set allow), and each strategy's mean share of them per run."""
    union = sorted({c for r in rows for c in r["root_causes"]})
    share = {r["strategy"]: round(statistics.fmean(r["unique_failures"]) / len(union), 3)
             for r in rows if union and r["unique_failures"]}
    return {"causes": union, "n": len(union), "mean_share_per_run": share}


def margin_vs_verdict(mutants: list[dict[str, Any]]) -> dict[str, Any] | None:
    """How a mutant's margin (``after``) relates to the scorer's verdict on its reply:
    counts of (margin <= 0, failed), and the AUC of -margin as a failure predictor (the
    chance a failing mutant's margin is below a passing one's; ties count half)."""
    scored = [(m["margin"]["after"], not m["passed"]) for m in mutants
              if m.get("margin") and m["margin"].get("nats_after") is not None]
    if not scored:
        return None
    counts = {f"{'fired' if a <= 0 else 'held'}/{'failed' if f else 'passed'}": 0
              for a in (0, 1) for f in (True, False)}
    for after, failed in scored:
        counts[f"{'fired' if after <= 0 else 'held'}/{'failed' if failed else 'passed'}"] += 1
    fails = [a for a, f in scored if f]
    passes = [a for a, f in scored if not f]
    auc = None
    if fails and passes:
        wins = sum((a < b) + 0.5 * (a == b) for a in fails for b in passes)
        auc = round(wins / (len(fails) * len(passes)), 3)
    return {"n": len(scored), **counts, "auc": auc}


def processes(strategies: list[str], seeds: str, split: str) -> list[tuple[str, str]]:
    """(strategy, seeds) per ``memrisk fuzz`` process: one per strategy with every seed,
    except the strategies ``split`` names (``margin=0,1/2``: seeds 0 and 1 in one
    process, seed 2 in another)."""
    groups = {}
    for item in split.split(";"):
        if item.strip():
            name, _, parts = item.partition("=")
            groups[name.strip()] = [g for g in parts.split("/") if g]
    return [(s, g) for s in strategies for g in groups.get(s, [seeds])]


def folder_name(strategy: str, seeds: str, every: str) -> str:
    return strategy if seeds == every else f"{strategy}-s{seeds.replace(',', '_')}"


def ran_strategy(folder: str, strategy: str) -> bool:
    """Whether ``folder`` (a name :func:`folder_name` gave, perhaps with a ``-b<batch>``
    tag) holds a run of ``strategy``: ``margin-s1`` is margin's, ``margin-only`` is not."""
    return re.fullmatch(rf"{re.escape(strategy)}(-s[0-9_]+)?(-b[0-9]+)?", folder) is not None


def _run_all(args: argparse.Namespace, pending: list[tuple[str, str]],
             running: dict[str, Any], walls: dict[str, float], seeds_file: Path) -> None:
    """One ``memrisk fuzz`` process per (strategy, seeds), ``args.jobs`` at a time."""
    while pending or running:
        while pending and len(running) < args.jobs:
            strategy, seeds = pending.pop(0)
            s = folder_name(strategy, seeds, args.seeds)
            cmd = [sys.executable, "-m", "lm_eval_memrisk.cli", "fuzz", "--model", "llama-cpp",
                   "--model_args", f"model={args.model},n_threads=1", "--episodes", str(seeds_file),
                   "--budget", str(args.budget), "--seeds", seeds, "--strategy", strategy,
                   "--batch", str(args.batch), "--out", str(args.out / s), "--json"]
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


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--model", default="qwen2.5-coder-0.5b", help="embedded model name or GGUF path")
    p.add_argument("--reference", type=Path,
                   help="the model's lm-eval output folder (default: selector/data/reference/MODEL)")
    p.add_argument("--dataset", type=Path,
                   help="the episode file the reference run was scored on (default: the packaged one it names)")
    p.add_argument("--budget", type=int, default=48)
    p.add_argument("--seeds", default="0,1,2")
    p.add_argument("--strategies", default="margin,random")
    p.add_argument("--batch", type=int, default=4,
                   help="mutants run per model call; 1 lets the margin reuse the prompt just generated")
    p.add_argument("--jobs", type=int, default=2, help="processes run at once (one thread each)")
    p.add_argument("--split", default="", help="seed groups run as separate processes, e.g. "
                   "'margin=0,1/2' (each process runs its seeds' parents again)")
    p.add_argument("--summarise-only", action="store_true",
                   help="only rebuild table.md and results.json from the runs already in --out")
    args = p.parse_args(argv)
    reference = args.reference or REPO / "selector" / "data" / "reference" / args.model
    args.out.mkdir(parents=True, exist_ok=True)
    seeds_file = args.out / "seeds.jsonl"
    strategies = [s.strip() for s in args.strategies.split(",") if s.strip()]
    walls: dict[str, float] = {}
    if args.summarise_only:
        if not seeds_file.exists():
            raise SystemExit(f"{seeds_file}: not found; --summarise-only reads a folder this script wrote")
        n = sum(1 for line in seeds_file.read_text(encoding="utf-8").splitlines() if line.strip())
        old = args.out / "results.json"
        if old.exists():
            walls = {r["strategy"]: r["wall_s"] for r in json.loads(old.read_text(encoding="utf-8"))["rows"]}
        strategies = [s for s in strategies if any(args.out.glob(f"{s}*/report.json"))]
    else:
        from lm_eval_memrisk.episodes.loader import dataset_hash

        dataset = args.dataset or run_dataset(reference)
        n = write_seeds(passed_episode_ids(reference, dataset_hash(dataset)), dataset, seeds_file)
        print(f"{n} seed episodes the model passes in {reference}", file=sys.stderr)
    pending = [] if args.summarise_only else processes(strategies, args.seeds, args.split)
    running: dict[str, Any] = {}
    try:
        _run_all(args, pending, running, walls, seeds_file)
    finally:
        for proc, _, log in running.values():  # a failure leaves no process behind
            proc.terminate()
            log.close()
    every = processes(strategies, args.seeds, args.split)
    rows = []
    for s in strategies:
        names = [folder_name(st, seeds, args.seeds) for st, seeds in every if st == s]
        folders = sorted(f for f in args.out.iterdir() if (f / "report.json").exists()
                         and ran_strategy(f.name, s))
        known = [walls[n] for n in names if walls.get(n) is not None]
        rows.append(summarise(s, folders, sum(known) if known else None))
    union = cause_union(rows)
    (args.out / "results.json").write_text(
        json.dumps({"model": args.model, "budget": args.budget, "seed_episodes": n, "rows": rows,
                    "cause_union": union},
                   indent=1, sort_keys=True) + "\n", encoding="utf-8")
    lines = ["| strategy | B | unique failures per seed | mean ± sd | pairs | failing mutants | roots used "
             "| rejected (invalid) | wall (s) |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['strategy']} | {args.budget} | {', '.join(map(str, r['unique_failures']))} | "
                     f"{_pm(r['unique_failures'])} | {_pm(r['pairs'])} | {_pm(r['failing_mutants'])} | "
                     f"{_pm(r['roots_used'])} | {_pm(r['rejected'])} | "
                     f"{'-' if r['wall_s'] is None else round(r['wall_s'])} |")
    base = next((statistics.fmean(r["unique_failures"]) for r in rows if r["strategy"] == "random"), None)
    if base:
        lines += ["", "; ".join(f"{r['strategy']}/random = {statistics.fmean(r['unique_failures']) / base:.2f}"
                                for r in rows if r["strategy"] != "random")]
    lines += ["", f"root causes found by any run: {union['n']}; mean share per run: "
              + ", ".join(f"{k} {v:.2f}" for k, v in union["mean_share_per_run"].items())]
    for r in rows:
        if r["margin_cost"] and sum(r["executed"]):
            executed = sum(r["executed"])
            tokens = {k: sum(c["mutants"][k] for c in r["margin_cost"]) for k in ("prompt_tokens", "tokens_scored")}
            overall = {k: sum(c["all"][k] for c in r["margin_cost"]) for k in ("prompt_tokens", "tokens_scored")}
            lines += ["", f"{r['strategy']} margin cost per executed mutant: {tokens['prompt_tokens'] / executed:.0f} "
                      f"prompt tokens, {tokens['tokens_scored'] / executed:.0f} scored tokens; with parents and "
                      f"probes {overall['prompt_tokens'] / executed:.0f} and {overall['tokens_scored'] / executed:.0f}"]
        if r["margin_vs_verdict"]:
            lines += ["", f"{r['strategy']} margin after vs verdict: {json.dumps(r['margin_vs_verdict'])}"]
    (args.out / "table.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
