"""Mondrian forest predictions against the pure-Python reference (tests/naive.py).

Small random forests are fitted (in batch and online, with infinite and finite
lifetimes, with truncated paths, with sample weights); the reference reads only the
tree structure, recomputes node statistics by routing the training points and
applies the formulas of ALGORITHMS.md sections 2-3 literally. Both must agree to
1e-10 on test points inside, around and far outside the training data.
"""

import naive
import numpy as np
import pytest

from mondrianlearn import (
    MondrianForestClassifier,
    MondrianForestRegressor,
    MondrianTreeClassifier,
    MondrianTreeRegressor,
)
from mondrianlearn.utils.feature_scale import tree_in_raw_units

TOL = 1e-10


def make_data(seed=0, n=40, n_features=3):
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(n, n_features))
    y = (X[:, 0] > 0.5).astype(int) + (X[:, 1] > 0.6).astype(int)
    flip = rng.rand(n) < 0.15
    y[flip] = rng.randint(3, size=flip.sum())
    X_test = np.vstack([
        rng.uniform(-0.5, 1.5, size=(50, n_features)),  # around the data
        X[:8],  # training points: inside every box of their path
        rng.uniform(0.2, 0.8, size=(10, n_features)),  # inside the data hull
        np.full((1, n_features), 50.0), np.full((1, n_features), -50.0),  # far away
    ])
    return X, y, X_test


def naive_trees(est):
    """The reference trees, in the units of ``X`` (the model's trees hold features
    relative to an origin, ``utils.feature_scale``)."""
    return [naive.NaiveTree(tree_in_raw_units(est, tree)) for tree in est.trees_]


def gamma_of(est):
    return 10.0 * est.n_features_in_ if est.discount is None else est.discount


def fit_online(est, X, y, n_batches=4, **kwargs):
    for rows in np.array_split(np.arange(X.shape[0]), n_batches):
        est.partial_fit(X[rows], y[rows], **kwargs)
    return est


# ------------------------------------------------------------------ classification
CLASSIFIER_CASES = {
    "batch": (dict(), "fit"),
    "online": (dict(), "online"),
    "finite-lifetime": (dict(lifetime=1.5), "fit"),
    "finite-lifetime-online": (dict(lifetime=2.5), "online"),
    "max-depth": (dict(max_depth=2), "fit"),
    "max-depth-0": (dict(max_depth=0), "online"),
    "discount": (dict(discount=2.0), "fit"),
    "min-samples-split": (dict(min_samples_split=5, lifetime=4.0), "online"),
}


@pytest.mark.parametrize("case", sorted(CLASSIFIER_CASES))
def test_predict_proba_matches_reference(case):
    params, how = CLASSIFIER_CASES[case]
    X, y, X_test = make_data(seed=len(case))
    est = MondrianForestClassifier(n_estimators=3, random_state=7, **params)
    if how == "fit":
        est.fit(X, y)
    else:
        fit_online(est, X, y)
    y_index = np.searchsorted(est.classes_, y)
    expected = naive.forest_predict_proba(naive_trees(est), X, y_index,
                                          len(est.classes_), X_test, gamma_of(est),
                                          max_depth=est.max_depth)
    proba = est.predict_proba(X_test)
    np.testing.assert_allclose(proba, np.array(expected), rtol=0, atol=TOL)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-12)


def test_predict_proba_with_sample_weight_and_absent_class():
    X, y, X_test = make_data(seed=3)
    weights = np.random.RandomState(1).choice([0.0, 0.5, 1.0, 3.0], size=len(y))
    labels = np.array(["a", "b", "c", "z"])[y]  # "z" never occurs
    est = MondrianForestClassifier(n_estimators=2, random_state=0)
    est.partial_fit(X[:20], labels[:20], classes=["a", "b", "c", "z"],
                    sample_weight=weights[:20])
    est.partial_fit(X[20:], labels[20:], sample_weight=weights[20:])
    assert est.classes_.tolist() == ["a", "b", "c", "z"]
    y_index = np.searchsorted(est.classes_, labels)
    expected = naive.forest_predict_proba(naive_trees(est), X, y_index, 4, X_test,
                                          gamma_of(est), weights=weights)
    np.testing.assert_allclose(est.predict_proba(X_test), expected, rtol=0, atol=TOL)


def test_node_counts_and_posteriors_match_reference():
    X, y, _ = make_data(seed=4)
    est = fit_online(MondrianTreeClassifier(random_state=3, lifetime=3.0), X, y)
    tree = naive_trees(est)[0]
    counts = naive.leaf_class_counts(tree, X, np.searchsorted(est.classes_, y), 3)
    view = est.tree_
    for node in range(view.node_count):
        np.testing.assert_allclose(view.value[node], counts[node], rtol=0, atol=TOL)
    ikn = naive.ikn_counts(tree, counts)
    post = naive.posteriors(tree, ikn, gamma_of(est), 3)
    for node in range(view.node_count):
        np.testing.assert_allclose(view.posterior[node], post[node], rtol=0, atol=TOL)
        assert abs(sum(post[node]) - 1.0) < 1e-12


def test_apply_matches_reference_routing():
    X, y, X_test = make_data(seed=5)
    est = fit_online(MondrianForestClassifier(n_estimators=3, random_state=1), X, y)
    leaves = est.apply(X_test)
    assert leaves.shape == (X_test.shape[0], 3)
    for t, tree in enumerate(naive_trees(est)):
        assert [tree.route(x)[-1] for x in X_test] == leaves[:, t].tolist()


def test_far_point_uses_root_with_full_discount():
    """Far away, the point branches off above the root with discount close to 1."""
    X, y, _ = make_data(seed=6)
    est = MondrianTreeClassifier(random_state=0).fit(X, y)
    far = est.predict_proba(np.full((1, 3), 1e6))[0]
    counts = np.bincount(np.searchsorted(est.classes_, y), minlength=3).astype(float)
    tree = naive_trees(est)[0]
    ikn = np.array(naive.ikn_counts(tree, naive.leaf_class_counts(
        tree, X, np.searchsorted(est.classes_, y), 3))[tree.root])
    assert ikn.sum() <= counts.sum()
    # d -> 1: (c_k - t_k + t / K) / c
    t = np.minimum(ikn, 1.0)
    np.testing.assert_allclose(far, (ikn - t + t.sum() / 3) / ikn.sum(), atol=1e-4)


def test_expected_discount_is_the_truncated_exponential_mean():
    """The branch-off node's mean discount, computed from the node's own discount,
    equals ``eta / (eta + gamma) * (1 - exp(-(eta + gamma) delta)) / p`` to a few
    units in the last place, on both sides of the ``gamma * delta = log 2`` switch
    and where the terms are tiny (no cancellation)."""
    from decimal import Decimal, getcontext

    from mondrianlearn.forest._smoothing import expected_discount, node_discount

    getcontext().prec = 50

    def exact(eta, delta, gamma):  # 50 significant digits
        e, d, g = Decimal(eta), Decimal(delta), Decimal(gamma)
        num = 1 - (-(e + g) * d).exp()
        p = 1 - (-e * d).exp()
        return float(e / (e + g) * num / p)

    worst = 0.0
    for eta in (1e-9, 1e-3, 0.3, 7.0, 400.0):
        for delta in (1e-12, 1e-6, 0.01, 0.5, 3.0):
            for gamma in (0.0, 1e-4, 0.05, 1.0, 80.0):
                p = -np.expm1(-eta * delta)
                got = expected_discount(eta, delta, gamma, p, node_discount(delta, gamma))
                want = exact(eta, delta, gamma)
                worst = max(worst, abs(got - want) / want)
    assert worst < 1e-14
    # limits: a node never cut, a point infinitely far
    assert expected_discount(2.0, np.inf, 3.0, 1.0, 0.5) == 2.0 / 5.0
    assert expected_discount(np.inf, 0.5, 3.0, 1.0, np.exp(-1.5)) == 1.0


# ---------------------------------------------------------------------- regression
REGRESSOR_CASES = {
    "batch": (dict(), "fit"),
    "online": (dict(), "online"),
    "finite-lifetime": (dict(lifetime=1.0), "fit"),
    "finite-lifetime-online": (dict(lifetime=2.0), "online"),
    "max-depth": (dict(max_depth=2), "online"),
    "min-samples-split": (dict(min_samples_split=6), "fit"),
}


def regression_data(seed):
    X, _, X_test = make_data(seed=seed)
    rng = np.random.RandomState(seed)
    y = np.sin(3 * X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.randn(X.shape[0]) + 2.0
    return X, y, X_test


@pytest.mark.parametrize("case", sorted(REGRESSOR_CASES))
def test_regression_mean_and_std_match_reference(case):
    params, how = REGRESSOR_CASES[case]
    X, y, X_test = regression_data(seed=len(case))
    est = MondrianForestRegressor(n_estimators=3, random_state=11, **params)
    if how == "fit":
        est.fit(X, y)
    else:
        fit_online(est, X, y)
    means, stds = naive.forest_predict_regression(naive_trees(est), X, y, X_test,
                                                  max_depth=est.max_depth)
    mean, std = est.predict(X_test, return_std=True)
    np.testing.assert_allclose(mean, means, rtol=0, atol=TOL)
    np.testing.assert_allclose(std ** 2, np.square(stds), rtol=0, atol=TOL)
    np.testing.assert_array_equal(est.predict(X_test), mean)


def test_regression_with_sample_weight_matches_reference():
    X, y, X_test = regression_data(seed=2)
    weights = np.random.RandomState(2).choice([0.0, 0.25, 1.0, 2.0], size=len(y))
    est = MondrianForestRegressor(n_estimators=2, random_state=5)
    est.fit(X, y, sample_weight=weights)
    means, stds = naive.forest_predict_regression(naive_trees(est), X, y, X_test,
                                                  weights=weights)
    mean, std = est.predict(X_test, return_std=True)
    np.testing.assert_allclose(mean, means, rtol=0, atol=TOL)
    np.testing.assert_allclose(std ** 2, np.square(stds), rtol=0, atol=TOL)


@pytest.mark.parametrize("max_depth", [None, 1, 3])
def test_weighted_decision_path_matches_reference(max_depth):
    X, y, X_test = regression_data(seed=3)
    est = fit_online(MondrianForestRegressor(n_estimators=3, random_state=2,
                                             lifetime=3.0, max_depth=max_depth), X, y)
    weights, ptr = est.weighted_decision_path(X_test)
    assert weights.shape == (X_test.shape[0], ptr[-1])
    dense = weights.toarray()
    for t, tree in enumerate(naive_trees(est)):
        block = dense[:, ptr[t]:ptr[t + 1]]
        np.testing.assert_allclose(block.sum(axis=1), 1.0, atol=1e-12)
        for i, x in enumerate(X_test):
            expected = np.zeros(tree.n_nodes)
            for node, w in naive.path_weights(tree, x, max_depth).items():
                expected[node] = w
            np.testing.assert_allclose(block[i], expected, rtol=0, atol=TOL)


def test_tree_regressor_node_values_match_reference():
    X, y, X_test = regression_data(seed=4)
    est = fit_online(MondrianTreeRegressor(random_state=0), X, y)
    tree = naive_trees(est)[0]
    moments = naive.node_moments(tree, X, y)
    value = est.tree_.value
    for node in range(tree.n_nodes):
        np.testing.assert_allclose(value[node], moments[node], rtol=0, atol=TOL)
    path = est.weighted_decision_path(X_test)
    assert path.shape == (X_test.shape[0], tree.n_nodes)
    means, _ = naive.forest_predict_regression([tree], X, y, X_test)
    np.testing.assert_allclose(est.predict(X_test), means, rtol=0, atol=TOL)


# ------------------------------------------------- storage growth while learning
def test_regrowing_a_large_paused_leaf_after_trimming():
    """A fitted (trimmed) tree whose big paused leaf must be re-sampled online."""
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(80, 2))
    y = np.zeros(80, dtype=int)
    clf = MondrianForestClassifier(n_estimators=2, random_state=0)
    clf.partial_fit(X[:60], y[:60], classes=[0, 1])  # one pure, paused leaf
    assert all(tree.n_nodes == 1 for tree in clf.trees_)
    clf.fit(X[:60], y[:60])  # trimmed storage
    y[60:] = (X[60:, 0] > 0.5).astype(int)
    clf.partial_fit(X[60:61], y[60:61])
    for i in range(61, 80, 3):
        clf.partial_fit(X[i:i + 3], y[i:i + 3])
    assert all(tree.n_nodes > 1 for tree in clf.trees_)
    X_test = rng.uniform(-0.5, 1.5, size=(40, 2))
    expected = naive.forest_predict_proba(naive_trees(clf), X, y, 2, X_test, gamma_of(clf))
    np.testing.assert_allclose(clf.predict_proba(X_test), expected, rtol=0, atol=TOL)

    reg = MondrianForestRegressor(n_estimators=2, min_samples_split=50, random_state=0)
    target = X.sum(axis=1)
    reg.fit(X[:49], target[:49])
    assert all(tree.n_nodes == 1 for tree in reg.trees_)
    for i in range(49, 80):
        reg.partial_fit(X[i:i + 1], target[i:i + 1])
    assert all(tree.n_nodes > 1 for tree in reg.trees_)
    means, stds = naive.forest_predict_regression(naive_trees(reg), X, target, X_test)
    mean, std = reg.predict(X_test, return_std=True)
    np.testing.assert_allclose(mean, means, rtol=0, atol=TOL)
    np.testing.assert_allclose(std ** 2, np.square(stds), rtol=0, atol=TOL)
