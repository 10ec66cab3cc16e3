"""Out-of-sample selector evaluation on planted-weakness systems."""

from __future__ import annotations

import json

import numpy as np

from lm_eval_memrisk.episodes.loader import load_episodes
from selector.evaluate import METHODS, Settings
from selector.out_of_sample import evaluate, expected_pass, outcomes
from selector.report import clean

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


def _renamed(m, name):
    from dataclasses import replace

    return replace(m, systems=(name,))


def test_real_systems_join_with_an_estimated_truth_from_the_fresh_runs_only():
    from selector.out_of_sample import RealRuns

    systems = ("weak:churn1:p=0.6", "weak:decay4:p=0.7", "stale", "leaky")
    # stand-in for a sampled model: a planted profile's outcomes under seeds 7 (selection) and 8 (fresh)
    sampled = "weak:scope-bleed+revoked-blind+gap6:p=0.6"
    sel = _renamed(outcomes(EPISODES, [sampled], 7), "model@T0.7")
    fresh = _renamed(outcomes(EPISODES, [sampled], 8), "model@T0.7")
    def run() -> dict:
        return evaluate(EPISODES, systems, fresh_seeds=(2,), selection_seed=1,
                        real=RealRuns(sel, (fresh,)), settings=Settings(bootstrap=10, progress=False))

    r = run()
    assert json.dumps(clean(r), sort_keys=True) == json.dumps(clean(run()), sort_keys=True)  # deterministic
    assert r["systems"] == [*systems, "model@T0.7"] and r["estimated_systems"] == ["model@T0.7"]
    assert r["selection_seed"] == 1
    assert r["known_expected_pass"]["model@T0.7"] == float(fresh.passed.sum())
    assert r["known_expected_pass"]["model@T0.7"] != float(sel.passed.sum())  # the selection run is not the truth
    assert [h["system"] for h in r["held_out"]][-1] == "model@T0.7"


def test_real_systems_must_line_up_with_the_fresh_seeds_and_episodes():
    import pytest

    from selector.out_of_sample import RealRuns

    one = _renamed(outcomes(EPISODES, ["stale"], 0), "m")
    with pytest.raises(ValueError, match="1 fresh run"):
        evaluate(EPISODES, ("leaky", "stale"), fresh_seeds=(1, 2), real=RealRuns(one, (one,)),
                 settings=Settings(bootstrap=5, progress=False))
    short = _renamed(outcomes(EPISODES[:60], ["stale"], 0), "m")
    with pytest.raises(ValueError, match="same main-track episodes"):
        evaluate(EPISODES, ("leaky", "stale"), fresh_seeds=(1,), real=RealRuns(one, (short,)),
                 settings=Settings(bootstrap=5, progress=False))


def test_real_systems_must_be_run_on_the_planted_systems_dataset():
    """A v2 run joined to planted systems on v3 shares episode ids but not episodes."""
    import dataclasses

    import pytest

    from selector.out_of_sample import RealRuns

    one = dataclasses.replace(_renamed(outcomes(EPISODES, ["stale"], 0), "m"), dataset_hash="sha256:v2run")
    with pytest.raises(ValueError, match="run on dataset sha256:v2run"):
        evaluate(EPISODES, ("leaky", "stale"), fresh_seeds=(1,), real=RealRuns(one, (one,)),
                 settings=Settings(bootstrap=5, progress=False), dataset_hash="sha256:v3file")
