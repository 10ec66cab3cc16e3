"""Scorer throughput: score all 120 oracle traces (goal: well under a second).

Run:  python benchmarks/bench_scorer.py [--repeats 20]
"""

from __future__ import annotations

import argparse
import statistics
import time

from lm_eval_memrisk.agents import get_agent
from lm_eval_memrisk.loader import load_episodes
from lm_eval_memrisk.runner import run_episode
from lm_eval_memrisk.scorer import score


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=20)
    args = ap.parse_args()
    episodes = load_episodes()
    oracle = get_agent("oracle")
    t0 = time.perf_counter()
    traces = [run_episode(e, oracle) for e in episodes]
    run_s = time.perf_counter() - t0
    times = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        results = [score(e, t) for e, t in zip(episodes, traces)]
        times.append(time.perf_counter() - t0)
    assert all(r.success for r in results), "the oracle must pass every episode"
    med = statistics.median(times)
    n_checks = sum(len(r.checks) for r in results)
    print(f"episodes {len(episodes)}, checks {n_checks}; building oracle traces: {run_s:.3f} s")
    print(f"scoring all {len(episodes)} traces: median {med * 1000:.1f} ms over {args.repeats} runs "
          f"({len(episodes) / med:,.0f} episodes/s, {n_checks / med:,.0f} checks/s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
