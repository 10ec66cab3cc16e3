"""The baselines: seeded sampling, rankings and deterministic k-medoids."""

import numpy as np

from selector import baselines as bl
from selector.features import FEATURE_NAMES


def test_random_subsets_are_seeded_nested_and_sized():
    a = bl.random_subsets(50, [5, 10], bl.seeded_rng(0, "Random", 3))
    b = bl.random_subsets(50, [5, 10], bl.seeded_rng(0, "Random", 3))
    c = bl.random_subsets(50, [5, 10], bl.seeded_rng(0, "Random", 4))
    assert [x.tolist() for x in a] == [x.tolist() for x in b]
    assert a[1].tolist() != c[1].tolist()
    assert len(a[0]) == 5 and len(set(a[1].tolist())) == 10 and set(a[0].tolist()) <= set(a[1].tolist())


def test_seed_streams_differ_by_method_and_base_seed():
    def draw(seed, method):
        return bl.seeded_rng(seed, method, 0).random()

    assert len({draw(0, "Random"), draw(0, "Stratified"), draw(1, "Random")}) == 3


def test_stratified_allocation_largest_remainder():
    assert bl.stratified_allocation(np.array([24, 24, 24, 24, 24]), 24).tolist() == [5, 5, 5, 5, 4]
    assert bl.stratified_allocation(np.array([10, 5, 5]), 4).tolist() == [2, 1, 1]
    assert bl.stratified_allocation(np.array([3, 1]), 4).tolist() == [3, 1]


def test_stratified_subsets_follow_the_allocation():
    codes = np.repeat(np.arange(5), 24)
    (sub,) = bl.stratified_subsets(codes, [24], bl.seeded_rng(0, "Stratified", 0))
    assert np.bincount(codes[sub], minlength=5).tolist() == [5, 5, 5, 5, 4]


def test_difficulty_and_disagreement_orders():
    x = np.zeros((4, 12))
    col = FEATURE_NAMES.index
    x[:, col("fail_rate")] = [0.2, 0.8, 0.8, 0.0]
    x[:, col("tier")] = [2, 0, 1, 2]
    assert bl.difficulty_order(x).tolist() == [2, 1, 0, 3]
    passed = np.array([[1, 1, 1, 1], [1, 1, 0, 0], [1, 0, 0, 0], [0, 0, 1, 1]], dtype=bool)
    assert bl.disagreement_order(passed).tolist() == [1, 3, 2, 0]


def test_kmedoids_finds_two_separated_clusters():
    rng = np.random.default_rng(0)
    centres = np.array([[0.0, 0.0], [10.0, 10.0]])
    x = np.concatenate([centres, centres[0] + rng.normal(0, 0.3, (20, 2)), centres[1] + rng.normal(0, 0.3, (20, 2))])
    (sub,) = bl.clustering_subsets(x, [2])
    assert sorted((x[sub] > 5).all(axis=1).tolist()) == [False, True]


def test_fasterpam_loss_is_no_worse_than_any_single_swap():
    x = np.random.default_rng(3).normal(size=(60, 4))
    diss = bl.distances(x)
    med = bl.kmedoids_subset(diss, 5)
    loss = bl.medoid_loss(diss, med)
    for out in med:  # FasterPAM stops at a swap-local optimum
        for inn in range(60):
            if inn in med:
                continue
            trial = np.sort(np.r_[med[med != out], inn])
            assert bl.medoid_loss(diss, trial) >= loss - 1e-9


def test_clustering_subsets_are_deterministic_and_distinct():
    x = np.random.default_rng(1).normal(size=(200, 12))
    x[:20] = x[20:40]  # duplicate points
    a = bl.clustering_subsets(x, [40, 60, 100])
    b = bl.clustering_subsets(x, [40, 60, 100])
    assert [s.tolist() for s in a] == [s.tolist() for s in b]
    assert [len(np.unique(s)) for s in a] == [40, 60, 100]
