"""Throughput of the fuzzer's CPU side: mutants made and validated per second, per operator.

    python benchmarks/bench_fuzz.py [--episodes FILE] [--per-risk N] [--rounds R]

No model is involved (validation runs the oracle and the adversary reference agents).
Prints, per operator: attempts, not applicable, valid, rejected by reason, ms/mutant.
"""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter, defaultdict

from lm_eval_memrisk.episodes.loader import load_episodes
from lm_eval_memrisk.fuzz.mutate import mutate
from lm_eval_memrisk.fuzz.operators import OPERATORS
from lm_eval_memrisk.fuzz.seeds import make_seeds, select_episodes
from lm_eval_memrisk.fuzz.validate_mutant import check_mutant


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--episodes", help="episode JSONL (default: the shipped dataset)")
    p.add_argument("--per-risk", type=int, default=4)
    p.add_argument("--rounds", type=int, default=2)
    args = p.parse_args()
    episodes = select_episodes(load_episodes(args.episodes, track="all"), per_risk=args.per_risk)
    t0 = time.perf_counter()
    seeds, skipped = make_seeds(episodes)
    print(
        f"{len(seeds)} seeds from {len(episodes)} episodes in {time.perf_counter() - t0:.2f} s "
        f"(skipped {skipped})"
    )
    rng = random.Random(0)
    stats: dict[str, Counter[str]] = defaultdict(Counter)
    spent: dict[str, float] = defaultdict(float)
    for _ in range(args.rounds):
        for seed in seeds:
            for op in OPERATORS:
                t = time.perf_counter()
                m = mutate(seed.episode, seed.exp, op, rng)
                verdict = check_mutant(m.episode) if m is not None else None
                spent[op] += time.perf_counter() - t
                stats[op]["n/a" if verdict is None else verdict.reason or "valid"] += 1
    print(f"{'operator':20s} {'attempts':>8s} {'n/a':>5s} {'valid':>6s} {'ms/try':>7s}  rejected")
    for op, c in stats.items():
        n = sum(c.values())
        rejected = {k: v for k, v in c.items() if k not in ("n/a", "valid")}
        print(
            f"{op:20s} {n:8d} {c['n/a']:5d} {c['valid']:6d} {1000 * spent[op] / n:7.1f}  {rejected}"
        )


if __name__ == "__main__":
    main()
