"""The river interface: same model as our own test-then-train loop, pipelines, features."""

import numpy as np
import pytest

river = pytest.importorskip("river", reason="river is an optional dependency")
from river import datasets, evaluate, metrics, preprocessing  # noqa: E402

from mondrianlearn import AMFClassifier, MondrianForestClassifier  # noqa: E402
from mondrianlearn import river as mlr  # noqa: E402
from mondrianlearn.engine.tree import node_boxes


def _amf_fast_predict_is_stale():
    """Whether AMFClassifier's one-call prediction reuses work arrays sized for fewer
    classes once a new class has arrived (see AMF_PREDICT_BUG)."""
    model = AMFClassifier(n_estimators=1, random_state=0)
    X = np.array([[0.0], [1.0], [0.5], [0.25]])
    for i, label in enumerate([0, 0, 1, 1]):
        model.partial_fit(X[i:i + 1], np.array([label]))
        if not np.isclose(model.predict_proba(X[i:i + 1]).sum(), 1.0):
            return True
    return False


# Estimator bug (seen in the fast path of AMFClassifier, not in the adapter):
# BaseAMF._predict_fast (amf/_base.py) caches the prediction work arrays of
# amf/_forest_kernels.prediction_work under the number of features only. Their class
# columns (prefix, row) keep the number of classes of the first prediction, so once a
# new class has arrived the compiled predict_proba_forest reads and writes past their
# end: probabilities that do not sum to one and change from call to call (and memory
# past the arrays is written, so the affected tests are not run). The cache key must
# include n_outputs. The mark is inert once the probe sees the bug fixed.
AMF_PREDICT_BUG = pytest.mark.xfail(
    _amf_fast_predict_is_stale(), run=False,
    reason="estimator: AMFClassifier's one-call predict_proba reuses work arrays sized "
           "for fewer classes after a new class (BaseAMF._predict_fast, amf/_base.py)")


def _phishing(n=600):
    rows = list(datasets.Phishing())[:n]
    names = sorted(rows[0][0])  # the adapters' column order: names of a row sorted
    X = np.array([[x[k] for k in names] for x, _ in rows], dtype=float)
    y = np.array([y for _, y in rows])
    return rows, X, y


@pytest.mark.parametrize("river_cls, sk_cls, params", [
    (mlr.MondrianForestClassifier, MondrianForestClassifier, {"n_estimators": 5}),
    pytest.param(mlr.AMFClassifier, AMFClassifier, {"n_estimators": 5}, marks=AMF_PREDICT_BUG),
])
def test_progressive_val_score_equals_our_own_test_then_train(river_cls, sk_cls, params):
    rows, X, y = _phishing()
    score = evaluate.progressive_val_score(rows, river_cls(seed=7, **params), metrics.LogLoss())
    # our own progressive evaluation of the same model and seed, one row at a time,
    # scored by the same metric object
    model = sk_cls(random_state=7, **params)
    ours = metrics.LogLoss()
    for i in range(len(y)):
        if i > 0:  # river does not score the empty prediction of an untrained model
            proba = {c.item(): float(p) for c, p in
                     zip(model.classes_, model.predict_proba(X[i:i + 1])[0])}
            ours.update(y[i].item(), proba)
        model.partial_fit(X[i:i + 1], y[i:i + 1])
    assert score.get() == ours.get()


def test_progressive_mae_of_a_regressor_scores_from_its_first_learned_row():
    # A regressor that has learned nothing abstains (None), as river's AMFRegressor
    # does: progressive_val_score then scores rows 1.. only, each predicted by the
    # model that learned the rows before it (a made-up 0.0 for row 0 would add an
    # error of the target's size).
    from mondrianlearn import AMFRegressor

    rows = list(datasets.TrumpApproval())[:200]
    names = sorted(rows[0][0])
    X = np.array([[x[k] for k in names] for x, _ in rows], dtype=float)
    y = np.array([target for _, target in rows], dtype=float)
    score = evaluate.progressive_val_score(rows, mlr.AMFRegressor(n_estimators=5, seed=3),
                                           metrics.MAE())
    model = AMFRegressor(n_estimators=5, random_state=3)
    ours = metrics.MAE()
    for i in range(len(y)):
        if i > 0:
            ours.update(y[i], float(model.predict(X[i:i + 1])[0]))
        model.partial_fit(X[i:i + 1], y[i:i + 1])
    assert score.get() == pytest.approx(ours.get(), rel=1e-12)
    assert score.get() < 1.0  # approval rates near 40: far below the first row's error


@AMF_PREDICT_BUG
def test_pipeline_and_clone():
    rows, _, _ = _phishing(400)
    model = preprocessing.MinMaxScaler() | mlr.AMFClassifier(n_estimators=5, seed=1)
    auc = evaluate.progressive_val_score(rows, model, metrics.ROCAUC())
    assert auc.get() > 0.85
    clone = mlr.MondrianForestClassifier(n_estimators=3, seed=2).clone()
    assert clone.n_estimators == 3 and clone.seed == 2 and clone._model is None


def test_features_first_seen_late_and_missing_features():
    model = mlr.MondrianForestClassifier(n_estimators=3, seed=0)
    assert model.predict_proba_one({"a": 1.0}) == {}
    for i in range(50):
        model.learn_one({"a": i / 50}, i % 2)
    # "b" appears: every earlier point is taken to have had b = 0.3
    model.learn_one({"a": 0.5, "b": 0.3}, 1)
    inner = model._model
    assert inner.n_features_in_ == 2
    lower, upper = node_boxes(inner.trees_[0].arrays, inner._store.X)
    root = inner.trees_[0].arrays.meta[1]
    # the first value of "b" is its origin (utils.feature_scale): the trees hold 0
    assert inner._units[2, 1] == 0.3
    assert lower[root, 1] == 0.0 and upper[root, 1] == 0.0
    # a row without "b" takes its first value; an unknown feature at prediction is ignored
    model.learn_one({"a": 0.1}, 0)
    proba = model.predict_proba_one({"a": 0.2, "zzz": 5.0})
    assert set(proba) == {0, 1} and sum(proba.values()) == pytest.approx(1.0)


@pytest.mark.parametrize("cls", [mlr.MondrianForestClassifier, mlr.AMFClassifier,
                                 mlr.MondrianForestRegressor, mlr.AMFRegressor])
@pytest.mark.parametrize("feature_scale", [None, "range"])
def test_a_feature_first_seen_late_changes_nothing_between_the_paths(cls, feature_scale):
    """After a new feature, one-row predictions (the fast path) equal those of a batch
    too large for it: every setting that depends on the number of features (the
    Mondrian forest's default discount, 10 per feature) follows it on both paths."""
    rng = np.random.RandomState(0)
    model = cls(n_estimators=3, seed=0, feature_scale=feature_scale)
    for _ in range(200):
        x = {"a": rng.rand(), "b": rng.rand()}
        model.learn_one(x, int(x["a"] > 0.5))
    for _ in range(20):
        x = {"a": rng.rand(), "b": rng.rand(), "c": 0.5}
        model.learn_one(x, int(x["a"] > 0.5))
    inner = model._model
    assert inner.n_features_in_ == 3
    X = np.column_stack([rng.rand(600, 2), np.full(600, 0.5)])
    predict = inner.predict_proba if hasattr(inner, "predict_proba") else inner.predict
    assert np.array_equal(np.vstack([predict(X[i:i + 1]) for i in range(600)]).ravel(),
                          predict(X).ravel())


@AMF_PREDICT_BUG
def test_learn_many_and_predict_many():
    pd = pytest.importorskip("pandas")
    rng = np.random.RandomState(0)
    X = pd.DataFrame(rng.uniform(size=(200, 3)), columns=["u", "v", "w"])
    y = pd.Series((X["u"] > 0.5).astype(int))
    model = mlr.AMFClassifier(n_estimators=5, seed=0)
    model.learn_many(X[:150], y[:150])
    proba = model.predict_proba_many(X[150:])
    assert list(proba.columns) == [0, 1] and np.allclose(proba.sum(axis=1), 1.0)
    assert (model.predict_many(X[150:]) == y[150:]).mean() > 0.85
    reg = mlr.MondrianForestRegressor(n_estimators=5, seed=0)
    reg.learn_many(X[:150], X["u"][:150] * 2)
    assert np.abs(reg.predict_many(X[150:]) - X["u"][150:] * 2).mean() < 0.2


def test_regressors_learn_one():
    pd = pytest.importorskip("pandas")
    for cls in (mlr.MondrianForestRegressor, mlr.AMFRegressor):
        model = cls(seed=0)
        assert model.predict_one({"x": 1.0}) is None  # nothing learned: no forecast
        assert model.predict_many(pd.DataFrame({"x": [0.5, 1.0]})).isna().all()
        mae = metrics.MAE()
        for i in range(300):
            x = {"x": (i * 37 % 100) / 100}
            if i > 0:
                mae.update(2 * x["x"], model.predict_one(x))
            model.learn_one(x, 2 * x["x"])
        assert mae.get() < 0.2


def test_mondrian_kernel_models_for_river():
    rows, _, _ = _phishing(300)
    clf = preprocessing.MinMaxScaler() | mlr.MondrianKernelClassifier(n_trees=10, lifetime=2.0,
                                                                      seed=0)
    assert evaluate.progressive_val_score(rows, clf, metrics.Accuracy()).get() > 0.7
    reg = mlr.MondrianKernelRegressor(n_trees=10, lifetime=3.0, seed=0)
    mae = metrics.MAE()
    for i in range(300):
        x = {"x": (i * 37 % 100) / 100}
        if i > 0:
            mae.update(2 * x["x"], reg.predict_one(x))
        reg.learn_one(x, 2 * x["x"])
    assert mae.get() < 0.3
    reg.learn_one({"x": 0.5, "new": 1.0}, 1.0)  # a feature first seen late
    assert reg._model.n_features_in_ == 2


# ------------------------------------------------------------ parameters of the adapters
# Defaults that differ from the estimator's, on purpose: the kernel models' lifetime
# sweep needs a batch, and a stream's first call has one row.
_OWN_DEFAULTS = {"MondrianKernelRegressor": {"n_trees", "lifetime"},
                 # a row at a time, cells grow to the cap: a smaller one bounds memory;
                 # its first call is a row, learned by SGD epochs as every later one
                 "MondrianKernelClassifier": {"n_trees", "lifetime", "max_features",
                                              "solver", "max_iter"}}


@pytest.mark.parametrize("name", mlr.__all__)
def test_adapters_expose_every_parameter_of_their_estimator(name):
    import inspect

    import mondrianlearn

    adapter, estimator = getattr(mlr, name), getattr(mondrianlearn, name)
    ours = inspect.signature(adapter).parameters
    theirs = inspect.signature(estimator).parameters
    assert list(ours) == ["seed" if p == "random_state" else p for p in theirs]
    for p, param in theirs.items():
        if p not in _OWN_DEFAULTS.get(name, ()):
            assert ours["seed" if p == "random_state" else p].default == param.default, p
    # every value reaches the estimator
    values = {p: (7 if p == "random_state" else object()) for p in theirs}
    model = adapter(**{("seed" if p == "random_state" else p): v for p, v in values.items()})
    inner = model._new_model().get_params()
    assert all(inner[p] is v or inner[p] == v for p, v in values.items())


def test_amf_bootstrap_and_n_jobs_reach_the_model():
    model = mlr.AMFClassifier(n_estimators=3, bootstrap=True, n_jobs=2, seed=0)
    for i in range(30):
        model.learn_one({"a": i / 30}, i % 2)
    assert model._model.bootstrap is True and model._model.n_jobs == 2


# ------------------------------------------------------------------- feature order
def _stream(n=120, seed=0):
    rng = np.random.RandomState(seed)
    rows = []
    for i in range(n):
        x = {"u": rng.uniform(), "v": rng.uniform(), "w": rng.uniform()}
        if i >= 40:  # features first seen late, together
            x.update({"late_b": rng.uniform(), "late_a": rng.uniform()})
        if i % 7 == 3:
            del x["v"]  # a missing feature
        rows.append((x, int(x["u"] + x.get("late_a", 0.0) > 0.9)))
    return rows


@pytest.mark.parametrize("cls", [pytest.param(mlr.AMFClassifier, marks=AMF_PREDICT_BUG),
                                 mlr.MondrianForestClassifier])
def test_dict_key_order_does_not_matter(cls):
    """Names first seen in the same row are put in a canonical order: the same rows
    with their keys in another order give the same model and predictions."""
    rng = np.random.RandomState(1)
    a, b = cls(n_estimators=3, seed=5), cls(n_estimators=3, seed=5)
    for x, y in _stream():
        keys = list(x)
        rng.shuffle(keys)
        shuffled = {k: x[k] for k in keys}
        assert a.predict_proba_one(x) == b.predict_proba_one(shuffled)
        a.learn_one(x, y)
        b.learn_one(shuffled, y)
    assert a._features == b._features == ["u", "v", "w", "late_a", "late_b"]


@pytest.mark.parametrize("cls", [pytest.param(mlr.AMFClassifier, marks=AMF_PREDICT_BUG),
                                 mlr.MondrianForestClassifier, mlr.AMFRegressor])
def test_fast_path_matches_general_path(cls):
    """Rows in a repeated key order (fast path) and rows that always take the general
    path learn the same model; unknown features at prediction are ignored."""
    fast, slow = cls(n_estimators=3, seed=2), cls(n_estimators=3, seed=2)
    slow._row = lambda x, learning: None if learning else fast._row.__func__(slow, x, False)
    for x, y in _stream():
        fast.learn_one(x, y)
        slow.learn_one(dict(x), y)
    assert fast._features == slow._features
    queries = [x for x, _ in _stream(30, seed=3)]
    for x in queries:
        x_extra = {"never_seen": "not a number", **x}
        one = fast.predict_one(x)
        assert one == slow.predict_one(x) == fast.predict_one(x_extra)
    X = np.vstack([fast._row(x, False) for x in queries])
    Y = np.vstack([slow._dict_rows([x], learning=False)[0] for x in queries])
    assert np.array_equal(X, Y)


def test_bad_values_are_refused_before_anything_changes():
    import pickle

    model = mlr.MondrianForestClassifier(n_estimators=3, seed=0)
    with pytest.raises(ValueError, match="NaN or infinity"):
        model.learn_one({"a": float("nan")}, 1)
    assert model._features == [] and model._model is None
    with pytest.raises(ValueError):  # a label a classifier cannot take: nothing kept
        model.learn_one({"a": 0.5}, 0.25)
    assert model._features == [] and model._model is None
    for i in range(20):
        model.learn_one({"a": i / 20, "b": 1.0}, i % 2)
    before = pickle.dumps(model)
    for bad in ({"a": 0.5, "c": float("inf")}, {"a": float("nan"), "b": 1.0},
                {"a": float("-inf")}, {"a": 1.7e308, "b": -1.7e308}):
        with pytest.raises(ValueError):
            model.learn_one(bad, 1)
        assert pickle.dumps(model) == before
    with pytest.raises(ValueError, match="NaN or infinity"):
        model.predict_proba_one({"a": float("nan")})
    # a non-finite value of a feature the model does not know is never read
    assert model.predict_proba_one({"a": 0.5, "zzz": float("nan")}) == \
        model.predict_proba_one({"a": 0.5})
    pd = pytest.importorskip("pandas")
    with pytest.raises(ValueError, match="NaN or infinity"):
        model.learn_many(pd.DataFrame({"a": [0.1, np.nan], "d": [1.0, 2.0]}), pd.Series([0, 1]))
    assert pickle.dumps(model) == before


def test_prediction_rows_use_the_compiled_assembler():
    """Rows to predict on are built by ``_assemble_row``'s compiled function, called
    without numba's dispatcher: the same rows (keys in any order, missing features
    at their anchors) and the same refusals as the dispatcher's."""
    from numba import config

    from mondrianlearn.river import _assemble_row, _assembler

    model = mlr.AMFClassifier(n_estimators=2, seed=0)
    for i in range(30):
        model.learn_one({"a": i / 30, "b": float(i % 3), "c": -i}, i % 2)
    if not config.DISABLE_JIT:
        assert _assembler() is not _assemble_row
    for x in ({"a": 0.2, "b": 1.0, "c": -3}, {"c": 4, "a": 0.9}, {"b": 2.5}):
        row = model._row(x, False)
        expected = model._dict_rows([x], learning=False)[0]
        assert row.flags.c_contiguous and np.array_equal(row, expected)
    for bad in ({"a": float("nan")}, {"c": 1.0, "b": float("-inf")}):
        with pytest.raises(ValueError, match="NaN or infinity"):
            model.predict_proba_one(bad)


ADAPTERS = ["MondrianForestClassifier", "AMFClassifier", "MondrianKernelClassifier",
            "MondrianForestRegressor", "AMFRegressor", "MondrianKernelRegressor"]


@pytest.mark.parametrize("name", ADAPTERS)
def test_missing_targets_are_refused_before_anything_changes(name):
    """A label of None or NaN, a target of NaN or infinity: a clear error and the model
    as it was (the Mondrian forest regressor took a NaN target and forecast NaN
    from then on; the classifiers failed inside NumPy's sort on None)."""
    import pickle

    pd = pytest.importorskip("pandas")
    classifier = "Classifier" in name
    model = getattr(mlr, name)(seed=0)
    rng = np.random.RandomState(0)
    for _ in range(30):
        x = {"a": rng.uniform(), "b": rng.uniform()}
        model.learn_one(x, int(x["a"] > 0.5) if classifier else x["a"])
    before = pickle.dumps(model)
    bads = [None, float("nan"), np.float32("nan")] if classifier else [
        float("nan"), float("inf"), -np.inf, np.float64("nan")]
    message = "missing label" if classifier else "NaN or infinity"
    frame = pd.DataFrame({"a": [5.0, 0.2], "b": [0.1, 0.2]})  # 5.0 widens the range
    for bad in bads:
        with pytest.raises(ValueError, match=message):
            model.learn_one({"a": 5.0, "b": 0.1}, bad)
        assert pickle.dumps(model) == before
        targets = pd.Series([1 if classifier else 0.5, bad],
                            dtype=object if classifier else float)
        with pytest.raises(ValueError, match=message):
            model.learn_many(frame, targets)
        assert pickle.dumps(model) == before
    fresh = getattr(mlr, name)(seed=0)
    with pytest.raises(ValueError):
        fresh.learn_one({"a": 0.5}, bads[0])
    assert fresh._features == [] and fresh._model is None


def test_amf_regressor_refuses_a_target_it_cannot_square_before_anything_changes():
    """A target 1e160 away from the first one (AMF squares such distances): the
    adapter asks the model before it widens the range of the features."""
    import pickle

    pd = pytest.importorskip("pandas")
    model = mlr.AMFRegressor(seed=0)
    rng = np.random.RandomState(0)
    for _ in range(30):
        model.learn_one({"a": rng.uniform(), "b": rng.uniform()}, rng.uniform())
    before = pickle.dumps(model)
    for x in ({"a": 0.5, "b": 0.5}, {"a": 5.0, "b": 0.5}):  # the second widens a range
        with pytest.raises(ValueError, match="Rescale y"):
            model.learn_one(x, 1e160)
        assert pickle.dumps(model) == before
    with pytest.raises(ValueError, match="Rescale y"):
        model.learn_many(pd.DataFrame({"a": [5.0, 0.2], "b": [0.1, 0.2]}),
                         pd.Series([0.5, 1e160]))
    assert pickle.dumps(model) == before
    model.learn_one({"a": 5.0, "b": 0.5}, 1e100)  # large, but squares fit in float64


@pytest.mark.parametrize("cls, params", [
    pytest.param(mlr.AMFClassifier, {"n_estimators": 3}, marks=AMF_PREDICT_BUG),
    (mlr.MondrianForestClassifier, {"n_estimators": 3}),
    (mlr.MondrianKernelClassifier, {"n_trees": 5}),
])
def test_learn_many_matches_learn_one_when_classes_arrive_mid_batch(cls, params):
    """A batch is cut where a label is first seen (AMF's losses depend on the number
    of classes) and, for the kernel classifier, fed row by row (its batch step
    shuffles the rows)."""
    pd = pytest.importorskip("pandas")
    rng = np.random.RandomState(0)
    X = pd.DataFrame(rng.uniform(size=(90, 3)), columns=["c", "a", "b"])
    y = pd.Series(np.where(np.arange(90) < 30, "x", np.where(X["a"] > 0.5, "y", "z")))
    one, many = cls(seed=3, **params), cls(seed=3, **params)
    for x, label in zip(X.to_dict(orient="records"), y):
        one.learn_one(x, label)
    many.learn_many(X[:45], y[:45])
    many.learn_many(X[45:], y[45:])
    assert one._features == many._features == ["a", "b", "c"]
    for x in X.to_dict(orient="records")[:20]:
        assert one.predict_proba_one(x) == pytest.approx(many.predict_proba_one(x))


def test_kernel_classifier_without_probabilities():
    model = mlr.MondrianKernelClassifier(n_trees=5, loss="squared_hinge", seed=0)
    for i in range(60):
        model.learn_one({"a": (i * 37 % 60) / 60}, int((i * 37 % 60) >= 30))
    with pytest.raises(NotImplementedError):
        model.predict_proba_one({"a": 0.2})
    assert model.predict_one({"a": 0.1}) in (0, 1)
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"a": [0.1, 0.9]})
    assert list(model.predict_many(frame)) == [model.predict_one({"a": 0.1}),
                                               model.predict_one({"a": 0.9})]


def test_pickle_drops_caches_and_keeps_the_model():
    import pickle

    rows, _, _ = _phishing(200)
    model = mlr.MondrianForestClassifier(n_estimators=3, seed=0)
    for x, y in rows[:150]:
        model.learn_one(x, y)
    copy = pickle.loads(pickle.dumps(model))
    assert not [k for k in model.__getstate__() if k.startswith("_fast")]
    for x, y in rows[150:]:
        assert copy.predict_proba_one(x) == model.predict_proba_one(x)
        copy.learn_one(x, y)
        model.learn_one(x, y)


@pytest.mark.parametrize("cls", [mlr.AMFRegressor, mlr.MondrianForestClassifier])
def test_memory_usage_counts_the_node_rows_in_use(cls):
    # river counts every array whole; the adapters count a tree's node arrays by
    # their rows in use, so that a growth step (room for up to eight times the
    # rows) does not look like memory growing with the stream.
    from river import base as river_base

    model = cls(n_estimators=3, seed=0)
    dataset = datasets.TrumpApproval() if cls is mlr.AMFRegressor else datasets.Phishing()
    for x, y in list(dataset)[:400]:
        model.learn_one(x, y)
    trees = model._model.trees_
    spare = 0
    for tree in trees:
        arrays, used = tree.node_arrays_in_use()
        spare += 2 * sum(a.nbytes for a in arrays) - used  # river counts owned data twice
        assert tree.capacity > tree.n_nodes  # room to grow into
    whole = river_base.Base._raw_memory_usage.fget(model)
    assert model._raw_memory_usage == whole - spare
