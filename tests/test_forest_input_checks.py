"""Bad and unusual input: clear scikit-learn-style errors or correct results."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError

from mondrianlearn import (
    MondrianForestClassifier,
    MondrianForestRegressor,
    MondrianTreeClassifier,
    MondrianTreeRegressor,
)

ALL = [MondrianForestClassifier, MondrianForestRegressor, MondrianTreeClassifier,
       MondrianTreeRegressor]
CLASSIFIERS = [MondrianForestClassifier, MondrianTreeClassifier]
REGRESSORS = [MondrianForestRegressor, MondrianTreeRegressor]


def make(cls, **params):
    if cls in (MondrianForestClassifier, MondrianForestRegressor):
        params.setdefault("n_estimators", 4)
    return cls(random_state=0, **params)


def data(cls, n=60, n_features=3, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(n, n_features))
    if cls in CLASSIFIERS:
        return X, (X[:, 0] > 0.5).astype(int)
    return X, X[:, 0] + X[:, -1]


def output(est, X):
    if hasattr(est, "predict_proba"):
        return est.predict_proba(X)
    return np.column_stack(est.predict(X, return_std=True))


# -------------------------------------------------------------- non-finite values
@pytest.mark.parametrize("cls", ALL)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_X_is_rejected(cls, bad):
    X, y = data(cls)
    X_bad = X.copy()
    X_bad[3, 1] = bad
    message = "NaN" if np.isnan(bad) else "infinity"
    with pytest.raises(ValueError, match=message):
        make(cls).fit(X_bad, y)
    with pytest.raises(ValueError, match=message):
        make(cls).partial_fit(X_bad, y)
    est = make(cls).fit(X, y)
    with pytest.raises(ValueError, match=message):
        est.partial_fit(X_bad, y)
    with pytest.raises(ValueError, match=message):
        est.predict(X_bad)
    assert est.n_samples_seen_ == len(y)  # the failed call learned nothing


@pytest.mark.parametrize("cls", REGRESSORS)
def test_non_finite_targets_are_rejected(cls):
    X, y = data(cls)
    y = y.copy()
    y[0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        make(cls).fit(X, y)
    y[0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        make(cls).partial_fit(X, y)


@pytest.mark.parametrize("cls", ALL)
def test_bad_sample_weight_is_rejected(cls):
    X, y = data(cls)
    with pytest.raises(ValueError, match="[Nn]egative"):
        make(cls).fit(X, y, sample_weight=-np.ones(len(y)))
    with pytest.raises(ValueError):
        make(cls).fit(X, y, sample_weight=np.full(len(y), np.nan))
    with pytest.raises(ValueError):
        make(cls).fit(X, y, sample_weight=np.ones(len(y) - 1))


# ---------------------------------------------------------------- shapes, counts
@pytest.mark.parametrize("cls", ALL)
def test_wrong_number_of_features(cls):
    X, y = data(cls)
    est = make(cls).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        est.predict(X[:, :2])
    with pytest.raises(ValueError, match="features"):
        est.partial_fit(np.hstack([X, X]), y)
    with pytest.raises(ValueError, match="features"):
        est.apply(X[:, :1])
    online = make(cls).partial_fit(X[:10], y[:10])
    with pytest.raises(ValueError, match="features"):
        online.partial_fit(X[10:20, :2], y[10:20])
    assert online.n_samples_seen_ == 10


@pytest.mark.parametrize("cls", ALL)
def test_one_dimensional_X_is_rejected(cls):
    X, y = data(cls)
    with pytest.raises(ValueError, match="2D"):
        make(cls).fit(X[:, 0], y)
    with pytest.raises(ValueError, match="2D"):
        make(cls).partial_fit(X[:, 0], y)
    est = make(cls).fit(X, y)
    with pytest.raises(ValueError, match="2D"):
        est.predict(X[0])


@pytest.mark.parametrize("cls", ALL)
def test_mismatched_lengths_are_rejected(cls):
    X, y = data(cls)
    with pytest.raises(ValueError, match="inconsistent"):
        make(cls).fit(X, y[:-1])


@pytest.mark.parametrize("cls", ALL)
def test_sparse_input_is_rejected_with_a_clear_message(cls):
    X, y = data(cls)
    with pytest.raises(TypeError, match="[Ss]parse"):
        make(cls).fit(sp.csr_matrix(X), y)


@pytest.mark.parametrize("cls", ALL)
def test_predict_before_fit(cls):
    with pytest.raises(NotFittedError):
        make(cls).predict(np.zeros((2, 3)))
    with pytest.raises(NotFittedError):
        make(cls).apply(np.zeros((2, 3)))


@pytest.mark.parametrize("params", [dict(n_estimators=0), dict(lifetime=0.0),
                                    dict(lifetime=-1.0), dict(min_samples_split=1),
                                    dict(max_depth=-1), dict(discount=-0.5)])
def test_invalid_parameters(params):
    X, y = data(MondrianForestClassifier)
    with pytest.raises(ValueError):
        MondrianForestClassifier(**params).fit(X, y)


# ----------------------------------------------------------------- empty batches
@pytest.mark.parametrize("cls", ALL)
def test_empty_batches(cls):
    X, y = data(cls)
    with pytest.raises(ValueError, match="0 sample"):
        make(cls).fit(X[:0], y[:0])
    with pytest.raises(ValueError, match="0 sample"):
        make(cls).partial_fit(X[:0], y[:0])
    est = make(cls).fit(X, y)
    before = output(est, X)
    assert est.partial_fit(X[:0], y[:0]) is est  # a no-op on a fitted model
    assert est.n_samples_seen_ == len(y)
    np.testing.assert_array_equal(output(est, X), before)
    with pytest.raises(ValueError, match="features"):
        est.partial_fit(np.empty((0, 5)), y[:0])
    with pytest.raises(ValueError, match="0 sample"):
        est.predict(X[:0])  # as scikit-learn's own estimators do


# --------------------------------------------------------------------- labels
@pytest.mark.parametrize("cls", CLASSIFIERS)
def test_string_labels(cls):
    X, y = data(cls)
    labels = np.array(["no", "yes"])[y]
    est = make(cls).fit(X, labels)
    assert est.classes_.tolist() == ["no", "yes"]
    assert est.predict(X).dtype == labels.dtype
    assert est.score(X, labels) > 0.9
    online = make(cls).partial_fit(X[:5], labels[:5])
    online.partial_fit(X[5:], labels[5:])
    assert set(online.predict(X)) <= {"no", "yes"}


@pytest.mark.parametrize("cls", CLASSIFIERS)
def test_continuous_labels_are_rejected(cls):
    X, _ = data(cls)
    with pytest.raises(ValueError, match="Unknown label type"):
        make(cls).fit(X, X[:, 0])


@pytest.mark.parametrize("cls", REGRESSORS)
def test_string_targets_are_rejected(cls):
    X, y = data(cls)
    with pytest.raises(ValueError):
        make(cls).fit(X, np.array(["a", "b"])[(y > 1).astype(int)])


@pytest.mark.parametrize("cls", CLASSIFIERS)
def test_single_class(cls):
    X, _ = data(cls)
    est = make(cls).fit(X, np.full(len(X), 7))
    np.testing.assert_array_equal(est.predict(X), 7)
    np.testing.assert_allclose(est.predict_proba(X), 1.0)


# ------------------------------------------------------- degenerate feature spaces
@pytest.mark.parametrize("cls", ALL)
def test_constant_features(cls):
    X, y = data(cls)
    X = np.column_stack([np.full(len(X), 3.0), X, np.zeros(len(X))])
    est = make(cls).fit(X, y)
    for tree in est.trees_:  # no split is ever made on a constant feature
        n = tree.n_nodes
        internal = tree.arrays.left[:n] != -1
        assert not np.isin(tree.arrays.feature[:n][internal], [0, X.shape[1] - 1]).any()
    assert est.score(X, y) > 0.7


@pytest.mark.parametrize("cls", ALL)
def test_all_features_constant(cls):
    X, y = data(cls)
    X = np.ones((len(y), 2))
    est = make(cls).fit(X, y)
    assert all(tree.n_nodes == 1 for tree in est.trees_)
    if cls in CLASSIFIERS:
        # One zero-extent block: the leaf holds the class frequencies.
        np.testing.assert_allclose(est.predict_proba(X[:1])[0], np.bincount(y) / len(y))
    else:
        mean, std = est.predict(X[:1], return_std=True)  # the root: unbiased variance
        np.testing.assert_allclose([mean[0], std[0]], [y.mean(), y.std(ddof=1)])
    online = make(cls)
    for i in range(0, len(y), 7):
        online.partial_fit(X[i:i + 7], y[i:i + 7])
    np.testing.assert_allclose(output(online, X[:3]), output(est, X[:3]))


@pytest.mark.parametrize("cls", ALL)
def test_duplicate_rows(cls):
    X, y = data(cls, n=20)
    X = np.vstack([X, X, X])
    y = np.concatenate([y, y, y])
    if cls in CLASSIFIERS:
        y[:20] = 1 - y[:20]  # duplicated points with conflicting labels
    est = make(cls).fit(X, y)
    assert all(tree.n_nodes <= 2 * 20 - 1 for tree in est.trees_)
    out = output(est, X[:20])
    assert np.all(np.isfinite(out))
    if cls in CLASSIFIERS:
        # Each point has its label twice and the other once.
        proba = est.predict_proba(X[20:40])
        np.testing.assert_allclose(proba[np.arange(20), y[20:40]], 2 / 3)
    online = make(cls)
    for i in np.random.RandomState(0).permutation(len(y)):
        online.partial_fit(X[i:i + 1], y[i:i + 1], **(
            {"classes": [0, 1]} if cls in CLASSIFIERS else {}))
    assert all(tree.n_nodes <= 2 * 20 - 1 for tree in online.trees_)
    np.testing.assert_allclose(output(online, X[:20]).sum(axis=1) if cls in CLASSIFIERS
                               else 1.0, 1.0)


@pytest.mark.parametrize("cls", ALL)
def test_single_sample(cls):
    X, y = data(cls, n=1)
    est = make(cls).fit(X, y)
    assert all(tree.n_nodes == 1 for tree in est.trees_)
    far = X + 10.0
    if cls in CLASSIFIERS:
        np.testing.assert_array_equal(est.predict(np.vstack([X, far])), [y[0], y[0]])
    else:
        mean, std = est.predict(np.vstack([X, far]), return_std=True)
        np.testing.assert_allclose(mean, y[0])
        np.testing.assert_allclose(std, 0.0, atol=1e-12)
    online = make(cls).partial_fit(X, y)
    X2, y2 = data(cls, n=10, seed=1)
    online.partial_fit(X2, y2)
    assert online.n_samples_seen_ == 11


@pytest.mark.parametrize("cls", ALL)
def test_single_feature(cls):
    X, y = data(cls, n_features=1)
    est = make(cls).fit(X, y)
    assert est.n_features_in_ == 1
    assert est.score(X, y) > 0.8
    online = make(cls)
    for i in range(0, len(y), 10):
        online.partial_fit(X[i:i + 10], y[i:i + 10])
    assert online.score(X, y) > 0.8


@pytest.mark.parametrize("cls", ALL)
def test_lists_integers_and_float32_are_accepted(cls):
    X, y = data(cls)
    Xi = np.round(X * 10).astype(np.int32)
    a = output(make(cls).fit(Xi.tolist(), y.tolist()), Xi)
    b = output(make(cls).fit(Xi.astype(np.float32), y), Xi.astype(np.float64))
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("cls", ALL)
def test_large_and_tiny_scales(cls):
    X, y = data(cls)
    for scale in (1e-9, 1e9):
        est = make(cls).fit(X * scale, y)
        assert est.score(X * scale, y) > 0.8
        assert np.all(np.isfinite(output(est, X * scale + 5 * scale)))


@pytest.mark.parametrize("model", ["MondrianForestClassifier", "AMFClassifier"])
def test_a_row_whose_shift_to_the_origin_overflows_is_predicted(model):
    # Finite rows can become infinite in the engine's coordinates (x - origin, here
    # -1e308 - 1e308): they lie outside every box, and predicting them must not fail
    # in batches (the per-tree path) or alone (the per-call fast path).
    import mondrianlearn

    X = np.array([[1e308], [0.0], [5e307]])
    y = np.array([0, 1, 0])
    model = getattr(mondrianlearn, model)(n_estimators=2, random_state=0,
                                          feature_scale=None).fit(X, y)
    far = np.full((600, 1), -1e308)
    batch = model.predict_proba(far)
    alone = model.predict_proba(far[:1])
    assert np.all(np.isfinite(batch)) and np.allclose(batch.sum(axis=1), 1.0)
    assert np.array_equal(batch[:1], alone)
