"""Scorer throughput on the 120 oracle traces (goal: >= 10,000 episode-traces/s).

Three numbers: *cold* (first scoring: every cache empty, the per-episode value forms
are built), *fresh replies* (the per-episode forms are kept, the canonical form of
every reply is recomputed: the steady state of a run, where each trace is new) and
*warm* (everything cached).

Run:  python benchmarks/bench_scorer.py [--repeats 20]
"""

from __future__ import annotations

import argparse
import statistics
import time

from lm_eval_memrisk.episodes.loader import load_episodes
from lm_eval_memrisk.running.agent_registry import get_agent
from lm_eval_memrisk.running.runner import run_episode
from lm_eval_memrisk.scoring import checks as checks_module
from lm_eval_memrisk.scoring import equivalence
from lm_eval_memrisk.scoring.scorer import ScoreResult, score


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=20)
    args = ap.parse_args()
    episodes = load_episodes()
    oracle = get_agent("oracle")
    t0 = time.perf_counter()
    traces = [run_episode(e, oracle) for e in episodes]
    run_s = time.perf_counter() - t0
    def timed(clear_episode_forms: bool, clear_replies: bool) -> tuple[float, list[ScoreResult]]:
        if clear_episode_forms:
            checks_module._INDEX.clear()
            equivalence._forms_cached.cache_clear()
        if clear_replies:
            equivalence.canon.cache_clear()
        t0 = time.perf_counter()
        results = [score(e, t) for e, t in zip(episodes, traces)]
        return time.perf_counter() - t0, results

    cold, results = timed(True, True)
    assert all(r.success for r in results), "the oracle must pass every episode"
    fresh = statistics.median(timed(False, True)[0] for _ in range(args.repeats))
    warm = statistics.median(timed(False, False)[0] for _ in range(args.repeats))
    n, n_checks = len(episodes), sum(len(r.checks) for r in results)
    print(f"episodes {n}, checks {n_checks}; building oracle traces: {run_s:.3f} s")
    for name, secs in (("cold (first scoring)", cold), ("fresh replies (median)", fresh), ("warm (median)", warm)):
        print(f"{name:<24} {secs * 1000:7.1f} ms  {n / secs:>9,.0f} episode-traces/s  {n_checks / secs:>9,.0f} checks/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
