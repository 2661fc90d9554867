"""The Mondrian kernel: feature map, Laplace-kernel approximation, linear models."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.spatial.distance import cdist

from mondrianlearn import MondrianKernel, MondrianKernelClassifier, MondrianKernelRegressor


def _laplace(X, Y, lifetime):
    return np.exp(-lifetime * cdist(X, Y, "cityblock"))


# ------------------------------------------------------------------ feature map
def test_kernel_approximation_error_falls_with_the_number_of_trees():
    X = np.random.RandomState(0).uniform(size=(100, 2))
    exact = _laplace(X, X, 10.0)
    errors = []
    for n_trees in (10, 100, 1000):
        mk = MondrianKernel(n_trees=n_trees, lifetime=10.0, random_state=0).fit(X)
        errors.append(np.abs(mk.kernel(X) - exact).max())
    assert errors[0] > errors[1] > errors[2]
    assert errors[2] < 0.08


def test_kernel_is_unbiased_on_average():
    X = np.random.RandomState(1).uniform(size=(30, 3))
    mk = MondrianKernel(n_trees=3000, lifetime=2.0, random_state=0).fit(X)
    diff = mk.kernel(X) - _laplace(X, X, 2.0)
    assert abs(diff.mean()) < 0.01


def test_transform_is_sparse_with_one_entry_per_tree():
    X = np.random.RandomState(0).uniform(size=(40, 3))
    mk = MondrianKernel(n_trees=7, lifetime=3.0, random_state=0).fit(X)
    Z = mk.transform(X)
    assert sp.isspmatrix_csr(Z) or isinstance(Z, sp.csr_array)
    assert Z.shape == (40, mk.n_features_out_)
    np.testing.assert_array_equal(Z.getnnz(axis=1), 7)
    np.testing.assert_allclose(Z.data, 1 / np.sqrt(7))
    # Every column is used by some training row (only non-empty cells are features).
    assert np.all(Z.getnnz(axis=0) > 0)
    np.testing.assert_allclose(mk.kernel(X).diagonal(), 1.0)


def test_points_outside_the_training_boxes_fall_in_one_leaf_per_tree():
    X = np.random.RandomState(0).uniform(size=(50, 2))
    mk = MondrianKernel(n_trees=5, lifetime=4.0, random_state=0).fit(X)
    far = np.array([[10.0, -10.0], [-5.0, 0.5], [0.5, 100.0]])
    Z = mk.transform(far)
    np.testing.assert_array_equal(Z.getnnz(axis=1), 5)


def test_lifetime_zero_gives_the_constant_kernel():
    X = np.random.RandomState(0).uniform(size=(20, 2))
    mk = MondrianKernel(n_trees=4, lifetime=0.0, random_state=0).fit(X)
    assert mk.n_features_out_ == 4
    np.testing.assert_allclose(mk.kernel(X), 1.0)


def test_same_seed_same_features_and_n_jobs_invariance():
    X = np.random.RandomState(0).uniform(size=(60, 2))
    a = MondrianKernel(n_trees=8, lifetime=3.0, random_state=5).fit(X).transform(X)
    b = MondrianKernel(n_trees=8, lifetime=3.0, random_state=5, n_jobs=2).fit(X).transform(X)
    assert (a != b).nnz == 0


def test_partial_fit_keeps_old_columns_and_adds_new_ones():
    rng = np.random.RandomState(0)
    X1, X2 = rng.uniform(size=(50, 2)), rng.uniform(-1, 2, size=(50, 2))
    mk = MondrianKernel(n_trees=6, lifetime=5.0, random_state=0).partial_fit(X1)
    Z1 = mk.transform(X1)
    n_before = mk.n_features_out_
    mk.partial_fit(X2)
    assert mk.n_features_out_ > n_before
    Z1_after = mk.transform(X1)
    # Earlier rows keep their cells; the new columns are zero for them.
    assert (Z1_after[:, :n_before] != Z1).nnz == 0
    assert Z1_after[:, n_before:].nnz == 0
    np.testing.assert_array_equal(mk.transform(X2).getnnz(axis=1), 6)


def test_partial_fit_kernel_still_approximates_the_laplace_kernel():
    rng = np.random.RandomState(2)
    X = rng.uniform(size=(60, 2))
    mk = MondrianKernel(n_trees=1500, lifetime=4.0, random_state=0)
    for i in range(0, 60, 15):
        mk.partial_fit(X[i:i + 15])
    assert np.abs(mk.kernel(X) - _laplace(X, X, 4.0)).max() < 0.1


def test_kernel_with_two_arguments_and_feature_names():
    X = np.random.RandomState(0).uniform(size=(30, 2))
    mk = MondrianKernel(n_trees=10, lifetime=2.0, random_state=0).fit(X)
    K = mk.kernel(X[:5], X[5:12])
    assert K.shape == (5, 7)
    names = mk.get_feature_names_out()
    assert len(names) == mk.n_features_out_ and names[0] == "mondriankernel0"


def test_bad_inputs_raise_clear_errors():
    mk = MondrianKernel(n_trees=3, lifetime=1.0, random_state=0)
    with pytest.raises(ValueError):
        mk.fit(np.array([[0.0, np.nan]]))
    with pytest.raises(ValueError):
        mk.fit(np.array([[0.0, np.inf]]))
    with pytest.raises(ValueError):
        mk.fit(np.zeros(5))
    with pytest.raises(ValueError):
        mk.fit(np.zeros((0, 2)))
    mk.fit(np.random.RandomState(0).uniform(size=(10, 2)))
    with pytest.raises(ValueError, match="features"):
        mk.transform(np.zeros((3, 4)))
    with pytest.raises(ValueError):
        MondrianKernel(lifetime=-1.0).fit(np.zeros((3, 2)))


def test_constant_and_duplicate_features():
    X = np.column_stack([np.ones(30), np.repeat(np.arange(10.0), 3)])
    mk = MondrianKernel(n_trees=20, lifetime=1.0, random_state=0).fit(X)
    K = mk.kernel(X)
    # Duplicate rows always share every cell.
    np.testing.assert_allclose(K[0, 1], 1.0)
    assert np.abs(K - _laplace(X, X, 1.0)).max() < 0.5


# ------------------------------------------------------------------- regression
def _regression(n=300, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(n, 2))
    y = np.sin(6 * X[:, 0]) + X[:, 1] + 0.05 * rng.randn(n)
    return X, y


def test_regressor_sweep_selects_a_lifetime_and_records_the_path():
    X, y = _regression()
    reg = MondrianKernelRegressor(n_trees=20, alpha=1e-2, selection="validation",
                                  random_state=0).fit(X, y)
    path = reg.lifetime_path_
    n = len(path["lifetimes"])
    assert set(path) >= {"lifetimes", "n_features", "train_error", "validation_error",
                         "log_marginal_likelihood", "time"}
    assert all(len(v) == n for v in path.values())
    assert path["lifetimes"][0] == 0 and np.all(np.diff(path["lifetimes"]) >= 0)
    np.testing.assert_array_equal(path["n_features"], 20 + np.arange(n))
    best = np.nanargmin(path["validation_error"])
    assert path["lifetimes"][best] < reg.lifetime_ <= reg.max_lifetime_
    assert reg.score(X, y) > 0.95
    # The final partitions are those of the chosen lifetime.
    assert reg.n_kernel_features_ == path["n_features"][best]


def test_regressor_sweep_recovers_the_lifetime_of_a_laplace_gp():
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(600, 2))
    K = _laplace(X, X, 10.0) + 1e-4 * np.eye(600)
    y = np.linalg.cholesky(K) @ rng.randn(600) + 0.01 * rng.randn(600)
    reg = MondrianKernelRegressor(n_trees=30, alpha=1e-2, max_lifetime=60.0,
                                  early_stopping=False, random_state=0).fit(X, y)
    assert 2.0 < reg.lifetime_ < 50.0


def test_marginal_likelihood_selection_uses_all_rows():
    X, y = _regression(200)
    reg = MondrianKernelRegressor(n_trees=10, alpha=1e-2, random_state=0).fit(X, y)
    assert reg.selection == "marginal_likelihood"
    path = reg.lifetime_path_
    assert np.all(np.isnan(path["validation_error"]))
    best = np.nanargmax(path["log_marginal_likelihood"])
    assert reg.n_kernel_features_ == path["n_features"][best]


def test_regressor_fixed_lifetime_is_the_exact_ridge_solution():
    X, y = _regression(150)
    w = np.random.RandomState(1).uniform(0.5, 2, 150)
    reg = MondrianKernelRegressor(n_trees=8, lifetime=4.0, alpha=0.1,
                                  random_state=0).fit(X, y, sample_weight=w)
    assert reg.lifetime_path_ is None
    Phi = reg.feature_map(X).toarray()
    mean = np.average(y, weights=w)
    A = Phi.T @ (w[:, None] * Phi) + 0.1 * np.eye(Phi.shape[1])
    direct = np.linalg.solve(A, Phi.T @ (w * (y - mean)))
    np.testing.assert_allclose(reg.coef_, direct, atol=1e-8)
    np.testing.assert_allclose(reg.predict(X), mean + Phi @ direct, atol=1e-8)


def test_regressor_partial_fit_equals_batch_solve_on_all_rows_seen():
    X, y = _regression(240, seed=3)
    X[120:] += 0.5  # later rows leave the first boxes: new cells appear
    reg = MondrianKernelRegressor(n_trees=6, lifetime=6.0, alpha=0.05, random_state=0)
    reg.partial_fit(X[:60], y[:60])
    n_first = reg.n_kernel_features_
    for i in range(60, 240, 45):
        reg.partial_fit(X[i:i + 45], y[i:i + 45])
    assert reg.n_kernel_features_ > n_first
    Phi = reg.feature_map(X).toarray()
    A = Phi.T @ Phi + 0.05 * np.eye(Phi.shape[1])
    direct = np.linalg.solve(A, Phi.T @ (y - reg.intercept_))
    np.testing.assert_allclose(reg.coef_, direct, atol=1e-8)
    assert reg.intercept_ == pytest.approx(y[:60].mean())
    assert reg.n_samples_seen_ == 240


def test_regressor_partial_fit_with_auto_lifetime_then_online():
    X, y = _regression(300)
    reg = MondrianKernelRegressor(n_trees=10, alpha=1e-2, random_state=0)
    reg.partial_fit(X[:200], y[:200])
    lifetime = reg.lifetime_
    reg.partial_fit(X[200:], y[200:])
    assert reg.lifetime_ == lifetime
    assert reg.score(X, y) > 0.9


def test_zero_weights_are_ignored():
    X, y = _regression(100)
    w = np.ones(100)
    w[::3] = 0
    a = MondrianKernelRegressor(n_trees=5, lifetime=3.0, random_state=0).fit(X, y, w)
    b = MondrianKernelRegressor(n_trees=5, lifetime=3.0, random_state=0).fit(X[w > 0], y[w > 0])
    np.testing.assert_allclose(a.predict(X), b.predict(X), atol=1e-10)


# --------------------------------------------------------------- classification
def _xor(n=400, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.uniform(-1, 1, size=(n, 2))
    return X, (X[:, 0] * X[:, 1] > 0).astype(int)


@pytest.mark.parametrize("loss", ["log_loss", "squared_hinge"])
def test_classifier_sweep_learns_xor(loss):
    X, y = _xor()
    clf = MondrianKernelClassifier(n_trees=20, loss=loss, random_state=0).fit(X, y)
    assert clf.score(X, y) > 0.88
    path = clf.lifetime_path_
    assert path["lifetimes"][0] == 0 and np.all(np.isnan(path["log_marginal_likelihood"]))
    # Lifetime 0 cannot separate XOR; the chosen lifetime can.
    assert path["validation_error"][0] > 0.3 > np.nanmin(path["validation_error"])


def test_classifier_multiclass_strings_and_proba():
    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, size=(300, 2))
    y = np.array(["a", "b", "c"])[(X[:, 0] > 0).astype(int) + (X[:, 1] > 0)]
    clf = MondrianKernelClassifier(n_trees=20, lifetime=2.0, random_state=0).fit(X, y)
    assert clf.score(X, y) > 0.85
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(clf.classes_[proba.argmax(axis=1)], clf.predict(X))
    assert not hasattr(MondrianKernelClassifier(loss="squared_hinge"), "predict_proba")


def test_classifier_partial_fit_and_unseen_labels():
    X, y = _xor(600, seed=1)
    clf = MondrianKernelClassifier(n_trees=20, lifetime=3.0, random_state=0)
    for _ in range(3):
        for i in range(0, 600, 100):
            clf.partial_fit(X[i:i + 100], y[i:i + 100], classes=[0, 1])
    assert clf.score(X, y) > 0.85
    with pytest.raises(ValueError, match="not in `classes`"):
        clf.partial_fit(X[:3], np.array([0, 1, 5]))


def test_classifier_grows_classes_and_keeps_its_scores():
    X, y = _xor(600, seed=1)
    clf = MondrianKernelClassifier(n_trees=20, lifetime=3.0, random_state=0)
    clf.partial_fit(X[:10], y[:10])  # no classes declared: they come from the data
    for i in range(10, 600, 100):
        clf.partial_fit(X[i:i + 100], y[i:i + 100])
    before = clf.predict(X)
    T = np.vstack([X[:50], [[5.0, 5.0]]])
    clf.partial_fit(T[-1:], [7])  # a third class arrives: binary -> one-vs-rest
    assert list(clf.classes_) == [0, 1, 7]
    assert clf.coef_.shape[1] == 3
    proba = clf.predict_proba(X[:50])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert (clf.predict(X) == before).mean() > 0.95


def test_classifier_sweep_children_inherit_weights():
    """Right after a cut the predictions are unchanged (weights are copied)."""
    from mondrianlearn.kernel._sweep import FlatForest, sgd_sweep_events
    from mondrianlearn.engine.random import spawn_states
    from mondrianlearn.kernel._features import new_partition, sample_partition

    X, y = _xor(100)
    trees = []
    for state in spawn_states(0, 3):
        tree = new_partition(2, state)
        sample_partition(tree, X, 5.0)
        trees.append(tree)
    f = FlatForest(trees, X)
    rng = np.random.RandomState(0)
    W = rng.randn(int(f.offset[-1]), 1)
    active = np.tile(f.roots, (100, 1))
    scale = 1 / np.sqrt(3)
    before = W[active].sum(axis=1) * scale
    record = np.zeros((2, 4))
    state = spawn_states(1, 1)[0]
    # n_epochs=0: only the cut.
    sgd_sweep_events(f.events, 0, 1, f.left, f.right, f.tree, f.start, f.end, f.pts, W,
                     active, y.astype(np.int64), np.ones(100), np.zeros(100),
                     np.arange(100), 0, 0.1, 0.0, 0, scale, state, record, 3)
    after = W[active].sum(axis=1) * scale
    np.testing.assert_allclose(before, after)
    assert (active != f.roots).any()


# ------------------------------------------------------------ pickling, pandas
@pytest.mark.parametrize("make", [
    lambda: MondrianKernel(n_trees=5, lifetime=2.0, random_state=0),
    lambda: MondrianKernelRegressor(n_trees=5, alpha=0.1, random_state=0),
    lambda: MondrianKernelClassifier(n_trees=5, random_state=0),
])
def test_pickle_round_trip_and_pandas_input(make):
    pd = pytest.importorskip("pandas")
    X, y = _xor(120)
    frame = pd.DataFrame(X, columns=["u", "v"])
    est = make().fit(frame, y)
    clone = pickle.loads(pickle.dumps(est))
    method = "transform" if isinstance(est, MondrianKernel) else "predict"
    out, out2 = getattr(est, method)(frame), getattr(clone, method)(frame)
    if sp.issparse(out):
        assert (out != out2).nnz == 0
    else:
        np.testing.assert_array_equal(out, out2)
    assert list(est.feature_names_in_) == ["u", "v"]
    if isinstance(est, MondrianKernelRegressor):
        clone.partial_fit(frame.iloc[:10], y[:10])  # the factor survives pickling
        assert clone.n_samples_seen_ == est.n_samples_seen_ + 10
