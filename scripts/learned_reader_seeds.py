"""The learned surface reader on dataset v7 over training seeds (docs/datasets.md,
"Dataset v7"): trained on each of seeds 4242-4246, tested on the shipped seed and seeds
1-3; per pairing main passed, R3 passed and the most passed of any risk, then how many
pairings meet issue 26's goals (main at most 60%, every risk at most 75%).  About one
minute on 2 cores.

    PYTHONPATH=. python scripts/learned_reader_seeds.py
"""

from __future__ import annotations

from lm_eval_memrisk.audit.learned import DEFAULT_TRAIN_SEED, reader, train
from lm_eval_memrisk.audit.run import passes, tally
from lm_eval_memrisk.episodes.risks import main_risks
from lm_eval_memrisk.generator import generate
from lm_eval_memrisk.generator.seeding import DEFAULT_SEED

TEST_SEEDS = (DEFAULT_SEED, 1, 2, 3)
TRAIN_SEEDS = tuple(range(DEFAULT_TRAIN_SEED, DEFAULT_TRAIN_SEED + 5))
MAIN_GOAL, RISK_GOAL = 0.60, 0.75


def main() -> None:
    tests = {seed: generate(seed, version="v7") for seed in TEST_SEEDS}
    risks = main_risks()
    print("| trained on | " + " | ".join(f"tested on {s}: main (R3, most of a risk)" for s in TEST_SEEDS) + " |")
    print("|---|" + "---|" * len(TEST_SEEDS))
    met = total = 0
    for train_seed in TRAIN_SEEDS:
        agent = reader(train(generate(train_seed, version="v7")))
        cells = []
        for seed in TEST_SEEDS:
            row = tally(tests[seed], lambda ep: passes(agent, ep))
            most = max(row[r]["passed"] for r in risks)
            cells.append(f"{row['main']['passed']} ({row['R3']['passed']}, {most})")
            total += 1
            met += row["main"]["pass_rate"] <= MAIN_GOAL and all(row[r]["pass_rate"] <= RISK_GOAL for r in risks)
        print(f"| {train_seed} | " + " | ".join(cells) + " |")
    print(f"\npairings meeting both goals: {met} of {total}")


if __name__ == "__main__":
    main()
