"""The benchmark on the embedded model through lm-eval, with and without
prefix-aware request ordering (issue: wall time, prompt tokens, prompt tokens
actually evaluated, generated tokens, tokens/s, episodes/min).

    python benchmarks/bench_full_run.py [--tasks memriskbench] [--model smollm2-135m] [--threads 2]
        [--limit N] [--orders sorted,doc]

Prints one line per ordering and a JSON summary.  Outputs must be identical in both
orders (the model resets its cache per request set and uses a fixed seed); the script
checks it.
"""

from __future__ import annotations

import argparse
import json
import time

from lm_eval import simple_evaluate
from lm_eval.tasks import TaskManager

from lm_eval_memrisk._autoload import install, tasks_dir


def run(tasks: list[str], model: str, threads: int, prefix_sort: bool, limit: int | None) -> dict:
    install()
    tm = TaskManager(include_path=str(tasks_dir()), include_defaults=False)
    t0 = time.perf_counter()
    res = simple_evaluate(
        model="llama-cpp", model_args=f"model={model},n_threads={threads},prefix_sort={prefix_sort}",
        tasks=tasks, task_manager=tm, apply_chat_template=True, log_samples=True,
        bootstrap_iters=0, limit=limit,
    )
    wall = time.perf_counter() - t0
    stats = res["config"]["llama_cpp_stats"]
    samples = res["samples"]
    n_eps = sum(len(v) for v in samples.values())
    replies = {s["doc"]["episode_id"]: s["resps"] for v in samples.values() for s in v}
    gen_wall = stats["wall_time_s"]
    return {
        "prefix_sort": prefix_sort, "episodes": n_eps, "requests": stats["n_requests"],
        "wall_s": round(wall, 1), "generate_wall_s": round(gen_wall, 1),
        "prompt_tokens": stats["prompt_tokens"], "prompt_tokens_evaluated": stats["prompt_tokens_evaluated"],
        "generated_tokens": stats["generated_tokens"],
        "tokens_per_s": round((stats["prompt_tokens_evaluated"] + stats["generated_tokens"]) / gen_wall, 1),
        "episodes_per_min": round(n_eps / (wall / 60), 2),
        "build": res["config"].get("llama_cpp_build", ""), "n_threads": threads, "_replies": replies,
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", default="memriskbench")
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--limit", type=int, default=None, help="episodes per task (default: all)")
    ap.add_argument("--orders", default="sorted,doc")
    args = ap.parse_args()
    rows = []
    for order in args.orders.split(","):
        row = run(args.tasks.split(","), args.model, args.threads, order == "sorted", args.limit)
        rows.append(row)
        print(f"{order:>6}: {row['episodes']} episodes, {row['requests']} requests, wall {row['wall_s']} s, "
              f"prompt tokens {row['prompt_tokens']} (evaluated {row['prompt_tokens_evaluated']}), "
              f"generated {row['generated_tokens']}, {row['tokens_per_s']} tok/s, "
              f"{row['episodes_per_min']} episodes/min")
    if len(rows) == 2:
        same = rows[0]["_replies"] == rows[1]["_replies"]
        print(f"identical replies in both orders: {same}; wall ratio doc/sorted: "
              f"{rows[1]['wall_s'] / rows[0]['wall_s']:.2f}")
    print(json.dumps([{k: v for k, v in r.items() if not k.startswith("_")} for r in rows], indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
