"""Threads: ``n_jobs=2`` gives the same models and predictions as ``n_jobs=1``, bit
for bit (every tree has its own random stream and results are reduced in tree
order)."""

import importlib

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from mondrianlearn import MondrianForestClassifier, MondrianForestRegressor


def _optional(module, name):
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        return None


AMFClassifier = _optional("mondrianlearn.amf", "AMFClassifier")
AMFRegressor = _optional("mondrianlearn.amf", "AMFRegressor")
MondrianBoostingClassifier = _optional("mondrianlearn.ensemble", "MondrianBoostingClassifier")

CLASSIFIERS = [
    pytest.param(lambda **kw: MondrianForestClassifier(**kw), id="MF"),
    pytest.param(lambda **kw: MondrianForestClassifier(bootstrap=True, **kw), id="MF-bootstrap"),
    pytest.param(lambda **kw: MondrianForestClassifier(max_nodes=41, min_samples_split=3, **kw),
                 id="MF-max_nodes"),
    pytest.param(lambda **kw: AMFClassifier(**kw), id="AMFClassifier",
                 marks=pytest.mark.skipif(AMFClassifier is None, reason="AMF not importable")),
    pytest.param(lambda **kw: MondrianBoostingClassifier(**kw), id="Boosting",
                 marks=pytest.mark.skipif(MondrianBoostingClassifier is None,
                                          reason="MondrianBoostingClassifier not importable")),
]
REGRESSORS = [
    pytest.param(lambda **kw: MondrianForestRegressor(**kw), id="MF"),
    pytest.param(lambda **kw: MondrianForestRegressor(bootstrap=True, **kw), id="MF-bootstrap"),
    pytest.param(lambda **kw: AMFRegressor(**kw), id="AMFRegressor",
                 marks=pytest.mark.skipif(AMFRegressor is None, reason="AMF not importable")),
]


@pytest.fixture(scope="module")
def classification():
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(600, 5))
    y = (X[:, 0] + X[:, 1] > 1).astype(int) + (X[:, 2] > 0.6).astype(int)
    return X[:450], y[:450], rng.uniform(-0.2, 1.2, size=(200, 5))


@pytest.fixture(scope="module")
def regression():
    rng = np.random.RandomState(1)
    X = rng.uniform(size=(600, 4))
    y = np.sin(6 * X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.randn(600)
    return X[:450], y[:450], rng.uniform(-0.2, 1.2, size=(200, 4))


def assert_same_trees(a, b):
    """Every array of every tree (structure, boxes, statistics, random streams)."""
    assert len(a.trees_) == len(b.trees_)
    for ta, tb in zip(a.trees_, b.trees_):
        for name, xa, xb in zip(ta.arrays._fields, ta.arrays, tb.arrays):
            assert_array_equal(xa, xb, err_msg=name)
        assert ta.node_stats.keys() == tb.node_stats.keys()
        for name in ta.node_stats:
            assert_array_equal(ta.node_stats[name], tb.node_stats[name], err_msg=name)
        assert_array_equal(ta.rng_state, tb.rng_state)
        assert_array_equal(ta.sample_next, tb.sample_next)
        assert_array_equal(ta.sample_mult, tb.sample_mult)


def _train(make, n_jobs, X, y, online):
    model = make(n_estimators=6, random_state=7, n_jobs=n_jobs)
    if not online:
        return model.fit(X, y)
    for start in range(0, X.shape[0], 150):
        model.partial_fit(X[start:start + 150], y[start:start + 150])
    return model


@pytest.mark.parametrize("online", [False, True], ids=["fit", "partial_fit"])
@pytest.mark.parametrize("make", CLASSIFIERS)
def test_classifier_two_threads_equal_one(make, online, classification):
    X, y, X_test = classification
    one = _train(make, 1, X, y, online)
    two = _train(make, 2, X, y, online)
    assert_same_trees(one, two)
    assert_array_equal(one.predict_proba(X_test), two.predict_proba(X_test))
    assert_array_equal(one.predict(X_test), two.predict(X_test))
    if hasattr(one, "apply"):
        assert_array_equal(one.apply(X_test), two.apply(X_test))


@pytest.mark.parametrize("online", [False, True], ids=["fit", "partial_fit"])
@pytest.mark.parametrize("make", REGRESSORS)
def test_regressor_two_threads_equal_one(make, online, regression):
    X, y, X_test = regression
    one = _train(make, 1, X, y, online)
    two = _train(make, 2, X, y, online)
    assert_same_trees(one, two)
    assert_array_equal(one.predict(X_test), two.predict(X_test))
    if isinstance(one, MondrianForestRegressor):
        mean1, std1 = one.predict(X_test, return_std=True)
        mean2, std2 = two.predict(X_test, return_std=True)
        assert_array_equal(mean1, mean2)
        assert_array_equal(std1, std2)
        assert_array_equal(one.apply(X_test), two.apply(X_test))
        path1, ptr1 = one.weighted_decision_path(X_test)
        path2, ptr2 = two.weighted_decision_path(X_test)
        assert_array_equal(ptr1, ptr2)
        assert_array_equal(path1.toarray(), path2.toarray())


def test_models_trained_with_threads_predict_alike_without(classification):
    """Training threads and prediction threads are independent choices."""
    X, y, X_test = classification
    model = MondrianForestClassifier(n_estimators=6, random_state=3, n_jobs=2).fit(X, y)
    proba = model.predict_proba(X_test)
    model.set_params(n_jobs=1)
    assert_array_equal(model.predict_proba(X_test), proba)
    model.set_params(n_jobs=-1)
    assert_array_equal(model.predict_proba(X_test), proba)
