"""Box rows (``TreeArrays.box_row``): leaves of one point keep no box of their own in
trees that keep their points, and every other box has a row."""

import pickle

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from mondrianlearn import AMFClassifier, MondrianForestClassifier, MondrianForestRegressor
from mondrianlearn.datasets import load_electricity
from mondrianlearn.engine.tree import (
    META_N_BOXES,
    META_N_NODES,
    POINT_BOX,
    TreeState,
    node_boxes,
    rounded_down,
    rounded_up,
)


@pytest.fixture(scope="module")
def elec():
    return load_electricity(1500)


def _one_point_leaves(tree):
    a, n = tree.arrays, tree.n_nodes
    return np.flatnonzero((a.left[:n] == -1) & (a.n_points[:n] == 1))


@pytest.mark.parametrize("online", [False, True])
def test_leaves_of_one_point_take_no_box_row(elec, online):
    X, y = elec
    model = MondrianForestClassifier(n_estimators=3, random_state=0)
    if online:
        for start in range(0, 1000, 50):
            model.partial_fit(X[start:start + 50], y[start:start + 50])
    else:
        model.fit(X[:1000], y[:1000])
    points = model._store.X
    for tree in model.trees_:
        a, n = tree.arrays, tree.n_nodes
        ones = _one_point_leaves(tree)
        assert len(ones) > 0.2 * n  # a good part of the nodes
        assert np.all(a.box_row[ones] == POINT_BOX)
        rows = a.box_row[:n][a.box_row[:n] >= 0]
        # the other nodes each have a row of their own, the rows handed out in turn
        assert tree.n_boxes == len(rows) == n - np.count_nonzero(a.box_row[:n] < 0)
        assert_array_equal(np.sort(rows), np.arange(tree.n_boxes))
        # a leaf of one point has its point's box, rounded outward
        lower, upper = node_boxes(a, points)
        at = points[a.leaf_head[ones]]
        assert_array_equal(lower[ones], rounded_down(at))
        assert_array_equal(upper[ones], rounded_up(at))


@pytest.mark.parametrize("Est", [AMFClassifier, MondrianForestClassifier])
def test_trees_without_points_have_their_node_ids_as_rows(elec, Est):
    X, y = elec
    kwargs = {"max_nodes": 200} if Est is MondrianForestClassifier else {}
    model = Est(n_estimators=2, random_state=0, **kwargs)
    for start in range(0, 1500, 100):
        model.partial_fit(X[start:start + 100], y[start:start + 100])
    for tree in model.trees_:
        a, n = tree.arrays, tree.n_nodes
        if Est is AMFClassifier:  # keeps no points from the start: rows are ids
            assert_array_equal(a.box_row[:n], np.arange(n))
            assert tree.n_boxes == n
        else:  # full trees let go of their points: every leaf took a row first
            assert not tree.keep_samples
            assert np.all(a.box_row[:n] >= 0)


def test_a_full_forest_gives_its_leaves_rows_before_forgetting_its_points(elec):
    X, y = elec
    # fixed units: the trees are neither re-sampled nor rescaled, their nodes stay
    model = MondrianForestClassifier(n_estimators=2, max_nodes=300, feature_scale=None,
                                     random_state=0)
    model.fit(X[:100], y[:100])
    assert model._store.n > 1 and any(np.any(t.arrays.box_row[:t.n_nodes] < 0)
                                      for t in model.trees_)
    boxes = [node_boxes(t.arrays, model._store.X) for t in model.trees_]
    proba = model.predict_proba(X[1000:])
    model.partial_fit(X[100:1400], y[100:1400])  # the trees fill up: the store is cleared
    assert model._store.n == 0
    for tree, (lower, upper) in zip(model.trees_, boxes):
        a, n = tree.arrays, tree.n_nodes
        assert np.all(a.box_row[:n] >= 0)  # no box reads the cleared store
        after_lower, after_upper = node_boxes(a, model._store.X)
        m = lower.shape[0]  # the nodes of then keep their boxes or have widened
        assert np.all(after_lower[:m] <= lower) and np.all(after_upper[:m] >= upper)
    assert not np.array_equal(proba, model.predict_proba(X[1000:]))  # still learning


@pytest.mark.parametrize("Est", [MondrianForestClassifier, MondrianForestRegressor])
def test_trees_pickled_before_box_rows_load_as_the_same_model(elec, Est):
    X, y = elec
    target = y if Est is MondrianForestClassifier else X[:, 0] + (y == y[0])
    model = Est(n_estimators=2, random_state=0).fit(X[:800], target[:800])
    old = pickle.loads(pickle.dumps(model))
    trees = []
    for tree in old.trees_:  # the layout of before: boxes by node, no row numbers
        a = tree.arrays
        n, capacity = tree.n_nodes, tree.capacity
        lower = np.zeros((capacity, a.lower.shape[1]), dtype=a.lower.dtype)
        upper = np.zeros_like(lower)
        lower[:n], upper[:n] = node_boxes(a, model._store.X)
        meta = a.meta[:META_N_BOXES].copy()
        assert meta[META_N_NODES] == n
        state = tree.__getstate__()
        state["arrays"] = a._replace(lower=lower, upper=upper, meta=meta, box_row=None)
        loaded_tree = object.__new__(TreeState)
        loaded_tree.__setstate__(pickle.loads(pickle.dumps(state)))
        trees.append(loaded_tree)
    loaded = old
    loaded.trees_ = trees
    for tree in loaded.trees_:
        assert_array_equal(tree.arrays.box_row[:tree.n_nodes], np.arange(tree.n_nodes))
        assert tree.n_boxes == tree.n_nodes
    predict = "predict_proba" if Est is MondrianForestClassifier else "predict"
    assert_array_equal(getattr(loaded, predict)(X[800:]), getattr(model, predict)(X[800:]))
    # and they learn on as the model does
    loaded.partial_fit(X[800:1200], target[800:1200])
    model.partial_fit(X[800:1200], target[800:1200])
    assert_array_equal(getattr(loaded, predict)(X[1200:]), getattr(model, predict)(X[1200:]))
