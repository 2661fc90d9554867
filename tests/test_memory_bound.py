"""Memory-bounded learning (``max_nodes``): flat memory on a long stream, accuracy holds."""

import numpy as np
import pytest

from mondrianlearn import (AMFClassifier, AMFRegressor, MondrianForestClassifier,
                           MondrianForestRegressor)


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


def test_budget_fit_matches_budget_partial_fit_in_structure_size():
    X, y = _stream(3000)
    a = MondrianForestClassifier(n_estimators=2, max_nodes=41, random_state=0).fit(X, y)
    assert max(a.n_nodes_) <= 41 and a.score(X, y) > 0.7
