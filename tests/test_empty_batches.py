"""An empty mini-batch, for every online model of the library and every adapter.

A stream can deliver a batch with no row (a time window without events, a filter
that kept nothing). For a fitted model, ``partial_fit`` of such a batch is a no-op
(the model and its outputs stay as they were) provided its width is the model's;
a first call with no row is an error, as scikit-learn's ``fit`` is, since nothing
can be learned from it. river's ``learn_many``, ``predict_many`` and
``predict_proba_many`` take an empty frame at any time and give an empty answer.
"""

import pickle

import numpy as np
import online_models
import pytest
from online_models import outputs

from mondrianlearn import (
    AMFClassifier,
    AMFRegressor,
    MondrianBoostingClassifier,
    MondrianForestClassifier,
    MondrianForestRegressor,
    MondrianKernel,
    MondrianKernelClassifier,
    MondrianKernelRegressor,
    MondrianTreeClassifier,
    MondrianTreeRegressor,
)

MODELS = [
    (MondrianForestClassifier, {"n_estimators": 3}),
    (MondrianForestClassifier, {"n_estimators": 3, "bootstrap": True}),
    (MondrianForestClassifier, {"n_estimators": 3, "drift": "adwin"}),
    (MondrianForestRegressor, {"n_estimators": 3}),
    (MondrianTreeClassifier, {}),
    (MondrianTreeRegressor, {}),
    (AMFClassifier, {"n_estimators": 3}),
    (AMFClassifier, {"n_estimators": 3, "drift": "adwin"}),
    (AMFRegressor, {"n_estimators": 3}),
    (AMFRegressor, {"n_estimators": 3, "drift": "adwin"}),
    (MondrianKernelClassifier, {"n_trees": 5, "lifetime": 2.0}),
    (MondrianKernelRegressor, {"n_trees": 5, "lifetime": 2.0}),
    (MondrianKernel, {"n_trees": 5, "lifetime": 2.0}),
    (MondrianBoostingClassifier, {"n_estimators": 3}),
]
IDS = [cls.__name__ + "".join(f"-{k}={v}" for k, v in p.items()
                              if k in ("bootstrap", "drift")) for cls, p in MODELS]


def data(cls, n=60, seed=0):
    return online_models.data(cls, n, seed)


@pytest.mark.parametrize("cls, params", MODELS, ids=IDS)
def test_an_empty_batch_is_a_no_op_for_a_fitted_model(cls, params):
    X, y = data(cls)
    empty_y = None if y is None else y[:0]
    with pytest.raises(ValueError, match="0 sample"):
        cls(random_state=0, **params).partial_fit(X[:0], empty_y)
    model = cls(random_state=0, **params)
    model.partial_fit(X[:40], None if y is None else y[:40])
    before, state = outputs(model, X), pickle.dumps(model)
    assert model.partial_fit(X[:0], empty_y) is model
    np.testing.assert_array_equal(outputs(model, X), before)
    assert model.n_samples_seen_ == 40
    # learning goes on as if the empty batch had not come
    reference = pickle.loads(state)
    model.partial_fit(X[40:], None if y is None else y[40:])
    reference.partial_fit(X[40:], None if y is None else y[40:])
    np.testing.assert_array_equal(outputs(model, X), outputs(reference, X))


@pytest.mark.parametrize("cls, params", MODELS, ids=IDS)
def test_an_empty_batch_of_another_width_is_refused(cls, params):
    X, y = data(cls)
    model = cls(random_state=0, **params).partial_fit(X, y)
    with pytest.raises(ValueError, match="features"):
        model.partial_fit(np.empty((0, 5)), None if y is None else y[:0])


RIVER = ["MondrianForestClassifier", "AMFClassifier", "MondrianKernelClassifier",
         "MondrianForestRegressor", "AMFRegressor", "MondrianKernelRegressor"]


@pytest.mark.parametrize("name", RIVER)
def test_river_adapters_take_an_empty_frame(name):
    pd = pytest.importorskip("pandas")
    river_adapters = pytest.importorskip("mondrianlearn.river")
    rng = np.random.RandomState(0)
    X = pd.DataFrame(rng.uniform(size=(40, 3)), columns=["a", "b", "c"])
    classifier = "Classifier" in name
    y = (X["a"] > 0.5).astype(int) if classifier else X["a"] + X["c"]
    model = getattr(river_adapters, name)(seed=0)
    for learned in (False, True):
        model.learn_many(X.iloc[:0], y.iloc[:0])
        assert model.predict_many(X.iloc[:0]).shape == (0,)
        if classifier:
            proba = model.predict_proba_many(X.iloc[:0])
            assert proba.shape[0] == 0
            if learned:
                assert list(proba.columns) == [0, 1]
        if not learned:
            model.learn_many(X, y)
    before = model.predict_many(X)
    model.learn_many(X.iloc[:0], y.iloc[:0])
    assert model.predict_many(X).equals(before)
