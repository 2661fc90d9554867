"""Saving and loading: identical predictions, learning goes on, versions are checked."""

import pickle
import sys

import joblib
import numpy as np
import pytest

from mondrianlearn import (
    AMFClassifier,
    AMFRegressor,
    MondrianBoostingClassifier,
    MondrianForestClassifier,
    MondrianForestRegressor,
    MondrianKernel,
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


MAPPED = {
    "mf-classifier": lambda: MondrianForestClassifier(n_estimators=3, random_state=0),
    "mf-regressor": lambda: MondrianForestRegressor(n_estimators=3, random_state=0),
    "amf-classifier": lambda: AMFClassifier(n_estimators=3, random_state=0),
    "amf-regressor": lambda: AMFRegressor(n_estimators=3, random_state=0),
    "boosting": lambda: MondrianBoostingClassifier(n_estimators=3, random_state=0),
    "kernel-classifier": lambda: MondrianKernelClassifier(n_trees=3, random_state=0),
    "kernel-regressor": lambda: MondrianKernelRegressor(n_trees=3, random_state=0),
    "kernel": lambda: MondrianKernel(n_trees=3, random_state=0),
    "amf-classifier-drift": lambda: AMFClassifier(n_estimators=3, drift="adwin", random_state=0),
    "amf-regressor-drift": lambda: AMFRegressor(n_estimators=3, drift="adwin", random_state=0),
    "mf-classifier-drift": lambda: MondrianForestClassifier(n_estimators=3, drift="adwin",
                                                            random_state=0),
    "mf-regressor-drift": lambda: MondrianForestRegressor(n_estimators=3, drift="adwin",
                                                          random_state=0),
}


def _read_only_signatures():
    """The compiled signatures of the library's kernels that take a read-only array."""
    from numba.core.registry import CPUDispatcher

    found = set()
    for name, module in list(sys.modules.items()):
        if not name.startswith("mondrianlearn"):
            continue
        for dispatcher in list(vars(module).values()):
            if isinstance(dispatcher, CPUDispatcher):
                nested = dispatcher.__dict__.get("_nested_dispatcher")
                for d in [dispatcher] + ([nested] if nested is not None else []):
                    found.update((d.py_func.__qualname__, str(sig)) for sig in d.signatures
                                 if "readonly" in str(sig))
    return found


def _mapped_output(model, X):
    if isinstance(model, MondrianKernel):
        return model.transform(X).toarray()
    return _predict(model, X)


@pytest.mark.parametrize("make", MAPPED.values(), ids=MAPPED.keys())
def test_a_model_loaded_from_read_only_memory_maps_predicts_and_learns(make, tmp_path):
    """A model loaded with ``mmap_mode="r"`` copies its read-only arrays before its
    first prediction or learning call: predictions, and learning in one-row and
    larger calls, equal those of the model kept in memory, and no kernel is compiled
    for read-only arrays."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 4))
    model = make()
    if isinstance(model, MondrianKernel):
        y = None
    elif hasattr(model, "predict_proba") or isinstance(model, MondrianKernelClassifier):
        y = (X[:, 0] > 0).astype(int)
    else:
        y = X[:, 1].copy()
    labels = (lambda a, b: ()) if y is None else (lambda a, b: (y[a:b],))
    model.fit(X[:200], *labels(0, 200))
    joblib.dump(model, tmp_path / "model.joblib")
    mapped = joblib.load(tmp_path / "model.joblib", mmap_mode="r")
    compiled = _read_only_signatures()
    np.testing.assert_array_equal(_mapped_output(mapped, X[300:]),
                                  _mapped_output(model, X[300:]))
    assert _read_only_signatures() == compiled
    for start, stop in [(200, 250), (250, 251), (251, 252), (252, 260)]:
        mapped.partial_fit(X[start:stop], *labels(start, stop))
        model.partial_fit(X[start:stop], *labels(start, stop))
    np.testing.assert_array_equal(_mapped_output(mapped, X[300:]),
                                  _mapped_output(model, X[300:]))
    # learning first, then predicting
    mapped = joblib.load(tmp_path / "model.joblib", mmap_mode="r")
    again = joblib.load(tmp_path / "model.joblib")
    for start, stop in [(200, 201), (201, 230)]:
        mapped.partial_fit(X[start:stop], *labels(start, stop))
        again.partial_fit(X[start:stop], *labels(start, stop))
    np.testing.assert_array_equal(_mapped_output(mapped, X[300:]),
                                  _mapped_output(again, X[300:]))
    assert _read_only_signatures() == compiled


@pytest.mark.parametrize("name", ["AMFClassifier", "MondrianForestClassifier", "AMFRegressor",
                                  "MondrianKernelRegressor"])
def test_a_river_adapter_loaded_from_read_only_memory_maps_predicts_and_learns(name, tmp_path):
    """A pickled river adapter loaded with ``mmap_mode="r"``: its model copies its
    arrays before it predicts or learns, with the results of the adapter in memory."""
    pytest.importorskip("river")
    from mondrianlearn import river as adapters

    cls = getattr(adapters, name)
    size = {"n_trees": 3} if "Kernel" in name else {"n_estimators": 3}
    adapter = cls(seed=0, **size)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    rows = [dict(zip("abc", x)) for x in X]
    y = (X[:, 0] > 0).astype(int).tolist() if "Classifier" in name else X[:, 1].tolist()
    for x, target in zip(rows[:100], y[:100]):
        adapter.learn_one(x, target)
    joblib.dump(adapter, tmp_path / "adapter.joblib")
    mapped = joblib.load(tmp_path / "adapter.joblib", mmap_mode="r")

    def predictions(a):
        one = a.predict_proba_one if hasattr(a, "predict_proba_one") else a.predict_one
        return [one(x) for x in rows[150:]]

    assert predictions(mapped) == predictions(adapter)
    for x, target in zip(rows[100:150], y[100:150]):
        mapped.learn_one(x, target)
        adapter.learn_one(x, target)
    assert predictions(mapped) == predictions(adapter)
