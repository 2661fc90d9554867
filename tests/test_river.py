"""The river interface: same model as our own test-then-train loop, pipelines, features."""

import numpy as np
import pytest

river = pytest.importorskip("river", reason="river is an optional dependency")
from river import datasets, evaluate, metrics, preprocessing  # noqa: E402

from mondrianlearn import AMFClassifier, MondrianForestClassifier  # noqa: E402
from mondrianlearn import river as mlr  # noqa: E402


def _phishing(n=600):
    rows = list(datasets.Phishing())[:n]
    names = list(rows[0][0])
    X = np.array([[x[k] for k in names] for x, _ in rows], dtype=float)
    y = np.array([y for _, y in rows])
    return rows, X, y


@pytest.mark.parametrize("river_cls, sk_cls, params", [
    (mlr.MondrianForestClassifier, MondrianForestClassifier, {"n_estimators": 5}),
    (mlr.AMFClassifier, AMFClassifier, {"n_estimators": 5}),
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
    lower, upper = inner.trees_[0].arrays.lower, inner.trees_[0].arrays.upper
    root = inner.trees_[0].arrays.meta[1]
    assert lower[root, 1] == upper[root, 1] == 0.3
    # a row without "b" takes its first value; an unknown feature at prediction is ignored
    model.learn_one({"a": 0.1}, 0)
    proba = model.predict_proba_one({"a": 0.2, "zzz": 5.0})
    assert set(proba) == {0, 1} and sum(proba.values()) == pytest.approx(1.0)


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
    for cls in (mlr.MondrianForestRegressor, mlr.AMFRegressor):
        model = cls(seed=0)
        assert model.predict_one({"x": 1.0}) == 0.0
        mae = metrics.MAE()
        for i in range(300):
            x = {"x": (i * 37 % 100) / 100}
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
