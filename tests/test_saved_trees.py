"""Mondrian forests are saved without the boxes and sums their stored points give
back (``engine.saved_trees``): smaller pickles, the same model after loading."""

import copy
import pickle

import numpy as np
import pytest

from mondrianlearn import (
    MondrianBoostingClassifier,
    MondrianForestClassifier,
    MondrianForestRegressor,
)
from mondrianlearn.engine.saved_trees import restore_derived, without_derived
from mondrianlearn.engine.tree import META_ROOT, node_boxes, used_rows


def _data(n=1500, d=12, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, d)) * np.logspace(-2, 2, d)
    y = (X[:, 0] / 0.01 + X[:, 3] > 0).astype(int)
    return X, y


def _box_bytes(model):
    return sum(t.arrays.lower[: t.n_boxes].nbytes + t.arrays.upper[: t.n_boxes].nbytes
               for t in model.trees_)


def _same_trees(a, b):
    for s, t in zip(a.trees_, b.trees_, strict=True):
        n = s.n_nodes
        assert t.n_nodes == n
        rows_s, rows_t = used_rows(s.arrays), used_rows(t.arrays)
        for field in rows_s:
            np.testing.assert_array_equal(rows_s[field], rows_t[field], err_msg=field)
        assert t.arrays.lower.shape[0] == t.capacity  # room to grow again
        for name, array in s.node_stats.items():
            np.testing.assert_array_equal(array[:n], t.node_stats[name][:n], err_msg=name)
            assert t.node_stats[name].shape[0] == t.capacity


MODELS = {
    "classifier": lambda: MondrianForestClassifier(n_estimators=4, random_state=0),
    "classifier, raw units": lambda: MondrianForestClassifier(
        n_estimators=4, random_state=1, feature_scale=None),
    "bootstrap": lambda: MondrianForestClassifier(n_estimators=4, bootstrap=True,
                                                  random_state=2),
    "regressor": lambda: MondrianForestRegressor(n_estimators=4, random_state=3),
    "boosting": lambda: MondrianBoostingClassifier(n_estimators=4, random_state=4),
}


@pytest.mark.parametrize("name", list(MODELS))
def test_loaded_forest_is_the_same_model_and_the_pickle_is_smaller(name):
    X, y = _data()
    target = X[:, 0] / 0.01 + X[:, 3] if name == "regressor" else y
    model = MODELS[name]()
    model.partial_fit(X[:700], target[:700])
    model.partial_fit(X[700:1000], target[700:1000])
    saved = pickle.dumps(model)
    # most of the boxes are left out of the pickle
    assert len(saved) < sum(t.nbytes for t in model.trees_) - 0.8 * _box_bytes(model)
    loaded = pickle.loads(saved)
    _same_trees(model, loaded)
    predict = model.predict if name == "regressor" else model.predict_proba
    np.testing.assert_array_equal(predict(X[1000:]),
                                  (loaded.predict if name == "regressor"
                                   else loaded.predict_proba)(X[1000:]))
    # both keep learning alike (the boxes are the ones the trees had)
    model.partial_fit(X[1000:1300], target[1000:1300])
    loaded.partial_fit(X[1000:1300], target[1000:1300])
    _same_trees(model, loaded)
    np.testing.assert_array_equal(predict(X[1300:]),
                                  (loaded.predict if name == "regressor"
                                   else loaded.predict_proba)(X[1300:]))


def test_class_counts_and_boxes_are_left_out_weighted_sums_checked():
    X, y = _data()
    model = MondrianForestClassifier(n_estimators=2, random_state=0).fit(X, y)
    store = model._store
    X_s, stats = store.X[: store.n], store.stats[: store.n]
    saved = without_derived(model.trees_[0], X_s, stats, "stats")
    assert saved.arrays.lower.shape[0] == 0 and saved.node_stats["stats"].shape[0] == 0
    # fractional weights: sums left out only where they come back bit for bit
    w = np.random.RandomState(0).uniform(0.1, 3.0, size=len(y))
    weighted = MondrianForestClassifier(n_estimators=2, random_state=0)
    weighted.fit(X, y, sample_weight=w)
    loaded = pickle.loads(pickle.dumps(weighted))
    _same_trees(weighted, loaded)
    for s, t in zip(weighted.trees_, loaded.trees_, strict=True):
        np.testing.assert_array_equal(s.node_stats["stats"][: s.n_nodes],
                                      t.node_stats["stats"][: t.n_nodes])
    np.testing.assert_array_equal(weighted.predict_proba(X), loaded.predict_proba(X))


def test_deepcopy_goes_through_the_same_path():
    X, y = _data()
    model = MondrianForestClassifier(n_estimators=3, random_state=0).fit(X, y)
    twin = copy.deepcopy(model)
    _same_trees(model, twin)
    assert twin.trees_[0].arrays.lower is not model.trees_[0].arrays.lower


def test_trees_whose_points_are_released_keep_their_boxes():
    # Under a node budget that every tree has reached, the store is released: the
    # boxes no longer follow from stored points and are saved as they are.
    X, y = _data(3000)
    model = MondrianForestClassifier(n_estimators=3, max_nodes=40, random_state=0)
    for start in range(0, 3000, 500):
        model.partial_fit(X[start:start + 500], y[start:start + 500])
    assert not any(t.keep_samples for t in model.trees_)
    points = model._store.X[: model._store.n]
    assert all(without_derived(t, points) is t for t in model.trees_)
    loaded = pickle.loads(pickle.dumps(model))
    _same_trees(model, loaded)
    np.testing.assert_array_equal(model.predict_proba(X), loaded.predict_proba(X))


def test_a_tree_whose_boxes_differ_from_its_points_keeps_them():
    X, y = _data()
    model = MondrianForestClassifier(n_estimators=2, random_state=0).fit(X, y)
    tree = model.trees_[0]
    points = model._store.X[: model._store.n]
    assert without_derived(tree, points) is not tree
    root = tree.arrays.meta[META_ROOT]
    tree.arrays.upper[tree.arrays.box_row[root]] += 1.0  # the root box, widened by hand
    assert without_derived(tree, points) is tree


def test_a_damaged_pickle_is_refused():
    X, y = _data()
    model = MondrianForestClassifier(n_estimators=2, random_state=0).fit(X, y)
    points = model._store.X[: model._store.n]
    saved = without_derived(model.trees_[0], points)
    loaded = pickle.loads(pickle.dumps(saved))
    assert loaded.arrays.lower.shape[0] == 0
    assert loaded.node_stats["stats"].shape[0] == loaded.n_nodes  # no sums asked for
    with pytest.raises(ValueError, match="damaged"):
        restore_derived(loaded, points[:10])  # a store that lost points
    restore_derived(loaded, points)
    for a, b in zip(node_boxes(loaded.arrays, points),
                    node_boxes(model.trees_[0].arrays, points)):
        np.testing.assert_array_equal(a, b)
