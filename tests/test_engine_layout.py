"""Depth-first renumbering of tree nodes (engine.layout) and the packed walk table."""

import copy

import numpy as np
import pytest

from mondrianlearn import AMFClassifier, AMFRegressor
from mondrianlearn.engine.boxes import find_leaf, record_path, record_path_packed, walk_table
from mondrianlearn.engine.layout import RENUMBER_FROM_NODES, depth_first_order
from mondrianlearn.engine.tree import LEAF, META_N_NODES, META_ROOT


def _stream(n=600, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(n, 3))
    return X, (X[:, 0] + X[:, 1] > 1).astype(int) + (X[:, 2] > 0.7)


def _renumbered(est):
    """A copy of ``est`` whose trees are all renumbered depth-first now."""
    out = copy.deepcopy(est)
    for tree in out.trees_:
        tree.trim(renumber=True)
    return out


def _check_depth_first(tree):
    a = tree.arrays
    n = tree.n_nodes
    assert a.meta[META_ROOT] == 0 and a.parent[0] == -1
    internal = np.flatnonzero(a.left[:n] != LEAF)
    # The left child follows its parent; both children point back to it.
    np.testing.assert_array_equal(a.left[internal], internal + 1)
    np.testing.assert_array_equal(a.parent[a.left[internal]], internal)
    np.testing.assert_array_equal(a.parent[a.right[internal]], internal)
    # Each subtree is one contiguous range: the right child starts after the
    # left subtree, and every node's parent comes before it.
    assert np.all(a.right[internal] > internal + 1)
    assert np.all(a.parent[1:n] < np.arange(1, n))


def test_depth_first_order_visits_every_node_parents_first():
    est = AMFClassifier(n_estimators=1, random_state=0).partial_fit(*_stream())
    a = est.trees_[0].arrays
    n = est.trees_[0].n_nodes
    order = depth_first_order(a.left, a.right, a.meta[META_ROOT], n)
    np.testing.assert_array_equal(np.sort(order), np.arange(n))
    position = np.empty(n, dtype=np.int64)
    position[order] = np.arange(n)
    children = a.left[:n] != LEAF
    assert np.all(position[a.left[:n][children]] == position[children] + 1)
    assert np.all(position[a.right[:n][children]] > position[children])


@pytest.mark.parametrize("Est", [AMFClassifier, AMFRegressor])
def test_fit_leaves_trees_in_depth_first_order(Est):
    X, y = _stream()
    est = Est(n_estimators=2, random_state=0).fit(X, y)
    for tree in est.trees_:
        _check_depth_first(tree)


@pytest.mark.parametrize("Est", [AMFClassifier, AMFRegressor])
def test_renumbering_changes_no_prediction_and_no_later_learning(Est):
    X, y = _stream(900)
    T = np.random.RandomState(1).uniform(-0.5, 1.5, size=(300, 3))
    # Small partial_fit calls renumber only when a tree grows: the last nodes are
    # unordered.
    est = Est(n_estimators=3, random_state=0)
    for start in range(0, 600, 50):
        est.partial_fit(X[start:start + 50], y[start:start + 50],
                        **({"classes": np.unique(y)} if Est is AMFClassifier else {}))
    moved = _renumbered(est)
    assert any(not np.array_equal(a.arrays.left[:a.n_nodes], b.arrays.left[:b.n_nodes])
               for a, b in zip(est.trees_, moved.trees_))
    for tree in moved.trees_:
        _check_depth_first(tree)
    method = "predict_proba" if hasattr(est, "predict_proba") else "predict"
    np.testing.assert_array_equal(getattr(est, method)(T), getattr(moved, method)(T))
    np.testing.assert_array_equal(est.weighted_depth(T[:3]), moved.weighted_depth(T[:3]))
    for model in (est, moved):
        model.partial_fit(X[600:], y[600:])
    np.testing.assert_array_equal(getattr(est, method)(T), getattr(moved, method)(T))
    np.testing.assert_array_equal(getattr(est, method)(T[:2]), getattr(moved, method)(T[:2]))


def test_walk_table_gives_the_same_paths():
    est = AMFClassifier(n_estimators=1, random_state=3).partial_fit(*_stream())
    a = est.trees_[0].arrays
    n = int(a.meta[META_N_NODES])
    table = walk_table(a.left, a.right, a.feature, a.threshold, n)
    path, packed = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    for x in np.random.RandomState(0).uniform(-0.2, 1.2, size=(200, 3)):
        m = record_path(a.left, a.right, a.feature, a.threshold, a.meta[META_ROOT], x,
                        path, n)
        assert record_path_packed(table, a.meta[META_ROOT], x, packed, n) == m
        np.testing.assert_array_equal(packed[:m], path[:m])
        assert path[m - 1] == find_leaf(a, x)


@pytest.mark.parametrize("Est", [AMFClassifier, AMFRegressor])
def test_a_call_that_makes_most_of_the_tree_renumbers_it(Est):
    X, y = _stream(3000)
    T = np.random.RandomState(2).uniform(-0.5, 1.5, size=(200, 3))
    est = Est(n_estimators=2, random_state=0).partial_fit(X, y)
    assert all(t.n_nodes >= RENUMBER_FROM_NODES for t in est.trees_)
    for tree in est.trees_:
        _check_depth_first(tree)
    # A smaller tree is left as it was made (cheaper than a copy).
    small = Est(n_estimators=2, random_state=0).partial_fit(X[:200], y[:200])
    assert all(t.n_nodes < RENUMBER_FROM_NODES for t in small.trees_)
    assert all(t._depth_first_order() is not None for t in small.trees_)
    # The same rows in small calls: the same model up to numbering.
    steps = Est(n_estimators=2, random_state=0)
    for start in range(0, 3000, 50):
        steps.partial_fit(X[start:start + 50], y[start:start + 50], **(
            {"classes": np.unique(y)} if Est is AMFClassifier else {}))
    method = "predict_proba" if Est is AMFClassifier else "predict"
    np.testing.assert_array_equal(getattr(est, method)(T), getattr(steps, method)(T))
    # A small call leaves the new nodes where they were made.
    est.partial_fit(X[:20] + 0.5, y[:20])
    assert any(t._depth_first_order() is not None for t in est.trees_)
