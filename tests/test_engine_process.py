"""The Mondrian process law of the engine's kernels (MF paper, Algorithms 1-4).

Every test draws many trees from fixed seeds and compares the empirical law with the
exact one through a goodness-of-fit test at a small level, so the outcome is
deterministic and a real deviation is caught.
"""

import numpy as np
import pytest
from scipy import stats

from mondrianlearn.engine.random import (
    choose_proportional,
    exponential,
    poisson,
    spawn_states,
    uniform,
)
from mondrianlearn.engine.tree import LEAF, META_ROOT, node_boxes

ALPHA = 1e-3
N_TREES = 2000

# Two opposite corners fix the box [0, 1] x [0, 2] x [0, 0.5]; interior points do
# not change it. Linear dimension 3.5.
LOWER = np.array([0.0, 0.0, 0.0])
UPPER = np.array([1.0, 2.0, 0.5])
RANGES = UPPER - LOWER
LINEAR_DIMENSION = RANGES.sum()


def box_points():
    rng = np.random.RandomState(0)
    interior = LOWER + rng.uniform(size=(6, 3)) * RANGES
    return np.vstack([LOWER, UPPER, interior])


def root_splits(grow_batch, streams, *, lifetime=np.inf, seed=0):
    X = box_points()
    keys = np.zeros(X.shape[0], dtype=np.int64)
    out = []
    for rng in streams(seed, N_TREES):
        tree = grow_batch(X, keys, rng, lifetime=lifetime, use_pausing=False)
        out.append((tree, int(tree.meta[META_ROOT])))
    return X, out


def test_root_split_time_is_exponential_in_linear_dimension(grow_batch, streams):
    _, trees = root_splits(grow_batch, streams)
    times = np.array([tree.time[root] for tree, root in trees])
    assert np.all(np.isfinite(times))
    result = stats.kstest(times, stats.expon(scale=1.0 / LINEAR_DIMENSION).cdf)
    assert result.pvalue > ALPHA
    # The KS test would also accept a slightly wrong rate; the mean pins it down.
    assert abs(times.mean() * LINEAR_DIMENSION - 1.0) < 4.0 / np.sqrt(N_TREES)


def test_split_dimension_frequencies_are_proportional_to_ranges(grow_batch, streams):
    _, trees = root_splits(grow_batch, streams, seed=1)
    features = np.array([tree.feature[root] for tree, root in trees])
    observed = np.bincount(features, minlength=3)
    expected = N_TREES * RANGES / LINEAR_DIMENSION
    assert stats.chisquare(observed, expected).pvalue > ALPHA


def test_threshold_is_uniform_on_the_range(grow_batch, streams):
    _, trees = root_splits(grow_batch, streams, seed=2)
    positions = np.array([
        (tree.threshold[root] - LOWER[tree.feature[root]]) / RANGES[tree.feature[root]]
        for tree, root in trees])
    assert np.all((positions >= 0) & (positions <= 1))
    assert stats.kstest(positions, "uniform").pvalue > ALPHA


def test_children_restart_the_process_on_their_own_box(grow_batch, streams):
    """Given its box, a child's waiting time is Exponential(its linear dimension)."""
    X, trees = root_splits(grow_batch, streams, seed=3)
    scaled = []
    for tree, root in trees:
        lower, upper = node_boxes(tree, X)  # a leaf of one point has its point's box
        for child in (tree.left[root], tree.right[root]):
            extent = float(np.sum(upper[child] - lower[child]))
            if extent > 0:
                assert tree.left[child] != LEAF  # infinite lifetime: always cut
                scaled.append((tree.time[child] - tree.time[root]) * extent)
    assert len(scaled) > N_TREES
    assert stats.kstest(scaled, "expon").pvalue > ALPHA


def test_lifetime_stops_the_process(grow_batch, streams):
    lifetime = 0.3
    _, trees = root_splits(grow_batch, streams, lifetime=lifetime, seed=4)
    uncut = sum(tree.left[root] == LEAF for tree, root in trees)
    p_uncut = np.exp(-lifetime * LINEAR_DIMENSION)
    assert stats.binomtest(int(uncut), N_TREES, p_uncut).pvalue > ALPHA
    for tree, _root in trees:
        n = int(tree.meta[0])
        leaves = tree.left[:n] == LEAF
        assert np.all(tree.time[:n][leaves] == lifetime)
        assert np.all(tree.time[:n][~leaves] < lifetime)


def test_extension_cuts_a_new_point_off_at_exponential_time(grow_online, streams):
    """Adding ``x`` to a one-point tree inserts a split at time Exp(|x - x0|_1)."""
    X = np.array([[0.2, 0.1, 0.4], [0.9, -0.5, 0.4]])
    excess = np.abs(X[1] - X[0])
    keys = np.zeros(2, dtype=np.int64)
    times, features, positions = [], [], []
    for rng in streams(5, N_TREES):
        tree = grow_online(X, keys, [0, 1], rng, use_pausing=False)
        root = int(tree.meta[META_ROOT])
        assert root != 0  # the split was inserted above the first leaf
        d = tree.feature[root]
        times.append(tree.time[root])
        features.append(d)
        lo, hi = min(X[:, d]), max(X[:, d])
        positions.append((tree.threshold[root] - lo) / (hi - lo))
    assert stats.kstest(times, stats.expon(scale=1.0 / excess.sum()).cdf).pvalue > ALPHA
    observed = np.bincount(features, minlength=3)
    assert observed[2] == 0
    assert stats.chisquare(observed[:2], N_TREES * excess[:2] / excess.sum()).pvalue > ALPHA
    assert stats.kstest(positions, "uniform").pvalue > ALPHA


# ----------------------------------------------------------------- random streams
def test_spawn_states_are_reproducible_and_distinct():
    a = spawn_states(123, 50)
    b = spawn_states(123, 50)
    assert a.dtype == np.uint64 and a.shape == (50, 4)
    np.testing.assert_array_equal(a, b)
    assert len({tuple(row) for row in a}) == 50
    assert not np.array_equal(a, spawn_states(124, 50))


def test_uniform_and_exponential_draws():
    state = spawn_states(7, 1)[0]
    u = np.array([uniform(state) for _ in range(5000)])
    assert u.min() >= 0.0 and u.max() < 1.0
    assert stats.kstest(u, "uniform").pvalue > ALPHA
    e = np.array([exponential(state, 2.5) for _ in range(5000)])
    assert stats.kstest(e, stats.expon(scale=0.4).cdf).pvalue > ALPHA
    assert exponential(state, 0.0) == np.inf


def test_choose_proportional_frequencies():
    state = spawn_states(8, 1)[0]
    weights = np.array([0.5, 0.0, 2.0, 1.5])
    draws = np.array([choose_proportional(state, weights, weights.sum())
                      for _ in range(6000)])
    observed = np.bincount(draws, minlength=4)
    assert observed[1] == 0
    expected = 6000 * weights / weights.sum()
    assert stats.chisquare(observed[[0, 2, 3]], expected[[0, 2, 3]]).pvalue > ALPHA


@pytest.mark.parametrize("lam", [0.7, 12.0, 75.0])
def test_poisson_draws(lam):
    state = spawn_states(9, 1)[0]
    draws = np.array([poisson(state, lam) for _ in range(6000)])
    assert draws.min() >= 0
    # Compare with the exact law on bins holding enough mass.
    edges = np.unique(np.concatenate([[-0.5],
                                      np.arange(stats.poisson.ppf(0.01, lam),
                                                stats.poisson.ppf(0.99, lam)) + 0.5,
                                      [np.inf]]))
    observed = np.histogram(draws, edges)[0]
    expected = 6000 * np.diff(stats.poisson.cdf(np.floor(edges), lam))
    expected[0] = 6000 * stats.poisson.cdf(np.floor(edges[1]), lam)
    expected *= observed.sum() / expected.sum()
    assert stats.chisquare(observed, expected).pvalue > ALPHA
    assert poisson(state, 0.0) == 0
