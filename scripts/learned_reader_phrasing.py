"""The learned surface reader on dataset v7 with and without counterbalanced phrasing
(docs/datasets.md, "Dataset v7"): trained on seed 4242 of each kind of build, tested on
the shipped seed and seeds 1-3 of each kind.  About 2 minutes on 2 cores.

    PYTHONPATH=. python scripts/learned_reader_phrasing.py
"""

from __future__ import annotations

from lm_eval_memrisk.audit.learned import DEFAULT_TRAIN_SEED, reader, train
from lm_eval_memrisk.audit.run import passes, tally
from lm_eval_memrisk.episodes.records import Episode
from lm_eval_memrisk.generator import generate
from lm_eval_memrisk.generator.seeding import DEFAULT_SEED

SEEDS = (DEFAULT_SEED, 1, 2, 3)
KINDS = {"random": False, "counterbalanced": True}


def built(seed: int, kind: str) -> list[Episode]:
    return generate(seed, version="v7", counterbalance=KINDS[kind])


def main() -> None:
    tests = {(seed, kind): built(seed, kind) for seed in SEEDS for kind in KINDS}
    print("| trained on | tested on | main passed, " + " / ".join(map(str, SEEDS)) + " |")
    print("|---|---|---|")
    for trained in KINDS:
        agent = reader(train(built(DEFAULT_TRAIN_SEED, trained)))
        for tested in KINDS:
            row = [tally(tests[(s, tested)], lambda ep: passes(agent, ep))["main"]["passed"] for s in SEEDS]
            print(f"| {trained} | {tested} | {' / '.join(map(str, row))} |")


if __name__ == "__main__":
    main()
