"""Memory-bounded learning (``max_nodes``): flat memory on a long stream, accuracy holds."""

import numpy as np
import pytest

from mondrianlearn import (
    AMFClassifier,
    AMFRegressor,
    MondrianForestClassifier,
    MondrianForestRegressor,
)


def _stream(n, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(n, 5))
    y = ((X[:, 0] + X[:, 1] + 0.1 * rng.normal(size=n)) > 1).astype(int)
    return X, y


@pytest.mark.parametrize("make", [
    lambda: MondrianForestClassifier(n_estimators=4, max_nodes=301, random_state=0),
    lambda: MondrianForestClassifier(n_estimators=4, max_nodes=301, bootstrap=True,
                                     random_state=0),
    lambda: AMFClassifier(n_estimators=4, max_nodes=301, random_state=0),
])
def test_memory_is_flat_after_the_limit_and_accuracy_holds(make):
    X, y = _stream(24000)
    X_test, y_test = _stream(2000, seed=1)
    model = make()
    sizes, scores = [], []
    for start in range(0, 24000, 2000):
        model.partial_fit(X[start:start + 2000], y[start:start + 2000])
        sizes.append(model.model_size_)
        scores.append(model.score(X_test, y_test))
    assert max(model.n_nodes_) <= 301
    full = [i for i in range(len(sizes)) if i >= 2]  # the limit is reached within 4000 rows
    assert max(sizes[i] for i in full) == min(sizes[i] for i in full), sizes
    # accuracy keeps improving or holds once the structure is frozen
    assert scores[-1] >= max(scores[:3]) - 0.01, scores
    assert scores[-1] > 0.85


def test_the_sample_store_is_released_once_every_tree_is_full():
    X, y = _stream(5000)
    model = MondrianForestClassifier(n_estimators=3, max_nodes=51, random_state=0)
    model.partial_fit(X[:4000], y[:4000])
    assert all(n + 2 > 51 for n in model.n_nodes_)
    assert model._store.n == 0
    before = model.model_size_
    model.partial_fit(X[4000:], y[4000:])
    assert model.model_size_ == before
    # the statistics keep learning: the root counts every row
    root = model.trees_[0].arrays.meta[1]
    assert model.trees_[0].node_stats["stats"][root].sum() == 5000


@pytest.mark.parametrize("Est", [MondrianForestRegressor, AMFRegressor])
def test_regressors_keep_learning_under_the_limit(Est):
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(6000, 3))
    y = np.sin(4 * X[:, 0]) + X[:, 1]
    X_test = rng.uniform(size=(1000, 3))
    y_test = np.sin(4 * X_test[:, 0]) + X_test[:, 1]
    model = Est(n_estimators=3, max_nodes=101, random_state=0)
    errors = []
    for start in range(0, 6000, 1000):
        model.partial_fit(X[start:start + 1000], y[start:start + 1000])
        errors.append(np.mean((model.predict(X_test) - y_test) ** 2))
    assert max(model.n_nodes_) <= 101
    assert errors[-1] <= 1.05 * min(errors[:2]), errors


@pytest.mark.parametrize("Est", [MondrianForestClassifier, MondrianForestRegressor])
def test_budget_fit_matches_budget_partial_fit(Est):
    """Under a node budget, ``fit`` grows the trees point by point, as ``partial_fit``
    does: any split of the rows into mini-batches (small ones take the fast path)
    gives the same trees and the same predictions."""
    X, y = _stream(3000)
    if Est is MondrianForestRegressor:
        y = X[:, 0] + np.sin(3 * X[:, 1])
    fitted = Est(n_estimators=2, max_nodes=41, random_state=0).fit(X, y)
    assert list(fitted.n_nodes_) == [41, 41]  # the budget is reached, not exceeded
    predict = getattr(fitted, "predict_proba", fitted.predict)
    for size in (1000, 7):
        online = Est(n_estimators=2, max_nodes=41, random_state=0)
        for start in range(0, 3000, size):
            online.partial_fit(X[start:start + size], y[start:start + size])
        assert online.n_samples_seen_ == 3000
        np.testing.assert_array_equal(online.n_nodes_, fitted.n_nodes_)
        for a, b in zip(online.trees_, fitted.trees_):
            n = a.n_nodes
            np.testing.assert_array_equal(a.arrays.feature[:n], b.arrays.feature[:n])
            np.testing.assert_array_equal(a.arrays.threshold[:n], b.arrays.threshold[:n])
            if Est is MondrianForestClassifier:  # class counts; the regressor's
                # statistics are of targets scaled by the running moments
                np.testing.assert_array_equal(a.node_stats["stats"][:n],
                                              b.node_stats["stats"][:n])
        online_predict = getattr(online, "predict_proba", online.predict)
        np.testing.assert_allclose(online_predict(X[:500]), predict(X[:500]),
                                   rtol=1e-9, atol=1e-12)
    if Est is MondrianForestClassifier:
        assert fitted.score(X, y) > 0.7


@pytest.mark.parametrize("pause_pure, one_hot", [(True, False), (False, True),
                                                 (True, True), (False, False)])
def test_budget_batch_sampling_counts_every_statistic(pause_pure, one_hot):
    """The budgeted batch sampler hands ``one_hot`` (not ``pause_pure``) to the online
    extension: with statistics rows that are not one-hot, every column of every node
    must hold the sum over the points below it, whether or not pure blocks pause."""
    from mondrianlearn.engine.paths import apply_tree
    from mondrianlearn.engine.random import spawn_states
    from mondrianlearn.engine.tree import META_ROOT, SampleStore, TreeState
    from mondrianlearn.forest._base import _sample_tree_batch

    rng = np.random.RandomState(3)
    n = 400
    X = rng.uniform(size=(n, 3))
    keys = (X[:, 0] > 0.5).astype(np.int64)  # two labels: pure blocks exist
    if one_hot:
        point_stats = np.zeros((n, 2))
        point_stats[np.arange(n), keys] = rng.uniform(0.5, 2.0, size=n)
    else:  # weight, weighted target and its square, as the regressor stores them
        w, z = rng.uniform(0.5, 2.0, size=n), rng.normal(size=n)
        point_stats = np.column_stack([w, w * z, w * z * z])
    store = SampleStore(3, point_stats.shape[1])
    ids = store.append(X, keys, point_stats)
    tree = TreeState(3, spawn_states(0, 1)[0],
                     {"stats": np.zeros((16, point_stats.shape[1]))})
    tree.ensure_sample_capacity(store.n)
    _sample_tree_batch(tree, store, ids, np.inf, pause_pure, 2, False, 31, one_hot)
    arrays, stats = tree.arrays, tree.node_stats["stats"]
    n_nodes = tree.n_nodes
    assert 25 <= n_nodes <= 31  # the budget branch ran and was honoured
    leaves = np.empty(n, dtype=np.int64)
    apply_tree(arrays, X, leaves)
    expected = np.zeros((n_nodes, point_stats.shape[1]))
    for i in range(n):  # each point counts in its leaf and every node above it
        node = leaves[i]
        while node >= 0:
            expected[node] += point_stats[i]
            node = arrays.parent[node]
    np.testing.assert_allclose(stats[:n_nodes], expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(stats[arrays.meta[META_ROOT]], point_stats.sum(axis=0),
                               rtol=1e-12)
