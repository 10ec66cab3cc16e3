"""Each part of Psi and each evaluation metric on small hand-computed matrices."""

import numpy as np
import pytest

from selector.objective import (
    Objective,
    Weights,
    average_ranks,
    bottom_k_membership,
    fail_coverage,
    high_risk_recall,
    risk_coverage,
    spearman,
)

# 4 episodes x 3 systems; system totals: s0 = 4, s1 = 2, s2 = 1 -> ranking s0 > s1 > s2
PASSED = np.array([[1, 1, 1], [1, 1, 0], [1, 0, 0], [1, 0, 0]], dtype=bool)
RISKS = np.array([0, 0, 1, 2])


def test_average_ranks_give_ties_the_mean_rank():
    assert average_ranks(np.array([3, 1, 3, 2])).tolist() == [3.5, 1.0, 3.5, 2.0]
    assert average_ranks(np.array([[1, 1], [2, 1]])).tolist() == [[1.5, 1.5], [2.0, 1.0]]


def test_spearman_hand_values():
    assert spearman(np.array([1, 2, 3]), np.array([10, 20, 30])) == pytest.approx(1.0)
    assert spearman(np.array([1, 2, 3]), np.array([3, 2, 1])) == pytest.approx(-1.0)
    # ranks (1.5, 1.5, 3) vs (1, 2, 3): 1.5 / sqrt(1.5 * 2)
    assert spearman(np.array([1, 1, 2]), np.array([1, 2, 3])) == pytest.approx(1.5 / np.sqrt(3.0))


def test_spearman_of_a_constant_ranking_is_zero():
    assert spearman(np.array([2, 2, 2]), np.array([1, 2, 3])) == 0.0
    assert spearman(np.array([1, 2, 3]), np.array([0, 0, 0])) == 0.0


def test_bottom_k_membership_shares_free_slots_among_ties():
    assert bottom_k_membership(np.array([5, 1, 1, 7]), 2).tolist() == [0, 1, 1, 0]
    assert bottom_k_membership(np.array([1, 2, 2, 3]), 2).tolist() == [1, 0.5, 0.5, 0]
    assert bottom_k_membership(np.array([5, 1, 1, 1]), 2) == pytest.approx([0, 2 / 3, 2 / 3, 2 / 3])


def test_high_risk_recall_is_fuzzy_overlap_over_k():
    ref = np.array([0.0, 1.0, 1.0, 0.0])
    assert high_risk_recall(np.array([0.0, 1.0, 1.0, 0.0]), ref, 2) == 1.0
    assert high_risk_recall(np.array([1.0, 1.0, 0.0, 0.0]), ref, 2) == 0.5
    assert high_risk_recall(np.array([0.0, 0.5, 0.5, 1.0]), ref, 2) == 0.5


def test_fail_coverage_counts_failing_pairs():
    fails = (~PASSED).sum(axis=1).astype(float)  # [0, 1, 2, 2], total 5
    masks = np.array([[0, 0, 1, 1], [1, 1, 0, 0], [1, 1, 1, 1]], dtype=bool)
    assert fail_coverage(masks, fails).tolist() == pytest.approx([4 / 5, 1 / 5, 1.0])
    assert fail_coverage(masks, np.zeros(4)).tolist() == [1.0, 1.0, 1.0]  # nothing to lose


def test_risk_coverage_is_fraction_of_risks_present():
    onehot = np.eye(3)[RISKS]
    masks = np.array([[1, 1, 0, 0], [1, 0, 1, 0], [0, 0, 1, 1]], dtype=bool)
    assert risk_coverage(masks, onehot).tolist() == pytest.approx([1 / 3, 2 / 3, 2 / 3])


def test_objective_metrics_on_hand_subsets():
    obj = Objective(PASSED, RISKS, Weights())
    masks = np.array([
        [1, 1, 1, 1],  # the full set
        [0, 1, 0, 0],  # counts (1, 1, 0): ranks (2.5, 2.5, 1) vs (3, 2, 1)
        [0, 0, 1, 1],  # counts (2, 0, 0): s1 and s2 tied at the bottom
    ], dtype=bool)
    vals = obj.metrics(masks)
    assert vals["spearman"] == pytest.approx([1.0, np.sqrt(3) / 2, np.sqrt(3) / 2])
    assert vals["fail_coverage"] == pytest.approx([1.0, 1 / 5, 4 / 5])
    assert vals["risk_coverage"] == pytest.approx([1.0, 1 / 3, 2 / 3])
    # bottom-2 of the full set is {s1, s2}; subset 2 flags s2 fully and s0/s1 half each
    assert vals["high_risk"] == pytest.approx([1.0, 0.75, 1.0])


def test_psi_weights_each_term():
    masks = np.array([[0, 1, 0, 0], [0, 0, 1, 1]], dtype=bool)
    vals = Objective(PASSED, RISKS, Weights()).metrics(masks)
    for w in (Weights(1, 1, 1), Weights(2.0, 0.5, 0.0), Weights(0.0, 0.0, 3.0)):
        psi = Objective(PASSED, RISKS, w).psi(masks)
        want = w.alpha * vals["spearman"] + w.beta * vals["risk_coverage"] + w.gamma * vals["high_risk"]
        assert psi == pytest.approx(want)


def test_empty_subset_has_zero_rho():
    obj = Objective(PASSED, RISKS, Weights())
    assert obj.metrics(np.zeros((1, 4), dtype=bool))["spearman"][0] == 0.0


def test_high_risk_k_is_clamped_below_the_number_of_systems():
    assert Weights(high_risk_k=5).effective_k(3) == 2
    assert Objective(PASSED, RISKS, Weights(high_risk_k=9)).k == 2
    with pytest.raises(ValueError):
        Objective(PASSED[:, :1], RISKS, Weights())
