"""Presentations x tool modes on the real embedded models (issue #11, item 5).

    python benchmarks/bench_presentations.py --model qwen2.5-coder-0.5b --presentation history \
        [--tools text|native] [--slice fixed10|fixed25|full] [--threads 1] [--out DIR]
    python benchmarks/bench_presentations.py --from RUN_DIR... [--markdown]   # summarise finished runs

Runs the main track, or a fixed stratified slice with the same ids in every run
(``fixed25``: per risk the first two easy, first two medium and first hard episode;
``fixed10``: per risk the first easy and first medium one; ``fixed5``: the first easy
one), through
lm-eval with the in-process llama-cpp model and ``--apply_chat_template``, and prints
one JSON object: per risk pass, acted (decisions), decision classes, violation
(episodes), violations among acted decisions, plus prompt tokens, prompt tokens
actually evaluated (llama.cpp prefix reuse), generated tokens and wall time.  With
``--out`` the lm-eval results and samples are written there too (``memrisk report``
reads them).  ``--from RUN_DIR`` prints the same object for a run that already
finished (a ``memrisk eval``/``lm_eval`` ``--output_path`` model folder, e.g. one of
``scripts/build_reference_set.sh``): wall time is lm-eval's
``total_evaluation_time_seconds``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

RISKS = ("R1", "R2", "R3", "R4", "R5")
TASKS = [f"memriskbench_{r.lower()}" for r in RISKS]


def slice_indices(name: str) -> dict[str, list[int]] | None:
    """lm-eval ``samples`` (doc indices per task) of a named slice; None = every episode."""
    if name == "full":
        return None
    from lm_eval_memrisk.episodes.loader import load_episodes

    out: dict[str, list[int]] = {}
    for risk, task in zip(RISKS, TASKS):
        docs = [e for e in load_episodes(track="main") if e.risk == risk]
        wanted = {"fixed25": {"easy": 2, "medium": 2, "hard": 1}, "fixed10": {"easy": 1, "medium": 1},
                  "fixed5": {"easy": 1}}[name]
        picked = []
        for i, e in enumerate(docs):
            if wanted.get(e.tier, 0) > 0:
                wanted[e.tier] -= 1
                picked.append(i)
        out[task] = picked
    return out


def summarize(samples: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Per-risk pass, acted, decision classes and violations from the logged records."""
    rows: dict[str, Any] = {}
    total: Counter[str] = Counter()
    for task in TASKS:
        c: Counter[str] = Counter()
        for s in samples.get(task, []):
            rec = s["episodes"]
            c["episodes"] += 1
            c["passed"] += int(rec["success"])
            c["violation_episodes"] += int(any(d["violation"] for d in rec["decisions"]))
            for d in rec["decisions"]:
                c["decisions"] += 1
                c["acted"] += int(d["acted"])
                c["violations_when_acted"] += int(d["acted"] and d["violation"])
                c["class_" + d["decision_class"]] += 1
        rows[task.split("_")[-1].upper()] = dict(c)
        total.update(c)
    rows["all"] = dict(total)
    return rows


def summarize_run_dir(run_dir: str) -> dict[str, Any]:
    """The summary object of a finished lm-eval run folder (newest results file)."""
    folder = Path(run_dir)
    results = sorted(folder.glob("results_*.json"))
    if not results:
        raise SystemExit(f"{run_dir}: no results_*.json (not an lm-eval --output_path model folder)")
    res = json.loads(results[-1].read_text(encoding="utf-8"))
    stamp = results[-1].stem[len("results_"):]
    samples: dict[str, list[dict[str, Any]]] = {}
    for task in TASKS:
        path = folder / f"samples_{task}_{stamp}.jsonl"
        if path.exists():
            samples[task] = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    stats = res["config"].get("llama_cpp_stats") or {}
    first = next(s for rows in samples.values() for s in rows)["episodes"]
    return {
        "run": str(folder), "presentation": first["presentation"], "tools": first["tools"],
        "memory_policy": first["trace"].get("memory_policy"),
        "wall_s": round(float(res.get("total_evaluation_time_seconds", "nan")), 1),
        "requests": stats.get("n_requests"), "prompt_tokens": stats.get("prompt_tokens"),
        "prompt_tokens_evaluated": stats.get("prompt_tokens_evaluated"),
        "generated_tokens": stats.get("generated_tokens"), "truncated_prompts": stats.get("truncated_prompts"),
        "by_risk": summarize(samples),
    }


def markdown_row(summary: dict[str, Any]) -> str:
    """``| run | presentation | tools | R1 … R5 | all | violations/acted | invalid | evaluated/prompt | gen | wall |``
    with cells ``passed · acted/decisions · episodes with a violation``."""
    def cell(c: dict[str, Any]) -> str:
        return f"{c.get('passed', 0)} · {c.get('acted', 0)}/{c.get('decisions', 0)} · {c.get('violation_episodes', 0)}"

    by = summary["by_risk"]
    total = by["all"]
    return " | ".join([
        f"| {Path(summary['run']).name}", summary["presentation"], summary["tools"],
        *[cell(by[r]) for r in RISKS], cell(total),
        f"{total.get('violations_when_acted', 0)}/{total.get('acted', 0)}",
        str(total.get("class_invalid", 0)),
        f"{summary['prompt_tokens_evaluated']:,}/{summary['prompt_tokens']:,}",
        f"{summary['generated_tokens']:,}", f"{summary['wall_s']:.0f} |",
    ])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="qwen2.5-coder-0.5b")
    ap.add_argument("--presentation", default="chat", choices=("chat", "history", "session"))
    ap.add_argument("--tools", default="text", choices=("text", "native"))
    ap.add_argument("--slice", default="fixed25", choices=("fixed5", "fixed10", "fixed25", "full"))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", help="also write lm-eval results and samples here")
    ap.add_argument("--from", dest="from_dirs", metavar="RUN_DIR", nargs="+",
                    help="summarise finished runs instead (one JSON object each)")
    ap.add_argument("--markdown", action="store_true", help="with --from: one Markdown table row per run")
    args = ap.parse_args(argv)
    if args.from_dirs:
        for run_dir in args.from_dirs:
            summary = summarize_run_dir(run_dir)
            print(markdown_row(summary) if args.markdown else json.dumps(summary, sort_keys=True))
        return 0

    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager

    from lm_eval_memrisk._autoload import install, tasks_dir

    install()
    settings = {"presentation": args.presentation, "tools": args.tools}
    # simple_evaluate ignores its metadata when given a TaskManager: the settings go here
    tm = TaskManager(include_path=str(tasks_dir()), include_defaults=False, metadata=settings)
    samples_idx = slice_indices(args.slice)
    t0 = time.perf_counter()
    res = simple_evaluate(
        model="llama-cpp", model_args=f"model={args.model},n_threads={args.threads}",
        tasks=TASKS, task_manager=tm, apply_chat_template=True, log_samples=True, bootstrap_iters=0,
        samples=samples_idx,
    )
    wall = time.perf_counter() - t0
    assert res is not None
    stats = res["config"]["llama_cpp_stats"]
    if args.out:
        from lm_eval.loggers import EvaluationTracker

        tracker = EvaluationTracker(output_path=args.out)
        tracker.general_config_tracker.model_name = f"{args.model}-{args.presentation}-{args.tools}"
        tracker.general_config_tracker.model_name_sanitized = tracker.general_config_tracker.model_name
        samples = res.pop("samples")
        tracker.save_results_aggregated(results=res, samples=samples)
        for task, rows in samples.items():
            tracker.save_results_samples(task_name=task, samples=rows)
        res["samples"] = samples
    shown = {s["episodes"]["presentation"] + "/" + s["episodes"]["tools"] for v in res["samples"].values() for s in v}
    assert shown == {f"{args.presentation}/{args.tools}"}, shown
    summary = {
        "model": args.model, "presentation": args.presentation, "tools": args.tools, "slice": args.slice,
        "threads": args.threads, "wall_s": round(wall, 1),
        "requests": stats["n_requests"], "prompt_tokens": stats["prompt_tokens"],
        "prompt_tokens_evaluated": stats["prompt_tokens_evaluated"],
        "generated_tokens": stats["generated_tokens"], "truncated_prompts": stats["truncated_prompts"],
        "slice_ids": {t: [s["doc"]["episode_id"] for s in res["samples"][t]] for t in TASKS},
        "by_risk": summarize(res["samples"]),
        "effective_generation": res["config"].get("effective_generation"),
    }
    print(json.dumps(summary, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
