"""Property-based tests (hypothesis): hostile input never crashes or corrupts a model.

For every estimator, random streams (shapes, dtypes, duplicates, magnitudes from
subnormal to 1e300, string labels) are learned in random mini-batches. After every
call the model's invariants hold: boxes contain their points and their children's
boxes, split times increase with depth, node statistics add up, probabilities sum to
one and predictive variances are non-negative. A call that fails on bad input leaves
the model exactly as it was (same pickle).
"""

import pickle

import numpy as np
import pytest

pytest.importorskip("hypothesis", reason="hypothesis is not installed (the test extra)")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from mondrianlearn import (
    AMFClassifier,
    AMFRegressor,
    MondrianBoostingClassifier,
    MondrianForestClassifier,
    MondrianForestRegressor,
    MondrianKernelClassifier,
    MondrianKernelRegressor,
)
from mondrianlearn.engine.tree import node_boxes

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

CLASSIFIERS = [
    lambda seed: MondrianForestClassifier(n_estimators=3, random_state=seed),
    lambda seed: MondrianForestClassifier(n_estimators=3, lifetime=2.0, bootstrap=True,
                                          max_nodes=15, random_state=seed),
    lambda seed: AMFClassifier(n_estimators=3, random_state=seed),
    lambda seed: AMFClassifier(n_estimators=2, split_pure=True, max_nodes=9,
                               temporary_extension=False, random_state=seed),
    lambda seed: MondrianBoostingClassifier(n_estimators=3, random_state=seed),
    lambda seed: MondrianKernelClassifier(n_trees=4, lifetime=2.0, random_state=seed),
]
REGRESSORS = [
    lambda seed: MondrianForestRegressor(n_estimators=3, random_state=seed),
    lambda seed: MondrianForestRegressor(n_estimators=2, min_samples_split=3, max_nodes=11,
                                         random_state=seed),
    lambda seed: AMFRegressor(n_estimators=3, random_state=seed),
    lambda seed: MondrianKernelRegressor(n_trees=4, lifetime=2.0, random_state=seed),
]

MAGNITUDES = [1.0, 1e-300, 5e-324, 1e300, 1.7e308, 1e6, 1e-6]


@st.composite
def streams(draw, classification):
    n = draw(st.integers(1, 40))
    d = draw(st.integers(1, 6))
    scale = draw(st.sampled_from(MAGNITUDES))
    kind = draw(st.sampled_from(["float64", "float32", "int", "duplicates", "constant"]))
    rng = np.random.RandomState(draw(st.integers(0, 2**16)))
    X = rng.uniform(-1, 1, size=(n, d)) * scale
    if kind == "float32":
        with np.errstate(over="ignore"):
            X = X.astype(np.float32)
        X = X if np.all(np.isfinite(X)) else np.zeros_like(X)
    elif kind == "int":
        X = rng.randint(-3, 4, size=(n, d))
    elif kind == "duplicates":
        X = X[rng.randint(0, max(1, n // 3), size=n)]
    elif kind == "constant":
        X[:, rng.randint(d)] = scale
    if classification:
        labels = draw(st.sampled_from([["a"], ["a", "b"], ["x", "y", "z"], [0, 1, 2, 3]]))
        y = np.array(labels, dtype=object)[rng.randint(len(labels), size=n)]
        y = y.astype(str) if isinstance(labels[0], str) else y.astype(int)
    else:
        y_scale = draw(st.sampled_from([1.0, 1e-8, 1e8, 1e300]))
        y = rng.normal(size=n) * y_scale
        if draw(st.booleans()):
            y[:] = y[0]
    cuts = sorted(set(draw(st.lists(st.integers(1, max(1, n - 1)), max_size=3))))
    return X, y, [c for c in cuts if 0 < c < n]


def _check_tree_invariants(tree, has_counts, points):
    a = tree.arrays
    n = tree.n_nodes
    if n == 0:
        return
    lower, upper = node_boxes(a, points)  # by node
    root = int(a.meta[1])
    assert a.parent[root] == -1
    stack = [root]
    seen = 0
    while stack:
        j = stack.pop()
        seen += 1
        assert np.all(lower[j] <= upper[j])
        if a.left[j] == -1:
            continue
        for c in (a.left[j], a.right[j]):
            assert a.parent[c] == j
            # a child's box lies in its parent's and its split time is later
            assert np.all(lower[c] >= lower[j]) and np.all(upper[c] <= upper[j])
            assert a.time[c] > a.time[j]
            stack.append(int(c))
        if has_counts:
            stats = tree.node_stats["stats"]
            both = stats[a.left[j]] + stats[a.right[j]]
            np.testing.assert_allclose(stats[j], both, rtol=1e-9, atol=1e-9 * np.abs(both).max())
    assert seen == n  # every node is reachable: no orphan left behind


def _check_points_in_boxes(model):
    store = getattr(model, "_store", None)
    if store is None or store.n == 0:
        return
    for tree in model.trees_:
        a = tree.arrays
        if tree.sample_next.shape[0] == 0:
            continue
        lower, upper = node_boxes(a, store.X)
        for j in range(tree.n_nodes):
            if a.left[j] != -1:
                continue
            s = a.leaf_head[j]
            while s >= 0:
                assert np.all(store.X[s] >= lower[j]) and np.all(store.X[s] <= upper[j])
                s = tree.sample_next[s]


def _check_model(model, X, classification):
    for tree in model.trees_:
        store = model.__dict__.get("_store")
        _check_tree_invariants(tree, has_counts=store is not None and
                               not isinstance(model, MondrianBoostingClassifier),
                               points=None if store is None else store.X)
    _check_points_in_boxes(model)
    if classification:
        proba = model.predict_proba(X)
        assert np.all(np.isfinite(proba)) and np.all(proba >= -1e-12)
        np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-9)
    elif isinstance(model, MondrianForestRegressor):
        mean, std = model.predict(X, return_std=True)
        assert np.all(std >= 0)
        assert not np.any(np.isnan(mean))
    else:
        assert not np.any(np.isnan(model.predict(X)))


DOCUMENTED_ERRORS = ("overflows float64", "Rescale y")  # the second: AMFRegressor


def _learn(model, X, y, cuts):
    bounds = [0] + cuts + [len(y)]
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        before = pickle.dumps(model)
        try:
            model.partial_fit(X[lo:hi], y[lo:hi])
        except ValueError as exc:  # only the documented refusals, leaving no trace
            assert any(text in str(exc) for text in DOCUMENTED_ERRORS), exc
            assert pickle.dumps(model) == before
            return
        _check_model(model, X, classification=hasattr(model, "predict_proba"))
        # far from the data too: distances may overflow, predictions must not
        with np.errstate(over="ignore"):
            far = np.clip(np.asarray(X, dtype=np.float64) * 1e10 + 1e300, -1.7e308, 1.7e308)
        _check_model(model, far, classification=hasattr(model, "predict_proba"))


@pytest.mark.parametrize("make", CLASSIFIERS)
@SETTINGS
@given(data=streams(classification=True), seed=st.integers(0, 100))
def test_classifiers_survive_any_stream(make, data, seed):
    X, y, cuts = data
    _learn(make(seed), X, y, cuts)


@pytest.mark.parametrize("make", REGRESSORS)
@SETTINGS
@given(data=streams(classification=False), seed=st.integers(0, 100))
def test_regressors_survive_any_stream(make, data, seed):
    X, y, cuts = data
    _learn(make(seed), X, y, cuts)


BAD_BATCHES = {
    "nan": lambda X, y: (np.where(np.arange(X.size).reshape(X.shape) == 0, np.nan, X), y),
    "inf": lambda X, y: (np.full_like(X, np.inf), y),
    "width": lambda X, y: (np.hstack([X, X]), y),
    "1-D": lambda X, y: (X[:, 0], y),
    "y length": lambda X, y: (X, y[:-1]),
}


@pytest.mark.parametrize("bad", sorted(BAD_BATCHES))
@pytest.mark.parametrize("make", CLASSIFIERS + REGRESSORS)
def test_failed_call_leaves_the_model_unchanged(make, bad):
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(30, 3))
    classification = hasattr(make(0), "predict_proba")
    y = (X[:, 0] > 0.5).astype(int) if classification else X[:, 0]
    model = make(0).partial_fit(X[:20], y[:20])
    before = pickle.dumps(model)
    Xb, yb = BAD_BATCHES[bad](X[20:], y[20:])
    with pytest.raises(ValueError):
        model.partial_fit(Xb, yb)
    assert pickle.dumps(model) == before


@pytest.mark.parametrize("make", CLASSIFIERS)
def test_unknown_label_with_declared_classes_leaves_the_model_unchanged(make):
    X = np.random.RandomState(1).uniform(size=(20, 2))
    model = make(0).partial_fit(X[:10], np.arange(10) % 2, classes=[0, 1])
    before = pickle.dumps(model)
    with pytest.raises(ValueError):
        model.partial_fit(X[10:], np.full(10, 7))
    assert pickle.dumps(model) == before


@pytest.mark.parametrize("make", CLASSIFIERS + REGRESSORS)
def test_reproducible_and_independent_of_prediction_batches(make):
    rng = np.random.RandomState(2)
    X = rng.uniform(size=(200, 4))
    classification = hasattr(make(0), "predict_proba")
    y = (X[:, 0] + X[:, 1] > 1).astype(int) if classification else X @ [1.0, 2.0, 0.0, -1.0]
    a = make(7)
    b = make(7)
    for lo in range(0, 200, 50):
        a.partial_fit(X[lo:lo + 50], y[lo:lo + 50])
        b.partial_fit(X[lo:lo + 50], y[lo:lo + 50])
    assert pickle.dumps(a) == pickle.dumps(b)
    T = rng.uniform(-0.2, 1.2, size=(101, 4))
    predict = a.predict_proba if classification else a.predict
    whole = predict(T)
    pieces = np.concatenate([predict(T[i:i + 7]) for i in range(0, 101, 7)])
    assert np.array_equal(whole, pieces)
    assert np.array_equal(whole, (b.predict_proba if classification else b.predict)(T))


@pytest.mark.parametrize("make", CLASSIFIERS + REGRESSORS)
def test_sparse_input_is_a_clear_error(make):
    import scipy.sparse as sp

    X = sp.random(20, 3, density=0.5, format="csr", random_state=0)
    classification = hasattr(make(0), "predict_proba")
    y = np.arange(20) % 2 if classification else np.arange(20.0)
    with pytest.raises((TypeError, ValueError), match="[Ss]parse"):
        make(0).partial_fit(X, y)


@pytest.mark.parametrize("make", CLASSIFIERS + REGRESSORS)
def test_thousands_of_features_and_single_sample(make):
    rng = np.random.RandomState(3)
    X = rng.uniform(size=(5, 2000))
    classification = hasattr(make(0), "predict_proba")
    y = np.array([0, 1, 0, 1, 1]) if classification else rng.normal(size=5)
    model = make(0).partial_fit(X[:1], y[:1])
    model.partial_fit(X[1:], y[1:])
    _check_model(model, X, classification)
