"""Behaviour of the Mondrian forest estimators (scikit-learn API, online learning)."""

import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_iris, make_regression

from mondrianlearn import (
    MondrianForestClassifier,
    MondrianForestRegressor,
    MondrianTreeClassifier,
    MondrianTreeRegressor,
)

ALL = [MondrianForestClassifier, MondrianForestRegressor, MondrianTreeClassifier,
       MondrianTreeRegressor]
FORESTS = [MondrianForestClassifier, MondrianForestRegressor]


def make(cls, **params):
    if cls in FORESTS:
        params.setdefault("n_estimators", 5)
    return cls(random_state=0, **params)


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    order = np.random.RandomState(0).permutation(len(y))
    return X[order], y[order]


@pytest.fixture(scope="module")
def regression():
    X, y = make_regression(n_samples=150, n_features=4, noise=5.0, random_state=0)
    return X, y


def data_for(cls, iris, regression):
    return iris if cls in (MondrianForestClassifier, MondrianTreeClassifier) else regression


def predictions(est, X):
    if hasattr(est, "predict_proba"):
        return est.predict_proba(X)
    return np.column_stack(est.predict(X, return_std=True))


# ------------------------------------------------------------------------ basics
def test_classifier_api(iris):
    X, y = iris
    clf = make(MondrianForestClassifier).fit(X, y)
    proba = clf.predict_proba(X)
    assert proba.shape == (150, 3)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert np.all(proba >= 0)
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[proba.argmax(axis=1)])
    assert clf.score(X, y) > 0.95
    leaves = clf.apply(X)
    assert leaves.shape == (150, 5) and leaves.dtype.kind == "i"
    for t, tree in enumerate(clf.trees_):
        assert np.all(tree.arrays.left[leaves[:, t]] == -1)
    assert clf.n_nodes_.shape == (5,) and clf.model_size_ > 0
    assert clf.n_samples_seen_ == 150


def test_regressor_api(regression):
    X, y = regression
    reg = make(MondrianForestRegressor, n_estimators=10).fit(X, y)
    mean, std = reg.predict(X, return_std=True)
    assert mean.shape == std.shape == (150,)
    assert np.all(std >= 0)
    np.testing.assert_array_equal(reg.predict(X), mean)
    assert reg.score(X, y) > 0.6
    weights, ptr = reg.weighted_decision_path(X[:7])
    assert weights.shape == (7, ptr[-1]) and len(ptr) == 11
    np.testing.assert_allclose(np.asarray(weights.sum(axis=1)).ravel(), 10.0)


@pytest.mark.parametrize("cls", ALL)
def test_partial_fit_learns_a_stream(cls, iris, regression):
    X, y = data_for(cls, iris, regression)
    est = make(cls)
    for rows in np.array_split(np.arange(len(y)), 10):
        est.partial_fit(X[rows], y[rows])
        est.predict(X[:3])  # predicting between batches is allowed
    assert est.n_samples_seen_ == len(y)
    assert est.score(X, y) > (0.9 if cls in (MondrianForestClassifier,
                                             MondrianTreeClassifier) else 0.5)


@pytest.mark.parametrize("cls", ALL)
def test_fit_discards_earlier_training(cls, iris, regression):
    X, y = data_for(cls, iris, regression)
    est = make(cls).partial_fit(X[:40], y[:40])
    est.fit(X, y)
    np.testing.assert_array_equal(predictions(est, X), predictions(make(cls).fit(X, y), X))


# ------------------------------------------------------------------------- pandas
@pytest.mark.parametrize("cls", ALL)
def test_pandas_input_and_feature_names(cls, iris, regression):
    pd = pytest.importorskip("pandas")
    X, y = data_for(cls, iris, regression)
    columns = [f"f{i}" for i in range(X.shape[1])]
    frame = pd.DataFrame(X, columns=columns)
    est = make(cls).fit(frame, pd.Series(y))
    assert est.feature_names_in_.tolist() == columns
    np.testing.assert_array_equal(predictions(est, frame), predictions(make(cls).fit(X, y), X))
    renamed = frame.rename(columns={"f0": "other"})
    with pytest.raises(ValueError, match="feature names"):
        est.predict(renamed)
    online = make(cls).partial_fit(frame.iloc[:50], y[:50])
    online.partial_fit(frame.iloc[50:], y[50:])
    assert online.feature_names_in_.tolist() == columns


# ---------------------------------------------------------------- pickle, clone
@pytest.mark.parametrize("cls", ALL)
def test_pickle_round_trip_keeps_predictions_and_learning(cls, iris, regression):
    X, y = data_for(cls, iris, regression)
    est = make(cls).partial_fit(X[:60], y[:60])
    before = predictions(est, X)
    copy = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(predictions(copy, X), before)
    # Both continue identically: the random streams were pickled too.
    est.partial_fit(X[60:], y[60:])
    copy.partial_fit(X[60:], y[60:])
    np.testing.assert_array_equal(predictions(copy, X), predictions(est, X))
    assert not np.array_equal(predictions(est, X), before)


@pytest.mark.parametrize("cls", ALL)
def test_clone_is_unfitted_with_same_parameters(cls, iris, regression):
    X, y = data_for(cls, iris, regression)
    est = make(cls, lifetime=5.0, max_depth=3).fit(X, y)
    copy = clone(est)
    assert copy.get_params() == est.get_params()
    assert not hasattr(copy, "trees_")
    np.testing.assert_array_equal(predictions(copy.fit(X, y), X), predictions(est, X))


# ------------------------------------------------------------------ determinism
@pytest.mark.parametrize("cls", ALL)
def test_same_seed_same_calls_same_model(cls, iris, regression):
    X, y = data_for(cls, iris, regression)

    def run():
        est = make(cls)
        est.partial_fit(X[:30], y[:30])
        est.partial_fit(X[30:], y[30:])
        return predictions(est, X)

    np.testing.assert_array_equal(run(), run())
    first = make(cls).fit(X, y)
    other = cls(random_state=1, **({"n_estimators": 5} if cls in FORESTS else {})).fit(X, y)
    assert first.trees_[0].arrays.time[0] != other.trees_[0].arrays.time[0]


@pytest.mark.parametrize("bootstrap", [False, True])
@pytest.mark.parametrize("cls", FORESTS)
def test_n_jobs_does_not_change_results(cls, bootstrap, iris, regression):
    X, y = data_for(cls, iris, regression)
    results = []
    for n_jobs in (1, 2):
        est = make(cls, n_estimators=6, n_jobs=n_jobs, bootstrap=bootstrap)
        est.fit(X[:80], y[:80])
        est.partial_fit(X[80:], y[80:])
        out = [predictions(est, X), est.apply(X)]
        if cls is MondrianForestRegressor:
            out.append(est.weighted_decision_path(X)[0].toarray())
        results.append(out)
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


# ------------------------------------------------------------------ class handling
def test_new_classes_appear_in_partial_fit(iris):
    X, y = iris
    labels = np.array(["setosa", "versicolor", "virginica"])[y]
    clf = make(MondrianForestClassifier)
    clf.partial_fit(X[labels == "virginica"], labels[labels == "virginica"])
    assert clf.classes_.tolist() == ["virginica"]
    np.testing.assert_allclose(clf.predict_proba(X[:5]), 1.0)
    clf.partial_fit(X[labels == "setosa"], labels[labels == "setosa"])
    assert clf.classes_.tolist() == ["setosa", "virginica"]
    clf.partial_fit(X[labels == "versicolor"], labels[labels == "versicolor"])
    assert clf.classes_.tolist() == ["setosa", "versicolor", "virginica"]
    proba = clf.predict_proba(X)
    assert proba.shape == (150, 3)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert clf.score(X, labels) > 0.9
    # The class counts follow the classes: same model as declaring them up front.
    declared = make(MondrianForestClassifier)
    for name in ("virginica", "setosa", "versicolor"):
        declared.partial_fit(X[labels == name], labels[labels == name],
                             classes=["setosa", "versicolor", "virginica"])
    np.testing.assert_allclose(declared.predict_proba(X), proba, atol=1e-12)


def test_declared_classes_reject_unknown_labels(iris):
    X, y = iris
    clf = make(MondrianForestClassifier).partial_fit(X[:10], y[:10] % 2, classes=[0, 1])
    assert clf.classes_.tolist() == [0, 1]
    with pytest.raises(ValueError, match="not in `classes`"):
        clf.partial_fit(X[10:20], np.full(10, 2))
    with pytest.raises(ValueError, match="classes"):
        clf.partial_fit(X[10:20], y[10:20] % 2, classes=[0, 1, 2])
    # The failed calls left the model unchanged and usable.
    assert clf.n_samples_seen_ == 10
    clf.partial_fit(X[10:20], y[10:20] % 2, classes=[0, 1])
    assert clf.n_samples_seen_ == 20


def test_sample_weight_counts_as_copies(iris):
    X, y = iris
    weights = np.random.RandomState(0).randint(1, 3, size=len(y)).astype(float)
    weighted = make(MondrianForestClassifier).fit(X, y, sample_weight=weights)
    copies = make(MondrianForestClassifier).fit(np.repeat(X, weights.astype(int), axis=0),
                                                np.repeat(y, weights.astype(int)))
    probe = np.random.RandomState(1).uniform(X.min(0) - 1, X.max(0) + 1, size=(40, 4))
    np.testing.assert_allclose(weighted.predict_proba(probe), copies.predict_proba(probe),
                               atol=1e-12)


@pytest.mark.parametrize("cls", ALL)
def test_zero_weight_rows_are_ignored(cls, iris, regression):
    X, y = data_for(cls, iris, regression)
    weights = np.ones(len(y))
    weights[::3] = 0.0
    weighted = make(cls).fit(X, y, sample_weight=weights)
    subset = make(cls).fit(X[weights > 0], y[weights > 0])
    a, b = predictions(weighted, X), predictions(subset, X)
    if a.shape[1] == 2:  # regression: compare mean and variance
        a[:, 1], b[:, 1] = a[:, 1] ** 2, b[:, 1] ** 2
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-9 * np.var(y))


# --------------------------------------------------------- regression uncertainty
def test_regressor_falls_back_to_training_mean_and_variance_far_away():
    rng = np.random.RandomState(0)
    X = rng.uniform(-3, 3, size=(200, 2))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] + 0.1 * rng.randn(200)
    for est in (MondrianForestRegressor(n_estimators=10, random_state=0).fit(X, y),
                MondrianTreeRegressor(random_state=0).fit(X, y)):
        mean, std = est.predict(np.array([[1e5, -1e5], [-1e5, 0.0]]), return_std=True)
        np.testing.assert_allclose(mean, y.mean(), rtol=1e-8)
        np.testing.assert_allclose(std, y.std(ddof=1), rtol=1e-8)  # unbiased
        near_mean, near_std = est.predict(X[:20], return_std=True)
        assert np.all(near_std < y.std())
        assert np.mean(np.abs(near_mean - y[:20])) < 0.3


def test_regressor_std_grows_away_from_data():
    rng = np.random.RandomState(0)
    X = rng.uniform(0, 1, size=(300, 1))
    y = np.sin(6 * X[:, 0]) + 0.05 * rng.randn(300)
    reg = MondrianForestRegressor(n_estimators=20, random_state=0).fit(X, y)
    _, std = reg.predict(np.array([[0.5], [1.5], [3.0], [30.0]]), return_std=True)
    assert std[0] < std[1] < std[2] <= std[3] + 1e-12


# --------------------------------------------------------------- inspectable tree
@pytest.mark.parametrize("cls", [MondrianTreeClassifier, MondrianTreeRegressor])
@pytest.mark.parametrize("how", ["fit", "online"])
def test_tree_view_is_consistent(cls, how, iris, regression):
    X, y = data_for(cls, iris, regression)
    est = cls(random_state=0, lifetime=np.inf if cls is MondrianTreeClassifier else 8.0)
    if how == "fit":
        est.fit(X, y)
    else:
        for rows in np.array_split(np.arange(len(y)), 15):
            est.partial_fit(X[rows], y[rows])
    tree = est.tree_
    n = tree.node_count
    assert tree.parent[tree.root] == -1
    internal = np.flatnonzero(tree.children_left != -1)
    leaves = np.flatnonzero(tree.children_left == -1)
    assert len(internal) + len(leaves) == n == 2 * len(leaves) - 1
    assert tree.n_leaves == len(leaves)
    with pytest.raises(ValueError):
        tree.threshold[0] = 1.0  # read-only
    # Every training point lies in the box of each node of its path (boxes are
    # moved back from the origin to the units of X: to within float64 rounding).
    slack = 4 * np.spacing(np.abs(X).max(axis=0))
    leaf_of = est.apply(X)[:, 0]
    for i, x in enumerate(X):
        node = leaf_of[i]
        assert tree.children_left[node] == -1
        while node != -1:
            assert np.all(tree.lower[node] <= x + slack)
            assert np.all(x <= tree.upper[node] + slack)
            node = tree.parent[node]
    for node in internal:
        a, b, f = tree.children_left[node], tree.children_right[node], tree.feature[node]
        assert tree.parent[a] == tree.parent[b] == node
        # Counts add up; split times increase with depth; the threshold separates
        # the children's boxes and lies in the parent's.
        assert tree.n_node_samples[node] == tree.n_node_samples[a] + tree.n_node_samples[b]
        assert tree.split_time[node] > (0.0 if node == tree.root
                                        else tree.split_time[tree.parent[node]])
        assert tree.split_time[a] > tree.split_time[node] < tree.split_time[b]
        assert tree.upper[a, f] <= tree.threshold[node] < tree.lower[b, f]
        assert tree.lower[node, f] <= tree.threshold[node] <= tree.upper[node, f]
        np.testing.assert_allclose(tree.lower[node], np.minimum(tree.lower[a], tree.lower[b]))
        np.testing.assert_allclose(tree.upper[node], np.maximum(tree.upper[a], tree.upper[b]))
        if cls is MondrianTreeClassifier:
            np.testing.assert_allclose(tree.value[node], tree.value[a] + tree.value[b])
    assert tree.n_node_samples[tree.root] == len(y)
    np.testing.assert_array_equal(np.bincount(leaf_of, minlength=n)[leaves],
                                  tree.n_node_samples[leaves])
    assert np.all(tree.split_time[leaves] == est.lifetime)
    depth = np.zeros(n, dtype=int)
    for node in range(n):
        p = tree.parent[node]
        while p != -1:
            depth[node] += 1
            p = tree.parent[p]
    assert tree.max_depth == depth.max()
    if cls is MondrianTreeClassifier:
        np.testing.assert_allclose(tree.value[tree.root], np.bincount(y))
        np.testing.assert_allclose(tree.posterior.sum(axis=1), 1.0)
        assert np.all(tree.paused[leaves])  # infinite lifetime: every leaf is pure
        for leaf in leaves:
            assert np.count_nonzero(tree.value[leaf]) == 1
    else:
        np.testing.assert_allclose(tree.value[tree.root], [y.mean(), y.var()])


def test_max_depth_truncates_prediction_paths(iris):
    X, y = iris
    deep = MondrianTreeClassifier(random_state=0).fit(X, y)
    stump = MondrianTreeClassifier(random_state=0, max_depth=0).fit(X, y)
    assert stump.tree_.node_count == deep.tree_.node_count  # the tree is not cut
    # Depth 0: every prediction uses the root's posterior (inside the data box).
    root = stump.tree_.root
    inside = (X.min(0) + X.max(0)) / 2
    np.testing.assert_allclose(stump.predict_proba(inside[None])[0],
                               stump.tree_.posterior[root])
    assert deep.score(X, y) > stump.score(X, y)
