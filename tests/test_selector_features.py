"""The 12-dimensional feature vector, its families, and leave-one-system-out features."""

from pathlib import Path

import numpy as np
import pytest

from lm_eval_memrisk.episodes.loader import load_episodes
from selector.features import (
    FAMILIES,
    FAMILY_NAMES,
    FEATURE_NAMES,
    feature_matrix,
    loso_feature_matrices,
    outcome_features,
    priority,
    seed_score,
)
from selector.io import load_runs

SAMPLES = Path(__file__).parent / "data" / "samples"
RUNS = [SAMPLES / f"run_{s}" for s in ("alpha", "beta", "gamma", "omega")]
EPISODES = SAMPLES / "episodes.jsonl"  # the runs' dataset (make_samples.py)


@pytest.fixture(scope="module")
def matrix():
    return load_runs(RUNS, episodes=[EPISODES])


def test_twelve_features_in_four_families():
    assert len(FEATURE_NAMES) == 12
    assert FAMILY_NAMES == ("difficulty", "discrimination", "failure_density", "complexity")
    assert sorted(i for idx in FAMILIES.values() for i in idx) == list(range(12))


def test_outcome_features_by_hand():
    passed = np.array([[1, 1, 0, 0], [1, 1, 1, 1], [1, 0, 0, 0]], dtype=bool)
    score = np.array([[1, 1, 0.5, 0], [1, 1, 1, 1], [1, 0, 0, 0]])
    f = outcome_features(passed, score)
    assert f[:, 0] == pytest.approx([0.5, 0.0, np.sqrt(0.25 * 0.75)])  # pass spread
    assert f[1, 1] == 0.0  # everyone passes: no correlation
    assert f[2, 1] > 0  # only the strongest system passes
    assert f[:, 2] == pytest.approx([0.5, 0.0, 0.75])  # fail rate
    assert f[:, 3] == pytest.approx([1 - 2.5 / 4, 0.0, 0.75])  # check-fail rate


def test_feature_matrix_columns(matrix):
    x = feature_matrix(matrix)
    assert x.shape == (15, 12)
    assert x[:, FEATURE_NAMES.index("tier")].tolist() == matrix.tier_codes.tolist()
    # structural features come from the verified episodes themselves
    episodes = {e.id: e for e in load_episodes(EPISODES)}
    assert x[:, FEATURE_NAMES.index("n_constraints")].tolist() == [
        float(len(episodes[e].constraints)) for e in matrix.episode_ids]
    assert x[:, FEATURE_NAMES.index("n_memories")].tolist() == [
        float(len(episodes[e].memory_items)) for e in matrix.episode_ids]


def test_loso_features_ignore_the_held_out_system(matrix):
    loso = loso_feature_matrices(matrix)
    changed = matrix.with_systems(range(4))
    passed = changed.passed.copy()
    passed[:, 2] = ~passed[:, 2]
    import dataclasses

    changed = dataclasses.replace(changed, passed=passed)
    assert np.array_equal(loso_feature_matrices(changed)[2], loso[2])
    assert not np.array_equal(loso_feature_matrices(changed)[0], loso[0])


def test_seed_score_and_priority_follow_the_active_families(matrix):
    x = feature_matrix(matrix)
    assert not np.array_equal(seed_score(x), seed_score(x, ["difficulty", "complexity"]))
    assert np.array_equal(seed_score(x, ["difficulty", "complexity"]), priority(x, ["difficulty", "complexity"]))
    assert priority(x).max() <= 4.0 and priority(x).min() >= 0.0
