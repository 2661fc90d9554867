"""The per-call fast path (``utils.fast_path``): same model, same errors, no change on refusal."""

import pickle

import numpy as np
import pytest

from mondrianlearn import (
    AMFClassifier,
    AMFRegressor,
    MondrianForestClassifier,
    MondrianForestRegressor,
)
from mondrianlearn.engine import tree as engine_tree
from mondrianlearn.engine.tree import used_rows

CLASSIFIERS = [AMFClassifier, MondrianForestClassifier]
REGRESSORS = [AMFRegressor, MondrianForestRegressor]


def _data(n=400, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(n, 3))
    y_class = (X[:, 0] + 0.3 * rng.normal(size=n) > 0.5).astype(int)
    y_value = 5.0 + 3.0 * X[:, 1] + 0.1 * rng.normal(size=n)
    return X, y_class, y_value


def _targets(cls):
    X, y_class, y_value = _data()
    return X, (y_class if cls in CLASSIFIERS else y_value)


def _predict(model, X):
    return model.predict_proba(X) if hasattr(model, "predict_proba") else model.predict(X)


def _state(model):
    """Everything learned: node arrays and statistics of every tree, counters."""
    parts = [model.n_samples_seen_]
    for tree in model.trees_:
        parts += [a.copy() for a in used_rows(tree.arrays).values()]
        parts += [v[: tree.n_nodes].copy() for v in tree.node_stats.values()]
        parts.append(tree.rng_state.copy())
    return parts


def _same(a, b):
    return len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))


@pytest.mark.parametrize("cls", CLASSIFIERS + REGRESSORS)
@pytest.mark.parametrize("params", [{}, {"bootstrap": True}, {"max_nodes": 40}])
def test_one_row_calls_equal_the_validated_path_bit_for_bit(cls, params):
    X, y = _targets(cls)
    fast = cls(n_estimators=4, random_state=3, **params)
    full = cls(n_estimators=4, random_state=3, **params)
    for i in range(300):
        fast.partial_fit(X[i:i + 1], y[i:i + 1])
        # a sample weight sends the call through scikit-learn's validation
        full.partial_fit(X[i:i + 1], y[i:i + 1], sample_weight=np.ones(1))
    assert fast._fast_scratch.table is not None  # the fast path was taken
    assert _same(_state(fast), _state(full))
    one_by_one = np.vstack([np.atleast_2d(_predict(fast, X[i:i + 1])) for i in range(300, 400)])
    assert np.array_equal(one_by_one.reshape(_predict(full, X[300:400]).shape),
                          _predict(full, X[300:400]))
    assert np.array_equal(_predict(fast, X[300:350]), _predict(full, X[300:350]))


@pytest.mark.parametrize("cls", CLASSIFIERS + REGRESSORS)
def test_small_batches_equal_one_batch(cls):
    X, y = _targets(cls)
    batched = cls(n_estimators=3, random_state=1).partial_fit(X[:20], y[:20])
    batched.partial_fit(X[20:300], y[20:300], sample_weight=np.ones(280))
    small = cls(n_estimators=3, random_state=1).partial_fit(X[:20], y[:20])
    for start in range(20, 300, 7):
        small.partial_fit(X[start:min(start + 7, 300)], y[start:min(start + 7, 300)])
    assert np.array_equal(_predict(small, X[300:]), _predict(batched, X[300:]))


@pytest.mark.parametrize("cls", CLASSIFIERS + REGRESSORS)
@pytest.mark.parametrize("bad", ["nan", "inf", "width", "dtype", "overflow"])
def test_bad_rows_are_refused_before_any_state_change(cls, bad):
    X, y = _targets(cls)
    model = cls(n_estimators=3, random_state=0).partial_fit(X[:50], y[:50])
    for i in range(50, 60):
        model.partial_fit(X[i:i + 1], y[i:i + 1])
    row = X[60:61].copy()
    if bad == "nan":
        row[0, 1] = np.nan
    elif bad == "inf":
        row[0, 0] = np.inf
    elif bad == "width":
        row = X[60:61, :2].copy()
    elif bad == "dtype":
        row = np.array([["a", "b", "c"]], dtype=object)
    else:
        row[0, 2] = 1.5e308
        model.partial_fit(np.array([[0.5, 0.5, -1.5e308]]), y[:1])
    before = _state(model)
    with pytest.raises(ValueError):
        model.partial_fit(row, y[60:61])
    assert _same(_state(model), before)
    if bad in ("nan", "inf", "width", "dtype"):
        with pytest.raises(ValueError):
            _predict(model, row)


def _widening(cls, n=700, seed=2):
    """A stream whose range keeps widening, so that feature units change late
    (after the first rows kept by AMF, and between re-samplings of the forests)."""
    X, y = _targets(cls)
    rng = np.random.RandomState(seed)
    X = np.resize(X, (n, 3)) * np.exp(rng.uniform(0.0, 6.0 * np.arange(n) / n))[:, None]
    return X, np.resize(y, n)


@pytest.mark.parametrize("cls", CLASSIFIERS + REGRESSORS)
def test_rows_that_change_a_unit_equal_the_validated_path_bit_for_bit(cls):
    X, y = _widening(cls)
    fast = cls(n_estimators=3, random_state=4).partial_fit(X[:20], y[:20])
    full = cls(n_estimators=3, random_state=4).partial_fit(X[:20], y[:20])
    for i in range(20, 650):
        fast.partial_fit(X[i:i + 1], y[i:i + 1])
        full.partial_fit(X[i:i + 1], y[i:i + 1], sample_weight=np.ones(1))
    assert not np.array_equal(fast.feature_scale_, np.ones(3))
    assert _same(_state(fast), _state(full))
    assert np.array_equal(_predict(fast, X[650:]), _predict(full, X[650:]))


@pytest.mark.parametrize("cls", CLASSIFIERS + REGRESSORS)
def test_a_row_that_rescales_the_trees_in_place_stays_on_the_fast_path(cls, monkeypatch):
    """A unit change that rescales the trees in place (AMF past its first rows, a
    Mondrian forest between re-samplings) is made before the compiled call, so the
    row is learned without the full path's per-tree calls; the model is the one
    the full path gives (checked bit for bit above)."""
    X, y = _targets(cls)
    model = cls(n_estimators=3, random_state=0).partial_fit(X[:300], y[:300])
    reference = cls(n_estimators=3, random_state=0).partial_fit(X[:300], y[:300])
    for i in range(300, 330):  # past the re-sampling of the forests' first rows
        model.partial_fit(X[i:i + 1], y[i:i + 1])
        reference.partial_fit(X[i:i + 1], y[i:i + 1], sample_weight=np.ones(1))
    row = np.array([[2.5, 0.5, 0.5]])  # feature 0's range doubles, then doubles again
    units = model.feature_scale_.copy()

    def full_path(*args):
        raise AssertionError("the row took the full path")

    monkeypatch.setattr(type(model), "_learn_in_units", full_path)
    model.partial_fit(row, y[330:331])
    monkeypatch.undo()
    reference.partial_fit(row, y[330:331], sample_weight=np.ones(1))
    assert model.feature_scale_[0] == 4 * units[0]
    assert np.array_equal(model.feature_scale_, reference.feature_scale_)
    assert _same(_state(model), _state(reference))


FORESTS = [MondrianForestClassifier, MondrianForestRegressor]


@pytest.mark.parametrize("cls", FORESTS)
def test_a_row_that_grows_the_store_stays_in_the_compiled_call(cls, monkeypatch):
    """A Mondrian forest whose store of points is full grows it, and the trees'
    point links with it, before the compiled call: no tree is handed to Python to
    learn the row (each costs a per-tree call)."""
    import mondrianlearn.forest._base as forest_base

    X, y = _targets(cls)
    model, reference = (cls(n_estimators=3, random_state=0, feature_scale=None)
                        .partial_fit(X[:300], y[:300]) for _ in range(2))
    assert model._store.n == model._store.X.shape[0]  # full
    calls = []
    learn_tree = forest_base._learn_tree
    monkeypatch.setattr(forest_base, "_learn_tree", lambda *a: calls.append(1) or learn_tree(*a))
    model.partial_fit(X[300:301], y[300:301])
    monkeypatch.undo()
    reference.partial_fit(X[300:301], y[300:301], sample_weight=np.ones(1))
    assert not calls
    assert model._store.X.shape[0] > 301
    assert _same(_state(model), _state(reference))


@pytest.mark.parametrize("cls", FORESTS)
def test_small_batches_of_the_full_path_extend_the_trees_in_one_compiled_call(
        cls, monkeypatch):
    """A batch of a few rows that takes the full path (here: with ``sample_weight``)
    extends the trees in the fast path's compiled call over all trees, not in a
    Python call per tree: the same model as the fast path's, bit for bit."""
    import mondrianlearn.forest._base as forest_base

    X, y = _targets(cls)
    model, reference = (cls(n_estimators=4, random_state=0).partial_fit(X[:200], y[:200])
                        for _ in range(2))

    def per_tree(*args):
        raise AssertionError("the batch was learned tree by tree")

    monkeypatch.setattr(forest_base, "map_trees", per_tree)
    for start in range(200, 260, 6):
        rows = slice(start, start + 6)
        model.partial_fit(X[rows], y[rows], sample_weight=np.ones(6))
        reference.partial_fit(X[rows], y[rows])
    assert _same(_state(model), _state(reference))
    assert np.array_equal(_predict(model, X[300:]), _predict(reference, X[300:]))


@pytest.mark.parametrize("cls", FORESTS)
def test_a_bad_row_refused_when_the_store_is_full_leaves_it_as_it_was(cls):
    X, y = _targets(cls)
    model = cls(n_estimators=3, random_state=0, feature_scale=None).partial_fit(X[:300], y[:300])
    store = model._store
    arrays = store.X, store.keys, store.stats
    before, pickled = _state(model), pickle.dumps(model)
    row = X[300:301].copy()
    row[0, 1] = np.nan
    with pytest.raises(ValueError):
        model.partial_fit(row, y[300:301])
    assert all(a is b for a, b in zip((store.X, store.keys, store.stats), arrays))
    assert store.n == 300
    assert _same(_state(model), before)
    assert pickle.dumps(model) == pickled  # the trees' point links too
    model.partial_fit(X[300:301], y[300:301])  # and it goes on learning
    assert store.n == 301


@pytest.mark.parametrize("cls", CLASSIFIERS + REGRESSORS)
@pytest.mark.parametrize("bad", ["nan", "overflow", "target"])
def test_bad_rows_that_change_a_unit_are_refused(cls, bad):
    X, y = _targets(cls)
    model = cls(n_estimators=3, random_state=0).partial_fit(X[:300], y[:300])
    row, label = np.array([[50.0, 0.5, 0.5]]), y[300:301].copy()
    if bad == "nan":
        row[0, 2] = np.nan  # read after the unit change of feature 0
    elif bad == "overflow":
        row[0, 2] = 1.5e308
        model.partial_fit(np.array([[0.5, 0.5, -1.5e308]]), y[:1])
    elif cls in REGRESSORS:
        label[0] = np.nan
    else:
        pytest.skip("non-finite targets: regression only")
    before = _state(model)
    with pytest.raises(ValueError):
        model.partial_fit(row, label)
    assert _same(_state(model), before)


@pytest.mark.parametrize("cls", CLASSIFIERS + REGRESSORS)
def test_sample_weight_takes_the_fast_path_bit_for_bit(cls, monkeypatch):
    """Positive weights given as a NumPy array take the fast path as often as no
    weights do (a Mondrian forest's re-samplings take the full path either way); the
    model is the one of the full path (weights given as a list, which takes it), bit
    for bit, through rows that change the feature units and AMF's first rows kept."""
    X, y = _widening(cls)
    weights = np.random.RandomState(1).uniform(0.2, 3.0, size=len(y))
    fast, full = (cls(n_estimators=3, random_state=4).partial_fit(
        X[:20], y[:20], sample_weight=weights[:20]) for _ in range(2))
    unweighted = cls(n_estimators=3, random_state=4).partial_fit(X[:20], y[:20])
    calls = {id(fast): 0, id(unweighted): 0}
    validated = type(fast)._partial_fit_full

    def counted(self, *args):
        if id(self) in calls:
            calls[id(self)] += 1
        return validated(self, *args)

    monkeypatch.setattr(type(fast), "_partial_fit_full", counted)
    batches = [(i, 1) for i in range(20, 400)] + [(i, 5) for i in range(400, 650, 5)]
    for start, size in batches:
        rows = slice(start, start + size)
        fast.partial_fit(X[rows], y[rows], sample_weight=weights[rows])
        full.partial_fit(X[rows], y[rows], sample_weight=list(weights[rows]))
        unweighted.partial_fit(X[rows], y[rows])
    assert calls[id(fast)] == calls[id(unweighted)] < len(batches) // 50
    assert _same(_state(fast), _state(full))
    assert np.array_equal(_predict(fast, X[650:]), _predict(full, X[650:]))


@pytest.mark.parametrize("cls", CLASSIFIERS + REGRESSORS)
def test_sample_weight_with_drift_adaptation_bit_for_bit(cls):
    """The same with ``drift="adwin"``: weighted rows on the fast path give the
    validated path's model and drift events, through a change of concept."""
    X, y = _targets(cls)
    y = y.copy()
    y[200:] = 1 - y[200:] if cls in CLASSIFIERS else -y[200:]
    weights = np.random.RandomState(2).uniform(0.2, 3.0, size=len(y))
    fast, full = (cls(n_estimators=3, random_state=0, drift="adwin").partial_fit(
        X[:20], y[:20], sample_weight=weights[:20]) for _ in range(2))
    for i in range(20, 380):
        fast.partial_fit(X[i:i + 1], y[i:i + 1], sample_weight=weights[i:i + 1])
        full.partial_fit(X[i:i + 1], y[i:i + 1], sample_weight=[weights[i]])
    events = [m._drift_state.events[: m._drift_state.n_events] for m in (fast, full)]
    assert events[0].shape[0] > 0 and np.array_equal(*events)
    assert np.array_equal(_predict(fast, X[380:]), _predict(full, X[380:]))


@pytest.mark.parametrize("cls", CLASSIFIERS + REGRESSORS)
def test_weights_the_fast_path_leaves_to_the_full_path(cls):
    """A weight of zero (the row teaches nothing), negative or not finite, or weights
    of the wrong length, read-only or of another dtype: the same model, or the
    same error, as scikit-learn's validation gives."""
    X, y = _targets(cls)
    model, reference = (cls(n_estimators=3, random_state=0).partial_fit(X[:50], y[:50])
                        for _ in range(2))
    zero = np.array([1.0, 0.0, 2.0])
    model.partial_fit(X[50:53], y[50:53], sample_weight=zero)
    reference.partial_fit(X[50:53], y[50:53], sample_weight=list(zero))
    assert _same(_state(model), _state(reference))
    before = _state(model)
    for bad in (np.array([-1.0]), np.array([np.nan]), np.array([np.inf]),
                np.array([1.0, 1.0])):
        with pytest.raises(ValueError):
            model.partial_fit(X[53:54], y[53:54], sample_weight=bad)
        assert _same(_state(model), before)
    read_only = np.array([2.0])
    read_only.setflags(write=False)
    model.partial_fit(X[53:54], y[53:54], sample_weight=read_only)
    model.partial_fit(X[54:55], y[54:55], sample_weight=np.array([3], dtype=np.int32))
    reference.partial_fit(X[53:54], y[53:54], sample_weight=[2.0])
    reference.partial_fit(X[54:55], y[54:55], sample_weight=[3.0])
    assert _same(_state(model), _state(reference))


@pytest.mark.parametrize("cls", CLASSIFIERS + REGRESSORS)
@pytest.mark.parametrize("feature_scale", ["range", None])
def test_read_only_rows(cls, feature_scale):
    pd = pytest.importorskip("pandas")
    X, y = _targets(cls)
    X_ro, y_ro = X.copy(), y.copy()
    X_ro.setflags(write=False)
    y_ro.setflags(write=False)
    model = cls(n_estimators=3, random_state=0, feature_scale=feature_scale)
    model.partial_fit(X[:50], y[:50])
    reference = cls(n_estimators=3, random_state=0, feature_scale=feature_scale)
    reference.partial_fit(X[:50], y[:50])
    for i in range(50, 60):
        model.partial_fit(X_ro[i:i + 1], y_ro[i:i + 1])
        reference.partial_fit(X[i:i + 1], y[i:i + 1])
    assert np.array_equal(_predict(model, X_ro[100:101]), _predict(reference, X[100:101]))
    # fitted on named columns, predicting on a read-only array (the validated path)
    named = cls(n_estimators=3, random_state=0, feature_scale=feature_scale)
    named.partial_fit(pd.DataFrame(X[:50], columns=["a", "b", "c"]), y[:50])
    with pytest.warns(UserWarning, match="feature names"):
        assert np.array_equal(_predict(named, X_ro[100:101]), _predict(named, X[100:101]))


@pytest.mark.parametrize("cls", CLASSIFIERS)
@pytest.mark.parametrize("classes", [np.array([0, 1]), [1, 0], (0, 1)])
def test_classes_given_on_every_call_take_the_fast_path(cls, classes, monkeypatch):
    """scikit-learn's examples pass ``classes`` to every ``partial_fit``: when they
    are the model's classes, the call is the same as without them, and fast."""
    X, y = _targets(cls)
    every = cls(n_estimators=3, random_state=0).partial_fit(X[:20], y[:20], classes=classes)
    first = cls(n_estimators=3, random_state=0).partial_fit(X[:20], y[:20], classes=classes)

    def full_path(*args):
        raise AssertionError("the call took the full path")

    monkeypatch.setattr(type(every), "_partial_fit_full", full_path)
    for i in range(20, 120):
        every.partial_fit(X[i:i + 1], y[i:i + 1], classes=classes)
        first.partial_fit(X[i:i + 1], y[i:i + 1])
    monkeypatch.undo()
    assert _same(_state(every), _state(first))
    with pytest.raises(ValueError, match="differs from the classes"):
        every.partial_fit(X[120:121], y[120:121], classes=[0, 1, 2])
    with pytest.raises(ValueError, match="differs from the classes"):
        every.partial_fit(X[120:121], y[120:121], classes=np.array([0, 2]))
    assert _same(_state(every), _state(first))


@pytest.mark.parametrize("cls", CLASSIFIERS + REGRESSORS)
def test_threads_split_the_trees_of_a_fast_path_call_bit_for_bit(cls):
    """With ``n_jobs=2``, a fast-path call of enough rows and trees learns in two
    threads, each a part of the trees (``utils.parallel.run_split``): the same
    model."""
    X, y = _targets(cls)
    models = [cls(n_estimators=16, random_state=5, n_jobs=n_jobs).partial_fit(X[:40], y[:40])
              for n_jobs in (1, 2)]
    for start in range(40, 400, 60):  # 60 rows x 16 trees: split between threads
        for model in models:
            model.partial_fit(X[start:start + 60], y[start:start + 60])
    work = models[1]._fast_scratch.work
    assert work.get("extend_threads" if "Mondrian" in cls.__name__ else "learn_threads")
    assert _same(_state(models[0]), _state(models[1]))
    assert np.array_equal(_predict(models[0], X[:50]), _predict(models[1], X[:50]))


@pytest.mark.parametrize("cls", CLASSIFIERS)
def test_unknown_and_declared_labels(cls):
    X, y = _targets(cls)
    model = cls(n_estimators=3, random_state=0).partial_fit(X[:50], y[:50])
    model.partial_fit(X[50:51], np.array([7]))  # a new class joins through the full path
    assert list(model.classes_) == [0, 1, 7]
    model.partial_fit(X[51:52], [1])  # labels as a list
    declared = cls(n_estimators=3, random_state=0).partial_fit(X[:50], y[:50], classes=[0, 1])
    before = _state(declared)
    with pytest.raises(ValueError, match="not in `classes`"):
        declared.partial_fit(X[50:51], np.array([9]))
    assert _same(_state(declared), before)


@pytest.mark.parametrize("cls", CLASSIFIERS + REGRESSORS)
def test_set_params_between_calls_is_validated(cls):
    X, y = _targets(cls)
    model = cls(n_estimators=3, random_state=0).partial_fit(X[:50], y[:50])
    model.partial_fit(X[50:51], y[50:51])
    model.set_params(n_estimators=-1)
    with pytest.raises(ValueError, match="n_estimators"):
        model.partial_fit(X[51:52], y[51:52])
    model.set_params(n_estimators=3)
    model.partial_fit(X[51:52], y[51:52])


@pytest.mark.parametrize("cls", CLASSIFIERS + REGRESSORS)
def test_scratch_state_is_not_pickled_and_copies_learn_on_their_own(cls):
    X, y = _targets(cls)
    model = cls(n_estimators=3, random_state=0).partial_fit(X[:50], y[:50])
    for i in range(50, 60):
        model.partial_fit(X[i:i + 1], y[i:i + 1])
    state = model.__getstate__()
    assert not any(k.startswith("_fast") for k in state)
    copy = pickle.loads(pickle.dumps(model))
    reference = _predict(model, X[100:150])
    for i in range(60, 80):
        copy.partial_fit(X[i:i + 1], y[i:i + 1])
    assert np.array_equal(_predict(model, X[100:150]), reference)  # the original is untouched
    for i in range(60, 80):
        model.partial_fit(X[i:i + 1], y[i:i + 1])
    assert np.array_equal(_predict(model, X[100:150]), _predict(copy, X[100:150]))


def test_pandas_input_takes_the_validated_path():
    pd = pytest.importorskip("pandas")
    X, y, _ = _data()
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    model = AMFClassifier(n_estimators=3, random_state=0).partial_fit(frame[:50], y[:50])
    model.partial_fit(frame[50:51], y[50:51])
    with pytest.warns(UserWarning, match="feature names"):
        model.predict_proba(X[:1])


@pytest.mark.parametrize("cls", CLASSIFIERS)
def test_a_new_class_resizes_the_prediction_work_space(cls):
    X, y = _targets(cls)
    model = cls(n_estimators=3, random_state=0).partial_fit(X[:50], y[:50])
    model.predict_proba(X[:1])  # work arrays for two classes
    for i, label in enumerate([2, 3, 4, 5], start=50):
        model.partial_fit(X[i:i + 1], np.array([label]))
    fast = np.vstack([model.predict_proba(X[i:i + 1]) for i in range(100, 120)])
    assert fast.shape == (20, 6)
    assert np.allclose(fast.sum(axis=1), 1.0)
    full = model.predict_proba(X[100:120].tolist())  # a list: the validated path
    assert np.array_equal(fast, full)


@pytest.mark.parametrize("cls", CLASSIFIERS + REGRESSORS)
def test_threads_predicting_with_one_model_get_the_sequential_answers(cls):
    from concurrent.futures import ThreadPoolExecutor

    X, y = _targets(cls)
    model = cls(n_estimators=5, random_state=0).partial_fit(X[:300], y[:300])
    rows = [X[i:i + 1] for i in range(300, 400)]
    expected = [_predict(model, row) for row in rows]
    with ThreadPoolExecutor(4) as pool:
        for _ in range(3):
            got = list(pool.map(lambda row: _predict(model, row), rows))
            assert all(np.array_equal(a, b) for a, b in zip(got, expected))


@pytest.mark.parametrize("cls", [AMFClassifier, AMFRegressor])
def test_one_row_predictions_leave_nothing_for_the_next_call(cls):
    # AMF memoises the path sums of the nodes that the rows of one call reach, and
    # clears the marks after the call; a call of one row memoises nothing. Single rows,
    # then learning, then a small batch must predict as a fresh copy of the model does.
    X, y = _targets(cls)
    model = cls(n_estimators=3, random_state=0).partial_fit(X[:250], y[:250])
    for start in range(250, 300, 10):
        for i in range(300, 306):
            _predict(model, X[i:i + 1])
        model.partial_fit(X[start:start + 10], y[start:start + 10])
        fresh = pickle.loads(pickle.dumps(model))
        # three rows reach a few paths of trees of hundreds of nodes: no whole-tree pass
        assert min(t.n_nodes for t in model.trees_) > 12 * 3
        assert np.array_equal(_predict(model, X[300:303]), _predict(fresh, X[300:303]))


# ------------------------------------------------- prepared calls of one row
def _count_fast_inputs(monkeypatch):
    """A list that grows by one for each call through ``_fast_input`` (prepared
    one-row calls do not go through it)."""
    from mondrianlearn.utils.fast_path import FastPathMixin

    calls = []
    original = FastPathMixin._fast_input

    def counted(self, X, learning=False):
        calls.append(learning)
        return original(self, X, learning)

    monkeypatch.setattr(FastPathMixin, "_fast_input", counted)
    return calls


@pytest.mark.parametrize("cls", CLASSIFIERS + [AMFRegressor])
@pytest.mark.parametrize("weighted", [False, True])
def test_one_row_calls_reuse_the_prepared_call(cls, weighted, monkeypatch):
    X, y = _targets(cls)
    weights = np.random.RandomState(0).uniform(0.5, 2.0, size=400) if weighted else np.ones(400)
    # past the first rows that AMF keeps (utils.feature_scale)
    model = cls(n_estimators=4, random_state=2).partial_fit(X[:260], y[:260])
    reference = cls(n_estimators=4, random_state=2).partial_fit(X[:260], y[:260])
    calls = _count_fast_inputs(monkeypatch)
    for i in range(260, 360):
        model.partial_fit(X[i:i + 1], y[i:i + 1],
                          sample_weight=weights[i:i + 1] if weighted else None)
        _predict(model, X[i + 1:i + 2])
    # trees that grow (and units that change) take the fast path again
    assert calls.count(True) < 20
    assert calls.count(False) < 20
    reference.partial_fit(X[260:360].tolist(), y[260:360], sample_weight=weights[260:360])
    assert _same(_state(model), _state(reference))
    one_by_one = np.concatenate([_predict(model, X[i:i + 1]) for i in range(360, 400)])
    assert np.array_equal(one_by_one, _predict(reference, X[360:400]))


@pytest.mark.parametrize("cls", CLASSIFIERS)
def test_prepared_calls_follow_every_change_of_the_model(cls):
    # Everything that can change between two one-row calls, against a twin that
    # learns each row through scikit-learn's validation: new parameters, a new
    # class, rows that widen the range and change units, a refused row, a second
    # model learning in between (its trees grow: the global stamp moves), and a
    # pickled copy.
    X, y = _widening(cls, n=600)
    y = y.copy()
    y[300:] = np.where(np.arange(300, 600) % 7 == 0, 2, y[300:])  # class 2 from row 300
    model = cls(n_estimators=3, random_state=5).partial_fit(X[:20], y[:20])
    twin = cls(n_estimators=3, random_state=5).partial_fit(X[:20], y[:20])
    other = cls(n_estimators=3, random_state=6).partial_fit(X[:20], y[:20])
    for i in range(20, 560):
        if i == 200:
            changed = {"step": 2.0} if cls is AMFClassifier else {"discount": 5.0}
            model.set_params(**changed)
            twin.set_params(**changed)
        if i == 400:
            bad = X[i:i + 1].copy()
            bad[0, 1] = np.nan
            before = _state(model)
            with pytest.raises(ValueError):
                model.partial_fit(bad, y[i:i + 1])
            with pytest.raises(ValueError):
                model.predict_proba(bad)
            assert _same(_state(model), before)
        if i == 450:  # both, as a pickle keeps no spare room (trees grow elsewhere)
            model = pickle.loads(pickle.dumps(model))
            twin = pickle.loads(pickle.dumps(twin))
        model.partial_fit(X[i:i + 1], y[i:i + 1])
        twin.partial_fit(X[i:i + 1], y[i:i + 1], sample_weight=np.ones(1))
        other.partial_fit(X[(i * 7) % 600:(i * 7) % 600 + 1], y[(i * 7) % 600:(i * 7) % 600 + 1])
        if i % 3 == 0:
            assert np.array_equal(model.predict_proba(X[i + 1:i + 2]),
                                  twin.predict_proba(X[i + 1:i + 2].tolist()))
    assert list(model.classes_) == [0, 1, 2]
    assert _same(_state(model), _state(twin))
    assert np.array_equal(_predict(model, X[560:]), _predict(twin, X[560:]))


def test_replacing_any_array_of_the_sample_store_gives_a_new_stamp():
    # A Mondrian forest's prepared one-row call holds the store's arrays and relies
    # on the stamp to be made again when one of them is replaced (a new class
    # widens the statistics alone).
    store = engine_tree.SampleStore(3, 2)
    for replace in (lambda: store.reserve(100), lambda: store.widen(3),
                    lambda: setattr(store, "keys", store.keys.copy()), store.trim,
                    store.clear):
        before = engine_tree.LAST_STAMP[0]
        replace()
        assert engine_tree.LAST_STAMP[0] != before
    restored = pickle.loads(pickle.dumps(store))
    assert restored.stats.shape == store.stats.shape and restored.n == store.n


@pytest.mark.parametrize("cls", CLASSIFIERS)
def test_prepared_calls_take_no_read_only_or_other_rows(cls, monkeypatch):
    X, y = _targets(cls)
    model = cls(n_estimators=3, random_state=0).partial_fit(X[:50], y[:50])
    twin = cls(n_estimators=3, random_state=0).partial_fit(X[:50], y[:50])
    for i in range(50, 60):
        model.partial_fit(X[i:i + 1], y[i:i + 1])
        twin.partial_fit(X[i:i + 1].tolist(), y[i:i + 1])
    calls = _count_fast_inputs(monkeypatch)
    row = X[60:61].copy()
    row.flags.writeable = False
    model.partial_fit(row, y[60:61])
    model.predict_proba(row)
    model.partial_fit(X[61:62].astype(np.float32), y[61:62])
    model.partial_fit(np.asfortranarray(X[62:64]), y[62:64])
    # a row in memory not aligned for float64 (the compiled function of a prepared
    # call assumes aligned arrays; the fast path copies such rows)
    memory = np.zeros(8 * X.shape[1] + 1, dtype=np.uint8)
    unaligned = np.ndarray((1, X.shape[1]), dtype=np.float64, buffer=memory, offset=1)
    unaligned[...] = X[64:65]
    assert not unaligned.flags.aligned and unaligned.flags.writeable
    model.partial_fit(unaligned, y[64:65])
    assert len(calls) == 5  # each went through the fast path's checks
    twin.partial_fit(X[60:61].tolist(), y[60:61])
    twin.partial_fit(X[61:62].astype(np.float32).tolist(), y[61:62])
    twin.partial_fit(X[62:64].tolist(), y[62:64])
    twin.partial_fit(X[64:65].tolist(), y[64:65])
    assert _same(_state(model), _state(twin))
    assert np.array_equal(model.predict_proba(unaligned), twin.predict_proba(X[64:65]))


@pytest.mark.parametrize("cls", CLASSIFIERS)
@pytest.mark.parametrize("weight", [0.0, np.nan, np.inf, -1.0])
def test_weights_a_prepared_call_leaves_to_the_fast_path(cls, weight):
    X, y = _targets(cls)
    model = cls(n_estimators=3, random_state=0).partial_fit(X[:260], y[:260])
    twin = cls(n_estimators=3, random_state=0).partial_fit(X[:260], y[:260])
    for i in range(260, 270):
        model.partial_fit(X[i:i + 1], y[i:i + 1])
        twin.partial_fit(X[i:i + 1].tolist(), y[i:i + 1])
    if weight == 0.0:  # learns nothing (but the label), as the validated path
        model.partial_fit(X[270:271], y[270:271], sample_weight=np.array([weight]))
        twin.partial_fit(X[270:271].tolist(), y[270:271], sample_weight=np.array([weight]))
    else:
        before = _state(model)
        with pytest.raises(ValueError):
            model.partial_fit(X[270:271], y[270:271], sample_weight=np.array([weight]))
        assert _same(_state(model), before)
    assert _same(_state(model), _state(twin))


@pytest.mark.parametrize("cls", CLASSIFIERS + [AMFRegressor])
def test_calls_on_rows_in_the_models_units_are_not_prepared(cls):
    # The river adapters hand over checked rows; a regressor's validated prediction
    # puts them in its units first. A call on rows in the model's units must not
    # leave a call prepared for rows in the caller's units.
    X, y = _widening(cls, n=400)
    model = cls(n_estimators=3, random_state=0).partial_fit(X[:300], y[:300])
    assert not np.array_equal(model.feature_scale_, np.ones(3))
    # both loaded, so that their trees have the same room and grow alike
    model, fresh = (pickle.loads(pickle.dumps(model)) for _ in range(2))
    for i in range(300, 320):
        row = np.ascontiguousarray(X[i:i + 1])
        checked = (model._predict_proba_validated(row) if cls in CLASSIFIERS
                   else model._predict_validated(row))
        assert np.array_equal(checked, _predict(model, row))
        assert np.array_equal(_predict(model, row), _predict(fresh, row))
        model._partial_fit_validated(row, y[i:i + 1])
        fresh.partial_fit(row.tolist(), y[i:i + 1])
    assert _same(_state(model), _state(fresh))


def test_compiled_entry_is_the_dispatchers_compiled_function_for_those_types():
    from numba import njit
    from numba.core.dispatcher import Dispatcher

    from mondrianlearn.engine._jit import compiled_entry

    @njit
    def add(a, b, k):
        return a[0] + b[0, 0] + k

    args = (np.ones(2), np.full((1, 1), 2.0), 3)
    assert compiled_entry(add, args) is add  # nothing compiled yet: the dispatcher
    assert add(*args) == 6.0
    entry = compiled_entry(add, args)
    assert not isinstance(entry, Dispatcher)
    assert entry(np.full(2, 5.0), np.zeros((1, 1)), 1) == 6.0
    assert compiled_entry(add, args) is entry  # remembered
    # other types (a read-only array, a float, an object without a type): the dispatcher
    frozen = np.ones(2)
    frozen.flags.writeable = False
    assert compiled_entry(add, (frozen, args[1], 3)) is add
    assert compiled_entry(add, (args[0], args[1], 3.0)) is add
    assert compiled_entry(add, (args[0], args[1], object())) is add


def _with_prepared_calls(cls):
    """A model of ``cls`` whose last one-row calls left both calls prepared."""
    X, y = _targets(cls)
    model = cls(n_estimators=3, random_state=0).partial_fit(X[:260], y[:260])
    for i in range(260, 270):
        model.partial_fit(X[i:i + 1], y[i:i + 1])
        _predict(model, X[i:i + 1])
    scratch = model._fast_scratch
    assert scratch.learn_plan is not None and scratch.predict_plan is not None
    return model


@pytest.mark.parametrize("cls", CLASSIFIERS + [AMFRegressor])
def test_prepared_calls_skip_the_dispatcher(cls):
    # A prepared call holds the kernel's compiled function for the types of its
    # arguments (engine._jit.compiled_entry), not numba's dispatcher, which would
    # work out those types again on every call.
    from numba.core.dispatcher import Dispatcher

    scratch = _with_prepared_calls(cls)._fast_scratch
    for plan in (scratch.learn_plan, scratch.predict_plan):
        assert not isinstance(plan.kernel, Dispatcher)


@pytest.mark.parametrize("cls", CLASSIFIERS + [AMFRegressor])
def test_a_model_with_prepared_calls_is_freed_when_dropped(cls):
    # The prepared calls take the model as an argument rather than holding it: a
    # reference cycle would keep a dropped model (gigabytes on a long stream) alive
    # until Python's garbage collector happens to run.
    import gc
    import weakref

    model = _with_prepared_calls(cls)
    ref = weakref.ref(model)
    enabled = gc.isenabled()
    gc.disable()
    try:
        del model
        assert ref() is None
    finally:
        if enabled:
            gc.enable()
