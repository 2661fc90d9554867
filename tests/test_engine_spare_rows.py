"""Node fields past ``n_nodes`` are not zeroed when a tree grows
(``engine.reserved.uninitialized_rows``): every kernel that takes a node writes its
fields before anything reads them. Here the spare rows are filled with garbage
instead, and every model must learn and predict exactly as with zeros."""

import pickle

import numpy as np
import pytest

from mondrianlearn import (
    AMFClassifier,
    AMFRegressor,
    MondrianBoostingClassifier,
    MondrianForestClassifier,
    MondrianForestRegressor,
    MondrianKernelClassifier,
)
from mondrianlearn.engine import reserved
from mondrianlearn.engine.tree import used_rows


def _garbage(rng):
    """Arrays filled with values no kernel writes, different at every call (so that a
    value read from them shows as a difference between runs): node ids and labels
    among -6..-2 (an id that indexes, wrapped around, a real node: wrong, not a
    crash), NaN or large floats, random flags."""
    def fill(shape, dtype):
        dtype = np.dtype(dtype)
        if dtype.kind == "f":
            out = rng.uniform(-1e3, 1e3, size=shape)
            out[rng.uniform(size=shape) < 0.2] = np.nan
            return out.astype(dtype)
        if dtype.kind == "b":
            return rng.uniform(size=shape) < 0.5
        return rng.integers(-6, -1, size=shape).astype(dtype)
    return fill


@pytest.fixture
def garbage_spare_rows(monkeypatch):
    calls = []
    fill = _garbage(np.random.default_rng(0))

    def uninitialized_rows(shape, dtype):
        calls.append(shape)
        return fill(shape, dtype)

    monkeypatch.setattr(reserved, "uninitialized_rows", uninitialized_rows)
    return calls


def _stream(regression, n=1500, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.uniform(-1, 1, size=(n, 4)) * [1.0, 10.0, 100.0, 0.1]
    y = np.sin(3 * X[:, 0]) + X[:, 1] / 10 * X[:, 2] / 100 + 0.1 * rng.normal(size=n)
    return X, (y if regression else (y > 0.2).astype(int) + (y > 0.8))


MODELS = [
    (MondrianForestClassifier, {}),
    (MondrianForestClassifier, {"max_nodes": 300, "bootstrap": True}),
    (MondrianForestClassifier, {"lifetime": 1.0}),
    (MondrianForestRegressor, {"lifetime": 0.5, "bootstrap": True}),
    (MondrianForestClassifier, {"drift": "adwin"}),
    (MondrianForestRegressor, {}),
    (AMFClassifier, {}),
    (AMFClassifier, {"split_pure": False, "drift": "adwin"}),
    (AMFRegressor, {}),
    (MondrianBoostingClassifier, {}),
    (MondrianKernelClassifier, {}),
]


def _learn(cls, params):
    """Learn a stream every way a user does (fit, batches, one row per call), so
    that trees grow many times (reserving, renumbering, trimming), and return
    predictions on the way and the pickled model."""
    regression = cls in (MondrianForestRegressor, AMFRegressor)
    X, y = _stream(regression)
    size = {"n_trees": 4} if cls is MondrianKernelClassifier else {"n_estimators": 4}
    model = cls(random_state=0, **size, **params)
    predict = model.predict if regression else model.predict_proba
    out = []
    model.fit(X[:300], y[:300])
    out.append(predict(X[:200]))
    model.partial_fit(X[300:700], y[300:700])
    for i in range(700, 1000):
        model.partial_fit(X[i:i + 1], y[i:i + 1])
    out.append(predict(X[:200]))
    for start in range(1000, 1500, 37):
        model.partial_fit(X[start:start + 37], y[start:start + 37])
    out.append(predict(X))
    loaded = pickle.loads(pickle.dumps(model))
    out.append((loaded.predict if regression else loaded.predict_proba)(X))
    loaded.partial_fit(X[:50], y[:50])
    out.append((loaded.predict if regression else loaded.predict_proba)(X))
    # One row at a time from the start, on rows of growing range: the units change
    # while the model holds few rows, and the trees, grown, are sampled afresh.
    order = np.argsort(np.abs(X[:, 1]))
    stream = cls(random_state=1, **size, **params)
    extra = {} if regression else {"classes": np.unique(y)}
    for i in order[:250]:
        stream.partial_fit(X[i:i + 1], y[i:i + 1], **extra)
    out.append(stream.predict(X) if regression else stream.predict_proba(X))
    for forest in (model, stream):  # every field of every node
        for tree in getattr(forest, "trees_", None) or []:
            if hasattr(tree, "arrays"):  # the rows in use (nodes, box rows)
                out += list(used_rows(tree.arrays).values())
    return out


@pytest.mark.parametrize("cls, params", MODELS,
                         ids=[f"{c.__name__}-{'-'.join(p) or 'defaults'}" for c, p in MODELS])
def test_garbage_in_spare_node_rows_changes_nothing(cls, params, garbage_spare_rows):
    poisoned = _learn(cls, params)
    assert garbage_spare_rows, "no tree grew into rows left uninitialized"
    n_calls = len(garbage_spare_rows)
    with pytest.MonkeyPatch.context() as patch:  # the same run with zeroed rows
        patch.setattr(reserved, "uninitialized_rows",
                      lambda shape, dtype: np.zeros(shape, dtype=dtype))
        clean = _learn(cls, params)
    assert len(garbage_spare_rows) == n_calls
    for a, b in zip(poisoned, clean):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_pickled_trees_keep_no_spare_rows(garbage_spare_rows):
    """A pickled tree is trimmed to its nodes: no row of garbage goes into a file."""
    X, y = _stream(False, n=400)
    model = MondrianForestClassifier(n_estimators=2, random_state=0)
    model.partial_fit(X[:1], y[:1], classes=[0, 1, 2])
    for i in range(1, 400):
        model.partial_fit(X[i:i + 1], y[i:i + 1])
    assert garbage_spare_rows
    assert any(t.capacity > t.n_nodes for t in model.trees_)
    for tree in pickle.loads(pickle.dumps(model)).trees_:
        assert tree.capacity == max(tree.n_nodes, 2)
        for name, array in tree.arrays._asdict().items():
            if array.dtype.kind == "f":
                assert not np.isnan(array).any(), name
