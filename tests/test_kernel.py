"""The Mondrian kernel: feature map, Laplace-kernel approximation, linear models."""

import copy
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
    rng = np.random.RandomState(0)
    X, T = rng.uniform(size=(20, 2)), rng.uniform(-5, 5, size=(7, 2))
    mk = MondrianKernel(n_trees=4, lifetime=0.0, random_state=0).fit(X)
    assert mk.n_features_out_ == 4
    np.testing.assert_allclose(mk.kernel(X), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(mk.kernel(X, T), 1.0, rtol=0, atol=1e-12)
    # The regressor on the constant kernel predicts one value everywhere: the
    # weighted mean plus the ridge-shrunk mean residual (zero here).
    y = rng.randn(20)
    reg = MondrianKernelRegressor(n_trees=4, lifetime=0.0, alpha=0.1,
                                  random_state=0).fit(X, y)
    np.testing.assert_allclose(reg.predict(T), y.mean(), rtol=0, atol=1e-12)


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
    mk = MondrianKernel(n_trees=2000, lifetime=1.0, random_state=0).fit(X)
    K = mk.kernel(X)
    # Duplicate rows (blocks of three) always share every cell: their kernel is 1.
    same = np.equal.outer(X[:, 1], X[:, 1])
    np.testing.assert_allclose(K[same], 1.0, rtol=0, atol=1e-12)
    assert K[~same].max() < 0.5
    # A constant feature is never cut: the kernel is that of the other feature alone,
    # exactly (the same random stream gives the same partitions).
    for tree in mk.trees_:
        internal = tree.arrays.left[: tree.n_nodes] != -1
        assert np.all(tree.arrays.feature[: tree.n_nodes][internal] == 1)
    alone = MondrianKernel(n_trees=2000, lifetime=1.0, random_state=0).fit(X[:, 1:])
    np.testing.assert_array_equal(K, alone.kernel(X[:, 1:]))
    assert np.abs(K - _laplace(X, X, 1.0)).max() < 0.05


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
    # within 30% of the truth (8.2 to 8.7 over six seeds of the data); the choice is
    # the likelihood's interior maximum, not the end of the sweep (max_features)
    assert 7.0 < reg.lifetime_ < 13.0
    path = reg.lifetime_path_
    best = np.nanargmax(path["log_marginal_likelihood"])
    assert 0 < best < len(path["lifetimes"]) - 1
    assert reg.n_kernel_features_ < reg.max_features


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


def _selected(errors, n_val):
    """The evaluation the classifier's sweep selects, recomputed from its path: the
    last one within one binomial standard error of the lowest error before it."""
    selected = 0
    for k in range(len(errors)):
        lowest = np.min(errors[: k + 1])
        if errors[k] <= lowest + np.sqrt(lowest * (1 - lowest) / n_val):
            selected = k
    return selected


def test_classifier_sweep_selects_the_longest_lifetime_within_one_error():
    """On noisy labels the validation error of long lifetimes is level within its
    noise: the sweep selects the last evaluation within one standard error of the
    lowest, which here is later (more features) than the lowest itself."""
    rng = np.random.RandomState(3)
    X = rng.uniform(-1, 1, size=(1000, 4))
    y = ((X[:, 0] * X[:, 1] > 0) ^ (rng.uniform(size=1000) < 0.2)).astype(int)
    clf = MondrianKernelClassifier(n_trees=20, early_stopping=False, max_features=3000,
                                   random_state=0).fit(X, y)
    path = clf.lifetime_path_
    errors, n = path["validation_error"], path["n_features"]
    chosen = _selected(errors, 100)
    assert clf.n_kernel_features_ == n[chosen]
    lowest = len(n) - 1 - int(np.argmin(errors[::-1]))
    assert n[chosen] > n[lowest]  # the rule matters on this stream
    assert errors[chosen] <= errors.min() + np.sqrt(errors.min() * (1 - errors.min()) / 100)


def test_one_error_band():
    from mondrianlearn.kernel._sweep import effective_rows, within_one_error

    assert effective_rows(np.ones(50)) == pytest.approx(50)
    assert effective_rows(np.r_[np.ones(10), np.zeros(5)]) == pytest.approx(10)
    assert effective_rows(np.r_[3.0, 1.0]) == pytest.approx(1.6)  # 4**2 / 10
    assert within_one_error(0.1, 0.1, 100) and within_one_error(0.05, 0.1, 100)
    assert within_one_error(0.13, 0.1, 100)  # the band: sqrt(0.09 / 100) = 0.03
    assert not within_one_error(0.131, 0.1, 100)
    assert not within_one_error(0.01, 0.0, 100)  # no band around an error of 0
    assert not within_one_error(np.nan, 0.1, 100) and not within_one_error(0.2, np.nan, 100)


def test_classifier_sweep_evaluates_on_a_geometric_grid():
    """The sweep evaluates once the features have grown by ``sweep_step`` (at least one
    cut): a logarithmic number of evaluations, every recorded row an evaluation; with
    ``sweep_step=0`` after every cut. The selected lifetime is the last within one
    standard error of the lowest validation error."""
    X, y = _xor(600)
    paths = {}
    for step in (0.0, 0.05, 0.2):
        clf = MondrianKernelClassifier(n_trees=20, sweep_step=step, early_stopping=False,
                                       max_features=2000, random_state=0).fit(X, y)
        path = clf.lifetime_path_
        n = path["n_features"]
        assert n[0] == 20 and n[-1] <= 2000
        for key in ("lifetimes", "train_error", "validation_error", "time"):
            assert len(path[key]) == len(n)
        assert not np.isnan(path["validation_error"]).any()
        assert np.all(np.diff(path["lifetimes"]) >= 0)
        grown = np.diff(n)
        np.testing.assert_array_equal(grown[:-1], np.maximum(1, (step * n[:-2]).astype(int)))
        assert 1 <= grown[-1] <= max(1, int(step * n[-2]))
        assert clf.n_kernel_features_ == n[_selected(path["validation_error"], 60)]
        if step:  # one cut at a time while step * n < 2, then a geometric growth
            assert len(n) <= 2 / step + np.log(2000 / 20) / np.log(1 + step) + 2
        paths[step] = path
    assert len(paths[0.0]["n_features"]) > 5 * len(paths[0.05]["n_features"])
    # the same partitions: both sweeps reach the same cuts at the same lifetimes
    common = np.intersect1d(paths[0.0]["n_features"], paths[0.05]["n_features"])
    np.testing.assert_array_equal(
        paths[0.0]["lifetimes"][np.isin(paths[0.0]["n_features"], common)],
        paths[0.05]["lifetimes"][np.isin(paths[0.05]["n_features"], common)])


@pytest.mark.parametrize("loss", [0, 1])  # log loss / softmax, squared hinge
@pytest.mark.parametrize("n_out", [1, 3])
def test_batch_objective_gradient_equals_finite_differences(loss, n_out):
    from mondrianlearn.kernel._lbfgs import objective

    rng = np.random.RandomState(loss * 10 + n_out)
    n_rows, n_trees, n_features = 30, 4, 12
    active = np.sort(rng.randint(0, n_features, size=(n_rows, n_trees)), axis=1)
    labels = rng.randint(0, max(n_out, 2), size=n_rows)
    weights = rng.uniform(0.5, 2.0, size=n_rows)
    W = rng.normal(scale=0.7, size=(n_features, n_out))
    G = np.empty_like(W)
    by_tree = np.ascontiguousarray(active.T)
    objective(W, by_tree, labels, weights, 0.1, loss, 0.5, G)
    step = 1e-6
    numeric = np.empty_like(W)
    for index in np.ndindex(W.shape):
        up, down = W.copy(), W.copy()
        up[index] += step
        down[index] -= step
        numeric[index] = (objective(up, by_tree, labels, weights, 0.1, loss, 0.5, G.copy())
                          - objective(down, by_tree, labels, weights, 0.1, loss, 0.5,
                                      G.copy())) / (2 * step)
    np.testing.assert_allclose(G, numeric, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_classifier_fit_reaches_the_minimum_of_its_logistic_objective(n_classes):
    from sklearn.linear_model import LogisticRegression

    rng = np.random.RandomState(n_classes)
    X = rng.uniform(-1, 1, size=(300, 3))
    y = (X[:, 0] > 0).astype(int) + (n_classes == 3) * (X[:, 1] > 0.3)
    w = rng.uniform(0.5, 2.0, size=300)
    alpha = 1e-2
    clf = MondrianKernelClassifier(n_trees=20, lifetime=3.0, alpha=alpha, solver="lbfgs",
                                   max_iter=500, feature_scale="range",
                                   random_state=0).fit(X, y, w)
    assert clf.n_iter_ < 500  # converged
    # the same objective: mean weighted loss + alpha/2 |W|^2 <=> C = 1 / (alpha * sum w)
    reference = LogisticRegression(C=1.0 / (alpha * w.sum()), fit_intercept=False, tol=1e-10,
                                   max_iter=10_000).fit(clf.feature_map(X), y, w)
    Xt = rng.uniform(-1, 1, size=(200, 3))
    np.testing.assert_allclose(clf.predict_proba(Xt),
                               reference.predict_proba(clf.feature_map(Xt)), atol=2e-4)


@pytest.mark.parametrize("data, chosen", [("noisy xor", "sgd"), ("three classes", "lbfgs")])
def test_classifier_solvers_and_the_choice_between_them(data, chosen):
    if data == "noisy xor":
        X, y = _xor(400, seed=3)
        y[::7] = 1 - y[::7]
    else:
        rng = np.random.RandomState(1)
        X = rng.uniform(-1, 1, size=(600, 3))
        y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.3)
    kwargs = dict(n_trees=20, random_state=0)
    sgd = MondrianKernelClassifier(solver="sgd", **kwargs).fit(X, y)
    lbfgs = MondrianKernelClassifier(solver="lbfgs", max_iter=1000, **kwargs).fit(X, y)
    auto = MondrianKernelClassifier(max_iter=None, **kwargs).fit(X, y)
    assert sgd.n_iter_ == 10 and sgd.solver_ == "sgd"
    assert 0 < lbfgs.n_iter_ < 1000 and lbfgs.solver_ == "lbfgs"  # converged
    assert not np.allclose(sgd.coef_, lbfgs.coef_)
    errors = auto.validation_errors_
    assert auto.solver_ == ("lbfgs" if errors["lbfgs"] < errors["sgd"] else "sgd") == chosen
    path = auto.lifetime_path_  # the SGD weights' error: the one the sweep recorded
    selected = np.flatnonzero(path["n_features"] == auto.n_kernel_features_)
    assert selected.size == 1
    assert errors["sgd"] == pytest.approx(path["validation_error"][selected[0]])
    if auto.solver_ == "sgd":  # the same epochs as solver="sgd"
        np.testing.assert_array_equal(auto.coef_, sgd.coef_)
    else:  # the minimum that solver="lbfgs" reaches, from another start
        from mondrianlearn.kernel._lbfgs import objective

        columns = np.ascontiguousarray(auto._columns(auto._check_predict_input(X)).T)
        labels = auto._labels(y)
        value = [objective(m.coef_, columns, labels, np.ones(len(y)), m.alpha, 0,
                           1 / np.sqrt(m.n_trees), np.empty_like(m.coef_))
                 for m in (auto, lbfgs)]
        assert value[0] == pytest.approx(value[1], rel=1e-3)  # a flat minimum (alpha 1e-6)
        np.testing.assert_allclose(auto.predict_proba(X), lbfgs.predict_proba(X), atol=1e-2)
    # with a fixed lifetime there are no validation rows: SGD, as before
    fixed = MondrianKernelClassifier(lifetime=4.0, **kwargs).fit(X, y)
    assert fixed.solver_ == "sgd" and not hasattr(fixed, "validation_errors_")
    # a classifier pickled before ``solver`` existed trained by SGD epochs
    state = lbfgs.__getstate__()
    del state["solver"]
    old = MondrianKernelClassifier.__new__(MondrianKernelClassifier)
    old.__setstate__(state)
    assert old.get_params()["solver"] == "sgd"


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
    from mondrianlearn.engine.random import spawn_states
    from mondrianlearn.kernel._features import new_partition, sample_partition
    from mondrianlearn.kernel._sweep import FlatForest, sgd_sweep_events

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


# ------------------------------------------------------ online: bounded, revisited
def _n_cells(model):
    return sum(int((t.arrays.left[:t.n_nodes] == -1).sum()) for t in model.trees_)


def _spreading_stream(n, seed=0):
    """Rows that leave the boxes of the earlier ones: feature 0 grows with the row
    index, so nearly every row makes new cells at a fixed lifetime."""
    rng = np.random.RandomState(seed)
    X = np.column_stack([np.arange(n) / 20.0, rng.uniform(size=n)])
    return X, np.sin(X[:, 0]) + X[:, 1] + 0.1 * rng.randn(n)


def _direct_ridge(reg, X, y):
    Phi = reg.feature_map(X).toarray()
    A = Phi.T @ Phi + reg.alpha * np.eye(Phi.shape[1])
    return np.linalg.solve(A, Phi.T @ (y - reg.intercept_))


def test_regressor_online_cells_never_exceed_max_features():
    X, y = _spreading_stream(3000)
    reg = MondrianKernelRegressor(n_trees=5, lifetime=2.0, alpha=0.1, max_features=40,
                                  random_state=0)
    reg.partial_fit(X[:20], y[:20])
    sizes = {}
    start, step = 20, 0
    while start < len(y):
        stop = min(start + (1, 7, 30)[step % 3], len(y))
        reg.partial_fit(X[start:stop], y[start:stop])
        start, step = stop, step + 1
        assert _n_cells(reg) <= 40 and reg._ridge.n_cells == _n_cells(reg)
        assert reg.n_kernel_features_ <= 40 == reg._ridge.max_cells
        assert reg._ridge.G.shape[0] <= 40 and reg._ridge.L.shape[0] <= 40
        if (stop >= 600 and not sizes) or stop == 3000:
            sizes[stop] = len(pickle.dumps(reg))
    # At the fixed lifetime 2.0 this stream has thousands of cells: the partitions
    # were cut back (the lifetime with them), and the memory stopped growing.
    assert reg.lifetime_ < 2.0 and reg.growth_lifetime_ == reg.lifetime_
    first, last = sizes.values()
    assert last < 1.25 * first
    np.testing.assert_allclose(reg.coef_, _direct_ridge(reg, X, y), atol=1e-8)
    assert reg.n_samples_seen_ == 3000


def test_regressor_online_solution_stays_exact_through_cuts_and_reselections():
    X, y = _regression(900, seed=5)
    reg = MondrianKernelRegressor(n_trees=6, alpha=1e-2, max_features=60, random_state=0)
    reg.partial_fit(X[:50], y[:50])
    lifetimes, growths = {reg.lifetime_}, {reg.growth_lifetime_}
    for i in range(50, 850, 40):
        reg.partial_fit(X[i:i + 40], y[i:i + 40])
        lifetimes.add(reg.lifetime_)
        growths.add(reg.growth_lifetime_)
    for i in range(850, 900):
        reg.partial_fit(X[i:i + 1], y[i:i + 1])
    assert len(growths) > 1  # cut back
    assert len(lifetimes) > 2  # selected again as the rows doubled
    assert _n_cells(reg) <= 60 and reg.n_kernel_features_ <= _n_cells(reg)
    np.testing.assert_allclose(reg.coef_, _direct_ridge(reg, X, y), atol=1e-8)
    np.testing.assert_allclose(reg.predict(X), reg.intercept_ + reg.feature_map(X) @ reg.coef_,
                               atol=1e-12)


def _features_at(trees, X, lifetime):
    """Dense feature map of the partitions cut back to ``lifetime``."""
    from mondrianlearn.kernel._features import leaves_of, pruned_copy

    blocks = []
    for tree in trees:
        pruned = pruned_copy(tree, lifetime)[0]
        leaf = leaves_of(pruned, X)
        _, col = np.unique(leaf, return_inverse=True)
        blocks.append(np.eye(col.max() + 1)[col])
    return np.hstack(blocks) / np.sqrt(len(trees))


def test_regressor_reselection_maximises_the_marginal_likelihood_of_all_rows():
    from mondrianlearn.kernel._features import cut_times
    from mondrianlearn.kernel.linear import _candidate_cuts

    X, y = _regression(400, seed=7)
    reg = MondrianKernelRegressor(n_trees=8, alpha=1e-2, max_features=150,
                                  early_stopping=False, random_state=0)
    reg.partial_fit(X[:50], y[:50])
    first = reg.lifetime_
    for i in range(50, 400, 50):  # selections at 100, 200 and 400 rows (the last call)
        reg.partial_fit(X[i:i + 50], y[i:i + 50])
    assert reg._next_selection == 800
    yc = y - reg.intercept_
    ys = yc / np.sqrt(np.mean(yc ** 2))
    times = cut_times(reg.trees_)
    X = reg._in_units(X)  # the trees' coordinates (relative to the origin)

    def log_likelihood(k):  # of the partitions with the first k cuts, on all 400 rows
        lifetime = times[k] if k < len(times) else reg.growth_lifetime_
        Phi = _features_at(reg.trees_, X, lifetime)
        K = Phi @ Phi.T + reg.alpha * np.eye(400)
        return -0.5 * ys @ np.linalg.solve(K, ys) - 0.5 * np.linalg.slogdet(K)[1]

    chosen = int(np.searchsorted(times, reg.lifetime_))
    scanned = _candidate_cuts(8, len(times))
    assert len(scanned) > 5
    assert log_likelihood(chosen) >= max(log_likelihood(k) for k in scanned) - 1e-9
    assert chosen != int(np.searchsorted(times, first))
    assert reg.n_kernel_features_ == _features_at(reg.trees_, X, reg.lifetime_).shape[1]


def test_regressor_online_validation_selection_holds_out_reservoir_rows():
    from mondrianlearn.kernel.linear import _RESERVOIR_SIZE

    X, y = _regression(2600, seed=2)
    reg = MondrianKernelRegressor(n_trees=6, alpha=1e-2, selection="validation",
                                  max_features=80, random_state=0)
    reg.partial_fit(X[:100], y[:100])
    lifetimes = {reg.lifetime_}
    for i in range(100, 2600, 100):
        reg.partial_fit(X[i:i + 100], y[i:i + 100])
        lifetimes.add(reg.lifetime_)
    assert len(lifetimes) > 1
    assert reg._reservoir.X.shape == (_RESERVOIR_SIZE, 2) and reg._reservoir.n_offered == 2600
    np.testing.assert_allclose(reg.coef_, _direct_ridge(reg, X, y), atol=1e-8)
    batch = MondrianKernelRegressor(n_trees=6, alpha=1e-2, selection="validation",
                                    max_features=80, random_state=0).fit(X, y)
    assert reg.score(X, y) > batch.score(X, y) - 0.01


def test_regressor_online_accuracy_is_close_to_a_batch_fit_on_the_same_rows():
    rng = np.random.RandomState(4)
    X = rng.uniform(size=(3000, 3))
    f = lambda X: np.sin(5 * X[:, 0]) * X[:, 1] + np.abs(X[:, 2] - 0.5)  # noqa: E731
    y = f(X) + 0.1 * rng.randn(3000)
    T = rng.uniform(size=(2000, 3))
    online = MondrianKernelRegressor(n_trees=30, alpha=1e-2, max_features=600, random_state=0)
    for i in range(0, 3000, 100):
        online.partial_fit(X[i:i + 100], y[i:i + 100])
    batch = MondrianKernelRegressor(n_trees=30, alpha=1e-2, max_features=600,
                                    random_state=0).fit(X, y)
    mse_online = np.mean((online.predict(T) - f(T)) ** 2)
    mse_batch = np.mean((batch.predict(T) - f(T)) ** 2)
    # the first batch alone chose a far coarser model
    first = MondrianKernelRegressor(n_trees=30, alpha=1e-2, max_features=600,
                                    random_state=0).fit(X[:100], y[:100])
    mse_first = np.mean((first.predict(T) - f(T)) ** 2)
    assert mse_online < 1.1 * mse_batch < mse_first


def test_regressor_fit_honours_max_features_with_a_fixed_lifetime():
    X, y = _regression(500)
    reg = MondrianKernelRegressor(n_trees=10, lifetime=50.0, alpha=1e-2, max_features=100,
                                  random_state=0).fit(X, y)
    assert _n_cells(reg) <= 100 and reg.lifetime_ < 50.0
    big = MondrianKernelRegressor(n_trees=10, lifetime=50.0, alpha=1e-2, max_features=10**5,
                                  random_state=0).fit(X, y)
    assert big.lifetime_ == 50.0 and _n_cells(big) > 1000


def test_regressor_loads_models_saved_before_cells_were_kept():
    """A pickle whose ridge model holds only the upper factor of its features (and
    whose trees have no cells) loads, predicts the same and keeps learning."""
    X, y = _regression(300)
    reg = MondrianKernelRegressor(n_trees=5, lifetime=3.0, alpha=0.1, random_state=0)
    reg.partial_fit(X[:200], y[:200])
    state = copy.deepcopy(reg.__getstate__())
    ridge = reg._ridge
    size = ridge.size
    U = np.zeros((size + 4, size + 4))
    U[:size, :size] = ridge.L[:size, :size].T
    old_ridge = type(ridge).__new__(type(ridge))
    old_ridge.__setstate__(dict(alpha=ridge.alpha, scale=ridge.scale, size=size, U=U,
                                b=np.concatenate([ridge.b[:size], np.zeros(4)]),
                                coef_=ridge.coef_.copy()))  # what unpickling does
    old_state = {k: v for k, v in state.items()
                 if k not in ("growth_lifetime_", "_next_selection", "_reservoir")}
    old_state["_ridge"] = old_ridge
    for tree in old_state["trees_"]:
        del tree.node_stats["cell"]
    loaded = type(reg).__new__(type(reg))
    loaded.__setstate__(old_state)
    np.testing.assert_array_equal(loaded.predict(X), reg.predict(X))
    loaded.partial_fit(X[200:], y[200:])
    reg.partial_fit(X[200:], y[200:])
    np.testing.assert_allclose(loaded.predict(X), reg.predict(X), atol=1e-8)


def test_online_partitions_cut_back_are_batch_partitions_in_distribution():
    """Partitions extended online and cut back past ``max_features`` (several
    times: from lifetime 12 to 1-2) are distributed as partitions sampled in batch
    on the same rows at the final growth lifetime: two-sample tests on a tree's
    number of leaves and first cut time over 150 seeds; the positive control (batch
    at a 30% longer lifetime) is told apart."""
    from scipy.stats import ks_2samp

    from mondrianlearn.engine.random import spawn_states
    from mondrianlearn.kernel._features import new_partition, sample_partition

    def stats(tree):
        a, root = tree.arrays, int(tree.arrays.meta[1])
        leaves = int((a.left[: tree.n_nodes] == -1).sum())
        return leaves, a.time[root] if a.left[root] != -1 else np.inf

    rng = np.random.RandomState(0)
    X = rng.uniform(size=(200, 2))
    y = X.sum(axis=1)
    online, batch, control, growth = [], [], [], []
    for seed in range(150):
        reg = MondrianKernelRegressor(n_trees=10, lifetime=12.0, max_features=60,
                                      random_state=seed)
        for i in range(0, 200, 20):
            reg.partial_fit(X[i:i + 20], y[i:i + 20])
        growth.append(reg.growth_lifetime_)
        online.append(stats(reg.trees_[0]))
        for out, lifetime in ((batch, growth[-1]), (control, 1.3 * growth[-1])):
            tree = new_partition(2, spawn_states(10**6 + seed, 1)[0])
            sample_partition(tree, X, lifetime)
            out.append(stats(tree))
    online, batch, control = map(np.array, (online, batch, control))
    assert max(growth) < 3.0  # every stream was cut back
    assert ks_2samp(online[:, 0], batch[:, 0]).pvalue > 0.01
    assert ks_2samp(online[:, 1], batch[:, 1]).pvalue > 0.01
    assert ks_2samp(online[:, 0], control[:, 0]).pvalue < 0.01


def test_classifier_online_cells_never_exceed_max_features():
    X, score = _spreading_stream(2000, seed=3)
    y = (score > np.median(score)).astype(int)
    clf = MondrianKernelClassifier(n_trees=5, lifetime=3.0, max_features=40, random_state=0)
    clf.partial_fit(X[:20], y[:20])
    for start in range(20, 2000, 9):
        clf.partial_fit(X[start:start + 9], y[start:start + 9])
        assert _n_cells(clf) == clf.n_kernel_features_ <= 40
        assert clf.coef_.shape == (clf.n_kernel_features_, 1)
    assert clf.lifetime_ < 3.0
    for i in range(2000, 2100):  # one row at a time (the fast path)
        clf.partial_fit(X[i % 2000:i % 2000 + 1], y[i % 2000:i % 2000 + 1])
    assert _n_cells(clf) <= 40
    # a merged cell carries the row-weighted mean of its cells' weights: the scores of
    # the rows move little when the partitions are cut back
    before = clf.decision_function(X)
    clf.max_features = 30
    clf.partial_fit(X[:1], y[:1])
    assert _n_cells(clf) <= 30
    assert np.corrcoef(before, clf.decision_function(X))[0, 1] > 0.8
    # in raw units (the stream spreads far past its first rows' range), lifetime 3
    # makes many cells: the default bound is far
    big = MondrianKernelClassifier(n_trees=5, lifetime=3.0, feature_scale=None,
                                   random_state=0).fit(X, y)
    assert _n_cells(big) > 1000


# ------------------------------------------------------------------ feature units
@pytest.mark.parametrize("cls", [MondrianKernelRegressor, MondrianKernelClassifier])
def test_range_units_make_the_predictors_scale_free(cls):
    """With ``feature_scale="range"`` (the default) a feature multiplied by a power of
    two changes nothing, bit for bit (the units are powers of two: the rows in units
    are the same numbers), in ``fit`` and in ``partial_fit`` after it; in raw units
    (``None``) it changes the partitions."""
    X, y = _regression(300) if cls is MondrianKernelRegressor else _xor(300)
    scaled = X.copy()
    scaled[:, 0] *= 2.0 ** 10
    outputs = {}
    for units in ("range", None):
        for name, data in (("raw", X), ("scaled", scaled)):
            model = cls(n_trees=10, feature_scale=units, random_state=0).fit(data[:200], y[:200])
            model.partial_fit(data[200:], y[200:])
            outputs[units, name] = (model.predict(data), model.lifetime_)
    np.testing.assert_array_equal(outputs["range", "raw"][0], outputs["range", "scaled"][0])
    assert outputs["range", "raw"][1] == outputs["range", "scaled"][1]
    assert outputs[None, "raw"][1] != outputs[None, "scaled"][1]


def test_range_units_come_from_the_first_batch_and_stay():
    X, y = _regression(300)
    X = X * np.array([1000.0, 0.01])
    model = MondrianKernelRegressor(n_trees=5, lifetime=3.0, feature_scale="range",
                                    random_state=0).fit(X[:100], y[:100])
    from mondrianlearn.utils.feature_scale import units_of_range

    expected = units_of_range(X[:100].min(axis=0), X[:100].max(axis=0))
    np.testing.assert_array_equal(model._units[0], expected)
    model.partial_fit(X[100:] * 4.0, y[100:])  # later rows far outside: units unchanged
    np.testing.assert_array_equal(model._units[0], expected)
    for units in ("range", "auto"):  # a first batch of one row: units of 1
        one = MondrianKernelRegressor(n_trees=5, lifetime=3.0, feature_scale=units,
                                      random_state=0)
        one.partial_fit(X[:1], y[:1])
        np.testing.assert_array_equal(one._units[0], np.ones(2))
    raw = MondrianKernelRegressor(n_trees=5, lifetime=3.0, feature_scale=None,
                                  random_state=0).fit(X[:100], y[:100])
    np.testing.assert_array_equal(raw._units[0], np.ones(2))


@pytest.mark.parametrize("cls", [MondrianKernelRegressor, MondrianKernelClassifier])
def test_supervised_units_weigh_the_features_that_predict(cls):
    """``"auto"`` (the default) and ``"supervised"``: scales learned from the first
    batch's targets (``supervised_scales``, its range over its importance), then held
    fixed; a feature that predicts nothing gets several times the scale of one that
    does (relative to its range). ``"auto"`` takes range units for a first batch
    under 20 rows, which ``"supervised"`` refuses: the model is not started, a later
    call is its first."""
    from mondrianlearn.utils.feature_scale import (
        SUPERVISED_MIN_ROWS,
        supervised_scales,
        units_of_range,
    )

    rng = np.random.RandomState(0)
    X = rng.uniform(size=(300, 3)) * np.array([1.0, 50.0, 0.1])
    y = X[:, 0] + 0.01 * rng.normal(size=300)
    if cls is MondrianKernelClassifier:
        y = (y > 0.5).astype(int)
    regression = cls is MondrianKernelRegressor
    expected = supervised_scales(X[:100], y[:100], regression, None, 0)
    for units in ("auto", "supervised"):
        model = cls(n_trees=5, lifetime=3.0, feature_scale=units, random_state=0)
        assert cls(n_trees=5).feature_scale == "auto"
        model.fit(X[:100], y[:100])
        np.testing.assert_array_equal(model.feature_scale_, expected)
        ratio = expected / (X[:100].max(axis=0) - X[:100].min(axis=0))  # 1 / weight
        assert ratio[0] == 1.0 and ratio[1] > 4 and ratio[2] > 4
        model.partial_fit(X[100:], y[100:])
        np.testing.assert_array_equal(model.feature_scale_, expected)
        assert model.score(X, y) > (0.9 if regression else 0.95)
    small = X[: SUPERVISED_MIN_ROWS - 1]
    auto = cls(n_trees=5, lifetime=3.0, random_state=0).fit(small, y[:len(small)])
    np.testing.assert_array_equal(
        auto.feature_scale_, units_of_range(small.min(axis=0), small.max(axis=0)))
    strict = cls(n_trees=5, lifetime=3.0, feature_scale="supervised", random_state=0)
    with pytest.raises(ValueError, match="at least 20 rows of positive weight"):
        strict.partial_fit(small, y[:len(small)])
    assert not strict.__sklearn_is_fitted__() and not hasattr(strict, "trees_")
    strict.partial_fit(X[:100], y[:100])  # a larger first batch then starts it
    np.testing.assert_array_equal(strict.feature_scale_, expected)


@pytest.mark.parametrize("params", [{}, {"lifetime": 5.0},
                                    {"selection": "marginal_likelihood"}],
                         ids=["auto-validation", "fixed-lifetime", "auto-marginal"])
def test_a_ridge_system_lost_in_floating_point_says_what_to_change(params):
    """alpha lost against the Gram matrix (too small an alpha, or sample weights so
    large that alpha no longer counts) is a FloatingPointError naming both remedies,
    not NumPy's bare LinAlgError from inside the solver."""
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(200, 3))
    y = X[:, 0]
    with pytest.raises(FloatingPointError, match="increase alpha or scale the sample"):
        MondrianKernelRegressor(random_state=0, **params).fit(
            X, y, sample_weight=np.full(200, 1e100))
    with pytest.raises(FloatingPointError, match="alpha=1e-300"):
        MondrianKernelRegressor(random_state=0, alpha=1e-300, **params).fit(X, y)
    # weights that leave alpha its weight fit as before
    model = MondrianKernelRegressor(random_state=0, **params).fit(
        X, y, sample_weight=np.full(200, 1e4))
    assert model.score(X, y) > 0.95



def test_online_rows_whose_weights_would_lose_alpha_are_refused_before_any_change():
    """The online update of the factor never fails the way a batch Cholesky does:
    rows weighted 1e50 after a unit-weight fit gave predictions of 1e49 and more,
    and 1e200 gave NaN, silently. Such rows are now refused as a batch fit refuses
    them (FloatingPointError naming the remedies), and the model is left as it was;
    weights that leave alpha its weight are learned as before."""
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(300, 3))
    y = X.sum(axis=1) + 0.1 * rng.normal(size=300)
    model = MondrianKernelRegressor(n_trees=10, random_state=0).fit(X[:200], y[:200])
    before = pickle.dumps(model)
    expected = model.predict(X[250:])
    for weight in (1e13, 1e50, 1e200):
        with pytest.raises(FloatingPointError, match="increase alpha or scale the sample"):
            model.partial_fit(X[200:210], y[200:210], sample_weight=np.full(10, weight))
        np.testing.assert_array_equal(model.predict(X[250:]), expected)
    assert pickle.dumps(model) == before
    # targets whose weighted sums overflow (NaN predictions from 1.7e308) likewise,
    # on both paths, and in a first fit (one target of 1e300: a constant forecast)
    for target, rows in ((1e150, slice(200, 210)), (1.7e308, slice(200, 201))):
        with pytest.raises(ValueError, match="Rescale y"):
            model.partial_fit(X[rows], np.full(rows.stop - rows.start, target))
    assert pickle.dumps(model) == before
    with pytest.raises(ValueError, match="Rescale y"):
        MondrianKernelRegressor(n_trees=10, random_state=0).fit(X[:200], np.r_[y[:199], 1e300])
    # the fast path (unit weights) and moderate weights learn as before
    model.partial_fit(X[200:201], y[200:201])
    model.partial_fit(X[201:211], y[201:211], sample_weight=np.full(10, 1e6))
    assert np.isfinite(model.predict(X[250:])).all()
    assert model.score(X[250:], y[250:]) > 0.5

def test_a_loaded_classifier_caps_its_cells_on_the_full_path():
    """The fast path's arguments are not pickled; cutting the partitions back past
    ``max_features`` on the full path of a loaded model (rows with sample weights)
    raised AttributeError halfway through the update, leaving it half done."""
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(1500, 3))
    y = (X[:, 0] > 0.5).astype(int)
    model = MondrianKernelClassifier(n_trees=5, max_features=40, random_state=0)
    model.partial_fit(X[:100], y[:100])
    for start in range(100, 1500, 5):
        model = pickle.loads(pickle.dumps(model))
        model.partial_fit(X[start:start + 5], y[start:start + 5], sample_weight=np.ones(5))
    assert model.n_kernel_features_ <= 40
    assert model.score(X, y) > 0.7
