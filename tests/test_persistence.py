"""Saving and loading: identical predictions, learning goes on, versions are checked."""

import pickle

import joblib
import numpy as np
import pytest

from mondrianlearn import (
    AMFClassifier,
    AMFRegressor,
    MondrianBoostingClassifier,
    MondrianForestClassifier,
    MondrianForestRegressor,
    MondrianKernelClassifier,
    MondrianKernelRegressor,
    __version__,
)
from mondrianlearn.utils.persistence import STATE_FORMAT, IncompatibleModelError

ESTIMATORS = [
    lambda: MondrianForestClassifier(n_estimators=4, random_state=0),
    lambda: MondrianForestClassifier(n_estimators=4, bootstrap=True, max_nodes=40, random_state=0),
    lambda: MondrianForestRegressor(n_estimators=4, random_state=0),
    lambda: AMFClassifier(n_estimators=4, random_state=0),
    lambda: AMFRegressor(n_estimators=4, random_state=0),
    lambda: MondrianBoostingClassifier(n_estimators=4, random_state=0),
    lambda: MondrianKernelRegressor(n_trees=5, lifetime=2.0, random_state=0),
    lambda: MondrianKernelClassifier(n_trees=5, lifetime=2.0, random_state=0),
]


def _data(model):
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(300, 3))
    if hasattr(model, "predict_proba"):
        return X, (X[:, 0] + X[:, 1] > 1).astype(int)
    return X, X @ [1.0, -1.0, 0.5]


def _predict(model, X):
    return model.predict_proba(X) if hasattr(model, "predict_proba") else model.predict(X)


@pytest.mark.parametrize("make", ESTIMATORS)
@pytest.mark.parametrize("dump, load", [(pickle.dumps, pickle.loads),
                                        ("joblib", "joblib")])
def test_round_trip_predicts_identically_and_keeps_learning(make, dump, load, tmp_path):
    model = make()
    X, y = _data(model)
    model.partial_fit(X[:200], y[:200])
    if dump == "joblib":
        joblib.dump(model, tmp_path / "m.joblib")
        loaded = joblib.load(tmp_path / "m.joblib")
    else:
        loaded = load(dump(model))
    assert np.array_equal(_predict(model, X), _predict(loaded, X))
    assert loaded._mondrianlearn_version == __version__
    model.partial_fit(X[200:], y[200:])
    loaded.partial_fit(X[200:], y[200:])
    assert np.array_equal(_predict(model, X), _predict(loaded, X))
    assert model.model_size_ > 0


@pytest.mark.parametrize("make", ESTIMATORS)
def test_incompatible_state_format_fails_clearly(make):
    model = make()
    X, y = _data(model)
    model.fit(X, y)
    state = model.__getstate__()
    assert state["_mondrianlearn_state_format"] == STATE_FORMAT
    state["_mondrianlearn_state_format"] = STATE_FORMAT + 1
    state["_mondrianlearn_version"] = "99.0"
    blank = type(model).__new__(type(model))
    with pytest.raises(IncompatibleModelError, match="saved by mondrian-learn 99.0"):
        blank.__setstate__(state)


def test_pickling_does_not_touch_the_live_model():
    model = ESTIMATORS[0]()
    X, y = _data(model)
    model.fit(X, y)
    keys = set(model.__dict__)
    pickle.dumps(model)
    assert set(model.__dict__) == keys


@pytest.mark.parametrize("make", ESTIMATORS)
def test_pandas_names_and_column_order(make):
    pd = pytest.importorskip("pandas")
    model = make()
    X, y = _data(model)
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    model.fit(frame, y)
    assert list(model.feature_names_in_) == ["a", "b", "c"]
    assert np.array_equal(_predict(model, frame), _predict(model, X))
    with pytest.raises(ValueError, match="feature names"):
        _predict(model, frame[["c", "b", "a"]])
    with pytest.raises(ValueError, match="feature names"):
        model.partial_fit(frame[["b", "a", "c"]], y)


@pytest.mark.parametrize("make", ESTIMATORS)
def test_older_formats_load_unless_the_layout_changed(make):
    """Format 2 changed the fitted state of AMFRegressor only (running target
    moments, per-node squared deviations): its format-1 pickles are refused, the
    others still load."""
    model = make()
    X, y = _data(model)
    model.fit(X, y)
    state = model.__getstate__()
    state["_mondrianlearn_state_format"] = 1
    blank = type(model).__new__(type(model))
    if isinstance(model, AMFRegressor):
        with pytest.raises(IncompatibleModelError, match="state format 1"):
            blank.__setstate__(state)
    else:
        blank.__setstate__(state)
        assert np.array_equal(_predict(blank, X), _predict(model, X))


@pytest.mark.parametrize("make", [
    lambda: MondrianForestClassifier(n_estimators=3, random_state=0),
    lambda: MondrianForestRegressor(n_estimators=3, random_state=0),
])
def test_a_forest_loaded_from_read_only_memory_maps_predicts_and_learns(make, tmp_path):
    """A Mondrian forest loaded with ``mmap_mode="r"`` learns in its own copy of the
    trees: predictions and learning equal those of the model kept in memory."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 4))
    y = (X[:, 0] > 0).astype(int) if "Classifier" in type(make()).__name__ else X[:, 1]
    model = make().fit(X[:200], y[:200])
    joblib.dump(model, tmp_path / "model.joblib")
    mapped = joblib.load(tmp_path / "model.joblib", mmap_mode="r")
    np.testing.assert_array_equal(mapped.predict(X[300:]), model.predict(X[300:]))
    for start, stop in [(200, 250), (250, 251), (251, 252)]:
        mapped.partial_fit(X[start:stop], y[start:stop])
        model.partial_fit(X[start:stop], y[start:stop])
    np.testing.assert_array_equal(mapped.predict(X[300:]), model.predict(X[300:]))
