"""The per-call fast path (``utils.fast_path``) of the Mondrian kernel models and of
boosting: same model as the validated path bit for bit, same errors, no change on
refusal."""

import collections
import pickle

import numpy as np
import pytest

from mondrianlearn import (
    MondrianBoostingClassifier,
    MondrianKernel,
    MondrianKernelClassifier,
    MondrianKernelRegressor,
)
from mondrianlearn.engine.tree import used_rows

CLASSIFIERS = [MondrianKernelClassifier, MondrianBoostingClassifier]
SUPERVISED = CLASSIFIERS + [MondrianKernelRegressor]
ALL = SUPERVISED + [MondrianKernel]

# Parameters that exercise every branch: fixed lifetimes grow the partitions (new
# features at most rows), the sweep picks one from the first batch; a small
# max_features cuts the regressor's partitions back again and again, and "auto"
# selects its lifetime again as the rows double (on a reservoir with "validation").
PARAMS = {
    MondrianKernelRegressor: [{"lifetime": 3.0}, {}, {"lifetime": 20.0, "alpha": 1e-2},
                              {"lifetime": 20.0, "max_features": 40},
                              {"max_features": 30, "alpha": 1e-2},
                              {"selection": "validation", "max_features": 40}],
    MondrianKernelClassifier: [{"lifetime": 5.0}, {},
                               {"lifetime": 5.0, "loss": "squared_hinge"},
                               {"lifetime": 20.0, "max_features": 40}],
    MondrianBoostingClassifier: [{}, {"voting": "soft"}, {"lifetime": 2.0}],
    MondrianKernel: [{"lifetime": 3.0}, {"lifetime": 30.0}],
}
CASES = [(cls, params) for cls in ALL for params in PARAMS[cls]]


def _make(cls, **params):
    size = "n_estimators" if cls is MondrianBoostingClassifier else "n_trees"
    return cls(**{size: 5, "random_state": 3, **params})


def _data(n=500, seed=0, n_classes=2):
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(n, 3))
    y_class = np.minimum((X[:, 0] * n_classes + 0.3 * rng.normal(size=n)).astype(int),
                         n_classes - 1).clip(0)
    y_value = 5.0 + 3.0 * X[:, 1] + 0.1 * rng.normal(size=n)
    return X, y_class, y_value


def _targets(cls, n_classes=2):
    X, y_class, y_value = _data(n_classes=n_classes)
    if cls is MondrianKernel:
        return X, None
    return X, (y_value if cls is MondrianKernelRegressor else y_class)


def _learn(model, X, y, full=False):
    """``partial_fit`` of the rows; ``full``: through the validated path (a sample
    weight, or a list for the transformer)."""
    if y is None:
        return model.partial_fit(X.tolist() if full else X)
    if full:
        return model.partial_fit(X, y, sample_weight=np.ones(X.shape[0]))
    return model.partial_fit(X, y)


def _outputs(model, X):
    """Every prediction method, each through the path ``X`` selects (a list: the
    validated path)."""
    if isinstance(model, MondrianKernel):
        Z = model.transform(X)
        return [Z.toarray(), Z.indices, Z.indptr, np.array([Z.indices.dtype.num])]
    if isinstance(model, MondrianKernelRegressor):
        return [model.predict(X), model.feature_map(X).toarray()]
    out = [model.predict(X)]
    if hasattr(model, "predict_proba"):
        out.append(model.predict_proba(X))
    if isinstance(model, MondrianKernelClassifier):
        out += [model.decision_function(X), model.feature_map(X).toarray()]
    return out


def _state(model, capacity=True):
    """Everything learned: trees (nodes, statistics, random streams), weights, the
    ridge model (cell statistics, factor, lifetimes), counters, the sample store; and
    the storage capacity of the trees and of the ridge model (which a pickle does not
    keep)."""
    parts = [np.asarray(model.n_samples_seen_), model._feature_range
             if hasattr(model, "_feature_range") else np.zeros(0)]
    store = getattr(model, "_store", None)
    n_samples = store.n if store is not None else 0
    for tree in model.trees_:
        n = tree.n_nodes
        parts += [a.copy() for a in used_rows(tree.arrays).values()]
        parts += [v[:n].copy() for v in tree.node_stats.values()]
        parts += [tree.rng_state.copy(), np.asarray(tree.capacity if capacity else 0),
                  tree.sample_next[: n_samples].copy(), tree.sample_mult[: n_samples].copy()]
    for name in ("coef_", "intercept_", "n_kernel_features_", "n_features_out_", "_rng",
                 "_boost_errors", "_boost_weight_seen", "classes_"):
        if hasattr(model, name):
            parts.append(np.array(getattr(model, name), copy=True))
    ridge = getattr(model, "_ridge", None)
    if ridge is not None:
        c, f = ridge.n_cells, ridge.size
        parts += [ridge.G[:c, :c].copy(), ridge.g[:c].copy(), ridge.cell_column[:c].copy(),
                  ridge.L[:f, :f].copy(), ridge.b[:f].copy(), ridge.coef_.copy(),
                  np.array([c, f, ridge.y_scale, ridge.yy, ridge.weight, model.lifetime_,
                            model.growth_lifetime_])]
        if capacity:
            parts.append(np.array([ridge.G.shape[0], ridge.L.shape[0]]))
    if store is not None:
        parts += [store.X[: store.n].copy(), store.keys[: store.n].copy(),
                  store.stats[: store.n].copy()]
    return parts


def _same(a, b):
    return len(a) == len(b) and all(
        x.shape == y.shape and x.dtype == y.dtype and np.array_equal(x, y)
        for x, y in zip(a, b))


@pytest.fixture
def statuses(monkeypatch):
    """Counts of what each compiled learning call of the fast path returned."""
    import mondrianlearn.ensemble._forest_kernels as ensemble_kernels
    import mondrianlearn.kernel._forest_kernels as kernel_kernels

    counts = collections.Counter()

    def counted(module, name, outcome):
        kernel = getattr(module, name)

        def run(*args):
            result = kernel(*args)
            counts[outcome(result, args)] += 1
            return result

        monkeypatch.setattr(module, name, run)

    def linear(result, args):
        status = result[0]
        return "done" if status == 0 else "refused" if status == -1 else (
            "grow weights" if status == -2 else "trees left")

    counted(kernel_kernels, "accept_batch", lambda r, a: "done" if r else "refused")
    counted(kernel_kernels, "learn_sgd", linear)
    counted(kernel_kernels, "learn_partitions", lambda r, a: "done" if r >= 0 else (
        "refused" if r == -1 else "trees left"))
    counted(ensemble_kernels, "boost_forest", lambda r, a: "refused" if r < 0 else (
        "done" if r == a[0].shape[0] else "trees left"))
    return counts


# --------------------------------------------------------------- bit for bit
@pytest.mark.parametrize("cls, params", CASES)
def test_one_row_calls_equal_the_validated_path_bit_for_bit(cls, params, statuses):
    X, y = _targets(cls)
    fast, full = _make(cls, **params), _make(cls, **params)
    for model in (fast, full):
        _learn(model, X[:30], None if y is None else y[:30])
    for i in range(30, 400):
        rows = slice(i, i + 1)
        _learn(fast, X[rows], None if y is None else y[rows])
        _learn(full, X[rows], None if y is None else y[rows], full=True)
    assert statuses["done"] > 300  # the fast path was taken
    assert statuses["refused"] == 0
    assert _same(_state(fast), _state(full))
    # predictions one row at a time (fast) against one validated batch
    test = X[400:]
    one_by_one = [_outputs(fast, test[i:i + 1]) for i in range(len(test))]
    reference = _outputs(full, test.tolist())
    for k, expected in enumerate(reference[: 2 if cls is MondrianKernel else None]):
        got = np.concatenate([np.atleast_1d(out[k]) for out in one_by_one])
        assert np.array_equal(got.reshape(expected.shape), expected)
    assert _same(_outputs(fast, test), reference)  # one fast call of 100 rows
    assert _same(_outputs(fast, np.vstack([test] * 6)), _outputs(full, np.vstack([test] * 6)))


@pytest.mark.parametrize("cls, params", CASES)
def test_small_batches_equal_the_same_batches_validated(cls, params, statuses):
    X, y = _targets(cls)
    fast, full = _make(cls, **params), _make(cls, **params)
    for model in (fast, full):
        _learn(model, X[:20], None if y is None else y[:20])
    for start in range(20, 400, 7):
        rows = slice(start, min(start + 7, 400))
        _learn(fast, X[rows], None if y is None else y[rows])
        _learn(full, X[rows], None if y is None else y[rows], full=True)
    assert statuses["done"] > 20
    assert _same(_state(fast), _state(full))
    assert _same(_outputs(fast, X[400:]), _outputs(full, X[400:].tolist()))


def test_every_branch_of_the_fast_path_is_taken(statuses):
    # Storage that runs out (trees, ridge factor, SGD weights, sample store) hands
    # the call over to Python in the middle: the identity tests above go through
    # each of these.
    for cls in ALL:
        X, y = _targets(cls)
        model = _make(cls, **PARAMS[cls][0])
        _learn(model, X[:20], None if y is None else y[:20])
        for i in range(20, 500):
            _learn(model, X[i:i + 1], None if y is None else y[i:i + 1])
    assert statuses["trees left"] > 0 and statuses["grow weights"] > 0


@pytest.mark.parametrize("cls", [MondrianKernelClassifier, MondrianBoostingClassifier])
def test_multiclass_and_string_labels(cls):
    X, y = _targets(cls, n_classes=3)
    labels = np.array(["ant", "bee", "cat"])[y]
    fast, full = _make(cls), _make(cls)
    for model in (fast, full):
        model.partial_fit(X[:40], labels[:40])
    for i in range(40, 200):
        fast.partial_fit(X[i:i + 1], labels[i:i + 1])
        full.partial_fit(X[i:i + 1], labels[i:i + 1], sample_weight=np.ones(1))
    fast.partial_fit(X[200:210], list(labels[200:210]))  # labels as a list
    full.partial_fit(X[200:210], labels[200:210], sample_weight=np.ones(10))
    assert _same(_state(fast), _state(full))
    assert _same(_outputs(fast, X[300:]), _outputs(full, X[300:].tolist()))


def test_boosting_one_row_calls_boost():
    # A one-row call updates the trees' error sums (boosting, not online bagging).
    X, y = _targets(MondrianBoostingClassifier)
    model = _make(MondrianBoostingClassifier).partial_fit(X[:30], y[:30])
    before = model._boost_errors.copy()
    model.partial_fit(X[30:31], y[30:31])
    assert model._boost_errors.sum() > before.sum()
    assert model._boost_weight_seen == 31.0


# ------------------------------------------------------------------ refusals
@pytest.mark.parametrize("cls", ALL)
@pytest.mark.parametrize("bad", ["nan", "inf", "width", "dtype", "overflow", "y"])
def test_bad_rows_are_refused_before_any_state_change(cls, bad):
    if bad == "y" and cls is not MondrianKernelRegressor:
        pytest.skip("non-finite targets: regression only")
    if bad == "overflow" and cls is MondrianKernel:
        pytest.skip("the transformer does not check the range (nor did it before)")
    X, y = _targets(cls)
    model = _learn(_make(cls, **PARAMS[cls][0]), X[:50], None if y is None else y[:50])
    for i in range(50, 60):
        _learn(model, X[i:i + 1], None if y is None else y[i:i + 1])
    row, target = X[60:61].copy(), None if y is None else y[60:61].copy()
    if bad == "nan":
        row[0, 1] = np.nan
    elif bad == "inf":
        row[0, 0] = np.inf
    elif bad == "width":
        row = X[60:61, :2].copy()
    elif bad == "dtype":
        row = np.array([["a", "b", "c"]], dtype=object)
    elif bad == "overflow":
        # a total width over float64 in the model's units (supervised scales by
        # default): after a first row, which is learned, the two features of the
        # smallest scales are widths w1 + w2 below the largest float, and twice that
        # after the row refused
        largest = np.finfo(np.float64).max
        scale = getattr(model, "feature_scale_", np.ones(3))
        two = np.argsort(scale)[:2]
        width = np.minimum(0.45 * largest, 0.9 * largest / scale[two])  # in units
        assert 0.5 * largest < width.sum() < 0.95 * largest
        first = X[59:60].copy()
        first[0, two] = -width * scale[two]
        row[0, two] = width * scale[two]
        _learn(model, first, None if y is None else y[:1])
    else:
        target[0] = np.nan
    before = pickle.dumps(_state(model))
    with pytest.raises(ValueError):
        model.partial_fit(row) if y is None else model.partial_fit(row, target)
    assert _same(_state(model), pickle.loads(before))
    if bad in ("nan", "inf", "width", "dtype"):
        for method in ("predict", "predict_proba", "transform", "decision_function",
                       "feature_map"):
            if hasattr(model, method):
                with pytest.raises(ValueError):
                    getattr(model, method)(row)
    _learn(model, X[61:62], None if y is None else y[61:62])  # and it goes on learning


@pytest.mark.parametrize("cls", CLASSIFIERS)
def test_unknown_and_declared_labels(cls):
    X, y = _targets(cls)
    model = _make(cls).partial_fit(X[:50], y[:50])
    model.partial_fit(X[50:51], np.array([7]))  # a new class joins through the full path
    assert list(model.classes_) == [0, 1, 7]
    model.partial_fit(X[51:52], [1])
    model.partial_fit(X[52:53], np.array([7]))
    assert model.predict_proba(X[:3]).shape == (3, 3)
    declared = _make(cls).partial_fit(X[:50], y[:50], classes=[0, 1])
    declared.partial_fit(X[50:51], y[50:51])
    before = pickle.dumps(_state(declared))
    with pytest.raises(ValueError, match="not in `classes`"):
        declared.partial_fit(X[51:52], np.array([9]))
    assert _same(_state(declared), pickle.loads(before))


# ------------------------------------------------------------ parameters, copies
@pytest.mark.parametrize("cls", ALL)
def test_set_params_between_calls_is_validated(cls):
    X, y = _targets(cls)
    size = "n_estimators" if cls is MondrianBoostingClassifier else "n_trees"
    model = _learn(_make(cls), X[:50], None if y is None else y[:50])
    _learn(model, X[50:51], None if y is None else y[50:51])
    model.set_params(**{size: -1})
    with pytest.raises(ValueError, match=size):
        _learn(model, X[51:52], None if y is None else y[51:52])
    model.set_params(**{size: 5})
    _learn(model, X[51:52], None if y is None else y[51:52])


def test_set_params_changes_what_the_next_calls_use():
    X, y, _ = _data()
    model = _make(MondrianBoostingClassifier).partial_fit(X[:100], y[:100])
    hard = model.predict_proba(X[100:101])
    model.set_params(voting="soft")
    soft = model.predict_proba(X[100:101])
    assert not np.array_equal(hard, soft)
    model.partial_fit(X[100:101], y[100:101])  # validated, then fast again
    assert np.array_equal(model.predict_proba(X[101:102]),
                          model.predict_proba(X[101:102].tolist()))


@pytest.mark.parametrize("cls", ALL)
def test_scratch_state_is_not_pickled_and_copies_learn_on_their_own(cls):
    X, y = _targets(cls)
    model = _learn(_make(cls, **PARAMS[cls][0]), X[:50], None if y is None else y[:50])
    for i in range(50, 60):
        _learn(model, X[i:i + 1], None if y is None else y[i:i + 1])
    assert not any(k.startswith("_fast") for k in model.__getstate__())
    copy = pickle.loads(pickle.dumps(model))
    reference = _outputs(model, X[100:150])
    for i in range(60, 80):
        _learn(copy, X[i:i + 1], None if y is None else y[i:i + 1])
    assert _same(_outputs(model, X[100:150]), reference)  # the original is untouched
    for i in range(60, 80):
        _learn(model, X[i:i + 1], None if y is None else y[i:i + 1])
    assert _same(_state(model, capacity=False), _state(copy, capacity=False))
    assert _same(_outputs(model, X[100:150]), _outputs(copy, X[100:150]))


def test_classifier_weights_are_a_plain_array_to_the_user():
    # coef_ may be a view of the fast path's larger storage; it behaves as the
    # array of the validated path, and a copy set by the user is taken as is.
    X, y, _ = _data()
    model = _make(MondrianKernelClassifier, lifetime=5.0).partial_fit(X[:50], y[:50])
    for i in range(50, 80):
        model.partial_fit(X[i:i + 1], y[i:i + 1])
    assert model.coef_.shape == (model.n_kernel_features_, 1)
    model.coef_ = model.coef_ * 0.0
    assert np.array_equal(model.decision_function(X[:5]), np.zeros(5))
    model.partial_fit(X[80:81], y[80:81])
    reference = _make(MondrianKernelClassifier, lifetime=5.0).partial_fit(X[:50], y[:50])
    for i in range(50, 80):
        reference.partial_fit(X[i:i + 1], y[i:i + 1], sample_weight=np.ones(1))
    reference.coef_ = reference.coef_ * 0.0
    reference.partial_fit(X[80:81], y[80:81], sample_weight=np.ones(1))
    assert _same(_state(model), _state(reference))


def test_pandas_input_takes_the_validated_path():
    pd = pytest.importorskip("pandas")
    X, y, _ = _data()
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    model = _make(MondrianKernelRegressor, lifetime=3.0).partial_fit(frame[:50], y[:50])
    model.partial_fit(frame[50:51], y[50:51])
    with pytest.warns(UserWarning, match="feature names"):
        model.predict(X[:1])
