"""Shared fixtures: trees grown directly with the engine's kernels.

The engine-level tests sample hundreds of small trees; calling the kernels directly
(instead of going through an estimator) keeps them fast and lets a test choose the
pausing rule, the lifetime and the order of the points.
"""

import numpy as np
import pytest

from mondrianlearn.engine.extension import extend_to_leaf, leaf_must_unpause, regrow_leaf
from mondrianlearn.engine.growth import sample_blocks
from mondrianlearn.engine.paths import tree_depth
from mondrianlearn.engine.random import spawn_states
from mondrianlearn.engine.tree import ID_DTYPE, LEAF, META_N_NODES, META_ROOT, empty_tree


def _capacity(n_points):
    # A tree never holds more than 2 n - 1 nodes: nodes are never discarded, and
    # every leaf keeps at least one point.
    return 2 * n_points + 8


def grow_batch_tree(X, keys, rng, *, lifetime=np.inf, use_pausing=True,
                    pause_pure=True, min_samples_split=2):
    """Sample a Mondrian tree in batch on all rows of ``X`` (``sample_blocks``)."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    keys = np.ascontiguousarray(keys, dtype=np.int64)
    n = X.shape[0]
    tree = empty_tree(X.shape[1], _capacity(n))
    tree.meta[META_N_NODES] = 1
    tree.meta[META_ROOT] = 0
    sample_next = np.full(n, -1, dtype=ID_DTYPE)
    indices = np.arange(n, dtype=np.int64)
    stack = np.empty((n + 1, 3), dtype=np.int64)
    stack[0] = (0, 0, n)
    left = sample_blocks(tree, X, keys, sample_next, indices, stack, 1, float(lifetime),
                         use_pausing, pause_pure, int(min_samples_split), rng)
    assert left == 0, "capacity must suffice for a whole tree"
    return tree


def grow_online_tree(X, keys, order, rng, *, lifetime=np.inf, use_pausing=True,
                     pause_pure=True, min_samples_split=2):
    """Grow a tree point by point in ``order`` (Algorithm 4 with un-pausing).

    The first point is sampled in batch (a single-point block), the others are
    added with ``extend_to_leaf``; a paused leaf that no longer satisfies the
    pausing rule is re-sampled from its points (``regrow_leaf``).
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    keys = np.ascontiguousarray(keys, dtype=np.int64)
    order = np.asarray(order, dtype=np.int64)
    n = X.shape[0]
    tree = empty_tree(X.shape[1], _capacity(n))
    tree.meta[META_N_NODES] = 1
    tree.meta[META_ROOT] = 0
    sample_next = np.full(n, -1, dtype=ID_DTYPE)
    stack = np.empty((2, 3), dtype=np.int64)
    stack[0] = (0, 0, 1)
    sample_blocks(tree, X, keys, sample_next, order[:1].copy(), stack, 1, float(lifetime),
                  use_pausing, pause_pure, int(min_samples_split), rng)
    excess = np.empty(X.shape[1])
    path = np.empty(tree.parent.shape[0], dtype=np.int64)
    for s in order[1:]:
        leaf = extend_to_leaf(tree, X, X[s], keys[s], s, sample_next, float(lifetime),
                              use_pausing, True, rng, excess, path)[0]
        if use_pausing and leaf_must_unpause(tree, X, leaf, pause_pure, int(min_samples_split)):
            regrow_leaf(tree, X, keys, sample_next, leaf, float(lifetime), pause_pure,
                        int(min_samples_split), rng)
    return tree


def tree_summary(tree):
    """``(root split time, number of leaves, depth)`` of a tree."""
    n = int(tree.meta[META_N_NODES])
    root = int(tree.meta[META_ROOT])
    n_leaves = int(np.sum(tree.left[:n] == LEAF))
    return float(tree.time[root]), n_leaves, int(tree_depth(tree))


def rng_streams(seed, n):
    """``n`` independent xoshiro states (rows) from one seed."""
    return spawn_states(seed, n)


@pytest.fixture
def grow_batch():
    return grow_batch_tree


@pytest.fixture
def grow_online():
    return grow_online_tree


@pytest.fixture
def summarize():
    return tree_summary


@pytest.fixture
def streams():
    return rng_streams
