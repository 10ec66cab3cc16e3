"""The seed phase, the greedy rule, its fast implementation and determinism."""

import numpy as np
import pytest

from selector.greedy import (
    greedy_order,
    priority_positions,
    reference_greedy_order,
    seed_phase,
    subset_size,
)
from selector.objective import Objective, Weights


def test_subset_size_rounds_half_up_and_keeps_one():
    assert subset_size(0.2, 120) == 24
    assert subset_size(0.25, 10) == 3
    assert subset_size(0.1, 4) == 1
    assert subset_size(1.0, 7) == 7
    for bad in (0.0, -0.1, 1.5):
        with pytest.raises(ValueError):
            subset_size(bad, 10)


def test_seed_phase_takes_the_top_score_per_risk_ties_to_smaller_id():
    codes = np.array([1, 0, 0, 1, 1, 2])
    score = np.array([0.2, 0.5, 0.5, 0.9, 0.9, 0.0])
    assert seed_phase(codes, score) == [1, 3, 5]


def test_priority_positions_break_ties_by_index():
    assert priority_positions(np.array([0.5, 0.9, 0.5, 0.1])).tolist() == [1, 0, 2, 3]


def _random_case(rng, n_ep, n_sys):
    theta = rng.normal(size=n_sys)
    b = rng.normal(size=n_ep)
    passed = rng.random((n_ep, n_sys)) < 1 / (1 + np.exp(-(theta[None] - b[:, None])))
    risks = rng.integers(0, 5, n_ep)
    risks[:5] = np.arange(5)
    return passed, risks, np.round(rng.random(n_ep) * 3, 1), rng.random(n_ep)


@pytest.mark.parametrize("case", range(40))
def test_fast_greedy_equals_the_plain_rule(case):
    rng = np.random.default_rng(case)
    n_sys = int(rng.integers(2, 14)) if case % 4 else int(rng.integers(11, 16))  # some large-q cases
    passed, risks, prio, seeds = _random_case(rng, int(rng.integers(8, 45)), n_sys)
    w = Weights(alpha=float(rng.choice([1.0, 0.5])), gamma=float(rng.choice([0.0, 1.0, 2.0])),
                high_risk_k=int(rng.integers(1, 4)))
    obj = Objective(passed, risks, w)
    fast = greedy_order(obj, risks, seeds, prio, len(risks)).order
    plain = reference_greedy_order(obj, risks, seeds, prio, len(risks))
    assert fast.tolist() == plain.tolist()


def test_greedy_is_deterministic_and_prefix_closed():
    rng = np.random.default_rng(7)
    passed, risks, prio, seeds = _random_case(rng, 60, 6)
    obj = Objective(passed, risks, Weights())
    a = greedy_order(obj, risks, seeds, prio, 30)
    b = greedy_order(obj, risks, seeds, prio, 30)
    c = greedy_order(obj, risks, seeds, prio, 12)
    assert a.order.tolist() == b.order.tolist()
    assert a.order[:12].tolist() == c.order.tolist()
    assert a.n_seeds == 5 and len(set(a.order.tolist())) == 30


def test_greedy_adds_the_episode_that_restores_the_ranking():
    # full-set totals (4, 3, 1): s0 > s1 > s2; the seeds give counts (2, 2, 0); only
    # episode 3 (passed by s0 alone) separates s0 from s1 on the subset.
    passed = np.array([[1, 1, 0], [1, 1, 1], [0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 0, 0]], dtype=bool)
    risks = np.array([0, 1, 1, 1, 1, 1])
    seed_score = np.array([1.0, 0.0, 0.0, 0.0, 0.5, 0.0])  # seeds: ep 0 (risk 0), ep 4 (risk 1)
    obj = Objective(passed, risks, Weights())
    order = greedy_order(obj, risks, seed_score, np.zeros(6), 3).order
    assert order.tolist() == [0, 4, 3]


def test_ties_in_gain_go_to_higher_priority_then_smaller_index():
    passed = np.array([[1, 0], [1, 0], [1, 0], [1, 0]], dtype=bool)  # every candidate is equal
    risks = np.zeros(4, dtype=np.int64)
    obj = Objective(passed, risks, Weights())
    assert greedy_order(obj, risks, np.zeros(4), np.array([0.0, 0.2, 0.9, 0.2]), 4).order.tolist() == [0, 2, 1, 3]


def test_fewer_slots_than_risks_is_an_error_not_a_dropped_risk():
    passed = np.array([[1, 0], [0, 1], [1, 1]], dtype=bool)
    risks = np.array([0, 1, 2])
    obj = Objective(passed, risks, Weights())
    with pytest.raises(ValueError, match="cannot cover all 3 risk types"):
        greedy_order(obj, risks, np.zeros(3), np.zeros(3), 2)
    free = Objective(passed, risks, Weights(beta=0.0))  # coverage ignored: explicit, allowed
    res = greedy_order(free, risks, np.zeros(3), np.zeros(3), 2)
    assert len(res.order) == 2 and res.n_seeds == 0


def test_beta_switches_the_seed_phase():
    rng = np.random.default_rng(4)
    passed = rng.random((40, 5)) < 0.5
    risks = np.repeat(np.arange(5), 8)
    prio = rng.random(40)
    with_cover = greedy_order(Objective(passed, risks, Weights(beta=1.0)), risks, prio, prio, 8)
    without = greedy_order(Objective(passed, risks, Weights(beta=0.0)), risks, prio, prio, 8)
    assert with_cover.n_seeds == 5 and set(risks[with_cover.order[:5]]) == set(range(5))
    assert without.n_seeds == 0 and with_cover.order.tolist() != without.order.tolist()
