"""Out-of-sample selector evaluation on planted-weakness systems."""

from __future__ import annotations

import numpy as np

from lm_eval_memrisk.loader import load_episodes
from selector.evaluate import METHODS, Settings
from selector.out_of_sample import evaluate, expected_pass, outcomes

EPISODES = load_episodes()


def test_known_expected_pass_matches_fresh_runs():
    system = "weak:churn1+decay4:p=0.5"
    mats = [outcomes(EPISODES, [system], s).passed for s in range(31)]
    assert not np.array_equal(mats[0], mats[1])  # another seed gives fresh outcomes
    assert np.array_equal(mats[0], outcomes(EPISODES, [system], 0).passed)  # same seed, same outcomes
    runs = [m.sum() for m in mats[1:]]
    expected = expected_pass(system, EPISODES)
    se = np.std(runs, ddof=1) / np.sqrt(len(runs))
    assert abs(np.mean(runs) - expected) < 4 * se + 0.5, (np.mean(runs), expected)


def test_evaluate_scores_every_method_out_of_sample():
    systems = ("weak:churn1:p=0.6", "weak:decay4:p=0.7", "weak:scope-bleed:p=0.7", "stale", "leaky")
    r = evaluate(EPISODES, systems, fresh_seeds=(1, 2), settings=Settings(bootstrap=20, progress=False))
    methods = {row["method"] for row in r["comparison"]}
    assert set(METHODS) <= methods
    assert r["known_high_risk"] == ["stale", "leaky"] and r["high_risk_defined"]
    for row in r["comparison"]:
        cell = row["spearman"]
        value = cell.get("point", cell.get("mean"))
        assert value is not None and -1.0 <= value <= 1.0
    assert [h["system"] for h in r["held_out"]] == list(systems)
