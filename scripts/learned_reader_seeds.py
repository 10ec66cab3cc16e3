"""The learned surface reader over training seeds (docs/datasets.md, "Dataset v7" and
"Dataset v8"): trained on each of seeds 4242-4246 (``--train-seeds N``: the first N from
4242), tested on the shipped seed and seeds 1-3 of the generator's ``--version`` (the default); per
pairing main passed, R3 passed and the most passed of any risk, then how many pairings
meet issue 26's goals (main at most 60%, every risk at most 75%) and the means of main and
R3.  About one minute on 2 cores per five training seeds.

    PYTHONPATH=. python scripts/learned_reader_seeds.py [--version v7] [--train-seeds 10]
"""

from __future__ import annotations

import argparse

from lm_eval_memrisk.audit.learned import DEFAULT_TRAIN_SEED, reader, train
from lm_eval_memrisk.audit.run import passes, tally
from lm_eval_memrisk.episodes.risks import main_risks
from lm_eval_memrisk.generator import generate
from lm_eval_memrisk.generator.build import DEFAULT_VERSION
from lm_eval_memrisk.generator.seeding import DEFAULT_SEED

TEST_SEEDS = (DEFAULT_SEED, 1, 2, 3)
MAIN_GOAL, RISK_GOAL = 0.60, 0.75


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default=DEFAULT_VERSION, help=f"generator version (default {DEFAULT_VERSION})")
    parser.add_argument("--train-seeds", type=int, default=5, help="training seeds from 4242 (default 5)")
    args = parser.parse_args()
    tests = {seed: generate(seed, version=args.version) for seed in TEST_SEEDS}
    risks = main_risks()
    print("| trained on | " + " | ".join(f"tested on {s}: main (R3, most of a risk)" for s in TEST_SEEDS) + " |")
    print("|---|" + "---|" * len(TEST_SEEDS))
    met, mains, r3s = 0, [], []
    for train_seed in range(DEFAULT_TRAIN_SEED, DEFAULT_TRAIN_SEED + args.train_seeds):
        agent = reader(train(generate(train_seed, version=args.version)))
        cells = []
        for seed in TEST_SEEDS:
            row = tally(tests[seed], lambda ep: passes(agent, ep))
            most = max(row[r]["passed"] for r in risks)
            cells.append(f"{row['main']['passed']} ({row['R3']['passed']}, {most})")
            mains.append(row["main"]["passed"])
            r3s.append(row["R3"]["passed"])
            met += row["main"]["pass_rate"] <= MAIN_GOAL and all(row[r]["pass_rate"] <= RISK_GOAL for r in risks)
        print(f"| {train_seed} | " + " | ".join(cells) + " |")
    n = len(mains)
    print(f"\npairings meeting both goals: {met} of {n}; main mean {sum(mains) / n:.1f}, R3 mean {sum(r3s) / n:.1f}")


if __name__ == "__main__":
    main()
